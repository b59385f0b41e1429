//! The discrete-event engine. See `README.md` beside this file for the design.
//!
//! [`Engine`] is generic over a [`NodeModel`], a [`LinkModel`] and a [`Policy`]; it owns the
//! event queue, the node queues, the links' timetables and one random stream per node and
//! purpose. A run is a pure function of its inputs and seed.

mod event;
mod node;
mod tasks;

pub use event::Event;

use crate::model::{LinkModel, NodeModel};
use crate::policy::{Delivery, Order, Policy, PolicyError, Reported, View};
use crate::prefetch::{huge_page_collect, huge_page_vec, prefetch};
use crate::queue::EventQueue;
use crate::report::{NodeReport, Report};
use crate::rng::{Purpose, exponential, stream};
use hetlb_core::topology::Topology;
use node::NodeState;
use rand_pcg::Pcg64;
use tasks::{Run, tasks_in};
use thiserror::Error;

/// How many events ahead the engine starts loading an event's memory (besides the next
/// one's): enough to keep several loads in flight while events are handled.
const PREFETCH_DISTANCE: usize = 6;

/// How many orders ahead a balance's orders ask for the records of their two nodes (and the
/// events held while they are carried out, for their node's).
const ORDERS_AHEAD: usize = 4;

/// External load entering a node at a given time (the one-shot policy's trigger).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Injection {
    /// Receiving node.
    pub node: usize,
    /// Time in seconds (≥ 0).
    pub time: f64,
    /// Number of tasks.
    pub tasks: u64,
}

/// Poisson arrivals of tasks at every node.
#[derive(Debug, Clone, PartialEq)]
pub struct Arrivals {
    /// Arrival rate of each node in tasks per second (0 for none).
    pub rates: Vec<f64>,
    /// Tasks generated per node before its stream stops; `None` for no limit (the run then
    /// needs an end time).
    pub per_node: Option<u64>,
}

/// Queue-length recording.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesOptions {
    /// Record at all.
    pub enabled: bool,
    /// Minimum seconds between two samples of a node (0 records every change); a node
    /// running dry is always recorded.
    pub interval: f64,
}

/// Everything about a run except the models and the policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Tasks at each node at time 0.
    pub initial: Vec<u64>,
    /// One-shot injections.
    pub injections: Vec<Injection>,
    /// Poisson arrivals, if any.
    pub arrivals: Option<Arrivals>,
    /// Seed of every random stream.
    pub seed: u64,
    /// Stop at this time (events after it are not processed).
    pub end_time: Option<f64>,
    /// Nodes report their load at time 0 and then every this many seconds (`None`: at time
    /// 0 only).
    pub status_interval: Option<f64>,
    /// Queue-length recording.
    pub series: SeriesOptions,
    /// Recount every task after every event (`O(N)` per event) and fail on any loss.
    pub check_conservation: bool,
}

impl Setup {
    /// `initial` tasks per node and nothing else: no injections, no arrivals, seed 0, no end
    /// time, no series, conservation checked only at the end.
    pub fn new(initial: Vec<u64>) -> Self {
        Self {
            initial,
            injections: Vec::new(),
            arrivals: None,
            seed: 0,
            end_time: None,
            status_interval: None,
            series: SeriesOptions {
                enabled: false,
                interval: 0.0,
            },
            check_conservation: false,
        }
    }
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SimError {
    /// The setup and the models disagree.
    #[error("{0}")]
    Setup(String),
    /// A policy ordered a transfer over a link that does not exist.
    #[error("policy ordered a transfer {from} -> {to}, but there is no such link")]
    NoLink {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
    },
    /// A policy's rule refused its input.
    #[error("policy: {0}")]
    Policy(#[from] PolicyError),
    /// A node would hold more tasks than its queue can count.
    #[error("node {node} would hold more than {max} tasks, the most one node's queue can hold")]
    QueueFull {
        /// The node.
        node: usize,
        /// The most tasks one node holds.
        max: u64,
    },
    /// Tasks were lost or created: a bug in the engine.
    #[error(
        "task conservation violated at t = {time}: executed {executed} + queued {queued} + in transit {in_transit} != {expected}"
    )]
    Conservation {
        /// When.
        time: f64,
        /// Tasks executed.
        executed: u64,
        /// Tasks queued.
        queued: u64,
        /// Tasks on links.
        in_transit: u64,
        /// Initial + injected + arrived.
        expected: u64,
    },
}

