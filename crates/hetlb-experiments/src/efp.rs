//! Aldasht, Ortega & Puntonet, *Dynamic load balancing in heterogeneous clusters: exploitation
//! of the processing power*, §5, on real workers (threads here; MPI through
//! [`Efp::run_with`]).
//!
//! * Tables 2–6 and Figs. 4–8: matrix orders 100, 400, 800, 1000 and 2000 on one fast and
//!   eight slow processors, rows and `T_exec`/`T_comp`/`T_comm`/`T_wait` per processor under
//!   EFP, set beside the paper's tables ([`crate::paper::efp`]).
//! * Fig. 3: time against the matrix order, EFP against the static split.
//! * Figs. 9–11: time, efficiency and speedup against the number of processors for a
//!   1000 × 1000 product, EFP against the static split.
//!
//! The cluster is emulated as `hetlb run matmul` does: the slow processors repeat their
//! kernel [`Efp::slow_factor`] times (the paper's PIII 1000 MHz against PII 333 MHz: 3), the
//! master knows the processors' power from their clocks as the paper's does
//! ([`Efp::calibrate`] measures it instead), and `G` follows eq. (1). Figs. 3 and 9–11 survive
//! only as captions: there are no published numbers to set beside those rows
//! ([`crate::paper::efp::FIGURES`]).
//!
//! Every time here is measured on the machine that runs it: tests of this module assert only
//! what holds on any machine (row counts, the product's correctness).
//!
//! # Example
//! ```
//! use hetlb_experiments::efp::Efp;
//! let report = Efp::new()
//!     .sizes(vec![40])
//!     .procs(3)
//!     .sweep(vec![2])
//!     .sweep_size(30)
//!     .run_threads(&mut |_| {})
//!     .unwrap();
//! assert_eq!(report.tables.len(), 2); // static split and EFP
//! let rows: u64 = report.tables[1].processors.iter().map(|p| p.rows).sum();
//! assert_eq!(rows, 40);
//! assert!(report.tables.iter().all(|p| p.max_error.is_some_and(|e| e <= 1e-9)));
//! ```

use hetlb_core::rules::self_scheduling::{Policy, SchedulingError};
use hetlb_runtime::grain::Grain;
use hetlb_runtime::master_worker::ProcessorRow;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::{
    ProcessorReport, RunConfig, RunOutcome, RuntimeError, Slowdown, run_sequential,
};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

pub use crate::paper::efp::FIGURES as PAPER_FIGURES;

/// The two policies the paper compares: the static split, then EFP.
pub const POLICIES: [Policy; 2] = [Policy::StaticEqual, Policy::Efp];

/// The largest matrix order accepted.
pub const MAX_ORDER: u64 = 20_000;

/// The fewest and most processors of a run (a master and at least one worker).
pub const PROCS: std::ops::RangeInclusive<usize> = 2..=256;

/// What one run (the median of [`Efp::runs`]) measured.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Point {
    /// Matrix order.
    pub size: u64,
    /// Processors, the master included.
    pub procs: usize,
    /// The policy.
    pub policy: Policy,
    /// Tasks `G` the product was cut into.
    pub tasks: u64,
    /// Where `G` comes from (eq. (1) and its draw, and any adjustment).
    pub granularity: String,
    /// Seconds.
    pub makespan: f64,
    /// `W / Σ v_i` with the measured speeds.
    pub ideal: f64,
    /// `ideal / makespan`.
    pub efficiency_vs_ideal: f64,
    /// Every makespan of the repetitions.
    pub makespans: Vec<f64>,
    /// The master's processor number.
    pub master: usize,
    /// Per processor: rows, `T_exec`, `T_comp`, `T_comm`, `T_wait`.
    pub processors: Vec<ProcessorReport>,
    /// The largest |C − C_1| against the one-processor run of the same tasks (0: identical).
    pub max_error: Option<f64>,
}

impl Point {
    /// `(max − min) / max` of the processors' `T_exec` (0 when all are 0): how far apart the
    /// processors finish.
    pub fn finish_spread(&self) -> f64 {
        let max = self.processors.iter().map(|q| q.t_exec).fold(0.0, f64::max);
        let min = self
            .processors
            .iter()
            .map(|q| q.t_exec)
            .fold(f64::INFINITY, f64::min);
        if max > 0.0 { (max - min) / max } else { 0.0 }
    }

    /// The master's rows ÷ the mean rows of a worker (NaN without a master's report).
    pub fn master_ratio(&self) -> f64 {
        let times: Vec<Times<'_>> = self.processors.iter().map(Times::from).collect();
        master_ratio(&times, self.master).unwrap_or(f64::NAN)
    }
}

