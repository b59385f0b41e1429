//! Mirtaheri & Grandinetti, *Dynamic load balancing in distributed exascale computing
//! systems*, Cluster Computing (2017), §5: the 6-node one-shot scenarios, recomputed.
//!
//! The five scenarios are the files in this crate's `scenarios/` directory (the same files as
//! `examples/scenarios/mirtaheri-*.toml`), compiled in. Each is run once as written
//! (deterministic execution, as the paper's figures are drawn: "a linear decay instead of
//! random or Poisson") and [`Mirtaheri::runs`] times with Poisson task completions (the
//! paper's stated model), and set beside the numbers in the paper's text
//! ([`crate::paper::mirtaheri`]). The delayed scenario is then swept over the ratio of
//! transfer rate to execution rate, with no balancing, balancing with `k = 1`, with the
//! compensating factor of eq. 25, and the best single transfer found by search as a yardstick
//! ([`search`]).
//!
//! Two more parts: eq. 25 evaluated on the paper's own inputs beside the scenario's, with
//! every reading of the delayed scenario that could give those inputs ([`eq25`]); and the
//! centre's plan carried out by the centre alone or by the whole neighbourhood
//! ([`neighbourhood`]).
//!
//! # Example
//! ```
//! use hetlb_experiments::mirtaheri::{Measure, Mirtaheri};
//! let report = Mirtaheri::new().runs(2).ratios(vec![0.5]).run(&|| {}).unwrap();
//! // Fig. 8, no balancing: 300 tasks at 200 tasks/s, plus 1000 tasks at t = 0.1 s.
//! let fig8 = report.deterministic("fig8", Measure::Makespan);
//! assert!((fig8 - 2.6).abs() < 1e-9);
//! ```

pub mod eq25;
pub mod neighbourhood;
pub mod search;

use crate::paper::mirtaheri as paper;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::rules::delay_aware::DelayAwareTransfer;
use hetlb_sim::model::{Distribution, LinkModel, LinkParams, Links, NodeModel, Nodes};
use hetlb_sim::policy::CarryOut;
use hetlb_sim::scenario::{PolicySpec, Scenario};
use hetlb_sim::{Report, ScenarioError, SimError};
use rayon::prelude::*;
use serde::Serialize;
use thiserror::Error;

/// The scenario files, compiled in: `(name, TOML)`.
pub const SCENARIOS: [(&str, &str); 5] = [
    (
        "mirtaheri-no-balancing",
        include_str!("../../scenarios/mirtaheri-no-balancing.toml"),
    ),
    (
        "mirtaheri-balanced",
        include_str!("../../scenarios/mirtaheri-balanced.toml"),
    ),
    (
        "mirtaheri-delayed",
        include_str!("../../scenarios/mirtaheri-delayed.toml"),
    ),
    (
        "mirtaheri-compensated",
        include_str!("../../scenarios/mirtaheri-compensated.toml"),
    ),
    (
        "mirtaheri-neighbourhood",
        include_str!("../../scenarios/mirtaheri-neighbourhood.toml"),
    ),
];

/// The receiving node of the delayed scenarios (paper node 5; node ids here are one less).
pub const RECEIVER: usize = 4;

/// The policies of the delayed sweep, in the order of its rows.
pub const SWEEP_POLICIES: [&str; 4] = ["none", "k = 1", "eq. 25", "best single transfer"];

pub use crate::paper::mirtaheri::Measure;

impl Measure {
    /// The measure of one run.
    pub fn of(self, r: &Report) -> f64 {
        match self {
            Measure::Makespan => r.makespan,
            Measure::TotalIdle => r.total_idle,
            Measure::ReceiverWaiting => r.nodes.get(RECEIVER).map_or(f64::NAN, |n| n.waiting),
            Measure::TasksMoved => r.tasks_moved as f64,
        }
    }
}

/// One scenario of §5.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Case {
    /// A short key: `fig8`, `fig9`, `fig9-33ms`, `fig10`, `fig11`.
    pub key: &'static str,
    /// What it is, for tables and plots.
    pub title: &'static str,
    /// The scenario.
    pub scenario: Scenario,
    /// `(measure, the paper's value as printed)`.
    pub paper: &'static [(Measure, &'static str)],
}

/// One measure of one scenario: the paper's value, ours with deterministic execution and with
/// Poisson completions.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Row {
    /// The case's key.
    pub case: &'static str,
    /// What is measured.
    pub measure: Measure,
    /// The paper's value, as printed.
    pub paper: &'static str,
    /// Ours, deterministic execution.
    pub deterministic: f64,
    /// Ours, the mean over the Poisson runs.
    pub poisson_mean: f64,
    /// The sample standard deviation over the Poisson runs.
    pub poisson_sd: f64,
}

