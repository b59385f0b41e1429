//! DISHET and its baselines in time: throughput and average response time while tasks
//! execute (Neelakantan 2012, §5).
//!
//! The paper compares DISHET, random biasing and dynamic biasing "in terms of number of
//! iterations, throughput and average response time for the varying loads". [`super::run`]
//! counts the iterations; this module measures the other two. The instances are those of
//! the iteration grid (the same graphs, capacities, totals, distributions and seeds); each is
//! then run in the simulator: node `i` executes its queue at `capacity_i × rate` tasks per
//! second, every `interval` seconds the policy runs one round of its rule (the code of
//! `hetlb balance`), and the units it moves cross the links at `link_rate` tasks per second
//! after `link_delay` seconds. The paper's figures did not survive, so there is nothing
//! published to set beside these numbers ([`crate::paper::dishet::RESPONSE`]).
//!
//! # Example
//! ```
//! use hetlb_experiments::dishet::{Config, Distribution};
//! use hetlb_experiments::dishet::response::{Policy, Response};
//! let grid = Config::new()
//!     .sizes(vec![8])
//!     .totals(vec![200])
//!     .distributions(vec![Distribution::Single])
//!     .seeds(1);
//! let policies = vec![Policy::None, "dishet".parse().unwrap()];
//! let report = Response::new(grid, policies).run(&|| {}).unwrap();
//! let (none, dishet) = (&report.cells[0], &report.cells[1]);
//! assert_eq!((none.policy, dishet.policy), ("none", "dishet"));
//! assert!(dishet.response_time < none.response_time);
//! ```

use super::{Config, DishetError, Distribution, Trial, mean_over, trials};
use hetlb_core::algorithm::Algorithm;
use hetlb_sim::Scenario;
use hetlb_sim::engine::Setup;
use hetlb_sim::model::{Distribution as Service, LinkParams, Links, Nodes};
use hetlb_sim::policy::DiffusionSettings;
use hetlb_sim::scenario::{MAX_ROUNDS, PolicySpec};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// The largest total of this experiment: every task is simulated.
pub const MAX_TOTAL: u64 = 100_000_000;

/// Why [`MAX_TOTAL`] is the limit, for messages.
pub const MAX_TOTAL_WHY: &str = "at most 10^8 tasks: every task is simulated";

/// Bytes a simulated task holds (a queue entry with its entry time), for memory estimates.
pub const BYTES_PER_TASK: u128 = 64;

/// A policy of the comparison: none, or a diffusion rule run in rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Policy {
    /// No balancing.
    None,
    /// One round of the rule every interval.
    Rule(Algorithm),
}

impl Policy {
    /// `none` or the rule's name.
    pub fn name(self) -> &'static str {
        match self {
            Policy::None => "none",
            Policy::Rule(a) => a.name(),
        }
    }

    /// `none` and every diffusion rule, in that order (the default comparison).
    pub fn all() -> Vec<Policy> {
        std::iter::once(Policy::None)
            .chain(Algorithm::DIFFUSION.iter().map(|&a| Policy::Rule(a)))
            .collect()
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A policy name that is not `none` nor a diffusion rule.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyParseError {
    /// Not a rule at all.
    #[error(transparent)]
    Unknown(#[from] hetlb_core::algorithm::UnknownAlgorithm),
    /// A rule that does not run on graphs in rounds.
    #[error(transparent)]
    NotDiffusion(DishetError),
}

impl FromStr for Policy {
    type Err = PolicyParseError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "none" {
            return Ok(Policy::None);
        }
        let a: Algorithm = s.parse()?;
        if !Algorithm::DIFFUSION.contains(&a) {
            return Err(PolicyParseError::NotDiffusion(DishetError::NotDiffusion(a)));
        }
        Ok(Policy::Rule(a))
    }
}

/// The experiment's settings. Build with [`Response::new`] and the setters.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Response {
    /// The instances: those of the iteration grid.
    pub grid: Config,
    /// The policies compared.
    pub policies: Vec<Policy>,
    /// Tasks per second a node executes per unit of capacity.
    pub rate: f64,
    /// Seconds between balancing rounds (the first at 0).
    pub interval: f64,
    /// Tasks per second a link carries (infinite: instant).
    pub link_rate: f64,
    /// Seconds a batch spends on a link after its transfer.
    pub link_delay: f64,
    /// Task execution times.
    pub service: Service,
}

/// Means over the trials of one cell (size, total, distribution, policy).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Cell {
    /// Nodes.
    pub nodes: usize,
    /// Total tasks.
    pub total: u64,
    /// Initial distribution.
    pub distribution: Distribution,
    /// [`Policy::name`].
    pub policy: &'static str,
    /// Trials.
    pub trials: u64,
    /// Tasks completed per second (all tasks ÷ makespan).
    pub throughput: f64,
    /// Mean time from time 0 to a task's completion, seconds.
    pub response_time: f64,
    /// Time of the last completion, seconds.
    pub makespan: f64,
    /// Total ÷ Σ rates: the makespan of a perfect fluid balance without transfers.
    pub ideal_makespan: f64,
    /// Tasks moved over links (a task moved twice counts twice).
    pub tasks_moved: f64,
    /// Balancing rounds run.
    pub rounds: f64,
}