/// One processor of a master-worker run as a row of the paper's Tables 2–6: its role, rows
/// and times.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Times<'a> {
    /// The processor.
    pub processor: usize,
    /// `P0` (the master), `P1`, … by speed.
    pub role: &'a str,
    /// Rows computed.
    pub rows: u64,
    /// `T_exec`, `T_comp`, `T_comm` and `T_wait`, seconds.
    pub times: [f64; 4],
}

impl<'a> From<&'a ProcessorReport> for Times<'a> {
    fn from(p: &'a ProcessorReport) -> Self {
        Self {
            processor: p.processor,
            role: &p.role,
            rows: p.rows,
            times: [p.t_exec, p.t_comp, p.t_comm, p.t_wait],
        }
    }
}

impl<'a> From<&'a ProcessorRow> for Times<'a> {
    fn from(p: &'a ProcessorRow) -> Self {
        Self {
            processor: p.processor,
            role: &p.role,
            rows: p.rows,
            times: [p.t_exec, p.t_comp, p.t_comm, p.t_wait],
        }
    }
}

/// The master's rows ÷ the mean rows of the other processors (`None` without the master).
pub fn master_ratio(processors: &[Times<'_>], master: usize) -> Option<f64> {
    let others: Vec<u64> = processors
        .iter()
        .filter(|p| p.processor != master)
        .map(|p| p.rows)
        .collect();
    let mean = others.iter().sum::<u64>() as f64 / others.len().max(1) as f64;
    let m = processors.iter().find(|p| p.processor == master)?;
    Some(m.rows as f64 / mean.max(f64::MIN_POSITIVE))
}

/// The one-processor time of a job: the fast processor alone runs the same `G` tasks in
/// order, with no balancing, no messages and no slowdown (so the kernel's efficiency on a
/// task of a few rows is the same on both sides of the ratio).
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct Reference {
    /// Matrix order.
    pub size: u64,
    /// Tasks.
    pub tasks: u64,
    /// Seconds.
    pub seconds: f64,
    /// The whole product in one call of the kernel, for comparison.
    pub one_call_seconds: f64,
}

/// The whole reproduction.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct EfpReport {
    /// A description of the machine: cores, CPU model, OS.
    pub machine: String,
    /// Cores available to this process.
    pub cores: usize,
    /// `threads` or `mpi`.
    pub backend: String,
    /// Processors of the tables.
    pub procs: usize,
    /// How many times slower the slow processors are.
    pub slow_factor: u32,
    /// How the master knows the processors' power.
    pub capacities: &'static str,
    /// Repetitions per point.
    pub runs: u64,
    /// Matrix orders of the tables.
    pub sizes: Vec<u64>,
    /// Processor counts of the sweep.
    pub sweep: Vec<usize>,
    /// Matrix order of the sweep.
    pub sweep_size: u64,
    /// Processor counts of the sweep that could not run (MPI: one count per launch).
    pub sweep_skipped: Vec<usize>,
    /// The tables' runs: per order, the static split then EFP.
    pub tables: Vec<Point>,
    /// The sweep's runs: per processor count, the static split then EFP.
    pub sweep_points: Vec<Point>,
    /// One per job (order and tasks).
    pub references: Vec<Reference>,
    /// What the paper gives for the figures ([`PAPER_FIGURES`]).
    pub paper_figures: &'static str,
}

impl EfpReport {
    /// The tables' run of `policy` at order `size` (on [`EfpReport::procs`] processors).
    pub fn table_point(&self, size: u64, policy: Policy) -> Option<&Point> {
        find(&self.tables, size, self.procs, policy)
    }

    /// The sweep's run of `policy` on `procs` processors.
    pub fn sweep_point(&self, procs: usize, policy: Policy) -> Option<&Point> {
        find(&self.sweep_points, self.sweep_size, procs, policy)
    }

    /// The one-processor times of `p`'s job: `(same tasks, one call)`, seconds.
    pub fn reference(&self, p: &Point) -> Option<(f64, f64)> {
        self.references
            .iter()
            .find(|r| r.size == p.size && r.tasks == p.tasks)
            .map(|r| (r.seconds, r.one_call_seconds))
    }

    /// `p`'s speedup: the one-processor time of the same tasks ÷ its makespan.
    pub fn speedup(&self, p: &Point) -> Option<f64> {
        self.reference(p).map(|(one, _)| one / p.makespan)
    }

    /// The relative power of `procs` processors of this run ([`relative_power`]).
    pub fn power(&self, procs: usize) -> f64 {
        relative_power(procs, self.slow_factor)
    }
}

