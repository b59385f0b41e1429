//! Master-worker scheduling: EFP and its baselines, as plain decisions.
//!
//! EFP, *Exploitation of the Fastest Processor* (Aldasht, Ortega & Puntonet, §§3–4), is
//! a centralised, receiver-driven rule. The fastest processor is the master and computes too;
//! the others are numbered `P_1` (least powerful) to `P_{P−1}` (most powerful). The problem is
//! cut into `G` tasks by eq. (1), the first round is *staggered* (`P_i` gets `i` tasks), and
//! every time a worker returns results the master computes its *speed factor* from the
//! computation, communication and wait times it reports and sends it a number of tasks in
//! proportion to that factor. When the queue is empty, workers are stopped in the order they
//! finish.
//!
//! This module holds only the decisions — how many tasks, to whom, in what order — with no
//! clock, thread or message: the runtime (`hetlb-runtime`) measures and drives it, and a
//! simulator can drive the same code with modelled times.
//!
//! Choices the paper leaves open, made here (each documented where it is made):
//! * **The speed factor** `S_w = θ_w / θ_0`, where `θ` is a processor's measured throughput in
//!   tasks per second of *busy* time (computation plus communication) and `θ_0` the master's.
//!   Wait time is the master's delay in answering, not the worker's speed; it is used instead
//!   to size batches so that a worker does not spend more than a fraction of its time waiting.
//! * **The constant of proportionality.** The paper says "a number of tasks proportional to
//!   `S`" without the constant. Here a worker gets `⌈S_w·q⌉` tasks with
//!   `q = queue / (F·ΣS)`: if every processor asked at once they would take `1/F` of the
//!   remaining queue, each in proportion to its speed (`F = 2` by default, as in factoring).
//!   Batches therefore shrink as the queue empties and every processor finishes within about
//!   one task of the others.
//! * **`G ≥ N`**: eq. (1) requires `G < N`; a larger value is cut to `N` (one row per task).
//!
//! The baselines the paper compares against (static equal split) and two more (static split
//! in proportion to capacity; plain self-scheduling, one task per request) are the other
//! [`Policy`] values.

use crate::allocation::proportional_targets;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::Range;
use std::str::FromStr;
use thiserror::Error;

/// What is wrong with a scheduling parameter.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum SchedulingError {
    /// The granularity multiplier `n` of eq. (1) must be at least 1.
    #[error("granularity multiplier n = {0} must be at least 1 (the paper uses 1, 2 or 3)")]
    Multiplier(u32),
    /// `rand()` of eq. (1) must lie in `(0, 1]`.
    #[error("random draw {0} must lie in (0, 1]")]
    Draw(f64),
    /// No processors.
    #[error("at least one processor is needed")]
    NoProcessors,
    /// A rate or capacity that is not positive and finite.
    #[error("capacity of processor {processor} is {value}: it must be positive and finite")]
    Capacity {
        /// Index of the processor.
        processor: usize,
        /// The value given.
        value: f64,
    },
    /// An unknown policy name.
    #[error("unknown policy '{0}' (expected efp, static, proportional or self)")]
    UnknownPolicy(String),
}

/// The granularity `G(P)` of eq. (1): the number of tasks the problem is cut into.
///
/// `G(P) = ⌈n·P·rand()⌉ · P·(P−1)/2`, cut to the problem size `N` (the paper requires
/// `G < N`) and at least 1. `G` is always a multiple of the first round's `P(P−1)/2` tasks
/// unless it was cut.
///
/// # Arguments
/// * `n` — the paper's multiplier, "a positive integer between 1 and 3".
/// * `processors` — `P`, the master included.
/// * `draw` — the value of `rand()`, in `(0, 1]`; pass a seeded draw for reproducible runs.
/// * `problem_size` — `N` (rows of the matrix).
///
/// # Errors
/// [`SchedulingError::Multiplier`] for `n = 0`, [`SchedulingError::Draw`] for a draw outside
/// `(0, 1]`, [`SchedulingError::NoProcessors`] for `P = 0`.
///
/// # Complexity
/// `O(1)`.
///
/// # Example
/// ```
/// use hetlb_core::rules::self_scheduling::granularity;
/// // P = 9, n = 3, rand() = 0.5: ⌈13.5⌉ · 36 = 504 tasks for a 1000-row matrix.
/// assert_eq!(granularity(3, 9, 0.5, 1000).unwrap(), 504);
/// // A 100-row matrix cannot be cut finer than 100 tasks.
/// assert_eq!(granularity(3, 9, 0.5, 100).unwrap(), 100);
/// ```
pub fn granularity(
    n: u32,
    processors: usize,
    draw: f64,
    problem_size: u64,
) -> Result<u64, SchedulingError> {
    if n == 0 {
        return Err(SchedulingError::Multiplier(n));
    }
    if !(draw > 0.0 && draw <= 1.0) {
        return Err(SchedulingError::Draw(draw));
    }
    if processors == 0 {
        return Err(SchedulingError::NoProcessors);
    }
    let p = processors as u64;
    let factor = (f64::from(n) * p as f64 * draw).ceil() as u64;
    let g = factor
        .saturating_mul(p)
        .saturating_mul(p - 1)
        .checked_div(2)
        .unwrap_or(0);
    Ok(g.clamp(1, problem_size.max(1)))
}