/// The error of a node whose queue would overflow.
fn queue_full(node: usize) -> SimError {
    SimError::QueueFull {
        node,
        max: tasks::TaskQueue::MAX,
    }
}

/// A batch of tasks on a link.
#[derive(Debug, Clone)]
struct Batch {
    to: usize,
    /// The tasks, as runs of equal entry times.
    tasks: Vec<Run>,
    /// Where `to` forwards the batch on arrival, for a relayed order.
    then: Option<usize>,
}

/// The discrete-event engine.
///
/// # Example
/// ```
/// use hetlb_sim::engine::{Engine, Injection, Setup};
/// use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_sim::policy::NoBalancing;
/// // Two nodes at 10 tasks/s with 10 tasks each; 20 more enter node 0 at t = 0.5 s.
/// let nodes = Nodes::new(vec![10.0, 10.0], Distribution::Deterministic);
/// let pair = "path:2".parse::<TopologySpec>().unwrap().build().unwrap();
/// let links = Links::uniform(pair, LinkParams::INSTANT);
/// let mut setup = Setup::new(vec![10, 10]);
/// setup.injections.push(Injection { node: 0, time: 0.5, tasks: 20 });
/// let report = Engine::new(nodes, links, NoBalancing, setup).unwrap().run().unwrap();
/// assert!((report.makespan - 3.0).abs() < 1e-9);
/// assert!((report.total_idle - 2.0).abs() < 1e-9);
/// ```
pub struct Engine<N, L, P> {
    nodes: N,
    links: L,
    policy: P,
    setup: Setup,
    now: f64,
    queue: EventQueue<Event>,
    state: Vec<NodeState>,
    link_rng: Vec<Pcg64>,
    link_free: Vec<f64>,
    in_flight: Vec<Option<Batch>>,
    free_slots: Vec<u32>,
    /// Every node's load at the last status report (its initial load before the first).
    reports: Vec<u64>,
    /// When the last status report was made (0 before the first): the same for every node.
    report_time: f64,
    /// Nodes whose load may have changed since the last status report, each once (its
    /// `changed` flag set): a report updates these only, not every node.
    changed: Vec<u32>,
    /// Whether status reports are made and read (changes are tracked only then).
    reporting: bool,
    /// Every node's load, kept up to date where a load changes, for a policy that reads all
    /// loads at once ([`Policy::reads_all_loads`]; empty otherwise): one contiguous copy
    /// instead of a visit to every node record.
    loads: Vec<u64>,
    orders: Vec<Order>,
    /// Tasks being moved by an instant order.
    moving: Vec<Run>,
    events: u64,
    cancelled: u64,
    injected: u64,
    arrived: u64,
    moved: u64,
    transfers: u64,
    in_transit: u64,
    /// Every node's `(time, queue length)` samples, when series are recorded (empty
    /// otherwise); kept apart from the node records, which every event touches.
    queue_series: Vec<Vec<(f64, u64)>>,
    /// `(time, tasks on links)` at its changes, when series are recorded.
    transit_series: Vec<(f64, u64)>,
    response_sum: f64,
    /// Completions found cancelled before they were queued (see [`Elided`]).
    elided: Elided,
    /// While a policy's orders are carried out: the events they schedule, in order, queued
    /// at the end (`None`: queued at once).
    deferred: Option<Vec<(f64, Event)>>,
    /// The buffer of `deferred`, kept between batches.
    held: Vec<(f64, Event)>,
    /// Queue every completion, even one cancelled before it is queued.
    keep_cancelled: bool,
}

/// Completions scheduled and cancelled while one batch of orders was carried out (a node
/// that received tasks and then gave them all away within the same balancing). They are
/// never queued; the run accounts for them as if they had been popped and found stale: they
/// are counted as cancelled when due by the end time, and one due after it stops the run
/// early, as a queued one would. Only done when nothing asks whether the queue is empty (no
/// periodic rounds or status reports), since a queued stale event keeps the queue non-empty.
#[derive(Debug, Clone, Copy, Default)]
struct Elided {
    /// Elided completions due by the end time.
    cancelled: u64,
    /// The latest due time of those, `-∞` if none.
    latest_by_end: f64,
    /// Some elided completion is due after the end time.
    after_end: bool,
}

