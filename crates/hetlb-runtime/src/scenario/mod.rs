//! A simulator scenario executed on real workers: one rank per node, tasks that are real work,
//! arrivals and injections at their (scaled) times, links emulated on the real transport, and
//! the policy's decisions from the simulator's own code.
//!
//! `hetlb simulate FILE.toml` predicts what a policy does to a system whose tasks arrive over
//! time; [`run_threads`] (and [`run_on`] on any group of ranks, MPI processes too) runs the same file for
//! real, and `hetlb_experiments::drivers::scenario` sets the measurement beside the
//! prediction:
//!
//! * **Time.** Scenario time is real time divided by the time scale `S`: a task whose service
//!   time is `s` (drawn from the same seeded stream as the simulator's) takes `s·S` real
//!   seconds of CPU work (or of waiting, with [`Work::Sleep`]); an injection at `t` happens at
//!   `t·S`. Measured times are reported in scenario time.
//! * **Links.** A batch sent at `t` over a link of rate `μ` and delay `d` is delivered at
//!   `max(t, link free) + n/μ + d` (the delay drawn from the simulator's stream), no earlier,
//!   whatever the real transport takes.
//! * **Policies.** The delay-aware policy runs [`hetlb_sim::policy::DelayAware`] on the rank
//!   where load is injected, with its own load, its neighbours' last status reports, and the
//!   links as measured by probes before the run. The threshold-triggered hypercube policy
//!   balances in a synchronous round: every rank sends its load to every rank, plans with the
//!   core's algorithm (the same call as the simulator's), and moves its tasks at once.
//!   The diffusion policies (DISHET and its baselines, Neelakantan 2012) run their rounds asynchronously
//!   between neighbours: at each round's time a rank sends its load to its neighbours, and
//!   once it has theirs it decides with [`hetlb_sim::policy::DiffusionPolicy::decide_node`]
//!   — the simulator's decision, from its own and its neighbours' loads only — and sends the
//!   units over the emulated links.
//! * **Accounting.** Every task has a unique id; the run checks that the tasks executed are
//!   exactly those that entered (count and id sum).
//!
//! **Failures.** A rank whose loop fails (or panics) tells rank 0, which stops every rank: the
//! run ends with an error naming the node, and its tasks are not re-queued elsewhere. Rank 0
//! failing ends the run the same way. On MPI a rank that dies ends the job through the
//! launcher.
//!
//! Differences from the simulator, by construction: a task in service is never moved (the
//! simulator may move it and restart it elsewhere), status reports travel as messages rather
//! than as a global snapshot, and a rank notices events between slices of work (at most
//! 200 µs late).

mod coordinator;
mod links;
mod messages;
mod rank;
mod work;

pub use links::LinkEstimates;
use messages::Message;
pub use messages::{LinkMeasure, NodeMeasured, RankTiming, Task};
pub use work::{Calibration, Work};

use hetlb_sim::Scenario;
use hetlb_sim::scenario::PolicySpec;
use hetlb_transport::{Transport, TransportError};
use rank::{Clock, Rank};
use serde::Serialize;
use std::time::{Duration, Instant};
use thiserror::Error;

/// The most ranks a threads run starts for a scenario.
pub const MAX_RANKS: usize = 256;
/// The longest run accepted, in real seconds (at the chosen scale).
pub const MAX_REAL_SECONDS: f64 = 3600.0;
/// The most tasks a real run holds.
pub const MAX_TASKS: u64 = 20_000_000;
/// The shortest real time between two diffusion rounds: a round is a message to and from
/// every neighbour on every rank, which real workers cannot repeat every few microseconds.
pub const MIN_ROUND_SECONDS: f64 = 1e-3;
/// The most diffusion rounds a rank may fall behind its schedule (or leave undecided) before
/// the run is stopped as unable to keep up: memory stays bounded whatever the time scale.
pub const MAX_ROUNDS_BEHIND: u64 = 10_000;

/// How a scenario runs on real workers.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RealConfig {
    /// Real seconds per scenario second.
    pub time_scale: f64,
    /// CPU work or timed waits.
    pub work: Work,
    /// Keep every executed task's id (for tests of exactly-once execution).
    pub keep_ids: bool,
    /// How long the ranks may take to measure their links and to report at the end.
    pub timeout: Duration,
    /// Fault injection: node `.0` fails at scenario time `.1` (its loop ends with an error).
    pub fail: Option<(usize, f64)>,
}