fn find(points: &[Point], size: u64, procs: usize, policy: Policy) -> Option<&Point> {
    points
        .iter()
        .find(|p| p.size == size && p.procs == procs && p.policy == policy)
}

/// The relative power of `procs` processors, the fast one counting 1 and each slow one
/// `1/factor`: the most speedup a perfect balance reaches.
///
/// # Example
/// ```
/// assert_eq!(hetlb_experiments::efp::relative_power(9, 3), 1.0 + 8.0 / 3.0);
/// ```
pub fn relative_power(procs: usize, factor: u32) -> f64 {
    1.0 + (procs.saturating_sub(1)) as f64 / f64::from(factor)
}

/// Why the reproduction could not run.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum EfpError {
    /// No matrix order.
    #[error("give at least one matrix order")]
    NoSizes,
    /// A matrix order of 0 or above [`MAX_ORDER`].
    #[error("{0} is out of range: allowed 1 to {MAX_ORDER}")]
    Size(u64),
    /// A processor count of the sweep outside [`PROCS`].
    #[error("{0} processors is out of range: allowed 2 to 256")]
    SweepProcs(usize),
    /// Eq. (1) refused its inputs.
    #[error(transparent)]
    Granularity(#[from] SchedulingError),
    /// A run failed.
    #[error("{policy} on {procs} processors, {size}×{size}")]
    Run {
        /// The policy.
        policy: Policy,
        /// Processors.
        procs: usize,
        /// Matrix order.
        size: u64,
        /// What the runtime said.
        #[source]
        source: RuntimeError,
    },
    /// The one-processor reference failed.
    #[error("one-processor reference")]
    Reference(#[source] RuntimeError),
}

/// Where [`Efp::run_with`] stands, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Step {
    /// One run (of [`Efp::runs`] repetitions) finished.
    Run,
    /// Every run finished; the one-processor references start.
    References,
    /// The references finished.
    Done,
}

/// A point and the outputs of its run (the rows of `C` per task).
type Measured = (Point, Vec<Vec<f64>>);

/// Runs one job on some processors under some settings: `None` on the ranks of an MPI job
/// that do not report.
pub type Execute<'a> = dyn FnMut(&Arc<MatmulJob>, usize, &RunConfig) -> Result<Option<RunOutcome<Vec<f64>>>, RuntimeError>
    + 'a;

/// The reproduction's settings. Build with [`Efp::new`] and the setters.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Efp {
    /// Matrix orders of Tables 2–6 and Fig. 3.
    pub sizes: Vec<u64>,
    /// Processors of the tables, the master included (the paper: 9).
    pub procs: usize,
    /// Processor counts of Figs. 9–11.
    pub sweep: Vec<usize>,
    /// Matrix order of Figs. 9–11.
    pub sweep_size: u64,
    /// How many times slower the slow processors are.
    pub slow_factor: u32,
    /// Repetitions of every run; the run with the median makespan is reported.
    pub runs: u64,
    /// Measure the processors' power instead of giving the master their clocks.
    pub calibrate: bool,
    /// The multiplier `n` of eq. (1), 1 to 3.
    pub grain_n: u32,
    /// Seed of the matrices and of `rand()` in eq. (1).
    pub seed: u64,
    /// Silence after which a processor is given up.
    pub timeout: Duration,
}

impl Default for Efp {
    fn default() -> Self {
        Self::new()
    }
}

impl Efp {
    /// The paper's experiment: orders 100, 400, 800, 1000, 2000 on 9 processors, the sweep
    /// over 2 to 9 processors at order 1000, slow processors 3 times slower, one run per
    /// point, clocks given, `n = 3`, seed 1, a timeout of 60 s.
    pub fn new() -> Self {
        Self {
            sizes: vec![100, 400, 800, 1000, 2000],
            procs: crate::paper::efp::PROCESSORS,
            sweep: (2..=9).collect(),
            sweep_size: 1000,
            slow_factor: 3,
            runs: 1,
            calibrate: false,
            grain_n: 3,
            seed: 1,
            timeout: Duration::from_secs(60),
        }
    }

    /// Sets the matrix orders of the tables.
    #[must_use]
    pub fn sizes(mut self, sizes: Vec<u64>) -> Self {
        self.sizes = sizes;
        self
    }

    /// Sets the processors of the tables.
    #[must_use]
    pub fn procs(mut self, procs: usize) -> Self {
        self.procs = procs;
        self
    }

    /// Sets the processor counts of the sweep.
    #[must_use]
    pub fn sweep(mut self, sweep: Vec<usize>) -> Self {
        self.sweep = sweep;
        self
    }