impl<N: NodeModel, L: LinkModel, P: Policy> Engine<N, L, P> {
    /// Prepares a run.
    ///
    /// # Errors
    /// [`SimError::Setup`] when the node model, the network, the initial loads, the
    /// injections or the arrival rates do not agree on the number of nodes, or a time or
    /// rate is out of range.
    pub fn new(nodes: N, links: L, policy: P, setup: Setup) -> Result<Self, SimError> {
        let n = nodes.node_count();
        let bad = |m: String| Err(SimError::Setup(m));
        if links.network().node_count() != n {
            return bad(format!(
                "the network has {} nodes, the node model {n}",
                links.network().node_count()
            ));
        }
        if setup.initial.len() != n {
            return bad(format!(
                "{} initial loads for {n} nodes",
                setup.initial.len()
            ));
        }
        if n > u32::MAX as usize {
            return bad(format!("{n} nodes is more than the engine supports"));
        }
        for (i, inj) in setup.injections.iter().enumerate() {
            if inj.node >= n || !(inj.time.is_finite() && inj.time >= 0.0) {
                return bad(format!(
                    "injection {i}: node {} at time {} (nodes are 0..{n}, times finite and >= 0)",
                    inj.node, inj.time
                ));
            }
        }
        if let Some(a) = &setup.arrivals {
            if a.rates.len() != n || a.rates.iter().any(|r| !(r.is_finite() && *r >= 0.0)) {
                return bad(format!(
                    "arrival rates: need {n} finite non-negative values"
                ));
            }
            if a.per_node.is_none() && setup.end_time.is_none() {
                return bad("unlimited arrivals need an end time".into());
            }
        }
        if let Some(iv) = setup.status_interval
            && !(iv.is_finite() && iv > 0.0)
        {
            return bad(format!("status interval {iv} must be positive"));
        }
        let mut initial_total = 0u64;
        for &w in &setup.initial {
            initial_total = initial_total
                .checked_add(w)
                .ok_or_else(|| SimError::Setup("the initial loads overflow".into()))?;
        }
        let seed = setup.seed;
        let per_node = setup
            .arrivals
            .as_ref()
            .and_then(|a| a.per_node)
            .unwrap_or(u64::MAX);
        let mut state: Vec<NodeState> = huge_page_vec(n);
        for (i, &w) in setup.initial.iter().enumerate() {
            let mut s = NodeState::new(
                w,
                stream(seed, Purpose::Service, i),
                nodes.service_parameter(i),
                stream(seed, Purpose::Arrivals, i),
            )
            .map_err(|_| queue_full(i))?;
            s.arrivals_left = per_node;
            if let Some(a) = &setup.arrivals {
                s.arrival_mean = 1.0 / a.rates[i];
            }
            state.push(s);
        }
        let link_count = links.table().link_count();
        let queue_series = if setup.series.enabled {
            vec![Vec::new(); n]
        } else {
            Vec::new()
        };
        Ok(Self {
            link_rng: huge_page_collect(n, (0..n).map(|i| stream(seed, Purpose::Links, i))),
            link_free: huge_page_collect(link_count, std::iter::repeat_n(0.0, link_count)),
            reports: huge_page_collect(n, setup.initial.iter().copied()),
            report_time: 0.0,
            changed: Vec::new(),
            reporting: setup.status_interval.is_some() && policy.uses_reports(),
            loads: if policy.reads_all_loads() {
                huge_page_collect(n, setup.initial.iter().copied())
            } else {
                Vec::new()
            },
            nodes,
            links,
            policy,
            setup,
            now: 0.0,
            queue: EventQueue::new(),
            state,
            in_flight: Vec::new(),
            free_slots: Vec::new(),
            orders: Vec::new(),
            moving: Vec::new(),
            events: 0,
            cancelled: 0,
            injected: 0,
            arrived: 0,
            moved: 0,
            transfers: 0,
            in_transit: 0,
            queue_series,
            transit_series: Vec::new(),
            response_sum: 0.0,
            elided: Elided {
                latest_by_end: f64::NEG_INFINITY,
                ..Elided::default()
            },
            deferred: None,
            held: Vec::new(),
            keep_cancelled: false,
        })
    }