impl RealConfig {
    /// `time_scale` real seconds per scenario second and `work` per task; ids not kept, a
    /// 60 s timeout, no fault.
    #[must_use]
    pub fn new(time_scale: f64, work: Work) -> Self {
        Self {
            time_scale,
            work,
            keep_ids: false,
            timeout: Duration::from_secs(60),
            fail: None,
        }
    }

    /// Sets [`timeout`](Self::timeout).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets [`keep_ids`](Self::keep_ids).
    #[must_use]
    pub fn keep_ids(mut self, keep_ids: bool) -> Self {
        self.keep_ids = keep_ids;
        self
    }

    /// Sets [`fail`](Self::fail).
    #[must_use]
    pub fn fail(mut self, fail: Option<(usize, f64)>) -> Self {
        self.fail = fail;
        self
    }
}

/// Why a scenario could not run on real workers.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ScenarioRunError {
    /// The scenario does not fit real workers here.
    #[error("{0}")]
    TooLarge(String),
    /// Bad settings.
    #[error("{0}")]
    Config(String),
    /// A message could not be moved.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// The policy refused its input.
    #[error("policy: {0}")]
    Policy(String),
    /// The run failed on a rank.
    #[error("{0}")]
    Failed(String),
    /// Tasks were lost or executed twice.
    #[error("task accounting: {0}")]
    Accounting(String),
}

/// What the run measured, in scenario time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct RealReport {
    /// The backend.
    pub backend: String,
    /// Real seconds per scenario second.
    pub time_scale: f64,
    /// CPU work or waits.
    pub work: Work,
    /// Scenario time of the last completion.
    pub makespan: f64,
    /// Σ over nodes of idle time up to the makespan.
    pub total_idle: f64,
    /// Tasks moved between nodes.
    pub tasks_moved: u64,
    /// Tasks that arrived from outside.
    pub tasks_arrived: u64,
    /// Tasks injected.
    pub tasks_injected: u64,
    /// Tasks executed.
    pub tasks_completed: u64,
    /// Mean time from entering to completion.
    pub mean_response_time: Option<f64>,
    /// Per node.
    pub nodes: Vec<NodeMeasured>,
    /// Real seconds the whole run took (probes and reporting included).
    pub real_seconds: f64,
    /// Mean lateness of deliveries behind their modelled arrival (scenario seconds).
    pub mean_lateness: Option<f64>,
    /// How closely the run kept to its time scale, over every rank.
    pub timing: Timing,
}

/// How closely a real run kept to its time scale: the figures that say whether its times can
/// be compared with the simulator's.
///
/// A rank that gets less CPU than its tasks need (a busy machine, or more ranks than cores
/// with CPU work) takes longer than the scenario says; one that notices its events late
/// (deliveries, arrivals, rounds, the ends of waited tasks) acts on them late. Either way its
/// queues, and so its times, are no longer those of the scenario.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Timing {
    /// Real seconds the tasks took ÷ the real seconds they asked for (1 keeps to the scale).
    pub service_stretch: Option<f64>,
    /// CPU seconds obtained ÷ wall seconds spent computing, over every rank's CPU work: the
    /// share of a core the ranks got while they computed (`None` without CPU work).
    pub cpu_obtained: Option<f64>,
    /// Mean lateness of due events, scenario seconds.
    pub mean_event_lateness: f64,
    /// The latest event, scenario seconds.
    pub max_event_lateness: f64,
    /// Due events counted.
    pub events: u64,
}

impl Timing {
    /// Sums the ranks' records.
    pub fn of(nodes: &[NodeMeasured]) -> Self {
        let sum = |f: fn(&RankTiming) -> f64| nodes.iter().map(|n| f(&n.timing)).sum::<f64>();
        let events: u64 = nodes.iter().map(|n| n.timing.events).sum();
        let (intended, cpu_wall) = (sum(|t| t.service_intended), sum(|t| t.cpu_wall));
        Self {
            service_stretch: (intended > 0.0).then(|| sum(|t| t.service_taken) / intended),
            cpu_obtained: (cpu_wall > 0.0).then(|| sum(|t| t.cpu_obtained) / cpu_wall),
            mean_event_lateness: if events > 0 {
                sum(|t| t.lateness_sum) / events as f64
            } else {
                0.0
            },
            max_event_lateness: nodes
                .iter()
                .map(|n| n.timing.lateness_max)
                .fold(0.0, f64::max),
            events,
        }
    }