/// Cuts `0..total` into `parts` contiguous ranges whose lengths differ by at most one (the
/// longer ones first).
///
/// # Complexity
/// `O(parts)`.
///
/// # Example
/// ```
/// use hetlb_core::rules::self_scheduling::split_evenly;
/// assert_eq!(split_evenly(10, 4), vec![0..3, 3..6, 6..8, 8..10]);
/// ```
pub fn split_evenly(total: u64, parts: u64) -> Vec<Range<u64>> {
    if parts == 0 {
        return Vec::new();
    }
    let (base, extra) = (total / parts, total % parts);
    let mut start = 0;
    (0..parts)
        .map(|i| {
            let len = base + u64::from(i < extra);
            let r = start..start + len;
            start += len;
            r
        })
        .collect()
}

/// The roles of EFP: the fastest processor is the master (`P_0`), the others are listed from
/// the least powerful (`P_1`) to the most powerful (`P_{P−1}`) (Aldasht, Ortega & Puntonet §3).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Roles {
    /// Index of the master, the processor of largest capacity (lowest index on a tie).
    pub master: usize,
    /// The other processors by increasing capacity (ties: lower index first).
    pub workers: Vec<usize>,
}

impl Roles {
    /// Assigns the roles from measured or given capacities.
    ///
    /// # Errors
    /// [`SchedulingError::NoProcessors`] for an empty list and
    /// [`SchedulingError::Capacity`] for a capacity that is not positive and finite.
    ///
    /// # Complexity
    /// `O(P log P)`.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::Roles;
    /// let roles = Roles::from_capacities(&[1.0, 3.0, 0.5, 2.0]).unwrap();
    /// assert_eq!(roles.master, 1);
    /// assert_eq!(roles.workers, vec![2, 0, 3]);
    /// assert_eq!(roles.label(3), "P3"); // the most powerful worker
    /// ```
    pub fn from_capacities(capacities: &[f64]) -> Result<Self, SchedulingError> {
        check_capacities(capacities)?;
        let mut order: Vec<usize> = (0..capacities.len()).collect();
        order.sort_by(|&a, &b| capacities[a].total_cmp(&capacities[b]).then(a.cmp(&b)));
        // The master is the largest capacity, lowest index among equals.
        let top = capacities[order[order.len() - 1]];
        let master = (0..capacities.len())
            .find(|&i| capacities[i] == top)
            .unwrap_or(0);
        order.retain(|&i| i != master);
        Ok(Self {
            master,
            workers: order,
        })
    }

    /// Roles in index order: processor 0 is the master, then 1, 2, ….
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::Roles;
    /// assert_eq!(Roles::in_order(3).workers, vec![1, 2]);
    /// ```
    pub fn in_order(processors: usize) -> Self {
        Self {
            master: 0,
            workers: (1..processors).collect(),
        }
    }

    /// Number of processors, the master included.
    pub fn processors(&self) -> usize {
        self.workers.len() + 1
    }

    /// The paper's name of `processor`: `P0` for the master, `P1` … for the workers by
    /// increasing capacity; `?` for an index that is not in the roles.
    pub fn label(&self, processor: usize) -> String {
        if processor == self.master {
            return "P0".to_string();
        }
        match self.workers.iter().position(|&w| w == processor) {
            Some(i) => format!("P{}", i + 1),
            None => "?".to_string(),
        }
    }
}