    /// Queues every completion, even one already cancelled when the orders that scheduled it
    /// have been carried out (the engine otherwise leaves those out and accounts for them;
    /// see `src/engine/README.md`). The report is the same either way; this is for tests
    /// that check it.
    #[must_use]
    pub fn keep_cancelled_events(mut self) -> Self {
        self.keep_cancelled = true;
        self
    }

    /// Runs to the end (no events left, or the end time) and reports.
    ///
    /// # Errors
    /// [`SimError`] when the policy fails or orders an impossible transfer, or when
    /// conservation checking finds a lost task.
    ///
    /// # Complexity
    /// `O(E)` for `E` events (the event list costs amortised `O(1)` per event; the policy's
    /// decisions come on top); `O(E·N)` with conservation
    /// checking on.
    pub fn run(mut self) -> Result<Report, SimError> {
        self.start();
        let end = self.setup.end_time.unwrap_or(f64::INFINITY);
        let mut stopped_early = false;
        while let Some(next) = self.queue.pop() {
            // the memory of the event after this one, and of one a few further, starts loading
            // while this one is handled
            if let Some(&soon) = self.queue.next_hint() {
                self.prefetch_for(soon);
            }
            if let Some(&later) = self.queue.ahead(PREFETCH_DISTANCE) {
                self.prefetch_for(later);
            }
            if next.time() > end {
                stopped_early = true;
                break;
            }
            self.now = next.time();
            if self.handle(next.event)? {
                self.events += 1;
                if self.setup.check_conservation {
                    self.check_conservation()?;
                }
            } else {
                self.cancelled += 1;
            }
        }
        // the elided completions, as the loop would have popped them
        self.cancelled += self.elided.cancelled;
        if self.elided.after_end {
            stopped_early = true;
        }
        if stopped_early {
            self.now = self.now.max(self.elided.latest_by_end);
        }
        self.check_conservation()?;
        Ok(self.finish(stopped_early, end))
    }

    fn start(&mut self) {
        for node in 0..self.state.len() {
            if !self.state[node].queue.is_empty() {
                self.state[node].busy_since = 0.0;
                self.start_service(node);
            }
            self.record(node);
        }
        for (i, inj) in self.setup.injections.iter().enumerate() {
            self.queue
                .push(inj.time, Event::Injection { index: i as u32 });
        }
        if let Some(a) = &self.setup.arrivals {
            for node in 0..a.rates.len() {
                let s = &mut self.state[node];
                if a.rates[node] > 0.0 && s.arrivals_left > 0 {
                    let t = exponential(&mut s.arrival_rng, s.arrival_mean);
                    self.queue.push(t, Event::Arrival { node: node as u32 });
                }
            }
        }
        if let (Some(iv), true) = (self.setup.status_interval, self.policy.uses_reports()) {
            self.queue.push(iv, Event::Status);
        }
        if self.policy.round_interval().is_some() {
            self.queue.push(0.0, Event::Round);
        }
    }

    /// Starts loading the record and the node model's entry of the node `event` concerns
    /// (see [`crate::prefetch`]).
    #[inline]
    fn prefetch_for(&self, event: Event) {
        if let Event::Completion { node, .. } | Event::Arrival { node } = event
            && let Some(s) = self.state.get(node as usize)
        {
            prefetch(s, 3);
            self.nodes.prefetch(node as usize);
        }
    }

    /// Starts loading the records of `nodes` (see [`crate::prefetch`]), skipping any out of
    /// range (an order the loop will refuse).
    #[inline]
    fn prefetch_nodes(&self, nodes: [usize; 2]) {
        for node in nodes {
            if let Some(s) = self.state.get(node) {
                prefetch(s, 3);
            }
        }
    }

