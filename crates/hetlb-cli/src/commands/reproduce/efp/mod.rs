//! `hetlb reproduce efp`: Aldasht, Ortega & Puntonet's experiments (§5) on real workers, from
//! [`hetlb_experiments::efp`]; this command picks the backend (threads, or MPI under
//! `mpiexec`) and renders the report.

mod present;

use crate::input::{real, whole};
use crate::limits;
use crate::output::Format;
use crate::progress;
use anyhow::Result;
use hetlb_experiments::efp::{Efp, EfpError, EfpReport, Step};
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
    #[arg(long, default_value = "1000", value_name = "N", value_parser = whole::<u64>(1, 20_000))]
    sweep_size: u64,
    /// How many times slower the slow processors are (they repeat their kernel this many
    /// times): 1000 MHz against 333 MHz in the paper.
    #[arg(long, default_value = "3", value_parser = whole::<u32>(1, 1000))]
    slow_factor: u32,
    /// Repetitions of every run; the run with the median makespan is reported.
    #[arg(long, default_value = "1", value_parser = whole::<u64>(1, 100))]
    runs: u64,
    /// Measure the processors' power by calibration instead of giving the master their
    /// clocks (the paper's information: clock, cache and memory).
    #[arg(long)]
    calibrate: bool,
    /// The multiplier n of eq. (1), 1 to 3.
    #[arg(long, default_value = "3", value_parser = whole::<u32>(1, 3))]
    grain_n: u32,
    /// Seed of the matrices and of rand() in eq. (1).
    #[arg(long, default_value = "1", value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Seconds of silence after which a processor is given up.
    #[arg(long, default_value = "60", value_name = "SECONDS", value_parser = real(0.0, 1e6, true))]
    timeout: f64,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Everything checked before anything runs: the experiment and the backend.
struct Plan {
    experiment: Efp,
    mpi: bool,
}

fn plan(args: &Args) -> Result<Plan> {
    let sizes: Vec<u64> =
        crate::input::parse_unique(&args.sizes, "--sizes", Some("a matrix order"))?;
    let sweep: Vec<usize> =
        crate::input::parse_unique(&args.sweep, "--sweep", Some("a number of processors"))?;
    let experiment = Efp::new()
        .sizes(sizes)
        .procs(
            args.procs
                .unwrap_or(hetlb_experiments::paper::efp::PROCESSORS),
        )
        .sweep(sweep)
        .sweep_size(args.sweep_size)
        .slow_factor(args.slow_factor)
        .runs(args.runs)
        .calibrate(args.calibrate)
        .grain_n(args.grain_n)
        .seed(args.seed)
        .timeout(Duration::from_secs_f64(args.timeout));
    experiment.check().map_err(error)?;
    let mpi = crate::input::mpi_backend(&args.backend)?;
    limits::check("--sizes", "the largest product", experiment.memory_needed())?;
    Ok(Plan { experiment, mpi })
}

/// An error of the experiment as one line naming its option.
fn error(e: EfpError) -> anyhow::Error {
    let field = match &e {
        EfpError::NoSizes | EfpError::Size(_) => "--sizes",
        EfpError::SweepProcs(_) => "--sweep",
        EfpError::Granularity(_) => "--grain-n",
        _ => return e.into(),
    };
    anyhow::Error::new(e).context(field)
}

/// Progress on stderr: a bar over the runs, then a spinner over the references.
fn progress(runs: u64) -> impl FnMut(Step) {
    let bar = progress::bar(runs, "EFP and static runs");
    let mut spinner = None;
    move |step| match step {
        Step::Run => bar.inc(1),
        Step::References => {
            bar.finish_and_clear();
            spinner = Some(progress::spinner("one-processor references"));
        }
        _ => {
            if let Some(s) = spinner.take() {
                s.finish_and_clear();
            }
        }
    }
}

/// Runs `hetlb reproduce efp`.
pub fn run_command(args: Args) -> Result<()> {
    let plan = plan(&args)?;
    if plan.mpi {
        run_mpi(&args, &plan)
    } else {
        let e = &plan.experiment;
        let mut tick = progress(e.run_count(e.sweep.len()));
        let report = e.run_threads(&mut tick).map_err(error)?;
        finish(&args, report)
    }
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args, _plan: &Plan) -> Result<()> {
    anyhow::bail!("{}", crate::input::NO_MPI)
}

#[cfg(feature = "mpi")]
fn run_mpi(args: &Args, plan: &Plan) -> Result<()> {
    use hetlb_transport::mpi::Mpi;
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
    let e = &plan.experiment;
    let sweep: Vec<usize> = e.sweep.iter().copied().filter(|&p| p == procs).collect();
    let mut execute =
        |job: &std::sync::Arc<hetlb_runtime::workload::matmul::MatmulJob>,
         _p: usize,
         cfg: &hetlb_runtime::RunConfig| { hetlb_runtime::run_mpi(&mpi, &**job, cfg) };
    let mut tick = progress(e.run_count(sweep.len()));
    match e
        .run_with("mpi", procs, &sweep, &mut execute, &mut tick)
        .map_err(error)
    {
        Ok(report) if mpi.rank() == 0 => match finish(args, report) {
            Ok(()) => Ok(()),
            Err(e) => fail(e),
        },
        Ok(_) => Ok(()),
        Err(e) => fail(e),
    }
}

fn finish(args: &Args, report: EfpReport) -> Result<()> {
    if let Some(dir) = args.plots.dir("efp")? {
        let written = present::plots(&dir, &report)?;
        crate::plot::notice(&written);
    }
    present::print(args.format, &report)
}