    /// Why the run's times cannot stand for the scenario's, if they cannot: the tasks took
    /// more than 10% longer than they asked, the ranks got less than 75% of a core while
    /// computing, or events were noticed late by more than 2% of `makespan` on average (or
    /// 10% at worst). Each reason carries its figure.
    pub fn problems(&self, makespan: f64) -> Vec<String> {
        let mut out = Vec::new();
        if let Some(s) = self.service_stretch.filter(|&s| s > 1.1) {
            out.push(format!(
                "the tasks took {:.0}% longer than their service times at this time scale",
                100.0 * (s - 1.0)
            ));
        }
        if let Some(c) = self.cpu_obtained.filter(|&c| c < 0.75) {
            out.push(format!(
                "the ranks got {:.0}% of a core while computing",
                100.0 * c
            ));
        }
        if makespan > 0.0
            && (self.mean_event_lateness > 0.02 * makespan
                || self.max_event_lateness > 0.1 * makespan)
        {
            out.push(format!(
                "events were noticed {:.1}% of the makespan late on average ({:.1}% at worst)",
                100.0 * self.mean_event_lateness / makespan,
                100.0 * self.max_event_lateness / makespan
            ));
        }
        out
    }
}

impl RealReport {
    /// Assembles the report from every rank's measurements (checking exactly-once execution).
    ///
    /// # Errors
    /// [`ScenarioRunError::Accounting`] when the tasks executed are not those created.
    pub fn assemble(
        backend: &str,
        cfg: &RealConfig,
        mut nodes: Vec<NodeMeasured>,
        real_seconds: f64,
    ) -> Result<Self, ScenarioRunError> {
        nodes.sort_by_key(|n| n.node);
        let executed: u64 = nodes.iter().map(|n| n.executed).sum();
        let created: u64 = nodes.iter().map(|n| n.created).sum();
        let id_sum: u128 = nodes.iter().map(|n| n.id_sum).sum();
        let created_sum: u128 = nodes.iter().map(|n| n.created_id_sum).sum();
        if executed != created || id_sum != created_sum {
            return Err(ScenarioRunError::Accounting(format!(
                "{created} tasks entered, {executed} were executed (id sums {created_sum} and \
                 {id_sum})"
            )));
        }
        let makespan = nodes.iter().map(|n| n.finish).fold(0.0, f64::max);
        let total_idle = nodes.iter().map(|n| (makespan - n.busy).max(0.0)).sum();
        let deliveries: u64 = nodes.iter().map(|n| n.deliveries).sum();
        let lateness: f64 = nodes.iter().map(|n| n.lateness_sum).sum();
        Ok(Self {
            backend: backend.to_string(),
            time_scale: cfg.time_scale,
            work: cfg.work,
            makespan,
            total_idle,
            tasks_moved: nodes.iter().map(|n| n.received).sum(),
            tasks_arrived: nodes.iter().map(|n| n.arrived).sum(),
            tasks_injected: nodes.iter().map(|n| n.injected).sum(),
            tasks_completed: executed,
            mean_response_time: (executed > 0)
                .then(|| nodes.iter().map(|n| n.response_sum).sum::<f64>() / executed as f64),
            real_seconds,
            mean_lateness: (deliveries > 0).then(|| lateness / deliveries as f64),
            timing: Timing::of(&nodes),
            nodes,
        })
    }
}