    /// Handles one event; false when it was a cancelled completion.
    fn handle(&mut self, event: Event) -> Result<bool, SimError> {
        match event {
            Event::Completion { node, epoch } => {
                let node = node as usize;
                if self.state[node].epoch != epoch {
                    return Ok(false);
                }
                let s = &mut self.state[node];
                let entered = s.queue.pop_front().expect("a node in service has a task");
                s.executed += 1;
                s.finish = self.now;
                self.response_sum += self.now - entered;
                if s.queue.is_empty() {
                    s.busy += self.now - s.busy_since;
                } else {
                    self.start_service(node);
                }
                self.record(node);
            }
            Event::Arrival { node } => {
                let node = node as usize;
                let task = Run {
                    time: self.now,
                    count: 1,
                };
                self.add_tasks(node, &[task])?;
                self.arrived += 1;
                let s = &mut self.state[node];
                s.arrivals_left -= 1;
                if s.arrivals_left > 0 && self.setup.arrivals.is_some() {
                    let t = exponential(&mut s.arrival_rng, s.arrival_mean);
                    self.queue
                        .push(self.now + t, Event::Arrival { node: node as u32 });
                }
                let mut orders = std::mem::take(&mut self.orders);
                let decided = self.policy.on_arrival(
                    &Snapshot {
                        now: self.now,
                        state: &self.state,
                        nodes: &self.nodes,
                        links: &self.links,
                        reports: &self.reports,
                        loads: &self.loads,
                        report_time: self.report_time,
                    },
                    node,
                    &mut orders,
                );
                self.orders = orders;
                decided?;
                self.apply_orders()?;
            }
            Event::Injection { index } => {
                let inj = self.setup.injections[index as usize];
                if inj.tasks > 0 {
                    let count = u32::try_from(inj.tasks).map_err(|_| queue_full(inj.node))?;
                    let run = Run {
                        time: self.now,
                        count,
                    };
                    self.add_tasks(inj.node, &[run])?;
                }
                self.injected += inj.tasks;
                let mut orders = std::mem::take(&mut self.orders);
                let decided = self.policy.on_injection(
                    &Snapshot {
                        now: self.now,
                        state: &self.state,
                        nodes: &self.nodes,
                        links: &self.links,
                        reports: &self.reports,
                        loads: &self.loads,
                        report_time: self.report_time,
                    },
                    inj.node,
                    &mut orders,
                );
                self.orders = orders;
                decided?;
                self.apply_orders()?;
            }
            Event::Delivery { slot } => {
                let batch = self.in_flight[slot as usize]
                    .take()
                    .expect("a delivery has its batch");
                self.free_slots.push(slot);
                if let Some(next) = batch.then {
                    return self.relay(batch.to, next, batch.tasks).map(|()| true);
                }
                let n = tasks_in(&batch.tasks);
                self.in_transit -= n;
                self.record_transit();
                self.state[batch.to].received += n;
                self.add_tasks(batch.to, &batch.tasks)?;
            }
            Event::Status => {
                let now = self.now;
                // Only the loads that changed since the last report are read again: the
                // others are the same, and every report carries the same time.
                for node in self.changed.drain(..) {
                    let s = &mut self.state[node as usize];
                    s.changed = false;
                    self.reports[node as usize] = s.load();
                }
                self.report_time = now;
                if !self.queue.is_empty()
                    && let Some(iv) = self.setup.status_interval
                {
                    self.queue.push(now + iv, Event::Status);
                }
            }
            Event::Round => self.round()?,
        }
        Ok(true)
    }

    /// A periodic round: the policy decides on the loads of this moment, the engine carries
    /// out its orders, and the next round is due one interval later while anything remains to
    /// happen (tasks queued or on the links, arrivals or injections to come).
    fn round(&mut self) -> Result<(), SimError> {
        let mut orders = std::mem::take(&mut self.orders);
        let decided = self.policy.on_round(
            &Snapshot {
                now: self.now,
                state: &self.state,
                nodes: &self.nodes,
                links: &self.links,
                reports: &self.reports,
                loads: &self.loads,
                report_time: self.report_time,
            },
            &mut orders,
        );
        self.orders = orders;
        decided?;
        self.apply_orders()?;
        if !self.queue.is_empty()
            && let Some(iv) = self.policy.round_interval()
        {
            self.queue.push(self.now + iv, Event::Round);
        }
        Ok(())
    }

    fn start_service(&mut self, node: usize) {
        let s = &mut self.state[node];
        let t = self
            .nodes
            .service_time_with(node, s.service_parameter, &mut s.service_rng);
        let epoch = s.epoch;
        self.schedule(
            self.now + t,
            Event::Completion {
                node: node as u32,
                epoch,
            },
        );
    }

    /// Queues `event` at `time`, or holds it while orders are carried out.
    #[inline]
    fn schedule(&mut self, time: f64, event: Event) {
        match &mut self.deferred {
            Some(held) => held.push((time, event)),
            None => self.queue.push(time, event),
        }
    }