/// The whole experiment.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ResponseReport {
    /// The instances.
    pub setup: Config,
    /// Tasks per second per unit of capacity.
    pub rate_per_capacity: f64,
    /// Seconds between rounds.
    pub interval: f64,
    /// Tasks per second a link carries.
    pub link_rate: f64,
    /// Seconds on a link after the transfer.
    pub link_delay: f64,
    /// `deterministic` or `exponential`.
    pub service: &'static str,
    /// What the paper gives ([`crate::paper::dishet::RESPONSE`]).
    pub paper: &'static str,
    /// One per size, total, distribution and policy.
    pub cells: Vec<Cell>,
    /// The policies compared, in their order.
    #[serde(skip)]
    pub policies: Vec<Policy>,
}

impl ResponseReport {
    /// The mean of `value` over the cells `keep` selects (NaN when none).
    pub fn mean(&self, keep: impl Fn(&Cell) -> bool, value: impl Fn(&Cell) -> f64) -> f64 {
        mean_over(&self.cells, keep, value)
    }

    /// In how many of the grid's cells (size, total, distribution) DISHET has the lowest
    /// average response time of the balancing rules, and of how many cells; `None` unless
    /// DISHET is compared with at least one other rule and `none`.
    pub fn dishet_best(&self) -> Option<(usize, usize)> {
        let names: Vec<&str> = self.policies.iter().map(|p| p.name()).collect();
        if !(names.contains(&"dishet") && names.len() > 2) {
            return None;
        }
        let c = &self.setup;
        let best = c
            .sizes
            .iter()
            .flat_map(|&n| c.totals.iter().map(move |&w| (n, w)))
            .flat_map(|(n, w)| c.distributions.iter().map(move |&d| (n, w, d)))
            .filter(|&(n, w, d)| {
                let at = |p: &str| {
                    self.cells
                        .iter()
                        .find(|x| {
                            x.nodes == n && x.total == w && x.distribution == d && x.policy == p
                        })
                        .map(|x| x.response_time)
                };
                let Some(dishet) = at("dishet") else {
                    return false;
                };
                names
                    .iter()
                    .filter(|&&p| p != "dishet" && p != "none")
                    .all(|&p| at(p).is_none_or(|r| dishet <= r))
            })
            .count();
        Some((best, c.sizes.len() * c.totals.len() * c.distributions.len()))
    }
}

/// One policy on one trial.
struct Outcome {
    trial: Trial,
    policy: Policy,
    makespan: f64,
    ideal: f64,
    throughput: f64,
    response: f64,
    moved: u64,
    rounds: u64,
}

impl Response {
    /// The default settings on `grid` for `policies`: 1 task per second per unit of capacity,
    /// a round every second, links of 50 tasks per second with 0.1 s delay, deterministic
    /// execution.
    pub fn new(grid: Config, policies: Vec<Policy>) -> Self {
        Self {
            grid,
            policies,
            rate: 1.0,
            interval: 1.0,
            link_rate: 50.0,
            link_delay: 0.1,
            service: Service::Deterministic,
        }
    }

    /// Sets the tasks per second per unit of capacity.
    #[must_use]
    pub fn rate(mut self, rate: f64) -> Self {
        self.rate = rate;
        self
    }

    /// Sets the seconds between rounds.
    #[must_use]
    pub fn interval(mut self, interval: f64) -> Self {
        self.interval = interval;
        self
    }

    /// Sets the links' transfer rate (infinite: instant).
    #[must_use]
    pub fn link_rate(mut self, link_rate: f64) -> Self {
        self.link_rate = link_rate;
        self
    }

    /// Sets the links' delay.
    #[must_use]
    pub fn link_delay(mut self, link_delay: f64) -> Self {
        self.link_delay = link_delay;
        self
    }

    /// Sets the task execution times.
    #[must_use]
    pub fn service(mut self, service: Service) -> Self {
        self.service = service;
        self
    }

    /// The memory the runs hold at once on `threads` threads, bytes: every task of the
    /// largest total is a queue entry in each thread's run.
    pub fn memory_estimate(&self, threads: usize) -> u128 {
        let max_total = self.grid.totals.iter().copied().max().unwrap_or(0);
        u128::from(max_total) * BYTES_PER_TASK * threads as u128
    }

