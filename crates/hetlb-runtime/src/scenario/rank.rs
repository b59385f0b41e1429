//! One node of a scenario on its rank: its queue, its clock, its events, its links, and the
//! policy's decisions.
//!
//! A rank runs one loop: read what has arrived, fire what is due (deliveries whose modelled
//! arrival has come, injections, arrivals, status reports), start or continue the task in
//! service, and wait for the next of these. CPU work runs in slices of at most 200 µs, so a
//! delivery or a decision is never late by more than a slice. Rank 0 also coordinates: it
//! learns when every rank is idle with nothing more to come, and stops the run.

use super::coordinator::Coordinator;
use super::links::LinkEstimates;
use super::messages::{Message, NodeMeasured, Task};
use super::work::{Calibration, Work, spin};
use super::{RealConfig, ScenarioRunError};
use hetlb_sim::Scenario;
use hetlb_sim::model::{LinkModel, NodeModel};
use hetlb_sim::policy::{Delivery, Order, Policy, Reported, View};
use hetlb_sim::rng::{Purpose, exponential, stream};
use hetlb_sim::scenario::PolicySpec;
use hetlb_transport::Transport;
use rand_pcg::Pcg64;
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

/// The longest slice of CPU work between two looks at the inbox (real seconds).
const SLICE: f64 = 200e-6;
/// Task ids: `node << ID_SHIFT | sequence`.
const ID_SHIFT: u32 = 40;

/// The scenario clock: scenario seconds since the common start, i.e. real time divided by the
/// time scale.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Clock {
    pub(crate) start: Instant,
    pub(crate) scale: f64,
}

impl Clock {
    pub(crate) fn now(&self) -> f64 {
        self.start.elapsed().as_secs_f64() / self.scale
    }

    /// The real instant of scenario time `t`.
    pub(crate) fn instant(&self, t: f64) -> Instant {
        self.start + Duration::from_secs_f64((t * self.scale).clamp(0.0, 1e9))
    }
}

/// The diffusion policy on one rank (Neelakantan 2012): rounds at `0, interval, 2·interval, …`,
/// each decided once the neighbours' loads for it are in.
struct Diffusion {
    policy: hetlb_sim::policy::DiffusionPolicy,
    interval: f64,
    /// The next round to start, and when.
    next: (u64, f64),
    /// Rounds started and not decided: this rank's load at the round's time.
    own: BTreeMap<u64, u64>,
    /// Neighbours' loads received, by round.
    seen: BTreeMap<u64, Vec<(usize, u64)>>,
}

/// The hypercube policy on one rank (Rim, Jang & Kim 2003, §4): a round is a collective in which
/// every rank sends its load to every rank, every rank plans with the core's algorithm on the same
/// loads, and sends its transfers at once.
struct Threshold {
    algorithm: hetlb_core::Algorithm,
    threshold: u64,
    /// Rounds completed.
    done: u64,
    /// Loads received for rounds not completed.
    loads: BTreeMap<u64, Vec<Option<u64>>>,
    /// The round this rank has joined and not finished, with the transfers it still expects.
    joined: Option<(u64, usize)>,
    /// Tasks of rounds this rank has not planned yet.
    early: Vec<(u64, Vec<Task>)>,
}

/// How often a waiting rank looks at its peers' liveness.
const WATCH_EVERY: Duration = Duration::from_millis(50);