    /// Whether the completions cancelled within one batch of orders may be left out of the
    /// queue: nothing asks whether the queue is empty.
    fn may_elide(&self) -> bool {
        !self.keep_cancelled
            && self.policy.round_interval().is_none()
            && !(self.setup.status_interval.is_some() && self.policy.uses_reports())
    }

    /// Queues the events held while orders were carried out, in the order they were
    /// scheduled, leaving out the completions already cancelled.
    fn release(&mut self, mut held: Vec<(f64, Event)>) {
        let end = self.setup.end_time.unwrap_or(f64::INFINITY);
        for (i, &(time, event)) in held.iter().enumerate() {
            // Each completion reads its node's epoch: ask for the record of one a few ahead.
            if let Some(&(_, Event::Completion { node, .. })) = held.get(i + ORDERS_AHEAD)
                && let Some(s) = self.state.get(node as usize)
            {
                prefetch(s, 1);
            }
            if let Event::Completion { node, epoch } = event
                && self.state[node as usize].epoch != epoch
            {
                if time > end {
                    self.elided.after_end = true;
                } else {
                    self.elided.cancelled += 1;
                    self.elided.latest_by_end = self.elided.latest_by_end.max(time);
                }
                continue;
            }
            self.queue.push(time, event);
        }
        held.clear();
        self.held = held;
    }

    fn add_tasks(&mut self, node: usize, tasks: &[Run]) -> Result<(), SimError> {
        if tasks.is_empty() {
            return Ok(());
        }
        let s = &mut self.state[node];
        let was_idle = s.queue.is_empty();
        s.queue.extend(tasks).map_err(|_| queue_full(node))?;
        if was_idle {
            s.busy_since = self.now;
            self.start_service(node);
        }
        self.record(node);
        Ok(())
    }

    /// Moves up to `count` of the most recently queued tasks of `node` into `taken` (emptied
    /// first), as runs; returns how many.
    fn take_tasks(&mut self, node: usize, count: u64, taken: &mut Vec<Run>) -> u64 {
        taken.clear();
        let s = &mut self.state[node];
        let n = (count as usize).min(s.queue.len());
        if n == 0 {
            return 0;
        }
        s.queue.take_back(n, taken);
        if s.queue.is_empty() {
            // The task in service left: cancel its completion.
            s.epoch = s.epoch.wrapping_add(1);
            s.busy += self.now - s.busy_since;
        }
        s.sent += n as u64;
        self.record(node);
        n as u64
    }

    fn apply_orders(&mut self) -> Result<(), SimError> {
        if self.orders.is_empty() {
            return Ok(());
        }
        if self.may_elide() {
            self.deferred = Some(std::mem::take(&mut self.held));
            let result = self.carry_out_orders();
            if let Some(held) = self.deferred.take() {
                self.release(held);
            }
            return result;
        }
        self.carry_out_orders()
    }

    fn carry_out_orders(&mut self) -> Result<(), SimError> {
        let orders = std::mem::take(&mut self.orders);
        let n = self.state.len();
        for (i, order) in orders.iter().enumerate() {
            // The orders of a global balance are scattered over the nodes: ask for the records
            // of an order a few ahead while this one is carried out.
            if let Some(ahead) = orders.get(i + ORDERS_AHEAD) {
                self.prefetch_nodes([ahead.from, ahead.to]);
            }
            if order.from >= n || order.to >= n || order.from == order.to {
                return Err(SimError::NoLink {
                    from: order.from,
                    to: order.to,
                });
            }
            let link = match order.delivery {
                Delivery::Link => Some(self.links.table().link(order.from, order.to).ok_or(
                    SimError::NoLink {
                        from: order.from,
                        to: order.to,
                    },
                )?),
                Delivery::Relay { via } => Some(self.links.table().link(order.from, via).ok_or(
                    SimError::NoLink {
                        from: order.from,
                        to: via,
                    },
                )?),
                Delivery::Instant => None,
            };
            let (hop, then) = match order.delivery {
                Delivery::Relay { via } => (via, Some(order.to)),
                _ => (order.to, None),
            };
            let mut tasks = std::mem::take(&mut self.moving);
            let count = self.take_tasks(order.from, order.tasks, &mut tasks);
            if count == 0 {
                self.moving = tasks;
                continue;
            }
            self.moved += count;
            self.transfers += 1;
            match link {
                None => {
                    self.state[order.to].received += count;
                    self.add_tasks(order.to, &tasks)?;
                    // kept for the next order: an instant delivery allocates nothing
                    self.moving = tasks;
                }
                Some(link) => {
                    let rate = self.links.rate(link);
                    let wire = if rate.is_infinite() {
                        0.0
                    } else {
                        count as f64 / rate
                    };
                    let done = self.now.max(self.link_free[link]) + wire;
                    self.link_free[link] = done;
                    let arrival = done + self.links.delay(link, &mut self.link_rng[order.from]);
                    let batch = Batch {
                        to: hop,
                        tasks,
                        then,
                    };
                    let slot = match self.free_slots.pop() {
                        Some(s) => {
                            self.in_flight[s as usize] = Some(batch);
                            s
                        }
                        None => {
                            self.in_flight.push(Some(batch));
                            (self.in_flight.len() - 1) as u32
                        }
                    };
                    self.in_transit += count;
                    self.record_transit();
                    self.schedule(arrival, Event::Delivery { slot });
                }
            }
        }
        self.orders = orders;
        self.orders.clear();
        Ok(())
    }

