//! `hetlb run matmul|synthetic`: real tasks on real workers under EFP or a baseline, on
//! threads or on MPI (Aldasht, Ortega & Puntonet, §§3–4), driven by
//! `hetlb_runtime::master_worker`.
//!
//! Prints the per-processor report of the paper's Tables 2–6 (rows, T_exec, T_comp, T_comm,
//! T_wait), the makespan, the efficiency against the ideal makespan and the speedup against
//! one worker; beside the paper's numbers when the matrix order matches one of its tables.

mod present;

use crate::input::{mpi_backend, parse_list, real, whole};
use crate::output::Format;
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::master_worker::{self, Checked, Grain, Settings, SlowdownChange, Workload};
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::workload::synthetic::Synthetic;
use present::present;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hetlb run matmul` and `hetlb run synthetic`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run matmul --size 1000 --procs 9 --slowdown 1,3,3,3,3,3,3,3,3\n  \
    hetlb run matmul --size 1000 --procs 9 --slowdown 1,3,3,3,3,3,3,3,3 --algorithm all --plot efp.svg\n  \
    hetlb run matmul --size 1500 --procs 4 --slowdown-change 2:6@0.5 --format json\n  \
    hetlb run synthetic --size 2000 --cost 20000 --procs 4 --slowdown 1,2,2,4\n  \
    mpiexec -n 4 hetlb run matmul --size 1000 --slowdown 1,3,3,3 --backend mpi")]
pub struct Args {
    /// Matrix order for matmul; number of tasks for synthetic.
    #[arg(long, default_value = "1000", value_name = "N", value_parser = whole::<u64>(1, u64::MAX))]
    size: u64,
    /// Processors, the master included, at most 1024 (on MPI: the number of ranks, the
    /// default there) [default: 9].
    #[arg(long, visible_alias = "workers", value_name = "P", value_parser = whole::<usize>(1, MAX_PROCS))]
    procs: Option<usize>,
    /// Slowdown factor per processor, whole numbers ≥ 1: `1,3,3,…` (default: all 1). The
    /// kernel is repeated that many times; the balancer never sees these factors.
    #[arg(long, allow_hyphen_values = true)]
    slowdown: Option<String>,
    /// Change one processor's factor during the run: `PROC:FACTOR@SECONDS`.
    #[arg(long, value_name = "PROC:FACTOR@SECONDS", allow_hyphen_values = true)]
    slowdown_change: Option<String>,
    /// efp, static (equal split), proportional (split by capacity), self (one task per
    /// request), or all (each in turn, compared).
    #[arg(long = "algorithm", visible_alias = "policy", default_value = "efp")]
    policy: String,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Number of tasks G (matmul), at most the matrix order; default: eq. (1) of the paper
    /// with `--grain-n` and a seeded rand(). Raised to what the policy needs to give every
    /// processor work (EFP: P(P−1)/2 + 1; the others: P).
    #[arg(long, value_name = "G", value_parser = whole::<u64>(1, 1 << 40))]
    granularity: Option<u64>,
    /// The multiplier n of eq. (1), 1 to 3.
    #[arg(long, default_value = "3", value_parser = whole::<u32>(1, 3))]
    grain_n: u32,
    /// Seed of the matrices and of rand() in eq. (1).
    #[arg(long, default_value = "1", value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Rounds of work per synthetic task.
    #[arg(long, default_value = "100000", value_parser = whole::<u64>(0, 1_000_000_000))]
    cost: u64,
    /// Given capacities, one per processor, instead of a calibration: `3,1,1,…`.
    #[arg(long, allow_hyphen_values = true)]
    capacities: Option<String>,
    /// Milliseconds each processor runs the calibration task (one after the other).
    #[arg(long, default_value = "100", value_parser = whole::<u64>(0, 600_000))]
    calibration_ms: u64,
    /// Seconds of silence (no result and no heartbeat) after which a worker is given up
    /// (its tasks go to the others) or, for the master, the run fails. Busy processors send
    /// heartbeats, so a long task is never silence.
    #[arg(long, default_value = "60", value_name = "SECONDS", value_parser = real(0.0, MAX_TIMEOUT, true))]
    timeout: f64,
    /// Skip the check against a single-threaded reference and the one-worker timing.
    #[arg(long)]
    no_check: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
    /// Bar charts per processor (rows; time split into computation, communication and
    /// wait), like the paper's Figs. 4–8: `.svg` or `.png`. With `--algorithm all`, one file per
    /// policy (`NAME-efp.svg`, …).
    #[arg(long)]
    plot: Option<PathBuf>,
}

/// The most processors on one machine (each is two threads).
const MAX_PROCS: usize = 1024;
/// The longest timeout, in seconds (about 11.6 days).
const MAX_TIMEOUT: f64 = 1e6;
/// Processors when `--procs` is not given on threads.
const DEFAULT_PROCS: usize = 9;

/// Everything checked before anything runs.
struct Setup {
    workload: Workload,
    mpi: bool,
    settings: Settings,
}

impl Setup {
    fn parse(workload: Workload, args: &Args) -> Result<Self> {
        if matches!(workload, Workload::Matmul) && args.size > 20_000 {
            bail!(
                "--size: {} is too large for one machine's memory (at most 20000)",
                args.size
            );
        }
        let policies = if args.policy == "all" {
            Policy::ALL.to_vec()
        } else {
            vec![
                args.policy
                    .parse::<Policy>()
                    .map_err(|e| anyhow!("--algorithm: {e}"))?,
            ]
        };
        let mpi = mpi_backend(&args.backend)?;
        let mut settings = Settings::new(policies);
        settings.slowdowns = args
            .slowdown
            .as_deref()
            .map(|s| parse_list::<u32>(s, "--slowdown", Some("a whole number ≥ 1")))
            .transpose()?;
        if let Some(i) = settings.slowdowns.iter().flatten().position(|&f| f == 0) {
            bail!(
                "--slowdown: value {} is 0; factors are whole numbers from 1",
                i + 1
            );
        }
        settings.change = args
            .slowdown_change
            .as_deref()
            .map(|s| s.parse::<SlowdownChange>())
            .transpose()
            .map_err(|e| anyhow!("--slowdown-change: {e}"))?;
        settings.capacities = args
            .capacities
            .as_deref()
            .map(|s| parse_list::<f64>(s, "--capacities", Some("a number")))
            .transpose()?;
        let bad = settings.capacities.iter().flatten();
        if let Some(i) = bad.clone().position(|x| !(x.is_finite() && *x > 0.0)) {
            bail!("--capacities: value {} must be positive and finite", i + 1);
        }
        settings.calibration = Duration::from_millis(args.calibration_ms);
        settings.timeout = Duration::from_secs_f64(args.timeout);
        Ok(Self {
            workload,
            mpi,
            settings,
        })
    }

    /// Checks the per-processor lists against the number of processors, and the memory
    /// the run will need.
    fn check_workers(&self, args: &Args, workers: usize) -> Result<()> {
        self.settings
            .check(workers)
            .map_err(|e| anyhow!("--{}: {}", e.setting.replace('_', "-"), e.message))?;
        let memory = self
            .settings
            .memory(self.workload, args.size, !args.no_check);
        crate::limits::check("--size", "the run", memory)
    }

    /// How many tasks the workload is cut into.
    fn grain(&self, args: &Args, workers: usize) -> Result<Grain> {
        match self.workload {
            Workload::Matmul => Grain::matmul(
                args.granularity,
                args.grain_n,
                args.seed,
                workers,
                args.size,
                &self.settings.policies,
            )
            .context("--grain-n"),
            _ => Ok(Grain::per_unit(args.size)),
        }
    }
}

/// A progress bar per policy's run, on a terminal: each cleared when the next starts, the
/// last by `finish`.
struct Bars {
    tasks: u64,
    workers: usize,
    current: Option<indicatif::ProgressBar>,
}

impl Bars {
    fn new(tasks: u64, workers: usize) -> Self {
        Self {
            tasks,
            workers,
            current: None,
        }
    }

    fn next(&mut self, policy: Policy) -> Option<hetlb_runtime::Progress> {
        self.finish();
        let bar = progress::bar(
            self.tasks,
            format!("{policy} on {} processors", self.workers),
        );
        self.current = Some(bar.clone());
        Some(Arc::new(move |done, _| bar.set_position(done)))
    }

    fn finish(&mut self) {
        if let Some(b) = self.current.take() {
            b.finish_and_clear();
        }
    }
}

/// Runs `hetlb run matmul` or `hetlb run synthetic`.
pub fn run(workload: Workload, args: Args) -> Result<()> {
    let setup = Setup::parse(workload, &args)?;
    if setup.mpi {
        return run_mpi(&args, &setup);
    }
    let workers = args.procs.unwrap_or(DEFAULT_PROCS);
    setup.check_workers(&args, workers)?;
    let grain = setup.grain(&args, workers)?;
    let mut bars = Bars::new(grain.tasks, workers);
    let run = Run {
        args: &args,
        setup: &setup,
        workers,
        grain: &grain,
    };
    if let Workload::Matmul = setup.workload {
        let job = MatmulJob::new(args.size as usize, grain.tasks, args.seed);
        run.on_threads(Arc::new(job), &mut bars)
    } else {
        run.on_threads(Arc::new(Synthetic::new(args.size, args.cost)), &mut bars)
    }
}

/// A comparison about to run: what was asked, on how many processors, cut how.
struct Run<'a> {
    args: &'a Args,
    setup: &'a Setup,
    workers: usize,
    grain: &'a Grain,
}

impl Run<'_> {
    /// Every policy in turn on threads, then the report.
    fn on_threads<J>(&self, job: Arc<J>, bars: &mut Bars) -> Result<()>
    where
        J: Checked + 'static,
        J::Task: 'static,
        J::Output: 'static,
    {
        let outcomes =
            master_worker::on_threads(&job, self.workers, &self.setup.settings, &mut |p| {
                bars.next(p)
            });
        bars.finish();
        present(
            self.args,
            self.setup,
            self.workers,
            self.grain,
            &outcomes?,
            &*job,
        )
    }

    /// Every policy in turn on the ranks of `mpi`; rank 0 reports, then ends the job if a
    /// rank fell silent.
    #[cfg(feature = "mpi")]
    fn on_ranks<J>(
        &self,
        mpi: &hetlb_experiments::drivers::mpi_job::MpiJob,
        job: &J,
        bars: &mut Bars,
    ) -> Result<()>
    where
        J: Checked,
        J::Task: hetlb_transport::Message,
        J::Output: hetlb_transport::Message,
    {
        use hetlb_experiments::drivers::master_worker::on_mpi_job;
        let outcomes = on_mpi_job(mpi, job, &self.setup.settings, &mut |p| bars.next(p));
        bars.finish();
        if let Some(outcomes) = outcomes {
            present(
                self.args,
                self.setup,
                self.workers,
                self.grain,
                &outcomes,
                job,
            )?;
            mpi.end_if_silent(&master_worker::silent(&outcomes));
        }
        Ok(())
    }
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args, _setup: &Setup) -> Result<()> {
    bail!("{}", crate::input::NO_MPI)
}

/// The policies in turn on the MPI job's ranks; rank 0 prints, then ends the job if a rank
/// fell silent (see `hetlb_experiments::drivers::master_worker::on_mpi_job`).
#[cfg(feature = "mpi")]
fn run_mpi(args: &Args, setup: &Setup) -> Result<()> {
    let job = hetlb_experiments::drivers::mpi_job::MpiJob::init()
        .map_err(|e| anyhow!("--backend: {e}"))?;
    let workers = job.size();
    let grain = job.agreed((|| {
        if let Some(w) = args.procs
            && w != workers
        {
            bail!("--procs: {w} given but mpiexec started {workers} ranks");
        }
        setup.check_workers(args, workers)?;
        setup.grain(args, workers)
    })());
    let mut bars = Bars::new(grain.tasks, workers);
    let run = Run {
        args,
        setup,
        workers,
        grain: &grain,
    };
    if let Workload::Matmul = setup.workload {
        let work = MatmulJob::new(args.size as usize, grain.tasks, args.seed);
        run.on_ranks(&job, &work, &mut bars)
    } else {
        run.on_ranks(&job, &Synthetic::new(args.size, args.cost), &mut bars)
    }
}
