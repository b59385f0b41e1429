//! A scenario run on real workers set beside the simulator's prediction for the same file and
//! seed: the figures of both, their relative errors, and whether the run kept to its time
//! scale closely enough for the comparison to mean something.

use hetlb_core::Algorithm;
use hetlb_runtime::scenario::{LinkMeasure, RealReport, Timing, Work};
use hetlb_sim::scenario::PolicySpec;
use hetlb_sim::{Report, Scenario, SimError};
use serde::Serialize;
use thiserror::Error;

/// Four figures, simulated, measured or as relative errors.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Figures {
    /// Scenario time of the last completion.
    pub makespan: f64,
    /// Σ over nodes of idle time up to the makespan.
    pub total_idle: f64,
    /// Tasks moved between nodes.
    pub tasks_moved: f64,
    /// Each node's finish time.
    pub finish: Vec<f64>,
}

/// What the threshold-triggered hypercube policy did.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Balancings {
    /// Balancings.
    pub count: u64,
    /// Mean max − min of the loads after a balancing.
    pub mean_max_difference_after: Option<f64>,
    /// Mean `Σ loads ÷ max load` of the balanced batches.
    pub mean_batch_speedup: Option<f64>,
}

/// [`Timing`] and the verdict drawn from it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TimingVerdict {
    /// How closely the run kept to its time scale.
    #[serde(flatten)]
    pub timing: Timing,
    /// False when a warning says why the measured times cannot stand for the scenario's.
    pub comparison_meaningful: bool,
}

/// A real run beside the simulator's prediction.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Comparison {
    /// The scenario file (or what the caller named the scenario).
    pub scenario: String,
    /// The scenario's own name.
    pub name: Option<String>,
    /// Its policy.
    pub policy: String,
    /// `threads` or `mpi`.
    pub backend: String,
    /// Real seconds per scenario second.
    pub time_scale: f64,
    /// What a task did for its service time.
    pub work: Work,
    /// Tasks that arrived from outside.
    pub tasks_arrived: u64,
    /// Tasks injected.
    pub tasks_injected: u64,
    /// Tasks executed, every one exactly once.
    pub tasks_completed: u64,
    /// The real run's figures, in scenario time.
    pub measured: Figures,
    /// The simulator's, when it was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulated: Option<Figures>,
    /// `(measured − simulated) ÷ simulated`, figure by figure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub relative_error: Option<Figures>,
    /// Mean time from entering to completion, measured.
    pub mean_response_time: Option<f64>,
    /// The same, simulated.
    pub simulated_mean_response_time: Option<f64>,
    /// Mean lateness of deliveries behind their modelled arrival.
    pub mean_delivery_lateness: Option<f64>,
    /// Every link as the delay-aware policy saw it.
    pub links: Vec<LinkMeasure>,
    /// Real seconds the run took.
    pub real_seconds: f64,
    /// How closely the run kept to its time scale.
    pub timing: TimingVerdict,
    /// Why the measured times cannot stand for the scenario's, when they cannot.
    pub warnings: Vec<String>,
    /// The makespan the paper reports for the scenario ([`published_makespan`]).
    pub paper_makespan: Option<f64>,
    /// What the threshold policy did on the real workers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub balancings: Option<Balancings>,
    /// What it did in the simulator.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simulated_balancings: Option<Balancings>,
}

/// One figure of a [`Comparison`], simulated, measured and as a relative error.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct FigureRow {
    /// `makespan`, `total_idle`, `tasks_moved` or `finish`.
    pub figure: &'static str,
    /// The node, for a finish time.
    pub node: Option<usize>,
    /// The simulator's value, when it was asked.
    pub simulated: Option<f64>,
    /// The real run's value.
    pub measured: f64,
    /// `(measured − simulated) ÷ simulated`, when simulated.
    pub relative_error: Option<f64>,
}

impl Comparison {
    /// The figures in order: makespan, total idle, tasks moved, then every node's finish.
    pub fn figures(&self) -> Vec<FigureRow> {
        let (sim, err) = (self.simulated.as_ref(), self.relative_error.as_ref());
        let row = |figure, node, pick: &dyn Fn(&Figures) -> f64| FigureRow {
            figure,
            node,
            simulated: sim.map(pick),
            measured: pick(&self.measured),
            relative_error: err.map(pick),
        };
        let mut rows = vec![
            row("makespan", None, &|f| f.makespan),
            row("total_idle", None, &|f| f.total_idle),
            row("tasks_moved", None, &|f| f.tasks_moved),
        ];
        for i in 0..self.measured.finish.len() {
            rows.push(row("finish", Some(i), &|f| {
                f.finish.get(i).copied().unwrap_or(f64::NAN)
            }));
        }
        rows
    }
}