    /// A relayed batch reached `via`: it goes on over the link `via → to`, queued behind the
    /// link's earlier transfers, without entering `via`'s queue.
    fn relay(&mut self, via: usize, to: usize, tasks: Vec<Run>) -> Result<(), SimError> {
        let link = self
            .links
            .table()
            .link(via, to)
            .ok_or(SimError::NoLink { from: via, to })?;
        let rate = self.links.rate(link);
        let wire = if rate.is_infinite() {
            0.0
        } else {
            tasks_in(&tasks) as f64 / rate
        };
        let done = self.now.max(self.link_free[link]) + wire;
        self.link_free[link] = done;
        let arrival = done + self.links.delay(link, &mut self.link_rng[via]);
        let batch = Batch {
            to,
            tasks,
            then: None,
        };
        let slot = match self.free_slots.pop() {
            Some(s) => {
                self.in_flight[s as usize] = Some(batch);
                s
            }
            None => {
                self.in_flight.push(Some(batch));
                (self.in_flight.len() - 1) as u32
            }
        };
        self.queue.push(arrival, Event::Delivery { slot });
        Ok(())
    }

    /// Records the tasks on links now, when series are recorded (thinned like the queues).
    fn record_transit(&mut self) {
        let opts = self.setup.series;
        if !opts.enabled {
            return;
        }
        let (now, n) = (self.now, self.in_transit);
        match self.transit_series.last_mut() {
            Some(last) if last.0 == now => last.1 = n,
            Some(last) if now - last.0 < opts.interval && n != 0 => {}
            _ => self.transit_series.push((now, n)),
        }
    }

    /// Notes that `node`'s load changed now: for its next status report and its series.
    fn record(&mut self, node: usize) {
        if let Some(w) = self.loads.get_mut(node) {
            *w = self.state[node].load();
        }
        if self.reporting {
            let s = &mut self.state[node];
            if !s.changed {
                s.changed = true;
                self.changed.push(node as u32);
            }
        }
        let opts = self.setup.series;
        if !opts.enabled {
            return;
        }
        let now = self.now;
        let len = self.state[node].load();
        let series = &mut self.queue_series[node];
        match series.last_mut() {
            Some(last) if last.0 == now => last.1 = len,
            Some(last) if now - last.0 < opts.interval && len != 0 => {}
            _ => series.push((now, len)),
        }
    }

    /// Recounts every task: executed + queued + on links = initial + injected + arrived.
    fn check_conservation(&self) -> Result<(), SimError> {
        let executed: u64 = self.state.iter().map(|s| s.executed).sum();
        let queued: u64 = self.state.iter().map(NodeState::load).sum();
        let in_transit: u64 = self
            .in_flight
            .iter()
            .flatten()
            .map(|b| tasks_in(&b.tasks))
            .sum();
        let expected = self.setup.initial.iter().sum::<u64>() + self.injected + self.arrived;
        if executed + queued + in_transit != expected || in_transit != self.in_transit {
            return Err(SimError::Conservation {
                time: self.now,
                executed,
                queued,
                in_transit,
                expected,
            });
        }
        Ok(())
    }