/// One policy at one transfer/execution rate ratio of the delayed sweep.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct SweepRow {
    /// Transfer rate ÷ execution rate.
    pub ratio: f64,
    /// Transfer rate, tasks per second.
    pub transfer_rate: f64,
    /// One of [`SWEEP_POLICIES`].
    pub policy: &'static str,
    /// Finish time, seconds.
    pub makespan: f64,
    /// Total idle time, seconds.
    pub total_idle: f64,
    /// Standby of paper node 5, seconds.
    pub receiver_waiting: f64,
    /// Tasks moved.
    pub tasks_moved: u64,
}

/// A deterministic run of one case, kept for plots and notes (not serialised).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CaseRun {
    /// The case's key.
    pub key: &'static str,
    /// The case's title.
    pub title: &'static str,
    /// The run, with its queue series.
    pub report: Report,
}

/// The whole reproduction.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct MirtaheriReport {
    /// Poisson runs per scenario.
    pub runs: u64,
    /// Seed of the first Poisson run.
    pub first_seed: u64,
    /// Every measure of every scenario beside the paper's.
    pub scenarios: Vec<Row>,
    /// The delayed scenario over the transfer/execution rate ratio.
    pub sweep: Vec<SweepRow>,
    /// Eq. 25 on the paper's inputs and on the scenario's.
    pub eq25: Vec<eq25::Eq25>,
    /// Readings of the delayed scenario and whether any gives the paper's inputs.
    pub readings: Vec<eq25::Reading>,
    /// The plan carried out by the centre or by the whole neighbourhood.
    pub neighbourhood: Vec<neighbourhood::Row>,
    /// The deterministic run of every case, in the order of [`cases`].
    #[serde(skip)]
    pub cases: Vec<CaseRun>,
}

/// The sweep's four rows at one ratio.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct SweepAt<'a> {
    /// No balancing.
    pub none: &'a SweepRow,
    /// `k = 1`.
    pub k1: &'a SweepRow,
    /// Eq. 25.
    pub eq25: &'a SweepRow,
    /// The best single transfer.
    pub best: &'a SweepRow,
}

impl SweepAt<'_> {
    /// True when the best single transfer moves a number of tasks closer to the paper's 311
    /// than eq. 25 does: the paper's compensated transfer lies closer to the optimum.
    pub fn paper_closer_to_best(&self) -> bool {
        self.best.tasks_moved.abs_diff(paper::TASKS)
            < self.best.tasks_moved.abs_diff(self.eq25.tasks_moved)
    }
}

impl MirtaheriReport {
    /// The row of `case` and `measure`.
    pub fn row(&self, case: &str, measure: Measure) -> Option<&Row> {
        self.scenarios
            .iter()
            .find(|r| r.case == case && r.measure == measure)
    }

    /// Ours with deterministic execution (NaN when the case or measure is not in the report).
    pub fn deterministic(&self, case: &str, measure: Measure) -> f64 {
        self.row(case, measure)
            .map_or(f64::NAN, |r| r.deterministic)
    }

    /// The mean of the Poisson runs (NaN when the case or measure is not in the report).
    pub fn poisson_mean(&self, case: &str, measure: Measure) -> f64 {
        self.row(case, measure).map_or(f64::NAN, |r| r.poisson_mean)
    }

    /// The paper says the 0.033 s transfer changes nothing in Fig. 9: true when our finish
    /// times with and without it agree to 1e-9 s.
    pub fn transfer_changes_nothing(&self) -> bool {
        let with = self.deterministic("fig9-33ms", Measure::Makespan);
        let without = self.deterministic("fig9", Measure::Makespan);
        (with - without).abs() < 1e-9
    }

    /// The first transfer the compensated scenario (Fig. 11) decided: its factor `k` and tasks.
    pub fn compensated_transfer(&self) -> Option<&DelayAwareTransfer> {
        self.cases
            .iter()
            .find(|c| c.key == "fig11")
            .and_then(|c| c.report.policy_stats.decisions.first())
            .and_then(|d| d.transfers.first())
    }

    /// The sweep's rows at `ratio` (within 1e-12), when all four policies ran there.
    pub fn sweep_at(&self, ratio: f64) -> Option<SweepAt<'_>> {
        let at: Vec<&SweepRow> = self
            .sweep
            .iter()
            .filter(|r| (r.ratio - ratio).abs() < 1e-12)
            .collect();
        match at.as_slice() {
            [none, k1, eq25, best] => Some(SweepAt {
                none,
                k1,
                eq25,
                best,
            }),
            _ => None,
        }
    }
}