/// Refuses scenarios that do not fit real workers here, and policies that cannot run on them.
///
/// `predicted_makespan` is the simulator's, in scenario seconds.
///
/// # Errors
/// [`ScenarioRunError::TooLarge`] naming what is too large; [`ScenarioRunError::Config`] for
/// a policy the ranks do not carry out (the delay-aware plan carried out by the whole
/// neighbourhood, which relays tasks through the centre).
pub fn check(
    scenario: &Scenario,
    ranks_limit: usize,
    time_scale: f64,
    predicted_makespan: f64,
) -> Result<(), ScenarioRunError> {
    check_size(scenario, ranks_limit)?;
    if !(time_scale.is_finite() && time_scale > 0.0) {
        return Err(ScenarioRunError::Config(format!(
            "time scale {time_scale} must be positive and finite"
        )));
    }
    if let PolicySpec::Diffusion(d) = &scenario.policy {
        let real = d.interval() * time_scale;
        if real < MIN_ROUND_SECONDS {
            return Err(ScenarioRunError::Config(format!(
                "policy.interval: a round every {} scenario s is one every {real:.1e} real s at \
                 time scale {time_scale:e}; real workers need at least {:.0} ms between rounds \
                 (use a --time-scale of at least {:e})",
                d.interval(),
                MIN_ROUND_SECONDS * 1e3,
                MIN_ROUND_SECONDS / d.interval()
            )));
        }
    }
    let real = predicted_makespan * time_scale;
    if real > MAX_REAL_SECONDS {
        return Err(ScenarioRunError::TooLarge(format!(
            "the run would last about {real:.0} s at time scale {time_scale}; at most \
             {MAX_REAL_SECONDS:.0} s (choose a smaller --time-scale)"
        )));
    }
    Ok(())
}

/// What [`check`] refuses without the simulator's prediction: a policy the ranks do not
/// carry out, more nodes than `ranks_limit`, more tasks than [`MAX_TASKS`]. Run before the
/// prediction, it keeps a scenario too large for real workers from being simulated first.
///
/// # Errors
/// As [`check`].
pub fn check_size(scenario: &Scenario, ranks_limit: usize) -> Result<(), ScenarioRunError> {
    if let PolicySpec::DelayAware {
        carry: hetlb_sim::policy::CarryOut::Neighbourhood,
        ..
    } = scenario.policy
    {
        return Err(ScenarioRunError::Config(
            "policy.carry_out: \"neighbourhood\" runs in the simulator only; on real workers \
             the centre carries out its own transfers (carry_out = \"centre\")"
                .into(),
        ));
    }
    let n = scenario.node_count();
    if n > ranks_limit {
        return Err(ScenarioRunError::TooLarge(format!(
            "nodes.count: {n} nodes need {n} ranks; at most {ranks_limit} run here"
        )));
    }
    let tasks = task_bound(scenario);
    if tasks > u128::from(MAX_TASKS) {
        return Err(ScenarioRunError::TooLarge(format!(
            "the scenario holds about {tasks} tasks; at most {MAX_TASKS} run on real workers"
        )));
    }
    Ok(())
}

/// The most tasks a real run of `scenario` may hold: the initial and injected ones, and the
/// arrivals (`per_node` on every node, or 1.2 times the expected count up to `end_time`).
fn task_bound(scenario: &Scenario) -> u128 {
    let setup = &scenario.setup;
    let n = scenario.node_count() as u128;
    let mut tasks: u128 = setup.initial.iter().map(|&w| u128::from(w)).sum();
    tasks += setup
        .injections
        .iter()
        .map(|i| u128::from(i.tasks))
        .sum::<u128>();
    if let Some(a) = &setup.arrivals {
        match (a.per_node, setup.end_time) {
            (Some(k), _) => tasks = tasks.saturating_add(u128::from(k) * n),
            (None, Some(t)) => {
                tasks = a
                    .rates
                    .iter()
                    .map(|r| (r * t * 1.2 + 10.0).min(1e30) as u128)
                    .fold(tasks, u128::saturating_add);
            }
            (None, None) => {}
        }
    }
    tasks
}

/// Bytes a task takes on real workers at the peak: the task in its queue or message, and the
/// spare room of the vectors that hold it.
pub const TASK_BYTES: u128 = 48;

/// Bytes a rank takes besides its tasks: its thread's stack and the copy of the scenario it
/// runs (per node and per link of the scenario).
const RANK_BYTES: u128 = 2 << 20;