    fn finish(mut self, stopped_early: bool, end: f64) -> Report {
        let makespan = self.state.iter().map(|s| s.finish).fold(0.0_f64, f64::max);
        let queued: u64 = self.state.iter().map(NodeState::load).sum();
        let horizon = if stopped_early && (queued > 0 || self.in_transit > 0) {
            end
        } else if stopped_early {
            makespan.max(self.now)
        } else {
            makespan
        };
        self.now = horizon;
        let executed: u64 = self.state.iter().map(|s| s.executed).sum();
        let mut nodes = Vec::with_capacity(self.state.len());
        let mut series = Vec::new();
        for (i, s) in self.state.iter_mut().enumerate() {
            let open = if s.queue.is_empty() {
                0.0
            } else {
                (horizon - s.busy_since).max(0.0)
            };
            let busy = (s.busy + open).min(horizon);
            let waiting = if s.queue.is_empty() {
                (s.finish - s.busy).max(0.0)
            } else {
                horizon - busy
            };
            nodes.push(NodeReport {
                node: i,
                finish: s.finish,
                busy,
                idle: horizon - busy,
                waiting,
                executed: s.executed,
                sent: s.sent,
                received: s.received,
                final_load: s.load(),
            });
            if self.setup.series.enabled {
                let mut points = std::mem::take(&mut self.queue_series[i]);
                if points.last().is_some_and(|p| p.0 < horizon) {
                    points.push((horizon, s.load()));
                }
                series.push(points);
            }
        }
        Report {
            policy: self.policy.name(),
            seed: self.setup.seed,
            makespan,
            horizon,
            total_idle: nodes.iter().map(|n| n.idle).sum(),
            events: self.events,
            cancelled_events: self.cancelled,
            tasks_moved: self.moved,
            transfers: self.transfers,
            initial: self.setup.initial.iter().sum(),
            injected: self.injected,
            arrived: self.arrived,
            executed,
            queued_at_end: queued,
            in_transit_at_end: self.in_transit,
            mean_response_time: (executed > 0).then(|| self.response_sum / executed as f64),
            nodes,
            policy_stats: self.policy.stats(),
            series,
            transit_series: if self.setup.series.enabled {
                let mut points = std::mem::take(&mut self.transit_series);
                if points.last().is_some_and(|p| p.0 < horizon) {
                    points.push((horizon, self.in_transit));
                }
                points
            } else {
                Vec::new()
            },
        }
    }
}

/// The policy's view of an engine.
struct Snapshot<'a, N, L> {
    now: f64,
    state: &'a [NodeState],
    nodes: &'a N,
    links: &'a L,
    reports: &'a [u64],
    report_time: f64,
    /// Every node's load when the engine keeps them in one array, empty otherwise.
    loads: &'a [u64],
}

impl<N: NodeModel, L: LinkModel> View for Snapshot<'_, N, L> {
    fn now(&self) -> f64 {
        self.now
    }

    fn node_count(&self) -> usize {
        self.state.len()
    }

    fn load(&self, node: usize) -> u64 {
        self.state[node].load()
    }

    fn rate(&self, node: usize) -> f64 {
        self.nodes.rate(node)
    }

    fn neighbors(&self, node: usize) -> &[usize] {
        self.links.table().neighbor_slice(node)
    }

    fn link(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        let l = self.links.table().link(from, to)?;
        Some((self.links.rate(l), self.links.mean_delay(l)))
    }

    fn reported(&self, node: usize) -> Reported {
        Reported {
            load: self.reports[node],
            time: self.report_time,
        }
    }

    fn loads_into(&self, out: &mut Vec<u64>) {
        if self.loads.len() == self.state.len() {
            debug_assert!(
                self.loads
                    .iter()
                    .zip(self.state)
                    .all(|(&w, s)| w == s.load()),
                "the engine's copy of the loads is up to date"
            );
            out.extend_from_slice(self.loads);
        } else {
            out.extend(self.state.iter().map(NodeState::load));
        }
    }

    fn all_loads(&self) -> Option<&[u64]> {
        let kept = self.loads.len() == self.state.len();
        debug_assert!(
            !kept
                || self
                    .loads
                    .iter()
                    .zip(self.state)
                    .all(|(&w, s)| w == s.load()),
            "the engine's copy of the loads is up to date"
        );
        kept.then_some(self.loads)
    }

    fn network(&self) -> Option<&hetlb_core::topology::Network> {
        Some(self.links.network())
    }
}