fn check_capacities(capacities: &[f64]) -> Result<(), SchedulingError> {
    if capacities.is_empty() {
        return Err(SchedulingError::NoProcessors);
    }
    if let Some((processor, &value)) = capacities
        .iter()
        .enumerate()
        .find(|(_, c)| !(c.is_finite() && **c > 0.0))
    {
        return Err(SchedulingError::Capacity { processor, value });
    }
    Ok(())
}

/// The staggered first round of EFP (Aldasht, Ortega & Puntonet §3 step 2): worker `P_i` gets `i` tasks, so slower
/// processors never hold more than faster ones and their first results come back at different
/// times.
///
/// Returns one count per worker, in the order of [`Roles::workers`] (least powerful first).
/// When there are fewer than `P(P−1)/2` tasks, the most powerful workers are served first.
///
/// # Complexity
/// `O(P)`.
///
/// # Example
/// ```
/// use hetlb_core::rules::self_scheduling::staggered_first_round;
/// assert_eq!(staggered_first_round(4, 100), vec![1, 2, 3, 4]);
/// assert_eq!(staggered_first_round(4, 8), vec![0, 1, 3, 4]);
/// ```
pub fn staggered_first_round(workers: usize, tasks: u64) -> Vec<u64> {
    let mut left = tasks;
    let mut counts = vec![0; workers];
    for i in (0..workers).rev() {
        let give = (i as u64 + 1).min(left);
        counts[i] = give;
        left -= give;
    }
    counts
}

/// What a processor reports about one batch: how many tasks it did and how its time split
/// (Aldasht, Ortega & Puntonet §4: "computation time, communication time, wait time, and the quantity of tasks
/// executed").
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// Tasks completed in the batch.
    pub tasks: u64,
    /// Seconds computing.
    pub t_comp: f64,
    /// Seconds sending, receiving and encoding messages.
    pub t_comm: f64,
    /// Seconds waiting for the master to attend to the request.
    pub t_wait: f64,
}

impl Observation {
    /// Busy seconds: computation plus communication.
    pub fn busy(&self) -> f64 {
        self.t_comp + self.t_comm
    }
}

/// Measured throughputs, tasks per busy second, smoothed by an exponential moving average so
/// that one noisy batch does not swing the next decision but a lasting change is followed
/// within a few batches.
///
/// Until a processor has been measured, its rate is its seed capacity *converted to the units
/// of the measurements*: seed × (Σ measured rates ÷ Σ their seeds). Given capacities are in
/// arbitrary units, and calibrated ones are taken with each processor alone, so neither can
/// be compared directly with rates measured during the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedTable {
    seeds: Vec<f64>,
    rates: Vec<f64>,
    measured: Vec<bool>,
    alive: Vec<bool>,
    smoothing: f64,
}

impl SpeedTable {
    /// A table seeded with initial `capacities` (a calibration's rates or given values), which
    /// measurements then replace.
    ///
    /// `smoothing` is the weight of the newest batch, in `(0, 1]`; 1 keeps only the last one.
    ///
    /// # Errors
    /// [`SchedulingError::Capacity`] or [`SchedulingError::NoProcessors`] for bad capacities.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::{Observation, SpeedTable};
    /// let mut t = SpeedTable::new(&[3.0, 1.0], 0.5).unwrap();
    /// t.observe(1, &Observation { tasks: 4, t_comp: 1.0, t_comm: 0.0, t_wait: 0.5 });
    /// assert_eq!(t.rate(1), 4.0); // the first measurement replaces the seed
    /// assert_eq!(t.rate(0), 12.0); // the other seed, in measured units: 3 × 4/1
    /// t.observe(1, &Observation { tasks: 2, t_comp: 1.0, t_comm: 0.0, t_wait: 0.0 });
    /// assert_eq!(t.rate(1), 3.0);
    /// ```
    pub fn new(capacities: &[f64], smoothing: f64) -> Result<Self, SchedulingError> {
        check_capacities(capacities)?;
        Ok(Self {
            seeds: capacities.to_vec(),
            rates: capacities.to_vec(),
            measured: vec![false; capacities.len()],
            alive: vec![true; capacities.len()],
            smoothing: if smoothing > 0.0 && smoothing <= 1.0 {
                smoothing
            } else {
                1.0
            },
        })
    }