/// Why the reproduction could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum MirtaheriError {
    /// No Poisson run asked for.
    #[error("need at least one run")]
    NoRuns,
    /// A transfer/execution ratio outside `1e-6..=1e6`.
    #[error("{0} is out of range: allowed 1e-6 to 1e6")]
    Ratio(f64),
    /// A built-in scenario did not parse (a defect of this crate).
    #[error("built-in scenario {name}")]
    Scenario {
        /// The scenario's name.
        name: &'static str,
        /// What the parser said.
        #[source]
        source: ScenarioError,
    },
    /// A run failed.
    #[error(transparent)]
    Simulation(#[from] SimError),
}

/// The built-in scenario `name` (one of [`SCENARIOS`]).
///
/// # Errors
/// [`MirtaheriError::Scenario`] when the name is unknown or the file does not parse.
pub fn scenario(name: &'static str) -> Result<Scenario, MirtaheriError> {
    let text = SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .map_or("", |(_, t)| t);
    Scenario::from_toml(text).map_err(|source| MirtaheriError::Scenario { name, source })
}

/// The five scenarios of §5, with the paper's values.
///
/// # Errors
/// [`MirtaheriError::Scenario`] if a built-in file does not parse.
pub fn cases() -> Result<Vec<Case>, MirtaheriError> {
    let mut transfer_33ms = scenario("mirtaheri-balanced")?;
    // §5: "the load-transfer delay from node 1 to node 2 and node 5 ... is 0.033 s": 333
    // tasks in 0.033 s is about 10,000 tasks/s.
    let link = LinkParams {
        rate: paper::TRANSFER_TASKS / paper::TRANSFER_SECONDS,
        delay: 0.0,
        distribution: Distribution::Deterministic,
    };
    transfer_33ms.links = Links::uniform(LinkModel::network(&transfer_33ms.links).clone(), link);
    Ok(vec![
        Case {
            key: "fig8",
            title: "Fig. 8: no balancing",
            scenario: scenario("mirtaheri-no-balancing")?,
            paper: &paper::FIG8,
        },
        Case {
            key: "fig9",
            title: "Fig. 9: balancing, no transfer delay",
            scenario: scenario("mirtaheri-balanced")?,
            paper: &paper::FIG9,
        },
        Case {
            key: "fig9-33ms",
            title: "Fig. 9 with the 0.033 s transfer the text mentions",
            scenario: transfer_33ms,
            paper: &paper::FIG9_TRANSFER,
        },
        Case {
            key: "fig10",
            title: "Fig. 10: delayed, k = 1",
            scenario: scenario("mirtaheri-delayed")?,
            paper: &paper::FIG10,
        },
        Case {
            key: "fig11",
            title: "Fig. 11: delayed, compensating factor",
            scenario: scenario("mirtaheri-compensated")?,
            paper: &paper::FIG11,
        },
    ])
}

/// The scenario with Poisson task completions and the given seed, without series.
pub fn poisson(s: &Scenario, seed: u64) -> Scenario {
    let mut s = s.clone();
    let rates: Vec<f64> = (0..s.node_count())
        .map(|i| NodeModel::rate(&s.nodes, i))
        .collect();
    s.nodes = Nodes::new(rates, Distribution::Exponential);
    s.setup.seed = seed;
    s.setup.series.enabled = false;
    s
}

/// The mean and the sample standard deviation (0 for fewer than two values).
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len().max(1) as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    (mean, var.sqrt())
}

/// The reproduction's settings. Build with [`Mirtaheri::new`] and the setters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Mirtaheri {
    /// Runs with Poisson task completions per scenario (seeds `seed`, `seed + 1`, …).
    pub runs: u64,
    /// Seed of the first Poisson run.
    pub seed: u64,
    /// Transfer rate ÷ execution rate of the delayed sweep.
    pub ratios: Vec<f64>,
}

impl Default for Mirtaheri {
    fn default() -> Self {
        Self::new()
    }
}

impl Mirtaheri {
    /// 100 Poisson runs from seed 1; ratios 0.1, 0.25, 0.5, 1, 2, 4 and 10.
    pub fn new() -> Self {
        Self {
            runs: 100,
            seed: 1,
            ratios: vec![0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0],
        }
    }