    /// Sets the matrix order of the sweep.
    #[must_use]
    pub fn sweep_size(mut self, sweep_size: u64) -> Self {
        self.sweep_size = sweep_size;
        self
    }

    /// Sets how many times slower the slow processors are.
    #[must_use]
    pub fn slow_factor(mut self, slow_factor: u32) -> Self {
        self.slow_factor = slow_factor;
        self
    }

    /// Sets the repetitions per point.
    #[must_use]
    pub fn runs(mut self, runs: u64) -> Self {
        self.runs = runs;
        self
    }

    /// Measure the processors' power by calibration (true) or give their clocks (false).
    #[must_use]
    pub fn calibrate(mut self, calibrate: bool) -> Self {
        self.calibrate = calibrate;
        self
    }

    /// Sets the multiplier `n` of eq. (1).
    #[must_use]
    pub fn grain_n(mut self, grain_n: u32) -> Self {
        self.grain_n = grain_n;
        self
    }

    /// Sets the seed.
    #[must_use]
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// Sets the timeout.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Checks the orders and the sweep.
    ///
    /// # Errors
    /// [`EfpError::Size`], [`EfpError::NoSizes`] or [`EfpError::SweepProcs`].
    pub fn check(&self) -> Result<(), EfpError> {
        if let Some(&bad) = self.sizes.iter().find(|&&n| n == 0 || n > MAX_ORDER) {
            return Err(EfpError::Size(bad));
        }
        if self.sizes.is_empty() {
            return Err(EfpError::NoSizes);
        }
        if let Some(&bad) = self.sweep.iter().find(|&&p| !PROCS.contains(&p)) {
            return Err(EfpError::SweepProcs(bad));
        }
        Ok(())
    }

    /// Bytes the largest product holds: `A` and `B`, the product of the run in progress, the
    /// single-threaded reference, and the rows in flight.
    pub fn memory_needed(&self) -> u128 {
        let largest = self
            .sizes
            .iter()
            .copied()
            .chain([self.sweep_size])
            .max()
            .unwrap_or(0);
        let n = u128::from(largest);
        8 * n * n * 6
    }

    /// The run settings of `policy` on `procs` processors: the master fast, the others slow.
    pub fn config(&self, policy: Policy, procs: usize) -> RunConfig {
        let mut cfg = RunConfig::new(policy);
        cfg.slowdowns = (0..procs)
            .map(|i| Slowdown::constant(if i == 0 { 1 } else { self.slow_factor }))
            .collect();
        if !self.calibrate {
            cfg.capacities = Some(
                (0..procs)
                    .map(|i| {
                        if i == 0 {
                            f64::from(self.slow_factor)
                        } else {
                            1.0
                        }
                    })
                    .collect(),
            );
        }
        cfg.timeout = self.timeout;
        cfg
    }

    /// Runs the whole reproduction on threads of this process ([`Efp::run_with`] with
    /// [`hetlb_runtime::run_threads`]).
    ///
    /// # Errors
    /// As [`Efp::run_with`].
    pub fn run_threads(&self, progress: &mut dyn FnMut(Step)) -> Result<EfpReport, EfpError> {
        let mut execute = |job: &Arc<MatmulJob>, p: usize, cfg: &RunConfig| {
            hetlb_runtime::run_threads(Arc::clone(job), p, cfg).map(Some)
        };
        self.run_with("threads", self.procs, &self.sweep, &mut execute, progress)
    }