/// `(measured − simulated) ÷ simulated`; 0 when both are 0, infinite when only the
/// simulated figure is.
///
/// # Example
/// ```
/// use hetlb_experiments::drivers::scenario::relative_error;
/// assert_eq!(relative_error(1.1, 1.0), 0.10000000000000009);
/// assert_eq!(relative_error(0.0, 0.0), 0.0);
/// ```
pub fn relative_error(measured: f64, simulated: f64) -> f64 {
    if simulated == 0.0 {
        if measured == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        (measured - simulated) / simulated
    }
}

/// The makespan Mirtaheri & Grandinetti (2017, §5, Figs. 8–11) report for the example
/// scenarios shipped with hetlb, by scenario name.
///
/// # Example
/// ```
/// use hetlb_experiments::drivers::scenario::published_makespan;
/// assert_eq!(published_makespan(Some("mirtaheri-compensated")), Some(4.8));
/// assert_eq!(published_makespan(Some("rim-dynamic")), None);
/// ```
pub fn published_makespan(name: Option<&str>) -> Option<f64> {
    match name? {
        "mirtaheri-no-balancing" => Some(2.6),
        "mirtaheri-balanced" => Some(1.32),
        "mirtaheri-delayed" => Some(7.13),
        "mirtaheri-compensated" => Some(4.8),
        _ => None,
    }
}

/// Why the simulator's prediction could not be made.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum PredictionError {
    /// An algorithm was given for a scenario without a hypercube policy.
    #[error("the scenario has no hypercube policy to change")]
    NoHypercubePolicy,
    /// The simulation failed.
    #[error("the simulation")]
    Simulation(#[source] SimError),
    /// The simulated makespan is not a number of seconds.
    #[error("the simulated makespan is not finite")]
    NotFinite,
}

/// An estimate of the bytes [`predict`] and the real run of `scenario` hold at their peaks
/// (one after the other): the larger of the simulator's estimate without time series
/// ([`Scenario::memory_estimate_without_series`], as [`predict`] runs it) and the real run's
/// ([`hetlb_runtime::scenario::memory_estimate`]). What to check against a memory limit
/// before either starts.
///
/// # Example
/// ```
/// use hetlb_experiments::drivers::scenario::memory_estimate;
/// use hetlb_sim::Scenario;
/// let s = Scenario::from_toml(
///     "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 1.0\n[[injections]]\nnode = 0\ntime = 0.0\ntasks = 4294967295\n",
/// ).unwrap();
/// assert!(memory_estimate(&s) > 4294967295 * 16); // refused under 8 GiB before any run
/// ```
pub fn memory_estimate(scenario: &Scenario) -> u128 {
    scenario
        .memory_estimate_without_series()
        .max(hetlb_runtime::scenario::memory_estimate(scenario))
}

/// Sets `scenario` up for a real run — `seed` (when given) for the simulator and the ranks,
/// `algorithm` (when given) for its hypercube policy, no time series — and returns the
/// simulator's prediction (whose makespan also sets the default time scale).
///
/// # Errors
/// [`PredictionError`].
pub fn predict(
    scenario: &mut Scenario,
    seed: Option<u64>,
    algorithm: Option<Algorithm>,
) -> Result<Report, PredictionError> {
    if let Some(seed) = seed {
        scenario.setup.seed = seed;
    }
    if let Some(algorithm) = algorithm {
        match &mut scenario.policy {
            PolicySpec::Hypercube { algorithm: x, .. } => *x = algorithm,
            _ => return Err(PredictionError::NoHypercubePolicy),
        }
    }
    scenario.setup.series.enabled = false;
    let sim = scenario.run().map_err(PredictionError::Simulation)?;
    if !sim.makespan.is_finite() {
        return Err(PredictionError::NotFinite);
    }
    Ok(sim)
}