    /// Folds a batch report into processor `p`'s rate. Batches with no task or no busy time
    /// carry no speed information and are ignored.
    pub fn observe(&mut self, p: usize, obs: &Observation) {
        let busy = obs.busy();
        if p >= self.rates.len() || obs.tasks == 0 || busy <= 0.0 || !busy.is_finite() {
            return;
        }
        let rate = obs.tasks as f64 / busy;
        if self.measured[p] {
            self.rates[p] = self.smoothing * rate + (1.0 - self.smoothing) * self.rates[p];
        } else {
            self.rates[p] = rate;
            self.measured[p] = true;
        }
    }

    /// Processor `p`'s current rate estimate.
    ///
    /// # Complexity
    /// `O(1)` once measured, `O(P)` before.
    pub fn rate(&self, p: usize) -> f64 {
        match (self.rates.get(p), self.measured.get(p)) {
            (Some(&r), Some(true)) => r,
            (Some(_), Some(false)) => self.seeds[p] * self.unit_scale(),
            _ => 0.0,
        }
    }

    /// Measured rate per unit of seed capacity, over the measured processors (1 if none).
    fn unit_scale(&self) -> f64 {
        let (mut rates, mut seeds) = (0.0, 0.0);
        for i in 0..self.rates.len() {
            if self.measured[i] {
                rates += self.rates[i];
                seeds += self.seeds[i];
            }
        }
        if rates > 0.0 && seeds > 0.0 {
            rates / seeds
        } else {
            1.0
        }
    }

    /// Removes a failed processor from the sums.
    pub fn remove(&mut self, p: usize) {
        if let Some(a) = self.alive.get_mut(p) {
            *a = false;
        }
    }

    /// The sum of the rates of the live processors.
    ///
    /// # Complexity
    /// `O(P)`.
    pub fn total(&self) -> f64 {
        let scale = self.unit_scale();
        (0..self.rates.len())
            .filter(|&i| self.alive[i])
            .map(|i| {
                if self.measured[i] {
                    self.rates[i]
                } else {
                    self.seeds[i] * scale
                }
            })
            .sum()
    }
}

/// A scheduling policy: EFP or one of its baselines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Policy {
    /// EFP (Aldasht, Ortega & Puntonet §3): staggered first round, then batches in proportion to the speed factor.
    Efp,
    /// Static equal split: every processor gets `G/P` tasks before the run starts (the
    /// paper's static baseline, Aldasht, Ortega & Puntonet §6).
    StaticEqual,
    /// Static split in proportion to the measured (or given) capacities.
    StaticProportional,
    /// Plain self-scheduling: one task to each processor, then one per request.
    SelfScheduling,
}

impl Policy {
    /// Every policy, EFP first.
    pub const ALL: [Policy; 4] = [
        Policy::Efp,
        Policy::StaticEqual,
        Policy::StaticProportional,
        Policy::SelfScheduling,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::Efp => "efp",
            Policy::StaticEqual => "static",
            Policy::StaticProportional => "proportional",
            Policy::SelfScheduling => "self",
        }
    }

    /// True for the policies that assign everything before the run.
    pub fn is_static(self) -> bool {
        matches!(self, Policy::StaticEqual | Policy::StaticProportional)
    }

    /// The fewest tasks with which the policy gives every one of `processors` processors
    /// work: `P(P−1)/2 + 1` for EFP (the staggered first round of 1, 2, …, P−1 tasks to the
    /// workers, and one left for the master), `P` for the others (one each; the
    /// proportional split may still give a processor of small capacity none).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::Policy;
    /// assert_eq!(Policy::Efp.minimum_tasks(2), 2);
    /// assert_eq!(Policy::Efp.minimum_tasks(9), 37);
    /// assert_eq!(Policy::StaticEqual.minimum_tasks(9), 9);
    /// ```
    pub fn minimum_tasks(self, processors: usize) -> u64 {
        let p = processors as u64;
        match self {
            Policy::Efp => (p.saturating_mul(p.saturating_sub(1)) / 2).saturating_add(1),
            _ => p,
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Policy {
    type Err = SchedulingError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Policy::ALL
            .into_iter()
            .find(|p| p.name() == s)
            .ok_or_else(|| SchedulingError::UnknownPolicy(s.to_string()))
    }
}

/// Tuning of EFP's batch sizes. The defaults are not fitted to any measurement.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct EfpParams {
    /// `F`: if all processors asked at once they would take `1/F` of the remaining queue.
    pub factoring: f64,
    /// Weight of the newest batch in the speed estimate, `(0, 1]`.
    pub smoothing: f64,
    /// A worker's batch is made large enough that the wait it last reported is at most this
    /// fraction of the batch's busy time — but never larger than its proportional share of
    /// the remaining queue.
    pub max_wait_fraction: f64,
}