    /// Every run of the reproduction through `execute` (`procs` processors for the tables,
    /// the counts `sweep` for Figs. 9–11), then the one-processor references and the check of
    /// every product against them. `backend` names the backend in the report; sweep counts of
    /// [`Efp::sweep`] missing from `sweep` are reported as skipped. On MPI, the ranks whose
    /// `execute` returns `None` get a report without runs.
    ///
    /// # Complexity
    /// `(sizes + sweep) × 2 × runs` runs of a product of order `n` (`O(n³)` each), and one
    /// sequential product per distinct job.
    ///
    /// # Errors
    /// [`EfpError`] for bad settings ([`Efp::check`]), a granularity eq. (1) refuses, or a
    /// run or reference that failed.
    pub fn run_with(
        &self,
        backend: &str,
        procs: usize,
        sweep: &[usize],
        execute: &mut Execute<'_>,
        progress: &mut dyn FnMut(Step),
    ) -> Result<EfpReport, EfpError> {
        self.check()?;
        let mut tables = Vec::new();
        let mut sweep_points = Vec::new();
        let mut outputs = Vec::new();
        for &size in &self.sizes {
            for policy in POLICIES {
                if let Some((point, out)) = self.measure(execute, size, procs, policy, progress)? {
                    outputs.push((tables.len(), false, out));
                    tables.push(point);
                }
            }
        }
        for &p in sweep {
            for policy in POLICIES {
                if let Some((point, out)) =
                    self.measure(execute, self.sweep_size, p, policy, progress)?
                {
                    outputs.push((sweep_points.len(), true, out));
                    sweep_points.push(point);
                }
            }
        }
        progress(Step::References);
        // The one-processor time of every job, and every product checked against it. Done
        // last, so that on MPI no rank waits for the reporting one during a run.
        let mut references = Vec::new();
        let mut jobs: Vec<(u64, u64)> = tables
            .iter()
            .chain(&sweep_points)
            .map(|p| (p.size, p.tasks))
            .collect();
        jobs.sort_unstable();
        jobs.dedup();
        for (size, tasks) in jobs {
            let job = MatmulJob::new(size as usize, tasks, self.seed);
            let (reference, seconds) = run_sequential(&job).map_err(EfpError::Reference)?;
            let (_, one_call_seconds) =
                run_sequential(&MatmulJob::new(size as usize, 1, self.seed))
                    .map_err(EfpError::Reference)?;
            references.push(Reference {
                size,
                tasks,
                seconds,
                one_call_seconds,
            });
            let expected = job.assemble(&reference).ok();
            for (i, in_sweep, out) in &outputs {
                let point = if *in_sweep {
                    &mut sweep_points[*i]
                } else {
                    &mut tables[*i]
                };
                if (point.size, point.tasks) == (size, tasks) {
                    point.max_error = expected
                        .as_ref()
                        .zip(job.assemble(out).ok())
                        .map(|(a, b)| a.max_abs_diff(&b));
                }
            }
        }
        progress(Step::Done);
        let skipped = self
            .sweep
            .iter()
            .copied()
            .filter(|p| !sweep.contains(p))
            .collect();
        Ok(EfpReport {
            machine: machine(),
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            backend: backend.to_string(),
            procs,
            slow_factor: self.slow_factor,
            capacities: if self.calibrate {
                "measured by calibration"
            } else {
                "given from the clocks, as the paper's master knows them"
            },
            runs: self.runs,
            sizes: self.sizes.clone(),
            sweep: self.sweep.clone(),
            sweep_size: self.sweep_size,
            sweep_skipped: skipped,
            tables,
            sweep_points,
            references,
            paper_figures: PAPER_FIGURES,
        })
    }

    /// Runs `policy` on a product of order `size` on `procs` processors, [`Efp::runs`] times;
    /// the run with the median makespan and its outputs. `None` on the ranks of an MPI job
    /// other than the reporting one.
    fn measure(
        &self,
        execute: &mut Execute<'_>,
        size: u64,
        procs: usize,
        policy: Policy,
        progress: &mut dyn FnMut(Step),
    ) -> Result<Option<Measured>, EfpError> {
        let grain = Grain::matmul(None, self.grain_n, self.seed, procs, size, &POLICIES)?;
        let tasks = grain.tasks;
        let job = Arc::new(MatmulJob::new(size as usize, tasks, self.seed));
        let mut outcomes = Vec::new();
        for _ in 0..self.runs {
            let cfg = self.config(policy, procs);
            let outcome = execute(&job, procs, &cfg).map_err(|source| EfpError::Run {
                policy,
                procs,
                size,
                source,
            })?;
            progress(Step::Run);
            if let Some(o) = outcome {
                outcomes.push(o);
            }
        }
        if outcomes.is_empty() {
            return Ok(None);
        }
        let makespans: Vec<f64> = outcomes.iter().map(|o| o.report.makespan).collect();
        let mut order: Vec<usize> = (0..outcomes.len()).collect();
        order.sort_by(|&a, &b| makespans[a].total_cmp(&makespans[b]));
        let median = outcomes.swap_remove(order[order.len() / 2]);
        let r = &median.report;
        Ok(Some((
            Point {
                size,
                procs,
                policy,
                tasks,
                granularity: grain.source,
                makespan: r.makespan,
                ideal: r.ideal,
                efficiency_vs_ideal: r.efficiency,
                makespans,
                master: r.master,
                processors: r.processors.clone(),
                max_error: None,
            },
            median.outputs,
        )))
    }

    /// Runs of [`Efp::run_threads`] (its [`Step::Run`] calls).
    pub fn run_count(&self, sweep: usize) -> u64 {
        (self.sizes.len() + sweep) as u64 * POLICIES.len() as u64 * self.runs
    }
}

/// A description of this machine: cores, CPU model, OS.
pub fn machine() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string());
    format!(
        "{cores} core(s) available, {model}, {} {}",
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}