pub(crate) struct Rank<'a, T> {
    tr: &'a T,
    /// When the peers' liveness was last looked at.
    watched: Instant,
    scenario: &'a Scenario,
    cfg: &'a RealConfig,
    calibration: Calibration,
    node: usize,
    size: usize,
    clock: Clock,
    queue: VecDeque<Task>,
    /// Real seconds of work left on the task at the head of the queue, when one is in service.
    in_service: Option<f64>,
    /// When the task in service ends (sleep work).
    service_end: Option<Instant>,
    /// When the task just completed was due to end, if the next one follows it at once:
    /// back-to-back tasks are timed from there, so wake-up delays do not add up.
    chained_from: Option<Instant>,
    /// When the CPU part of the task in service finished.
    cpu_done: Option<Instant>,
    /// When the task in service started, and the real seconds it asked for.
    service_started: Option<(Instant, f64)>,
    /// When the CPU part of the task in service started: the wall clock and the thread's CPU
    /// clock.
    cpu_started: Option<(Instant, Option<cpu_time::ThreadTime>)>,
    busy_since: Option<f64>,
    service_rng: Pcg64,
    arrival_rng: Pcg64,
    link_rng: Pcg64,
    next_arrival: Option<f64>,
    arrivals_left: u64,
    injections: VecDeque<(f64, u64)>,
    next_status: Option<f64>,
    /// Tasks on a link: (modelled arrival, tasks).
    held: Vec<(f64, Vec<Task>)>,
    link_free: Vec<f64>,
    reports: Vec<Reported>,
    estimates: &'a LinkEstimates,
    delay_aware: Option<hetlb_sim::policy::DelayAware>,
    threshold: Option<Threshold>,
    diffusion: Option<Diffusion>,
    coordinator: Option<Coordinator>,
    sequence: u64,
    idle_reported: bool,
    stop: Option<Option<String>>,
    /// Rank 0: final reports of ranks that ended before it (end time reached).
    pub(crate) finals: Vec<NodeMeasured>,
    sink: u64,
    pub(crate) out: NodeMeasured,
}

impl<'a, T: Transport<Message>> Rank<'a, T> {
    pub(crate) fn new(
        tr: &'a T,
        scenario: &'a Scenario,
        cfg: &'a RealConfig,
        calibration: Calibration,
        clock: Clock,
        estimates: &'a LinkEstimates,
    ) -> Self {
        let node = tr.rank();
        let size = tr.size();
        let setup = &scenario.setup;
        let seed = setup.seed;
        let mut injections: Vec<(f64, u64)> = setup
            .injections
            .iter()
            .filter(|i| i.node == node)
            .map(|i| (i.time, i.tasks))
            .collect();
        injections.sort_by(|a, b| a.0.total_cmp(&b.0));
        let diffusion = match scenario.policy {
            PolicySpec::Diffusion(settings) => {
                let mut policy =
                    hetlb_sim::policy::DiffusionPolicy::new(settings, scenario.setup.seed);
                // Capacities are the nodes' rates, as in the simulator.
                let capacities = (0..size).map(|i| scenario.nodes.rate(i)).collect();
                policy.prepare(scenario.links.network(), capacities);
                Some(Diffusion {
                    policy,
                    interval: settings.interval(),
                    next: (0, 0.0),
                    own: BTreeMap::new(),
                    seen: BTreeMap::new(),
                })
            }
            _ => None,
        };
        let (delay_aware, threshold) = match scenario.policy {
            PolicySpec::DelayAware { compensation, .. } => {
                (Some(hetlb_sim::policy::DelayAware::new(compensation)), None)
            }
            PolicySpec::Hypercube {
                algorithm,
                threshold,
            } => (
                None,
                Some(Threshold {
                    algorithm,
                    threshold,
                    done: 0,
                    loads: BTreeMap::new(),
                    joined: None,
                    early: Vec::new(),
                }),
            ),
            _ => (None, None),
        };
        Self {
            tr,
            scenario,
            cfg,
            calibration,
            node,
            size,
            clock,
            queue: VecDeque::new(),
            in_service: None,
            service_end: None,
            chained_from: None,
            cpu_done: None,
            service_started: None,
            cpu_started: None,
            busy_since: None,
            service_rng: stream(seed, Purpose::Service, node),
            arrival_rng: stream(seed, Purpose::Arrivals, node),
            link_rng: stream(seed, Purpose::Links, node),
            next_arrival: None,
            arrivals_left: 0,
            injections: injections.into(),
            next_status: None,
            held: Vec::new(),
            link_free: vec![0.0; scenario.links.table().link_count()],
            reports: setup
                .initial
                .iter()
                .map(|&load| Reported { load, time: 0.0 })
                .collect(),
            estimates,
            delay_aware,
            threshold,
            diffusion,
            coordinator: (node == 0).then(|| Coordinator::new(scenario, size)),
            sequence: 0,
            idle_reported: false,
            stop: None,
            watched: Instant::now(),
            finals: Vec::new(),
            sink: 0,
            out: NodeMeasured {
                node,
                ..NodeMeasured::default()
            },
        }
    }