impl Default for EfpParams {
    fn default() -> Self {
        Self {
            factoring: 2.0,
            smoothing: 0.5,
            max_wait_fraction: 0.1,
        }
    }
}

/// One batch decision, for the run's timeline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Tasks to send; 0 means stop (or, for a worker that must wait, nothing yet).
    pub tasks: u64,
    /// The worker's speed factor `S = θ_w/θ_0` at the time of the decision.
    pub speed_factor: f64,
}

/// The master's decision state for one run: which policy, the speed table and the roles.
///
/// The runtime calls [`Scheduler::first_round`] once, then [`Scheduler::on_report`] each time
/// a worker returns results and [`Scheduler::observe_master`] after each of the master's own
/// tasks. The scheduler never sees a clock or a message; it only sees [`Observation`]s.
#[derive(Debug, Clone)]
pub struct Scheduler {
    policy: Policy,
    params: EfpParams,
    roles: Roles,
    speeds: SpeedTable,
    capacities: Vec<f64>,
}

impl Scheduler {
    /// A scheduler for `policy` over processors of the given initial `capacities` (measured
    /// by calibration, or given), with `roles` assigned from them.
    ///
    /// # Errors
    /// [`SchedulingError`] for bad capacities.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::rules::self_scheduling::{Observation, Policy, Scheduler, EfpParams};
    /// let caps = [3.0, 1.0, 1.0, 1.0];
    /// let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &caps).unwrap();
    /// assert_eq!(s.roles().master, 0);
    /// // Staggered: P1 (processor 1) gets 1 task, P2 2, P3 3.
    /// assert_eq!(s.first_round(100), vec![(1, 1), (2, 2), (3, 3)]);
    /// // Processor 3 did 3 tasks in 3 s: a third of the master's speed.
    /// let obs = Observation { tasks: 3, t_comp: 2.9, t_comm: 0.1, t_wait: 0.0 };
    /// let d = s.on_report(3, &obs, 94, true);
    /// assert_eq!(d.tasks, 8); // ⌈94 · 1/6 / 2⌉
    /// assert!((d.speed_factor - 1.0 / 3.0).abs() < 1e-12);
    /// ```
    pub fn new(
        policy: Policy,
        params: EfpParams,
        capacities: &[f64],
    ) -> Result<Self, SchedulingError> {
        let roles = Roles::from_capacities(capacities)?;
        let speeds = SpeedTable::new(capacities, params.smoothing)?;
        Ok(Self {
            policy,
            params,
            roles,
            speeds,
            capacities: capacities.to_vec(),
        })
    }

    /// Uses the given roles instead of those derived from the capacities (for a user who
    /// fixes the master).
    #[must_use]
    pub fn with_roles(mut self, roles: Roles) -> Self {
        self.roles = roles;
        self
    }