/// An estimate of the bytes a threads run of `scenario` holds at its peak: every task it can
/// hold ([`TASK_BYTES`] each) and, per rank, a thread's stack and a copy of the scenario
/// (its nodes and links). What `hetlb run scenario` checks against `--max-memory` before
/// anything runs.
///
/// # Example
/// ```
/// use hetlb_sim::Scenario;
/// let s = Scenario::from_toml(
///     "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\ninitial = 1000000\n",
/// ).unwrap();
/// assert!(hetlb_runtime::scenario::memory_estimate(&s) > 4_000_000 * 48);
/// ```
pub fn memory_estimate(scenario: &Scenario) -> u128 {
    use hetlb_sim::model::LinkModel;
    let n = scenario.node_count() as u128;
    let links = scenario.links.table().link_count() as u128;
    let copy = n * 64 + links * 64;
    task_bound(scenario)
        .saturating_mul(TASK_BYTES)
        .saturating_add(n * (RANK_BYTES + copy))
}

/// The time scale that makes the run last about `target` real seconds, given the simulator's
/// makespan; never so small that a mean task would take less than 100 µs, nor diffusion
/// rounds come less than [`MIN_ROUND_SECONDS`] apart.
pub fn default_time_scale(scenario: &Scenario, predicted_makespan: f64, target: f64) -> f64 {
    use hetlb_sim::model::NodeModel;
    let fastest = (0..scenario.node_count())
        .map(|i| scenario.nodes.rate(i))
        .fold(0.0, f64::max);
    let by_length = target / predicted_makespan.max(1e-9);
    let by_task = if fastest > 0.0 { 100e-6 * fastest } else { 0.0 };
    let by_round = match &scenario.policy {
        PolicySpec::Diffusion(d) => MIN_ROUND_SECONDS / d.interval(),
        _ => 0.0,
    };
    by_length.max(by_task).max(by_round)
}

/// Runs this rank's node of the scenario with the other ranks of `group` (every rank calls
/// it, one rank per node, opening the run's endpoint at the same point): measures links
/// (delay-aware policy), waits for the common start, runs the node, and reports to rank 0.
/// Rank 0 returns the report, the others `None`.
///
/// # Errors
/// [`ScenarioRunError`] when the endpoint cannot be opened, or the run fails on this or
/// another rank.
pub fn run_on<G: hetlb_transport::Group>(
    group: &G,
    scenario: &Scenario,
    cfg: &RealConfig,
    calibration: Calibration,
) -> Result<Option<RealReport>, ScenarioRunError> {
    let tr = group
        .open::<Message>()
        .map_err(|e| ScenarioRunError::Failed(format!("cannot open the run's endpoint: {e}")))?;
    run_rank(&tr, scenario, cfg, calibration)
}