    /// Sets the number of Poisson runs per scenario.
    #[must_use]
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = runs;
        self
    }

    /// Sets the seed of the first Poisson run.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the ratios of the delayed sweep.
    #[must_use]
    pub fn ratios(mut self, ratios: Vec<f64>) -> Self {
        self.ratios = ratios;
        self
    }

    /// How many times [`Mirtaheri::run`] calls its `progress`: one per run of a scenario,
    /// one per ratio of the sweep.
    pub fn steps(&self) -> u64 {
        5 * (self.runs.saturating_add(1)) + self.ratios.len() as u64
    }

    /// Runs the scenarios (deterministic and Poisson), the sweep, eq. 25 and the
    /// neighbourhood comparison; `progress` is called after each step ([`Mirtaheri::steps`]).
    ///
    /// The Poisson runs go in parallel; the result does not depend on the thread count.
    ///
    /// # Complexity
    /// `5 · (runs + 1)` simulations of about 2,800 tasks, and per ratio three more and about
    /// 300 for the search of the best single transfer.
    ///
    /// # Errors
    /// [`MirtaheriError`]: no runs, a ratio out of range, or a run that failed.
    pub fn run(&self, progress: &(dyn Fn() + Sync)) -> Result<MirtaheriReport, MirtaheriError> {
        if self.runs == 0 {
            return Err(MirtaheriError::NoRuns);
        }
        if let Some(&bad) = self.ratios.iter().find(|r| !(1e-6..=1e6).contains(*r)) {
            return Err(MirtaheriError::Ratio(bad));
        }
        let cases = cases()?;
        let mut rows = Vec::new();
        let mut runs = Vec::new();
        for case in &cases {
            let det = case.scenario.run()?;
            progress();
            let stochastic = (0..self.runs)
                .into_par_iter()
                .map(|i| {
                    let r = poisson(&case.scenario, self.seed.wrapping_add(i)).run();
                    progress();
                    r
                })
                .collect::<Result<Vec<_>, _>>()?;
            for &(measure, paper) in case.paper {
                let xs: Vec<f64> = stochastic.iter().map(|r| measure.of(r)).collect();
                let (mean, sd) = mean_sd(&xs);
                rows.push(Row {
                    case: case.key,
                    measure,
                    paper,
                    deterministic: measure.of(&det),
                    poisson_mean: mean,
                    poisson_sd: sd,
                });
            }
            runs.push(CaseRun {
                key: case.key,
                title: case.title,
                report: det,
            });
        }
        let sweep = sweep(&cases[3].scenario, &self.ratios, progress)?;
        let readings = eq25::readings(&cases[4].scenario);
        let mut eq25_rows = vec![eq25::paper_row()];
        // The reading the simulator makes (eqs. 5–16 as written, from the decision at 0.1 s).
        if let Some(r) = readings.first() {
            let mut row = r.eq25.clone();
            row.source =
                "the scenario as the text states it (receiver busy, from the decision)".into();
            eq25_rows.push(row);
        }
        let neighbourhood = neighbourhood::compare()?;
        Ok(MirtaheriReport {
            runs: self.runs,
            first_seed: self.seed,
            scenarios: rows,
            sweep,
            eq25: eq25_rows,
            readings,
            neighbourhood,
            cases: runs,
        })
    }
}

/// The delayed scenario `base` at every transfer/execution rate ratio: no balancing, `k = 1`,
/// eq. 25 and the best single transfer (deterministic execution); `done` after each ratio.
///
/// # Errors
/// The first run that failed.
pub fn sweep(
    base: &Scenario,
    ratios: &[f64],
    done: &(dyn Fn() + Sync),
) -> Result<Vec<SweepRow>, SimError> {
    let exec_rate = NodeModel::rate(&base.nodes, 0);
    let mut rows = Vec::new();
    for &ratio in ratios {
        let mut s = base.clone();
        s.setup.series.enabled = false;
        let transfer_rate = ratio * exec_rate;
        s.links = Links::uniform(
            LinkModel::network(&s.links).clone(),
            LinkParams {
                rate: transfer_rate,
                delay: 0.0,
                distribution: Distribution::Deterministic,
            },
        );
        let mut reports = Vec::new();
        for spec in [
            PolicySpec::None,
            PolicySpec::DelayAware {
                compensation: Compensation::None,
                carry: CarryOut::Centre,
            },
            PolicySpec::DelayAware {
                compensation: Compensation::Factor,
                carry: CarryOut::Centre,
            },
        ] {
            let mut x = s.clone();
            x.policy = spec;
            reports.push(x.run()?);
        }
        let planned = reports[1].tasks_moved;
        reports.push(search::best_single_transfer(&s, planned.max(1) * 2)?);
        for (policy, r) in SWEEP_POLICIES.iter().zip(&reports) {
            rows.push(SweepRow {
                ratio,
                transfer_rate,
                policy,
                makespan: r.makespan,
                total_idle: r.total_idle,
                receiver_waiting: r.nodes.get(RECEIVER).map_or(f64::NAN, |n| n.waiting),
                tasks_moved: r.tasks_moved,
            });
        }
        done();
    }
    Ok(rows)
}