    fn new_task(&mut self, entered: f64) -> Task {
        let id = ((self.node as u64) << ID_SHIFT) | self.sequence;
        self.sequence += 1;
        self.out.created += 1;
        self.out.created_id_sum += u128::from(id);
        Task { id, entered }
    }

    fn load(&self) -> u64 {
        self.queue.len() as u64
    }

    /// Sends a message that carries no task. A peer that has already ended (the run is over:
    /// no task is left anywhere, so none can be lost) does not need it.
    fn notify(&self, to: usize, msg: Message) -> Result<(), ScenarioRunError> {
        match self.tr.send(to, msg) {
            Ok(_) | Err(hetlb_transport::TransportError::Closed(_)) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    fn neighbors(&self) -> &'a [usize] {
        self.scenario.links.table().neighbor_slice(self.node)
    }

    /// Runs the node until the run stops; returns what it measured.
    ///
    /// # Errors
    /// [`ScenarioRunError`] when the run failed here or elsewhere.
    pub(crate) fn run(
        mut self,
        early: Vec<(usize, Message)>,
    ) -> Result<(NodeMeasured, Vec<NodeMeasured>), ScenarioRunError> {
        let setup = &self.scenario.setup;
        for _ in 0..setup.initial[self.node] {
            let t = self.new_task(0.0);
            self.queue.push_back(t);
        }
        if !self.queue.is_empty() {
            self.busy_since = Some(0.0);
        }
        if let Some(a) = &setup.arrivals {
            let rate = a.rates[self.node];
            self.arrivals_left = a.per_node.unwrap_or(u64::MAX);
            if rate > 0.0 && self.arrivals_left > 0 {
                self.next_arrival = Some(exponential(&mut self.arrival_rng, 1.0 / rate));
            }
        }
        if self.delay_aware.is_some() {
            self.next_status = setup.status_interval;
        }
        let end = setup.end_time.unwrap_or(f64::INFINITY);
        for (from, msg) in early {
            self.handle(from, msg)?;
        }
        loop {
            while self.stop.is_none() {
                let Some(env) = self.tr.try_recv()? else {
                    break;
                };
                self.handle(env.from, env.msg)?;
            }
            if let Some(stop) = self.stop.take() {
                return self.finish(stop);
            }
            let now = self.clock.now();
            if let Some((node, t)) = self.cfg.fail
                && node == self.node
                && now >= t
            {
                return Err(ScenarioRunError::Failed(format!(
                    "injected fault at t = {t} s"
                )));
            }
            if now >= end {
                // Unlimited arrivals: the run ends at the end time, as in the simulator.
                return self.finish(None);
            }
            self.fire_due(now)?;
            self.next_round()?;
            self.serve();
            self.report_idle()?;
            self.wait()?;
        }
    }

    fn handle(&mut self, from: usize, msg: Message) -> Result<(), ScenarioRunError> {
        match msg {
            Message::Tasks { tasks, arrival, .. } => self.held.push((arrival, tasks)),
            Message::Instant { round, tasks } => self.instant_tasks(round, tasks),
            Message::Status { load, time } => {
                if from < self.reports.len() {
                    self.reports[from] = Reported { load, time };
                }
            }
            Message::BalanceLoad { round, load } => self.balance_load(from, round, load)?,
            Message::RoundLoad { round, load } => {
                if let Some(d) = &mut self.diffusion {
                    d.seen.entry(round).or_default().push((from, load));
                }
                self.decide_rounds()?;
            }
            Message::Stop { error } => self.stop = Some(error),
            Message::Idle {
                executed,
                arrived,
                arrivals_done,
            } => {
                if let Some(c) = &mut self.coordinator {
                    c.idle(from, executed, arrived, arrivals_done);
                    if c.finished() {
                        for r in 0..self.size {
                            self.notify(r, Message::Stop { error: None })?;
                        }
                    }
                }
            }
            Message::Failed { message } => {
                if self.coordinator.is_some() {
                    let error = format!("node {from} failed: {message}");
                    // The failed rank may be gone already: what cannot be sent is not needed.
                    for r in 0..self.size {
                        let _ = self.tr.send(
                            r,
                            Message::Stop {
                                error: Some(error.clone()),
                            },
                        );
                    }
                }
            }
            Message::Final(m) => self.finals.push(*m),
            // Not expected during the run; a late probe answer is harmless.
            Message::Probe { .. }
            | Message::ProbeReply { .. }
            | Message::Start
            | Message::Probed => {}
        }
        Ok(())
    }

    fn fire_due(&mut self, now: f64) -> Result<(), ScenarioRunError> {
        // Deliveries whose modelled arrival has come.
        let mut i = 0;
        while i < self.held.len() {
            if self.held[i].0 <= now {
                let (arrival, tasks) = self.held.swap_remove(i);
                self.out.received += tasks.len() as u64;
                self.out.deliveries += 1;
                self.out.lateness_sum += now - arrival;
                self.out.timing.late(arrival, now);
                self.add_tasks(tasks, now);
            } else {
                i += 1;
            }
        }
        // Injections.
        while let Some(&(t, n)) = self.injections.front() {
            if t > now {
                break;
            }
            self.injections.pop_front();
            self.out.timing.late(t, now);
            let tasks: Vec<Task> = (0..n).map(|_| self.new_task(t)).collect();
            self.out.injected += n;
            self.add_tasks(tasks, now);
            self.on_injection(now)?;
        }
        // Arrivals.
        while let Some(t) = self.next_arrival {
            if t > now {
                break;
            }
            let task = self.new_task(t);
            self.out.timing.late(t, now);
            self.out.arrived += 1;
            self.arrivals_left -= 1;
            self.next_arrival = None;
            if self.arrivals_left > 0
                && let Some(a) = &self.scenario.setup.arrivals
            {
                let rate = a.rates[self.node];
                self.next_arrival = Some(t + exponential(&mut self.arrival_rng, 1.0 / rate));
            }
            self.add_tasks(vec![task], now);
            self.on_arrival()?;
        }
        // Diffusion rounds due: send this rank's load to its neighbours.
        if let Some(d) = &self.diffusion {
            let behind = ((now - d.next.1) / d.interval).max(0.0);
            if behind > super::MAX_ROUNDS_BEHIND as f64
                || d.own.len() as u64 > super::MAX_ROUNDS_BEHIND
            {
                return Err(ScenarioRunError::Failed(format!(
                    "node {} fell more than {} diffusion rounds behind its schedule: this \
                     machine cannot keep up at this time scale (raise --time-scale)",
                    self.node,
                    super::MAX_ROUNDS_BEHIND
                )));
            }
        }
        while let Some(d) = &mut self.diffusion {
            let (round, t) = d.next;
            if t > now {
                break;
            }
            let load = self.queue.len() as u64;
            self.out.timing.late(t, now);
            d.own.insert(round, load);
            d.next = (round + 1, t + d.interval);
            for &j in self.neighbors() {
                self.notify(j, Message::RoundLoad { round, load })?;
            }
        }
        self.decide_rounds()?;
        // Status reports to the neighbours.
        if let Some(t) = self.next_status
            && t <= now
        {
            let load = self.load();
            for &j in self.neighbors() {
                self.notify(j, Message::Status { load, time: now })?;
            }
            let iv = self.scenario.setup.status_interval.unwrap_or(f64::INFINITY);
            self.next_status = Some(t + iv);
        }
        Ok(())
    }

    /// Decides every started round whose neighbours' loads are all in, oldest first.
    fn decide_rounds(&mut self) -> Result<(), ScenarioRunError> {
        let degree = self.neighbors().len();
        loop {
            let Some(d) = &mut self.diffusion else {
                return Ok(());
            };
            let Some((&round, &own)) = d.own.iter().next() else {
                return Ok(());
            };
            if d.seen.get(&round).map_or(0, Vec::len) < degree {
                return Ok(());
            }
            d.own.remove(&round);
            let seen = d.seen.remove(&round).unwrap_or_default();
            let mut orders = Vec::new();
            d.policy
                .decide_node(
                    self.scenario.links.network(),
                    self.node,
                    own,
                    &seen,
                    round,
                    &mut orders,
                )
                .map_err(|e| ScenarioRunError::Policy(e.to_string()))?;
            if !orders.is_empty() {
                self.out.decisions += 1;
            }
            let now = self.clock.now();
            self.carry_out(&orders, now)?;
        }
    }

    fn add_tasks(&mut self, tasks: Vec<Task>, now: f64) {
        if tasks.is_empty() {
            return;
        }
        if self.queue.is_empty() {
            self.busy_since = Some(now);
        }
        self.queue.extend(tasks);
        self.idle_reported = false;
    }

    /// Takes up to `count` of the most recently queued tasks (never the one in service).
    fn take_tasks(&mut self, count: u64) -> Vec<Task> {
        let reserved = usize::from(self.in_service.is_some());
        let movable = self.queue.len().saturating_sub(reserved);
        let n = (count as usize).min(movable);
        let keep = self.queue.len() - n;
        let taken: Vec<Task> = self.queue.drain(keep..).collect();
        self.out.sent += taken.len() as u64;
        if self.queue.is_empty()
            && let Some(b) = self.busy_since.take()
        {
            self.out.busy += self.clock.now() - b;
        }
        taken
    }

    fn on_injection(&mut self, now: f64) -> Result<(), ScenarioRunError> {
        let Some(mut policy) = self.delay_aware.take() else {
            return Ok(());
        };
        let mut orders = Vec::new();
        let view = RankView { rank: self, now };
        let decided = policy.on_injection(&view, self.node, &mut orders);
        self.delay_aware = Some(policy);
        decided.map_err(|e| ScenarioRunError::Policy(e.to_string()))?;
        self.out.decisions += 1;
        self.carry_out(&orders, now)
    }

    /// Sends the orders' tasks over the emulated links.
    fn carry_out(&mut self, orders: &[Order], now: f64) -> Result<(), ScenarioRunError> {
        for o in orders {
            debug_assert_eq!(o.from, self.node);
            debug_assert_eq!(o.delivery, Delivery::Link);
            let Some(link) = self.scenario.links.table().link(o.from, o.to) else {
                return Err(ScenarioRunError::Policy(format!(
                    "an order {} -> {} over no link",
                    o.from, o.to
                )));
            };
            let tasks = self.take_tasks(o.tasks);
            if tasks.is_empty() {
                continue;
            }
            let rate = self.scenario.links.rate(link);
            let wire = if rate.is_infinite() {
                0.0
            } else {
                tasks.len() as f64 / rate
            };
            let done = now.max(self.link_free[link]) + wire;
            self.link_free[link] = done;
            let arrival = done + self.scenario.links.delay(link, &mut self.link_rng);
            self.tr.send(
                o.to,
                Message::Tasks {
                    tasks,
                    arrival,
                    sent_at: now,
                },
            )?;
        }
        Ok(())
    }

    fn on_arrival(&mut self) -> Result<(), ScenarioRunError> {
        let load = self.load();
        let Some(th) = &mut self.threshold else {
            return Ok(());
        };
        if th.joined.is_some() || load != th.threshold {
            return Ok(());
        }
        let round = th.done + 1;
        self.join_round(round)
    }

    /// Joins balancing round `round`: sends this rank's load to every rank and stops starting
    /// tasks until the round is over.
    fn join_round(&mut self, round: u64) -> Result<(), ScenarioRunError> {
        let load = self.load();
        let size = self.size;
        let Some(th) = &mut self.threshold else {
            return Ok(());
        };
        th.joined = Some((round, usize::MAX));
        th.loads.entry(round).or_insert_with(|| vec![None; size])[self.node] = Some(load);
        for r in (0..size).filter(|&r| r != self.node) {
            self.notify(r, Message::BalanceLoad { round, load })?;
        }
        self.try_plan(round)
    }

    fn balance_load(&mut self, from: usize, round: u64, load: u64) -> Result<(), ScenarioRunError> {
        let size = self.size;
        let Some(th) = &mut self.threshold else {
            return Ok(());
        };
        th.loads.entry(round).or_insert_with(|| vec![None; size])[from] = Some(load);
        if th.joined.is_none() && round == th.done + 1 {
            return self.join_round(round);
        }
        self.try_plan(round)
    }

    /// Plans round `round` once every load is in, and sends this rank's transfers at once.
    fn try_plan(&mut self, round: u64) -> Result<(), ScenarioRunError> {
        let me = self.node;
        let Some(th) = &mut self.threshold else {
            return Ok(());
        };
        if th.joined != Some((round, usize::MAX)) {
            return Ok(());
        }
        let Some(loads) = th.loads.get(&round) else {
            return Ok(());
        };
        let Some(loads) = loads.iter().copied().collect::<Option<Vec<u64>>>() else {
            return Ok(());
        };
        th.loads.remove(&round);
        let plan =
            hetlb_core::balance(th.algorithm, &loads, &hetlb_core::BalanceOptions::default())
                .map_err(|e| ScenarioRunError::Policy(e.to_string()))?;
        let max = plan.final_loads.iter().copied().max().unwrap_or(0);
        let min = plan.final_loads.iter().copied().min().unwrap_or(0);
        let mean = plan.final_loads.iter().sum::<u64>() as f64 / loads.len().max(1) as f64;
        self.out.balancings.push((max - min, max, mean));
        let expecting = plan.transfers().filter(|t| t.to == me).count();
        let sends: Vec<(usize, u64)> = plan
            .transfers()
            .filter(|t| t.from == me)
            .map(|t| (t.to, t.units))
            .collect();
        th.joined = Some((round, expecting));
        let early: Vec<Vec<Task>> = {
            let (mine, rest): (Vec<_>, Vec<_>) = th.early.drain(..).partition(|(r, _)| *r == round);
            th.early = rest;
            mine.into_iter().map(|(_, t)| t).collect()
        };
        // A node sends out of what it held at the start of the round, as in the plan.
        for (to, units) in sends {
            let tasks = self.take_tasks(units);
            if tasks.is_empty() {
                // Nothing to carry (every task is done): a rank that has already ended the
                // run does not need it.
                self.notify(to, Message::Instant { round, tasks })?;
            } else {
                self.tr.send(to, Message::Instant { round, tasks })?;
            }
        }
        for tasks in early {
            self.instant_tasks(round, tasks);
        }
        self.maybe_end_round();
        Ok(())
    }

    fn instant_tasks(&mut self, round: u64, tasks: Vec<Task>) {
        let now = self.clock.now();
        let Some(th) = &mut self.threshold else {
            return;
        };
        match th.joined {
            Some((r, expecting)) if r == round && expecting != usize::MAX => {
                th.joined = Some((r, expecting.saturating_sub(1)));
                self.out.received += tasks.len() as u64;
                self.add_tasks(tasks, now);
                self.maybe_end_round();
            }
            _ => th.early.push((round, tasks)),
        }
    }

    fn maybe_end_round(&mut self) {
        if let Some(th) = &mut self.threshold
            && let Some((r, 0)) = th.joined
        {
            th.joined = None;
            th.done = r;
        }
    }

    /// Joins the next balancing round when another rank has already asked for it.
    fn next_round(&mut self) -> Result<(), ScenarioRunError> {
        let next = match &self.threshold {
            Some(th) if th.joined.is_none() && th.loads.contains_key(&(th.done + 1)) => th.done + 1,
            _ => return Ok(()),
        };
        self.join_round(next)
    }

    /// Whether the rank holds back its next task: never. A balancing round takes real time
    /// (a message to every rank), which the simulator's instantaneous balancing does not;
    /// holding every rank's work for it would add that time to every queue. The plan is made
    /// on the loads each rank had when it joined the round, and a rank sends out of what it
    /// holds when the plan is made.
    fn paused(&self) -> bool {
        false
    }

    /// Starts, continues or completes the task in service.
    fn serve(&mut self) {
        if self.queue.is_empty() {
            return;
        }
        if self.in_service.is_none() {
            if self.paused() {
                return;
            }
            let s = self
                .scenario
                .nodes
                .service_time(self.node, &mut self.service_rng);
            let real = (s * self.clock.scale).max(0.0);
            // Real seconds of CPU work; the rest of the service time is waited.
            self.in_service = Some(real * self.cfg.work.cpu_fraction());
            let start = match self.cfg.work {
                Work::Cpu => Instant::now(),
                _ => self.chained_from.take().unwrap_or_else(Instant::now),
            };
            self.service_end = Some(start + Duration::from_secs_f64(real));
            self.service_started = Some((start, real));
        }
        let left = self.in_service.unwrap_or(0.0);
        if left > 0.0 {
            if self.cpu_started.is_none() {
                self.cpu_started = Some((Instant::now(), cpu_time::ThreadTime::try_now().ok()));
            }
            let slice = left.min(SLICE);
            self.sink ^= spin(self.calibration.rounds(slice), self.sequence);
            self.in_service = Some(left - slice);
            if left - slice > 0.0 {
                return;
            }
            let done = Instant::now();
            if let Some((wall, cpu)) = self.cpu_started.take() {
                let t = &mut self.out.timing;
                t.cpu_wall += done.saturating_duration_since(wall).as_secs_f64();
                t.cpu_obtained += cpu.map_or(0.0, |c| c.elapsed().as_secs_f64());
            }
            self.cpu_done = Some(done);
        }
        // The CPU part is done: pure CPU work ends now, the others when due.
        if self.cfg.work == Work::Cpu || self.service_end.is_some_and(|e| Instant::now() >= e) {
            self.complete();
        }
    }

    fn complete(&mut self) {
        // A task that waited ends when it was due, whenever the rank noticed; one whose CPU
        // part ran past that ends when the CPU part did.
        let cpu_done = self.cpu_done.take();
        let due = match (self.cfg.work, self.service_end) {
            (Work::Cpu, _) => None,
            (_, Some(e)) if cpu_done.is_none_or(|c| c <= e) => Some(e),
            _ => None,
        };
        let now = due.map_or_else(
            || self.clock.now(),
            |e| e.saturating_duration_since(self.clock.start).as_secs_f64() / self.clock.scale,
        );
        if due.is_some() {
            // A waited task: the rank noticed its end late by however long it took to look.
            self.out.timing.late(now, self.clock.now());
        }
        if let Some((start, real)) = self.service_started.take() {
            let end = due.unwrap_or_else(Instant::now);
            let t = &mut self.out.timing;
            t.service_intended += real;
            t.service_taken += end.saturating_duration_since(start).as_secs_f64();
        }
        if let Some(task) = self.queue.pop_front() {
            self.out.executed += 1;
            self.out.id_sum += u128::from(task.id);
            self.out.response_sum += now - task.entered;
            self.out.finish = now;
            if self.cfg.keep_ids {
                self.out.executed_ids.push(task.id);
            }
        }
        self.in_service = None;
        self.service_end = None;
        if self.queue.is_empty() {
            if let Some(b) = self.busy_since.take() {
                self.out.busy += now - b;
            }
        } else if !self.paused() {
            self.chained_from = due;
        }
    }

    fn report_idle(&mut self) -> Result<(), ScenarioRunError> {
        if self.queue.is_empty() && self.held.is_empty() && !self.idle_reported {
            self.idle_reported = true;
            self.notify(
                0,
                Message::Idle {
                    executed: self.out.executed,
                    arrived: self.out.arrived,
                    arrivals_done: self.next_arrival.is_none() && self.injections.is_empty(),
                },
            )?;
        }
        Ok(())
    }

    /// Waits for the next message or the next due event.
    fn wait(&mut self) -> Result<(), ScenarioRunError> {
        if self.in_service.is_some_and(|left| left > 0.0) {
            return Ok(()); // computing: the next slice comes at once
        }
        if self.in_service.is_none() && !self.queue.is_empty() && !self.paused() {
            return Ok(()); // the next task starts at once
        }
        let mut next = f64::INFINITY;
        for &(t, _) in &self.held {
            next = next.min(t);
        }
        if let Some(&(t, _)) = self.injections.front() {
            next = next.min(t);
        }
        for t in [
            self.next_arrival,
            self.next_status,
            self.scenario.setup.end_time,
        ]
        .into_iter()
        .flatten()
        {
            next = next.min(t);
        }
        let mut deadline = self.clock.instant(next);
        if let Some(e) = self.service_end {
            deadline = deadline.min(e);
        }
        self.watch_peers()?;
        deadline = deadline.min(Instant::now() + WATCH_EVERY);
        if let Some(env) = self.tr.recv(Some(deadline))? {
            self.handle(env.from, env.msg)?;
        }
        Ok(())
    }

    /// Judges the peers (at most every [`WATCH_EVERY`]): one silent for longer than the
    /// timeout (a stopped process) ends the run with an error naming it. A peer whose end has
    /// closed has finished or failed, which its own messages say.
    fn watch_peers(&mut self) -> Result<(), ScenarioRunError> {
        if self.watched.elapsed() < WATCH_EVERY {
            return Ok(());
        }
        self.watched = Instant::now();
        for peer in (0..self.size).filter(|&p| p != self.node) {
            if let hetlb_transport::Liveness::Silent(d) = self.tr.liveness(peer)
                && d > self.cfg.timeout
            {
                return Err(ScenarioRunError::Failed(format!(
                    "node {peer} stopped answering: nothing heard for {:.1} s (timeout \
                         {:.1} s)",
                    d.as_secs_f64(),
                    self.cfg.timeout.as_secs_f64()
                )));
            }
        }
        Ok(())
    }

    fn finish(
        mut self,
        error: Option<String>,
    ) -> Result<(NodeMeasured, Vec<NodeMeasured>), ScenarioRunError> {
        if let Some(e) = error {
            return Err(ScenarioRunError::Failed(e));
        }
        if let Some(b) = self.busy_since.take() {
            self.out.busy += self.clock.now() - b;
        }
        self.out.links = self.estimates.of(self.node);
        std::hint::black_box(self.sink);
        Ok((self.out, self.finals))
    }
}

/// What the policy sees on a rank: its own load exactly, its neighbours' as last reported,
/// the nodes' nominal rates, and the links as measured.
struct RankView<'r, 'a, T> {
    rank: &'r Rank<'a, T>,
    now: f64,
}

impl<T: Transport<Message>> View for RankView<'_, '_, T> {
    fn now(&self) -> f64 {
        self.now
    }

    fn node_count(&self) -> usize {
        self.rank.size
    }

    fn load(&self, node: usize) -> u64 {
        if node == self.rank.node {
            self.rank.load()
        } else {
            self.rank.reports[node].load
        }
    }

    fn rate(&self, node: usize) -> f64 {
        self.rank.scenario.nodes.rate(node)
    }

    fn neighbors(&self, node: usize) -> &[usize] {
        self.rank.scenario.links.table().neighbor_slice(node)
    }

    fn link(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        let links = &self.rank.scenario.links;
        let link = links.table().link(from, to)?;
        Some(
            self.rank
                .estimates
                .get(from, to)
                .unwrap_or((links.rate(link), links.mean_delay(link))),
        )
    }

    fn reported(&self, node: usize) -> Reported {
        self.rank.reports[node]
    }
}