/// Runs one rank of the scenario over `tr` (see [`run_on`]).
pub(crate) fn run_rank<T: Transport<Message>>(
    tr: &T,
    scenario: &Scenario,
    cfg: &RealConfig,
    calibration: Calibration,
) -> Result<Option<RealReport>, ScenarioRunError> {
    let started = Instant::now();
    let me = tr.rank();
    // Messages of the run that arrive before this rank has started (from ranks that started
    // a moment earlier): kept for it.
    let mut early = Vec::new();
    let measures = if matches!(scenario.policy, PolicySpec::DelayAware { .. }) {
        links::probe(tr, scenario, cfg.time_scale, cfg.timeout, &mut early)?
    } else {
        // Everyone is ready at once: a start signal all the same, for a common clock.
        tr.send(0, Message::Probed)?;
        wait_start(tr, cfg.timeout, &mut early)?;
        Vec::new()
    };
    // Every rank learns the others' measurements through its own only: the delay-aware
    // policy reads the links of the deciding rank, which are its own.
    let mut estimates = LinkEstimates::default();
    for m in measures {
        estimates.insert(m);
    }
    let clock = Clock {
        start: Instant::now(),
        scale: cfg.time_scale,
    };
    let result = Rank::new(tr, scenario, cfg, calibration, clock, &estimates).run(early);
    let (measured, early) = match result {
        Ok(m) => m,
        // A rank that has ended could not be sent to: on rank 0, the reason it ended (its
        // `Failed` message, on its way) is the news.
        Err(ScenarioRunError::Transport(TransportError::Closed(gone))) if me == 0 => {
            return Err(failure_of(tr, gone, cfg.timeout));
        }
        Err(e) => {
            let _ = tr.send(
                0,
                Message::Failed {
                    message: e.to_string(),
                },
            );
            return Err(e);
        }
    };
    if me != 0 {
        tr.send(0, Message::Final(Box::new(measured)))?;
        return Ok(None);
    }
    let mut all = vec![measured];
    all.extend(early);
    // Every other rank's report, waiting for each while it is not silent for the timeout.
    let mut reported = vec![false; tr.size()];
    let take = |from: usize,
                msg: Message,
                all: &mut Vec<NodeMeasured>,
                reported: &mut Vec<bool>| {
        match msg {
            Message::Final(m) => {
                if let Some(r) = reported.get_mut(m.node) {
                    *r = true;
                }
                all.push(*m);
                Ok(())
            }
            Message::Failed { message } => Err(ScenarioRunError::Failed(format!(
                "node {from} failed: {message}"
            ))),
            _ => Ok(()),
        }
    };
    for m in &all {
        if let Some(r) = reported.get_mut(m.node) {
            *r = true;
        }
    }
    while let Some(missing) = reported.iter().position(|&r| !r) {
        let slice = Instant::now() + Duration::from_millis(50);
        if let Some(env) = tr.recv(Some(slice))? {
            take(env.from, env.msg, &mut all, &mut reported)?;
            continue;
        }
        // Read what has arrived before judging anyone: a rank that finished sent its report
        // before its end closed.
        let mut got = false;
        while let Some(env) = tr.try_recv()? {
            take(env.from, env.msg, &mut all, &mut reported)?;
            got = true;
        }
        let silence = tr.liveness(missing).silence();
        if !got && !reported[missing] && silence > cfg.timeout {
            let left = reported.iter().filter(|&&r| !r).count();
            return Err(ScenarioRunError::Failed(format!(
                "{left} of {} ranks did not report: rank {missing} has been silent for longer \
                 than the timeout ({:?})",
                tr.size(),
                cfg.timeout
            )));
        }
    }
    RealReport::assemble(tr.backend(), cfg, all, started.elapsed().as_secs_f64()).map(Some)
}

/// Why rank `gone` ended, from its `Failed` message (waited for briefly).
fn failure_of<T: Transport<Message>>(tr: &T, gone: usize, timeout: Duration) -> ScenarioRunError {
    let until = Instant::now() + timeout.min(Duration::from_secs(1));
    while let Ok(got) = tr.recv(Some(until)) {
        match got {
            Some(env) => {
                if let Message::Failed { message } = env.msg {
                    return ScenarioRunError::Failed(format!(
                        "node {} failed: {message}",
                        env.from
                    ));
                }
            }
            None if Instant::now() >= until => break,
            None => {}
        }
    }
    ScenarioRunError::Failed(format!("node {gone} ended before the run did"))
}

/// Rank 0 sends `Start` once every rank said it is ready; everyone waits for it.
fn wait_start<T: Transport<Message>>(
    tr: &T,
    timeout: Duration,
    early: &mut Vec<(usize, Message)>,
) -> Result<(), ScenarioRunError> {
    let deadline = Instant::now() + timeout;
    let mut ready = 0usize;
    loop {
        match tr.recv(Some(deadline))? {
            Some(env) => match env.msg {
                Message::Probed if tr.rank() == 0 => {
                    ready += 1;
                    if ready == tr.size() {
                        for r in 0..tr.size() {
                            tr.send(r, Message::Start)?;
                        }
                    }
                }
                Message::Start => return Ok(()),
                other => early.push((env.from, other)),
            },
            None if Instant::now() < deadline => {}
            None => {
                return Err(ScenarioRunError::Failed(format!(
                    "rank {}: the run did not start within {timeout:?}",
                    tr.rank()
                )));
            }
        }
    }
}