    /// The roles in force.
    pub fn roles(&self) -> &Roles {
        &self.roles
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The first round: `(worker, tasks)` for each worker that gets any, out of `tasks` in the
    /// queue. Whatever is not handed out stays with the master.
    ///
    /// * EFP: staggered, `P_i` gets `i` ([`staggered_first_round`]).
    /// * Static equal / proportional: every processor's whole share, by largest remainder
    ///   ([`proportional_targets`]); the master's share stays in the queue.
    /// * Self-scheduling: one task each.
    ///
    /// # Complexity
    /// `O(P log P)`.
    pub fn first_round(&self, tasks: u64) -> Vec<(usize, u64)> {
        let workers = &self.roles.workers;
        let counts: Vec<u64> = match self.policy {
            Policy::Efp => staggered_first_round(workers.len(), tasks),
            Policy::SelfScheduling => {
                let mut left = tasks;
                workers
                    .iter()
                    .rev()
                    .map(|_| {
                        let give = left.min(1);
                        left -= give;
                        give
                    })
                    .collect::<Vec<_>>()
                    .into_iter()
                    .rev()
                    .collect()
            }
            Policy::StaticEqual | Policy::StaticProportional => {
                let caps: Vec<f64> = match self.policy {
                    Policy::StaticEqual => vec![1.0; self.capacities.len()],
                    _ => self.capacities.clone(),
                };
                let shares = proportional_targets(tasks, &caps, &vec![0; caps.len()]);
                workers.iter().map(|&w| shares[w]).collect()
            }
        };
        workers
            .iter()
            .zip(counts)
            .filter(|(_, c)| *c > 0)
            .map(|(&w, c)| (w, c))
            .collect()
    }

    /// Records one of the master's own tasks (or a batch of them).
    pub fn observe_master(&mut self, obs: &Observation) {
        self.speeds.observe(self.roles.master, obs);
    }

    /// Removes a failed processor: its speed no longer counts in the shares.
    pub fn remove(&mut self, p: usize) {
        self.speeds.remove(p);
    }

    /// The speed factor `S_p = θ_p / θ_0` (Aldasht, Ortega & Puntonet §3 step 3).
    pub fn speed_factor(&self, p: usize) -> f64 {
        let reference = self.speeds.rate(self.roles.master);
        if reference > 0.0 {
            self.speeds.rate(p) / reference
        } else {
            1.0
        }
    }

    /// The decision when worker `p` returns a batch described by `obs` and `queue` tasks are
    /// left: how many tasks to send it now (0 means it gets none: stop it if the run is
    /// ending).
    ///
    /// * EFP: `clamp(max(⌈S_p·q⌉, k_wait), 1, ⌈S_p·queue/ΣS⌉)` with `q = queue/(F·ΣS)` and
    ///   `k_wait = ⌈θ_p·t_wait / max_wait_fraction⌉` (see the module documentation).
    /// * Self-scheduling: 1.
    /// * Static policies: 0, unless `master_computes` is false (the master can no longer take
    ///   its own share, say after a failure), when they fall back to one task per request so
    ///   that the run still ends.
    ///
    /// Never more than `queue`.
    ///
    /// # Complexity
    /// `O(P)` (the sum of the rates).
    pub fn on_report(
        &mut self,
        p: usize,
        obs: &Observation,
        queue: u64,
        master_computes: bool,
    ) -> Decision {
        self.speeds.observe(p, obs);
        let speed_factor = self.speed_factor(p);
        let tasks = match self.policy {
            Policy::SelfScheduling => 1,
            Policy::StaticEqual | Policy::StaticProportional => u64::from(!master_computes),
            Policy::Efp => self.efp_batch(p, obs, queue),
        };
        Decision {
            tasks: tasks.min(queue),
            speed_factor,
        }
    }

    fn efp_batch(&self, p: usize, obs: &Observation, queue: u64) -> u64 {
        let total = self.speeds.total();
        let rate = self.speeds.rate(p);
        if !(total > 0.0 && rate > 0.0) {
            return 1;
        }
        let fair = queue as f64 * rate / total;
        let proportional = (fair / self.params.factoring.max(1.0)).ceil();
        let for_wait = if self.params.max_wait_fraction > 0.0 {
            (rate * obs.t_wait / self.params.max_wait_fraction).ceil()
        } else {
            0.0
        };
        let k = proportional.max(for_wait).min(fair.ceil()).max(1.0);
        if k.is_finite() { k as u64 } else { 1 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn granularity_follows_equation_1() {
        // ⌈n·P·r⌉ · P(P−1)/2
        assert_eq!(granularity(1, 9, 1.0, 10_000).unwrap(), 9 * 36);
        assert_eq!(granularity(2, 9, 0.01, 10_000).unwrap(), 36);
        assert_eq!(granularity(1, 2, 0.3, 100).unwrap(), 1);
        assert_eq!(granularity(1, 1, 0.3, 100).unwrap(), 1);
        assert!(granularity(0, 9, 0.5, 100).is_err());
        assert!(granularity(1, 9, 0.0, 100).is_err());
        assert!(granularity(1, 9, f64::NAN, 100).is_err());
        assert!(granularity(1, 0, 0.5, 100).is_err());
    }

    #[test]
    fn roles_put_the_fastest_first_and_the_rest_ascending() {
        let r = Roles::from_capacities(&[1.0, 1.0, 3.0, 2.0, 1.0]).unwrap();
        assert_eq!(r.master, 2);
        assert_eq!(r.workers, vec![0, 1, 4, 3]);
        assert_eq!(r.label(3), "P4");
        assert!(Roles::from_capacities(&[1.0, 0.0]).is_err());
        assert!(Roles::from_capacities(&[]).is_err());
    }

    #[test]
    fn static_rounds_hand_out_every_share_but_the_masters() {
        let s =
            Scheduler::new(Policy::StaticEqual, EfpParams::default(), &[3.0, 1.0, 1.0]).unwrap();
        assert_eq!(s.first_round(10), vec![(1, 3), (2, 3)]);
        let s = Scheduler::new(
            Policy::StaticProportional,
            EfpParams::default(),
            &[3.0, 1.0, 1.0],
        )
        .unwrap();
        assert_eq!(s.first_round(10), vec![(1, 2), (2, 2)]);
        let s = Scheduler::new(
            Policy::SelfScheduling,
            EfpParams::default(),
            &[3.0, 1.0, 1.0],
        )
        .unwrap();
        assert_eq!(s.first_round(1), vec![(2, 1)]);
    }

    #[test]
    fn efp_batches_shrink_to_one_as_the_queue_empties() {
        let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &[3.0, 1.0, 1.0]).unwrap();
        let obs = Observation {
            tasks: 2,
            t_comp: 2.0,
            t_comm: 0.0,
            t_wait: 0.0,
        };
        let big = s.on_report(1, &obs, 1000, true).tasks;
        let small = s.on_report(1, &obs, 3, true).tasks;
        assert!(big > 50, "{big}");
        assert_eq!(small, 1);
        assert_eq!(s.on_report(1, &obs, 0, true).tasks, 0);
    }

    #[test]
    fn a_faster_worker_gets_more() {
        let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &[3.0, 1.0, 1.0]).unwrap();
        let slow = Observation {
            tasks: 1,
            t_comp: 3.0,
            ..Default::default()
        };
        let fast = Observation {
            tasks: 3,
            t_comp: 1.0,
            ..Default::default()
        };
        // Both measured, then both ask again with the same speeds.
        s.on_report(1, &slow, 600, true);
        s.on_report(2, &fast, 600, true);
        let a = s.on_report(1, &slow, 600, true).tasks;
        let b = s.on_report(2, &fast, 600, true).tasks;
        assert!(b > 8 * a, "{a} {b}");
    }

    /// Drives an EFP scheduler through a whole run with modelled times: processor `p` does
    /// one task in `1 / speed(p, t)` seconds (a batch at the speed of its start), the master
    /// computes between the workers' reports. Returns the tasks each processor did.
    fn modelled_run(caps: &[f64], speed: impl Fn(usize, f64) -> f64, tasks: u64) -> Vec<u64> {
        let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), caps).unwrap();
        let master = s.roles().master;
        let mut queue = tasks;
        let mut done = vec![0u64; caps.len()];
        // (finish time, worker, batch, seconds)
        let mut busy: Vec<(f64, usize, u64, f64)> = Vec::new();
        for (w, k) in s.first_round(queue) {
            queue -= k;
            let seconds = k as f64 / speed(w, 0.0);
            busy.push((seconds, w, k, seconds));
        }
        let mut master_time = 0.0;
        loop {
            let next = busy
                .iter()
                .enumerate()
                .min_by(|a, b| a.1.0.total_cmp(&b.1.0))
                .map(|(i, _)| i);
            let until = next.map_or(f64::INFINITY, |i| busy[i].0);
            while queue > 0 && master_time + 1.0 / speed(master, master_time) <= until {
                let t = 1.0 / speed(master, master_time);
                master_time += t;
                queue -= 1;
                done[master] += 1;
                s.observe_master(&Observation {
                    tasks: 1,
                    t_comp: t,
                    ..Default::default()
                });
            }
            let Some(i) = next else { break };
            let (at, w, k, seconds) = busy.swap_remove(i);
            done[w] += k;
            let obs = Observation {
                tasks: k,
                t_comp: seconds,
                ..Default::default()
            };
            let d = s.on_report(w, &obs, queue, true);
            if d.tasks > 0 {
                queue -= d.tasks;
                let seconds = d.tasks as f64 / speed(w, at);
                busy.push((at + seconds, w, d.tasks, seconds));
            }
        }
        assert_eq!(done.iter().sum::<u64>(), tasks);
        done
    }

    /// The balancer is told the processors are equal; only what it measures tells them
    /// apart: a worker three times faster than another does about three times the tasks.
    #[test]
    fn a_three_times_faster_worker_does_about_three_times_the_tasks() {
        let done = modelled_run(&[1.0; 3], |p, _| if p == 2 { 1.0 / 3.0 } else { 1.0 }, 600);
        let ratio = done[1] as f64 / done[2] as f64;
        assert!((2.0..=4.0).contains(&ratio), "{done:?}");
    }

    /// A worker that becomes six times slower a quarter of the way through gets less than its
    /// peer from then on: without the measurements it would do as much.
    #[test]
    fn efp_follows_a_worker_that_slows_down() {
        // Three equal processors finish 1200 tasks in about 400 s; the change comes at 100 s.
        let done = modelled_run(
            &[1.0; 3],
            |p, t| if p == 2 && t >= 100.0 { 1.0 / 6.0 } else { 1.0 },
            1200,
        );
        assert!((done[2] as f64) < 0.75 * done[1] as f64, "{done:?}");
        let steady = modelled_run(&[1.0; 3], |_, _| 1.0, 1200);
        assert!(
            steady[2].abs_diff(steady[1]) <= steady[1] / 10,
            "{steady:?}"
        );
    }

    #[test]
    fn waiting_enlarges_the_batch_up_to_the_fair_share() {
        let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &[1.0, 1.0]).unwrap();
        let obs = Observation {
            tasks: 1,
            t_comp: 1.0,
            t_comm: 0.0,
            t_wait: 0.0,
        };
        let plain = s.on_report(1, &obs, 100, true).tasks;
        let waited = Observation {
            t_wait: 10.0,
            ..obs
        };
        let more = s.on_report(1, &waited, 100, true).tasks;
        assert_eq!(plain, 25);
        assert_eq!(more, 50); // capped by the fair share 100·1/2
    }

    #[test]
    fn seeds_in_other_units_do_not_distort_the_first_decisions() {
        // Given capacities of 1 while measured rates are hundreds of tasks per second: the
        // first worker measured must not look hundreds of times faster than the master.
        let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &[1.0, 1.0, 1.0]).unwrap();
        let obs = Observation {
            tasks: 2,
            t_comp: 0.004,
            ..Default::default()
        };
        let d = s.on_report(2, &obs, 600, true);
        assert!((d.speed_factor - 1.0).abs() < 1e-12, "{}", d.speed_factor);
        assert_eq!(d.tasks, 100); // ⌈600 · 1/3 / 2⌉
    }

    #[test]
    fn policy_names_round_trip() {
        for p in Policy::ALL {
            assert_eq!(p.name().parse::<Policy>().unwrap(), p);
        }
        assert!("fast".parse::<Policy>().is_err());
    }

    proptest! {
        #[test]
        fn split_covers_everything_once(total in 0u64..10_000, parts in 1u64..500) {
            let r = split_evenly(total, parts);
            prop_assert_eq!(r.len() as u64, parts);
            prop_assert_eq!(r[0].start, 0);
            prop_assert_eq!(r[r.len() - 1].end, total);
            for w in r.windows(2) {
                prop_assert_eq!(w[0].end, w[1].start);
                prop_assert!(w[0].end - w[0].start >= w[1].end - w[1].start);
                prop_assert!(w[0].end - w[0].start <= w[1].end - w[1].start + 1);
            }
        }

        #[test]
        fn first_rounds_never_exceed_the_queue(
            policy in prop::sample::select(Policy::ALL.to_vec()),
            caps in prop::collection::vec(0.1f64..10.0, 1..12),
            tasks in 0u64..200,
        ) {
            let s = Scheduler::new(policy, EfpParams::default(), &caps).unwrap();
            let round = s.first_round(tasks);
            prop_assert!(round.iter().map(|r| r.1).sum::<u64>() <= tasks);
            prop_assert!(round.iter().all(|r| r.0 != s.roles().master));
        }

        #[test]
        fn efp_decisions_stay_within_one_and_the_queue(
            caps in prop::collection::vec(0.1f64..10.0, 2..12),
            queue in 1u64..5000,
            tasks in 0u64..50, comp in 0.0f64..5.0, wait in 0.0f64..5.0,
        ) {
            let mut s = Scheduler::new(Policy::Efp, EfpParams::default(), &caps).unwrap();
            let w = s.roles().workers[0];
            let obs = Observation { tasks, t_comp: comp, t_comm: 0.0, t_wait: wait };
            let d = s.on_report(w, &obs, queue, true);
            prop_assert!(d.tasks >= 1 && d.tasks <= queue);
        }
    }
}
