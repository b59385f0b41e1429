//! `hetlb reproduce efp`: Aldasht, Ortega & Puntonet's experiments (001_… §5) on real workers.
//!
//! * Tables 2–6 and Figs. 4–8: matrix orders 100, 400, 800, 1000 and 2000 (`--sizes`) on one
//!   fast and eight slow processors, rows and `T_exec`/`T_comp`/`T_comm`/`T_wait` per processor
//!   under EFP, beside the paper's tables.
//! * Fig. 3: time against the matrix order, EFP against the static split.
//! * Figs. 9–11: time, efficiency and speedup against the number of processors for a
//!   1000 × 1000 product, EFP against the static split.
//!
//! The cluster is emulated as `hetlb run matmul` does: the slow processors repeat their
//! kernel `--slow-factor` times (the paper's PIII 1000 MHz against PII 333 MHz: 3), the master
//! knows the processors' power from their clocks as the paper's does (`--calibrate` measures it
//! instead), and `G` follows eq. (1). Figs. 3 and 9–11 survive only as captions: there are no
//! published numbers to set beside those rows, and the command says so.

mod present;

use crate::commands::run::master_worker::matmul_tasks;
use crate::input::{real, whole};
use crate::limits;
use crate::output::Format;
use crate::progress;
use anyhow::{Context, Result, bail};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::{Outcome, ProcessorReport, RunConfig, RuntimeError, Slowdown, run_sequential};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hetlb reproduce efp`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb reproduce efp\n  \
    hetlb reproduce efp --sizes 100,400,800,1000 --sweep 2,3,5,9\n  \
    hetlb reproduce efp --runs 3 --format json > efp.json\n  \
    mpiexec -n 9 target/release/hetlb reproduce efp --backend mpi --sizes 100,400,1000")]
pub struct Args {
    /// Matrix orders of Tables 2–6 and Fig. 3 (the paper: 100, 400, 800, 1000, 2000; use
    /// smaller ones where 2000 is too slow).
    #[arg(long, default_value = "100,400,800,1000,2000", value_name = "N,…")]
    sizes: String,
    /// Processors of the tables, the master included (the paper: 9; on MPI: the number of
    /// ranks) [default: 9].
    #[arg(long, value_name = "P", value_parser = whole::<usize>(2, 256))]
    procs: Option<usize>,
    /// Processor counts of Figs. 9–11 (on MPI only the number of ranks can run: one launch
    /// per count).
    #[arg(long, default_value = "2,3,4,5,6,7,8,9", value_name = "P,…")]
    sweep: String,
    /// Matrix order of Figs. 9–11.
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = whole::<u64>(1, 20_000))]
    sweep_size: u64,
    /// How many times slower the slow processors are (they repeat their kernel this many
    /// times): 1000 MHz against 333 MHz in the paper.
    #[arg(long, default_value_t = 3, value_parser = whole::<u32>(1, 1000))]
    slow_factor: u32,
    /// Repetitions of every run; the run with the median makespan is reported.
    #[arg(long, default_value_t = 1, value_parser = whole::<u64>(1, 100))]
    runs: u64,
    /// Measure the processors' power by calibration instead of giving the master their
    /// clocks (the paper's information: clock, cache and memory).
    #[arg(long)]
    calibrate: bool,
    /// The multiplier n of eq. (1), 1 to 3.
    #[arg(long, default_value_t = 3, value_parser = whole::<u32>(1, 3))]
    grain_n: u32,
    /// Seed of the matrices and of rand() in eq. (1).
    #[arg(long, default_value_t = 1, value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Seconds of silence after which a processor is given up.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", value_parser = real(0.0, 1e6, true))]
    timeout: f64,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// The two policies the paper compares.
const POLICIES: [Policy; 2] = [Policy::StaticEqual, Policy::Efp];

/// What one run (the median of `--runs`) measured.
#[derive(Debug, Clone, Serialize)]
pub(super) struct Point {
    size: u64,
    procs: usize,
    policy: Policy,
    tasks: u64,
    granularity: String,
    makespan: f64,
    /// `W / Σ v_i` with the measured speeds.
    ideal: f64,
    /// `ideal / makespan`.
    efficiency_vs_ideal: f64,
    /// Every makespan of the repetitions.
    makespans: Vec<f64>,
    master: usize,
    processors: Vec<ProcessorReport>,
    /// The largest |C − C_1| against the one-processor run of the same tasks (0: identical).
    max_error: Option<f64>,
}

/// The one-processor time of a job: the fast processor alone runs the same `G` tasks in
/// order, with no balancing, no messages and no slowdown (so the kernel's efficiency on a
/// task of a few rows is the same on both sides of the ratio).
#[derive(Debug, Clone, Serialize)]
pub(super) struct Reference {
    size: u64,
    tasks: u64,
    seconds: f64,
    /// The whole product in one call of the kernel, for comparison.
    one_call_seconds: f64,
}

/// The whole reproduction, for JSON.
#[derive(Debug, Serialize)]
pub(super) struct Report {
    machine: String,
    /// Cores available to this process.
    cores: usize,
    backend: String,
    procs: usize,
    slow_factor: u32,
    capacities: &'static str,
    runs: u64,
    sizes: Vec<u64>,
    sweep: Vec<usize>,
    sweep_size: u64,
    /// Processor counts of the sweep that could not run (MPI: one count per launch).
    sweep_skipped: Vec<usize>,
    tables: Vec<Point>,
    sweep_points: Vec<Point>,
    references: Vec<Reference>,
    paper_figures: &'static str,
}

const PAPER_FIGURES: &str = "Figs. 3 and 9–11 of 001_… survive only as captions (time against \
    the matrix order; time, efficiency and speedup against the number of processors for \
    1000 × 1000, static against EFP): there are no published numbers to compare those rows with.";

/// A description of this machine: cores, CPU model, OS.
fn machine() -> String {
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

/// Everything checked before anything runs.
struct Plan {
    sizes: Vec<u64>,
    sweep: Vec<usize>,
    mpi: bool,
}

fn plan(args: &Args) -> Result<Plan> {
    let sizes: Vec<u64> =
        crate::input::parse_unique(&args.sizes, "--sizes", Some("a matrix order"))?;
    if let Some(&bad) = sizes.iter().find(|&&n| n == 0 || n > 20_000) {
        bail!("--sizes: {bad} is out of range: allowed 1 to 20000");
    }
    if sizes.is_empty() {
        bail!("--sizes: give at least one matrix order");
    }
    let sweep: Vec<usize> =
        crate::input::parse_unique(&args.sweep, "--sweep", Some("a number of processors"))?;
    if let Some(&bad) = sweep.iter().find(|&&p| !(2..=256).contains(&p)) {
        bail!("--sweep: {bad} processors is out of range: allowed 2 to 256");
    }
    let mpi = match args.backend.as_str() {
        "threads" => false,
        "mpi" if cfg!(feature = "mpi") => true,
        "mpi" => bail!(
            "--backend: this hetlb was built without MPI support; rebuild with \
             `cargo build --release -p hetlb-cli --features mpi` and launch it with mpiexec"
        ),
        other => bail!("--backend: unknown backend '{other}' (expected threads or mpi)"),
    };
    let largest = sizes
        .iter()
        .copied()
        .chain([args.sweep_size])
        .max()
        .unwrap_or(0);
    let n = u128::from(largest);
    // A and B, the product of the run in progress, the single-threaded reference, and the
    // rows in flight.
    limits::check("--sizes", "the largest product", 8 * n * n * 6)?;
    Ok(Plan { sizes, sweep, mpi })
}

/// The run settings of `policy` on `procs` processors: the master fast, the others slow.
fn config(args: &Args, policy: Policy, procs: usize) -> RunConfig {
    let mut cfg = RunConfig::new(policy);
    cfg.slowdowns = (0..procs)
        .map(|i| Slowdown::constant(if i == 0 { 1 } else { args.slow_factor }))
        .collect();
    if !args.calibrate {
        cfg.capacities = Some(
            (0..procs)
                .map(|i| {
                    if i == 0 {
                        f64::from(args.slow_factor)
                    } else {
                        1.0
                    }
                })
                .collect(),
        );
    }
    cfg.timeout = Duration::from_secs_f64(args.timeout);
    cfg
}

type Execute<'a> = dyn FnMut(&Arc<MatmulJob>, usize, &RunConfig) -> Result<Option<Outcome<Vec<f64>>>, RuntimeError>
    + 'a;

/// Runs `policy` on a product of order `size` on `procs` processors, `--runs` times; the run
/// with the median makespan. `None` on the ranks of an MPI job other than 0.
fn measure(
    args: &Args,
    execute: &mut Execute<'_>,
    size: u64,
    procs: usize,
    policy: Policy,
    bar: &indicatif::ProgressBar,
) -> Result<Option<(Point, Vec<Vec<f64>>)>> {
    let (tasks, granularity) = matmul_tasks(None, args.grain_n, args.seed, procs, size, &POLICIES)?;
    let job = Arc::new(MatmulJob::new(size as usize, tasks, args.seed));
    let mut outcomes = Vec::new();
    for _ in 0..args.runs {
        let cfg = config(args, policy, procs);
        let outcome = execute(&job, procs, &cfg)
            .with_context(|| format!("{policy} on {procs} processors, {size}×{size}"))?;
        bar.inc(1);
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
            granularity,
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

/// Runs `hetlb reproduce efp`.
pub fn run_command(args: Args) -> Result<()> {
    let plan = plan(&args)?;
    if plan.mpi {
        run_mpi(&args, &plan)
    } else {
        let procs = args.procs.unwrap_or(9);
        let mut execute = |job: &Arc<MatmulJob>, p: usize, cfg: &RunConfig| {
            hetlb_runtime::run_threads(Arc::clone(job), p, cfg).map(Some)
        };
        let report = measure_all(&args, &plan, procs, &mut execute, &plan.sweep)?;
        finish(&args, report)
    }
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args, _plan: &Plan) -> Result<()> {
    bail!("--backend: this hetlb was built without MPI support")
}

#[cfg(feature = "mpi")]
fn run_mpi(args: &Args, plan: &Plan) -> Result<()> {
    use hetlb_runtime::transport::mpi::Mpi;
    let mpi = Mpi::init().map_err(|e| anyhow::anyhow!("--backend: {e}"))?;
    let procs = mpi.size();
    let fail = |e: anyhow::Error| -> Result<()> {
        if mpi.rank() == 0 {
            let message = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {message}");
        }
        // Other ranks may be waiting for messages that will never come: end them all.
        mpi.abort(1)
    };
    if let Some(p) = args.procs
        && p != procs
    {
        return fail(anyhow::anyhow!(
            "--procs: {p} given but mpiexec started {procs} ranks"
        ));
    }
    if procs < 2 {
        return fail(anyhow::anyhow!(
            "--backend: EFP needs a master and at least one worker: launch with mpiexec -n 2 or more"
        ));
    }
    let sweep: Vec<usize> = plan.sweep.iter().copied().filter(|&p| p == procs).collect();
    let mut execute = |job: &Arc<MatmulJob>, _p: usize, cfg: &RunConfig| {
        hetlb_runtime::run_mpi(&mpi, &**job, cfg)
    };
    match measure_all(args, plan, procs, &mut execute, &sweep) {
        Ok(report) if mpi.rank() == 0 => match finish(args, report) {
            Ok(()) => Ok(()),
            Err(e) => fail(e),
        },
        Ok(_) => Ok(()),
        Err(e) => fail(e),
    }
}

/// Every run of the reproduction, then (on the rank that reports) the one-processor
/// references and the checks of the products.
fn measure_all(
    args: &Args,
    plan: &Plan,
    procs: usize,
    execute: &mut Execute<'_>,
    sweep: &[usize],
) -> Result<Report> {
    let runs = (plan.sizes.len() + sweep.len()) as u64 * POLICIES.len() as u64 * args.runs;
    let bar = progress::bar(runs, "EFP and static runs");
    let mut tables = Vec::new();
    let mut sweep_points = Vec::new();
    let mut outputs = Vec::new();
    for &size in &plan.sizes {
        for policy in POLICIES {
            if let Some((point, out)) = measure(args, execute, size, procs, policy, &bar)? {
                outputs.push((tables.len(), false, out));
                tables.push(point);
            }
        }
    }
    for &p in sweep {
        for policy in POLICIES {
            if let Some((point, out)) = measure(args, execute, args.sweep_size, p, policy, &bar)? {
                outputs.push((sweep_points.len(), true, out));
                sweep_points.push(point);
            }
        }
    }
    bar.finish_and_clear();
    // The one-processor time of every job, and every product checked against it. Done last,
    // so that on MPI no rank waits for the reporting one during a run.
    let mut references = Vec::new();
    let mut jobs: Vec<(u64, u64)> = tables
        .iter()
        .chain(&sweep_points)
        .map(|p| (p.size, p.tasks))
        .collect();
    jobs.sort_unstable();
    jobs.dedup();
    let spinner = progress::spinner("one-processor references");
    for (size, tasks) in jobs {
        let job = MatmulJob::new(size as usize, tasks, args.seed);
        let (reference, seconds) = run_sequential(&job).context("one-processor reference")?;
        let (_, one_call_seconds) = run_sequential(&MatmulJob::new(size as usize, 1, args.seed))
            .context("one-processor reference")?;
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
    spinner.finish_and_clear();
    let skipped = plan
        .sweep
        .iter()
        .copied()
        .filter(|p| !sweep.contains(p))
        .collect();
    Ok(Report {
        machine: machine(),
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
        backend: args.backend.clone(),
        procs,
        slow_factor: args.slow_factor,
        capacities: if args.calibrate {
            "measured by calibration"
        } else {
            "given from the clocks, as the paper's master knows them"
        },
        runs: args.runs,
        sizes: plan.sizes.clone(),
        sweep: plan.sweep.clone(),
        sweep_size: args.sweep_size,
        sweep_skipped: skipped,
        tables,
        sweep_points,
        references,
        paper_figures: PAPER_FIGURES,
    })
}

fn finish(args: &Args, report: Report) -> Result<()> {
    if let Some(dir) = args.plots.dir("efp")? {
        let written = present::plots(&dir, &report)?;
        crate::plot::notice(&written);
    }
    present::print(args.format, &report)
}