    /// Checks the grid, the policies and that the rounds stay below the simulator's limit.
    ///
    /// # Errors
    /// [`DishetError::Size`], [`DishetError::Total`], [`DishetError::NoPolicy`] or
    /// [`DishetError::Interval`].
    pub fn check(&self) -> Result<(), DishetError> {
        self.grid.check(MAX_TOTAL, MAX_TOTAL_WHY)?;
        if self.policies.is_empty() {
            return Err(DishetError::NoPolicy);
        }
        let max_total = self.grid.totals.iter().copied().max().unwrap_or(0);
        // The slowest node runs at one unit of capacity: a bound on how long the rounds go on.
        let horizon = max_total as f64 / self.rate
            + if self.link_rate.is_finite() {
                max_total as f64 / self.link_rate
            } else {
                0.0
            }
            + self.link_delay;
        let rounds = horizon / self.interval;
        if rounds > MAX_ROUNDS {
            return Err(DishetError::Interval {
                interval: self.interval,
                rounds,
                max: MAX_ROUNDS,
            });
        }
        Ok(())
    }

    /// Runs every policy on every trial of the grid, trials in parallel; `tick` is called
    /// after each trial. The result does not depend on the thread count.
    ///
    /// # Complexity
    /// One simulation of `total` tasks per trial and policy.
    ///
    /// # Errors
    /// [`DishetError`] for bad settings ([`Response::check`]), a trial whose instance cannot
    /// be built, or a failed run.
    pub fn run(&self, tick: &(dyn Fn() + Sync)) -> Result<ResponseReport, DishetError> {
        self.check()?;
        let all = trials(&self.grid);
        let outcomes: Vec<Outcome> = all
            .par_iter()
            .map(|&t| {
                let r = self.run_trial(t);
                tick();
                r
            })
            .collect::<Result<Vec<Vec<Outcome>>, _>>()?
            .into_iter()
            .flatten()
            .collect();
        Ok(ResponseReport {
            setup: self.grid.clone(),
            rate_per_capacity: self.rate,
            interval: self.interval,
            link_rate: self.link_rate,
            link_delay: self.link_delay,
            service: match self.service {
                Service::Deterministic => "deterministic",
                Service::Exponential => "exponential",
            },
            paper: crate::paper::dishet::RESPONSE,
            cells: aggregate(&outcomes),
            policies: self.policies.clone(),
        })
    }

    fn run_trial(&self, trial: Trial) -> Result<Vec<Outcome>, DishetError> {
        let instance = trial.instance(&self.grid)?;
        let rates: Vec<f64> = instance
            .capacities
            .as_slice()
            .iter()
            .map(|c| c * self.rate)
            .collect();
        let total: u64 = instance.loads.iter().sum();
        let ideal = total as f64 / rates.iter().sum::<f64>();
        let links = Links::uniform(
            instance.network.clone(),
            LinkParams {
                rate: self.link_rate,
                delay: self.link_delay,
                distribution: Service::Deterministic,
            },
        );
        let mut setup = Setup::new(instance.loads.clone());
        setup.seed = instance.seed;
        let mut out = Vec::new();
        for &policy in &self.policies {
            let spec = match policy {
                Policy::None => PolicySpec::None,
                Policy::Rule(a) => {
                    PolicySpec::Diffusion(DiffusionSettings::new(a, self.interval, None)?)
                }
            };
            let scenario = Scenario {
                name: None,
                description: None,
                nodes: Nodes::new(rates.clone(), self.service),
                links: links.clone(),
                setup: setup.clone(),
                policy: spec,
            };
            let r = scenario.run()?;
            out.push(Outcome {
                trial,
                policy,
                makespan: r.makespan,
                ideal,
                throughput: if r.makespan > 0.0 {
                    r.executed as f64 / r.makespan
                } else {
                    0.0
                },
                response: r.mean_response_time.unwrap_or(0.0),
                moved: r.tasks_moved,
                rounds: r.policy_stats.balancings,
            });
        }
        Ok(out)
    }
}

fn aggregate(outcomes: &[Outcome]) -> Vec<Cell> {
    let mut groups: BTreeMap<(usize, u64, Distribution, Policy), Vec<&Outcome>> = BTreeMap::new();
    for o in outcomes {
        groups
            .entry((o.trial.nodes, o.trial.total, o.trial.distribution, o.policy))
            .or_default()
            .push(o);
    }
    groups
        .into_iter()
        .map(|((nodes, total, distribution, policy), os)| {
            let n = os.len() as f64;
            let mean = |f: fn(&Outcome) -> f64| os.iter().map(|o| f(o)).sum::<f64>() / n;
            Cell {
                nodes,
                total,
                distribution,
                policy: policy.name(),
                trials: os.len() as u64,
                throughput: mean(|o| o.throughput),
                response_time: mean(|o| o.response),
                makespan: mean(|o| o.makespan),
                ideal_makespan: mean(|o| o.ideal),
                tasks_moved: mean(|o| o.moved as f64),
                rounds: mean(|o| o.rounds as f64),
            }
        })
        .collect()
}