/// Runs `scenario` on one thread per node.
///
/// # Errors
/// [`ScenarioRunError`]: too large, a failed rank (its error, named), lost tasks.
///
/// # Example
/// ```
/// use hetlb_runtime::scenario::{run_threads, Calibration, RealConfig, Work};
/// use hetlb_sim::Scenario;
/// use std::time::Duration;
/// let s = Scenario::from_toml("topology = \"ring:3\"\n[nodes]\ncount = 3\nrate = 100.0\ninitial = 20\n").unwrap();
/// let cfg = RealConfig::new(0.1, Work::Sleep).timeout(Duration::from_secs(10));
/// let r = run_threads(&s, &cfg, Calibration { rounds_per_second: 1e9 }).unwrap();
/// assert_eq!(r.tasks_completed, 60);
/// assert_eq!(r.nodes.iter().map(|n| n.executed).sum::<u64>(), 60); // each task once
/// ```
pub fn run_threads(
    scenario: &Scenario,
    cfg: &RealConfig,
    calibration: Calibration,
) -> Result<RealReport, ScenarioRunError> {
    let n = scenario.node_count();
    if n == 0 || n > MAX_RANKS {
        return Err(ScenarioRunError::TooLarge(format!(
            "nodes.count: {n} nodes; 1 to {MAX_RANKS} run on threads"
        )));
    }
    let mut ends = hetlb_transport::threads::network::<Message>(n).into_iter();
    let first = ends.next().expect("at least one rank");
    let mut handles = Vec::new();
    for tr in ends {
        let scenario = scenario.clone();
        let cfg = cfg.clone();
        handles.push(
            std::thread::Builder::new()
                .name(format!("hetlb-node{}", tr.rank()))
                .spawn(move || {
                    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        run_rank(&tr, &scenario, &cfg, calibration)
                    }));
                    if let Err(p) = &run {
                        let message = p
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                            .unwrap_or_else(|| "panicked".into());
                        let _ = tr.send(0, Message::Failed { message });
                    }
                })
                .map_err(|e| ScenarioRunError::Failed(format!("cannot start a thread: {e}")))?,
        );
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_rank(&first, scenario, cfg, calibration)
    }));
    let result = match result {
        Ok(r) => r,
        Err(_) => {
            for r in 1..n {
                let _ = first.send(
                    r,
                    Message::Stop {
                        error: Some("node 0 panicked".into()),
                    },
                );
            }
            Err(ScenarioRunError::Failed("node 0 panicked".into()))
        }
    };
    if result.is_err() {
        for r in 1..n {
            let _ = first.send(
                r,
                Message::Stop {
                    error: Some("the run failed".into()),
                },
            );
        }
    }
    for h in handles {
        let _ = h.join();
    }
    result.and_then(|r| r.ok_or_else(|| ScenarioRunError::Failed("rank 0 has no report".into())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(timing: RankTiming) -> NodeMeasured {
        NodeMeasured {
            timing,
            ..NodeMeasured::default()
        }
    }

    /// The verdict follows the figures: a run that kept to its scale has nothing to say; one
    /// whose tasks took longer, whose ranks got too little CPU, or whose events were late,
    /// says which, with the figure.
    #[test]
    fn a_run_that_fell_behind_its_time_scale_says_why() {
        let kept = RankTiming {
            service_intended: 10.0,
            service_taken: 10.2,
            cpu_wall: 4.0,
            cpu_obtained: 3.9,
            lateness_sum: 0.01,
            lateness_max: 0.01,
            events: 10,
        };
        let t = Timing::of(&[node(kept), node(kept)]);
        assert_eq!(t.events, 20);
        assert!((t.service_stretch.unwrap() - 1.02).abs() < 1e-12);
        assert!(t.problems(10.0).is_empty());
        let slow = RankTiming {
            service_taken: 25.0,
            cpu_obtained: 1.0,
            lateness_sum: 10.0,
            lateness_max: 3.0,
            ..kept
        };
        let p = Timing::of(&[node(kept), node(slow)]).problems(10.0);
        assert_eq!(p.len(), 3, "{p:?}");
        assert!(p[0].contains("76% longer"), "{p:?}");
        assert!(p[1].contains("61% of a core"), "{p:?}");
        assert!(p[2].contains("late"), "{p:?}");
        // Waits only: no CPU figure, and none is judged.
        let waits = RankTiming {
            cpu_wall: 0.0,
            cpu_obtained: 0.0,
            ..kept
        };
        assert_eq!(Timing::of(&[node(waits)]).cpu_obtained, None);
    }
}