/// The real run `real` of `scenario` (named `label`) beside the simulator's `sim`, when
/// given.
pub fn compare(
    label: &str,
    scenario: &Scenario,
    real: &RealReport,
    sim: Option<&Report>,
) -> Comparison {
    let measured = Figures {
        makespan: real.makespan,
        total_idle: real.total_idle,
        tasks_moved: real.tasks_moved as f64,
        finish: real.nodes.iter().map(|n| n.finish).collect(),
    };
    let simulated = sim.map(|s| Figures {
        makespan: s.makespan,
        total_idle: s.total_idle,
        tasks_moved: s.tasks_moved as f64,
        finish: s.nodes.iter().map(|n| n.finish).collect(),
    });
    let relative_error = simulated.as_ref().map(|s| Figures {
        makespan: self::relative_error(measured.makespan, s.makespan),
        total_idle: self::relative_error(measured.total_idle, s.total_idle),
        tasks_moved: self::relative_error(measured.tasks_moved, s.tasks_moved),
        finish: measured
            .finish
            .iter()
            .zip(&s.finish)
            .map(|(&m, &x)| self::relative_error(m, x))
            .collect(),
    });
    let reference = sim.map_or(real.makespan, |s| s.makespan);
    let warnings = real.timing.problems(reference);
    let hypercube = matches!(scenario.policy, PolicySpec::Hypercube { .. });
    Comparison {
        scenario: label.to_string(),
        name: scenario.name.clone(),
        policy: hetlb_sim::policy::Policy::name(&scenario.policy.build()),
        backend: real.backend.clone(),
        time_scale: real.time_scale,
        work: real.work,
        tasks_arrived: real.tasks_arrived,
        tasks_injected: real.tasks_injected,
        tasks_completed: real.tasks_completed,
        measured,
        simulated,
        relative_error,
        mean_response_time: real.mean_response_time,
        simulated_mean_response_time: sim.and_then(|s| s.mean_response_time),
        mean_delivery_lateness: real.mean_lateness,
        links: real
            .nodes
            .iter()
            .flat_map(|n| n.links.iter().copied())
            .collect(),
        real_seconds: real.real_seconds,
        timing: TimingVerdict {
            timing: real.timing,
            comparison_meaningful: warnings.is_empty(),
        },
        warnings,
        paper_makespan: published_makespan(scenario.name.as_deref()),
        balancings: hypercube.then(|| {
            // Every rank planned every round alike; rank 0's record serves.
            let b = real.nodes.first().map_or(&[][..], |n| &n.balancings[..]);
            let n = b.len() as f64;
            let nodes = scenario.node_count() as f64;
            Balancings {
                count: b.len() as u64,
                mean_max_difference_after: (n > 0.0)
                    .then(|| b.iter().map(|x| x.0 as f64).sum::<f64>() / n),
                mean_batch_speedup: (n > 0.0).then(|| {
                    b.iter()
                        .filter(|x| x.1 > 0)
                        .map(|x| x.2 * nodes / x.1 as f64)
                        .sum::<f64>()
                        / n
                }),
            }
        }),
        simulated_balancings: sim.filter(|_| hypercube).map(|s| Balancings {
            count: s.policy_stats.balancings,
            mean_max_difference_after: s.policy_stats.mean_max_difference_after,
            mean_batch_speedup: s.policy_stats.mean_batch_speedup,
        }),
    }
}

/// Runs this rank's node of `scenario` (named `label` in errors) on the ranks of `job` —
/// every rank calls it, one rank per node — and returns the real run's report on rank 0,
/// `None` on the others. A rank that fails or stops is reported by every other rank (each
/// prints the error naming it), then the job is ended, since a stopped process would
/// otherwise keep the launcher waiting.
#[cfg(feature = "mpi")]
pub fn run_mpi_job(
    job: &super::mpi_job::MpiJob,
    label: &str,
    scenario: &Scenario,
    cfg: &hetlb_runtime::scenario::RealConfig,
    calibration: hetlb_runtime::scenario::Calibration,
) -> Option<RealReport> {
    use std::time::Duration;
    match hetlb_runtime::scenario::run_on(job.mpi(), scenario, cfg, calibration) {
        Ok(report) => report,
        Err(e) => job.report_and_end(
            &format!("{label}: {e}"),
            cfg.timeout.min(Duration::from_secs(2)),
        ),
    }
}
