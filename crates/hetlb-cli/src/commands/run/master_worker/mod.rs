//! `hetlb run matmul|synthetic`: real tasks on real workers under EFP or a baseline, on
//! threads or on MPI (Aldasht, Ortega & Puntonet, 001_… §§3–4).
//!
//! Prints the per-processor report of the paper's Tables 2–6 (rows, T_exec, T_comp, T_comm,
//! T_wait), the makespan, the efficiency against the ideal makespan and the speedup against
//! one worker; beside the paper's numbers when the matrix order matches one of its tables.

mod present;

use crate::input::{parse_list, real, whole};
use crate::limits;
use crate::output::Format;
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::grain::paper_granularity;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{Job, Outcome, RunConfig, RuntimeError, Slowdown};
use present::present;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hetlb run matmul` and `hetlb run synthetic`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run matmul --size 1000 --procs 9 --slowdown 1,3,3,3,3,3,3,3,3\n  \
    hetlb run matmul --size 1000 --procs 9 --slowdown 1,3,3,3,3,3,3,3,3 --policy all --plot efp.svg\n  \
    hetlb run matmul --size 1500 --procs 4 --slowdown-change 2:6@0.5 --format json\n  \
    hetlb run synthetic --size 2000 --cost 20000 --procs 4 --slowdown 1,2,2,4\n  \
    mpiexec -n 4 hetlb run matmul --size 1000 --slowdown 1,3,3,3 --backend mpi")]
pub struct Args {
    /// Matrix order for matmul; number of tasks for synthetic.
    #[arg(long, default_value_t = 1000, value_name = "N", value_parser = whole::<u64>(1, u64::MAX))]
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
    #[arg(long, default_value = "efp")]
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
    #[arg(long, default_value_t = 3, value_parser = whole::<u32>(1, 3))]
    grain_n: u32,
    /// Seed of the matrices and of rand() in eq. (1).
    #[arg(long, default_value_t = 1, value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Rounds of work per synthetic task.
    #[arg(long, default_value_t = 100_000, value_parser = whole::<u64>(0, 1_000_000_000))]
    cost: u64,
    /// Given capacities, one per processor, instead of a calibration: `3,1,1,…`.
    #[arg(long, allow_hyphen_values = true)]
    capacities: Option<String>,
    /// Milliseconds each processor runs the calibration task (one after the other).
    #[arg(long, default_value_t = 100, value_parser = whole::<u64>(0, 600_000))]
    calibration_ms: u64,
    /// Seconds of silence (no result and no heartbeat) after which a worker is given up
    /// (its tasks go to the others) or, for the master, the run fails. Busy processors send
    /// heartbeats, so a long task is never silence.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS", value_parser = real(0.0, MAX_TIMEOUT, true))]
    timeout: f64,
    /// Skip the check against a single-threaded reference and the one-worker timing.
    #[arg(long)]
    no_check: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
    /// Bar charts per processor (rows; time split into computation, communication and
    /// wait), like the paper's Figs. 4–8: `.svg` or `.png`. With `--policy all`, one file per
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Threads,
    Mpi,
}

/// The master-worker workloads.
#[derive(Debug, Clone, Copy)]
pub enum Workload {
    /// C = A·B split by rows.
    Matmul,
    /// CPU-bound tasks of a given cost.
    Synthetic,
}

/// Everything checked before anything runs.
struct Setup {
    workload: Workload,
    policies: Vec<Policy>,
    backend: Backend,
    slowdowns: Option<Vec<u32>>,
    change: Option<(usize, u32, f64)>,
    capacities: Option<Vec<f64>>,
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
                    .map_err(|e| anyhow!("--policy: {e}"))?,
            ]
        };
        let backend = match args.backend.as_str() {
            "threads" => Backend::Threads,
            "mpi" if cfg!(feature = "mpi") => Backend::Mpi,
            "mpi" => bail!(
                "--backend: this hetlb was built without MPI support; rebuild with \
                 `cargo build --release -p hetlb-cli --features mpi` and launch it with mpiexec"
            ),
            other => bail!("--backend: unknown backend '{other}' (expected threads or mpi)"),
        };
        let slowdowns = args
            .slowdown
            .as_deref()
            .map(|s| parse_list::<u32>(s, "--slowdown", Some("a whole number ≥ 1")))
            .transpose()?;
        if let Some(s) = &slowdowns {
            if let Some(i) = s.iter().position(|&f| f == 0) {
                bail!(
                    "--slowdown: value {} is 0; factors are whole numbers from 1",
                    i + 1
                );
            }
        }
        let change = args
            .slowdown_change
            .as_deref()
            .map(parse_change)
            .transpose()?;
        let capacities = args
            .capacities
            .as_deref()
            .map(|s| parse_list::<f64>(s, "--capacities", Some("a number")))
            .transpose()?;
        if let Some(c) = &capacities {
            if let Some(i) = c.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
                bail!("--capacities: value {} must be positive and finite", i + 1);
            }
        }
        Ok(Self {
            workload,
            policies,
            backend,
            slowdowns,
            change,
            capacities,
        })
    }

    /// Checks the per-processor lists against the number of processors, and the memory
    /// the run will need.
    fn check_workers(&self, args: &Args, workers: usize) -> Result<()> {
        if workers == 0 {
            bail!("--procs: at least one processor is needed");
        }
        if let Some(s) = &self.slowdowns {
            if s.len() != workers {
                bail!(
                    "--slowdown: {} values given for {workers} processors",
                    s.len()
                );
            }
        }
        if let Some(c) = &self.capacities {
            if c.len() != workers {
                bail!(
                    "--capacities: {} values given for {workers} processors",
                    c.len()
                );
            }
        }
        if let Some((p, _, _)) = self.change {
            if p >= workers {
                bail!("--slowdown-change: processor {p} does not exist ({workers} processors)");
            }
        }
        limits::check("--size", "the run", self.memory(args))
    }

    /// An estimate of the bytes the run holds at its peak.
    fn memory(&self, args: &Args) -> u128 {
        let n = u128::from(args.size);
        let runs = self.policies.len() as u128;
        match self.workload {
            // A and B, every policy's product, the reference and the assembled product, and
            // the rows of A in flight.
            Workload::Matmul => {
                let checks = if args.no_check { 0 } else { 2 };
                8 * n * n * (3 + runs + checks)
            }
            // Per task: its queue entry, attempts, result slot and output, for every run,
            // and the one-worker reference.
            Workload::Synthetic => n * (48 * runs + 16),
        }
    }

    fn slowdowns(&self, workers: usize) -> Vec<Slowdown> {
        let mut s: Vec<Slowdown> = (0..workers)
            .map(|i| Slowdown::constant(self.slowdowns.as_ref().map_or(1, |v| v[i])))
            .collect();
        if let Some((p, f, at)) = self.change {
            s[p] = s[p].then(Duration::from_secs_f64(at), f);
        }
        s
    }

    fn config(&self, args: &Args, policy: Policy, workers: usize) -> RunConfig {
        let mut cfg = RunConfig::new(policy);
        cfg.slowdowns = self.slowdowns(workers);
        cfg.capacities = self.capacities.clone();
        cfg.calibration = Duration::from_millis(args.calibration_ms);
        cfg.timeout = Duration::from_secs_f64(args.timeout);
        cfg
    }
}

fn parse_change(spec: &str) -> Result<(usize, u32, f64)> {
    let bad = || anyhow!("--slowdown-change: '{spec}' is not PROC:FACTOR@SECONDS (e.g. 2:6@0.5)");
    let (proc_factor, at) = spec.split_once('@').ok_or_else(bad)?;
    let (p, f) = proc_factor.split_once(':').ok_or_else(bad)?;
    let p: usize = p.trim().parse().map_err(|_| bad())?;
    let f: u32 = f.trim().parse().map_err(|_| bad())?;
    let at: f64 = at.trim().trim_end_matches('s').parse().map_err(|_| bad())?;
    if f == 0 {
        bail!("--slowdown-change: the factor must be at least 1");
    }
    if !(at.is_finite() && (0.0..=MAX_TIMEOUT).contains(&at)) {
        bail!("--slowdown-change: the time must be between 0 and {MAX_TIMEOUT} seconds");
    }
    Ok((p, f, at))
}

/// How the number of tasks was chosen.
#[derive(Debug, Clone, Serialize)]
struct Grain {
    tasks: u64,
    source: String,
}

fn grain(args: &Args, setup: &Setup, workers: usize) -> Result<Grain> {
    if matches!(setup.workload, Workload::Synthetic) {
        return Ok(Grain {
            tasks: args.size,
            source: "one task per unit".into(),
        });
    }
    let (tasks, source) = matmul_tasks(
        args.granularity,
        args.grain_n,
        args.seed,
        workers,
        args.size,
        &setup.policies,
    )?;
    Ok(Grain { tasks, source })
}

/// The number of tasks `G` of a matrix product of order `size` on `workers` processors, and
/// how it was chosen: `given`, or eq. (1) of 001_… with `grain_n` and a `rand()` seeded by
/// `seed`; raised to what every policy needs to give every processor work, cut to one row per
/// task at most.
///
/// # Errors
/// A `grain_n` outside `1..=3` (named `--grain-n`).
pub(crate) fn matmul_tasks(
    given: Option<u64>,
    grain_n: u32,
    seed: u64,
    workers: usize,
    size: u64,
    policies: &[Policy],
) -> Result<(u64, String)> {
    let (g, mut source) = match given {
        Some(g) => (g, "given".to_string()),
        None => {
            let (g, draw) = paper_granularity(grain_n, workers, size, seed).context("--grain-n")?;
            (g, format!("eq. (1): n = {grain_n}, rand() = {draw:.4}"))
        }
    };
    // Every processor must get work, or the run measures only some of them.
    let needed = policies
        .iter()
        .map(|p| p.minimum_tasks(workers))
        .max()
        .unwrap_or(1);
    let mut tasks = g;
    if tasks < needed {
        tasks = needed;
        source += &format!(", raised from {g} to {needed} so that every processor gets work");
    }
    if tasks > size {
        source += &format!(", cut from {tasks} to {size} (one row per task at most)");
        tasks = size;
    }
    Ok((tasks, source))
}

/// Runs `hetlb run matmul` or `hetlb run synthetic`.
pub fn run(workload: Workload, args: Args) -> Result<()> {
    let setup = Setup::parse(workload, &args)?;
    match setup.backend {
        Backend::Threads => {
            let workers = args.procs.unwrap_or(DEFAULT_PROCS);
            setup.check_workers(&args, workers)?;
            let grain = grain(&args, &setup, workers)?;
            match setup.workload {
                Workload::Matmul => {
                    let job = Arc::new(MatmulJob::new(args.size as usize, grain.tasks, args.seed));
                    let runs = run_policies(&args, &setup, workers, &job, |cfg| {
                        hetlb_runtime::run_threads(Arc::clone(&job), workers, cfg).map(Some)
                    })?;
                    present(&args, &setup, workers, &grain, &runs, &job)
                }
                Workload::Synthetic => {
                    let job = Arc::new(Synthetic::new(args.size, args.cost));
                    let runs = run_policies(&args, &setup, workers, &job, |cfg| {
                        hetlb_runtime::run_threads(Arc::clone(&job), workers, cfg).map(Some)
                    })?;
                    present(&args, &setup, workers, &grain, &runs, &job)
                }
            }
        }
        Backend::Mpi => run_mpi(&args, &setup),
    }
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args, _setup: &Setup) -> Result<()> {
    bail!("--backend: this hetlb was built without MPI support")
}

#[cfg(feature = "mpi")]
fn run_mpi(args: &Args, setup: &Setup) -> Result<()> {
    use hetlb_runtime::transport::mpi::Mpi;
    let mpi = Mpi::init().map_err(|e| anyhow!("--backend: {e}"))?;
    let workers = mpi.size();
    if let Some(w) = args.procs {
        if w != workers {
            let e = anyhow!("--procs: {w} given but mpiexec started {workers} ranks");
            return if mpi.rank() == 0 {
                Err(e)
            } else {
                Err(quiet(e))
            };
        }
    }
    if let Err(e) = setup.check_workers(args, workers) {
        return if mpi.rank() == 0 {
            Err(e)
        } else {
            Err(quiet(e))
        };
    }
    let grain = grain(args, setup, workers)?;
    let result = match setup.workload {
        Workload::Matmul => {
            let job = Arc::new(MatmulJob::new(args.size as usize, grain.tasks, args.seed));
            run_policies(args, setup, workers, &job, |cfg| {
                hetlb_runtime::run_mpi(&mpi, &*job, cfg)
            })
            .and_then(|runs| {
                if mpi.rank() == 0 {
                    present(args, setup, workers, &grain, &runs, &job)?;
                    end_silent_ranks(&mpi, &runs);
                }
                Ok(())
            })
        }
        Workload::Synthetic => {
            let job = Arc::new(Synthetic::new(args.size, args.cost));
            run_policies(args, setup, workers, &job, |cfg| {
                hetlb_runtime::run_mpi(&mpi, &*job, cfg)
            })
            .and_then(|runs| {
                if mpi.rank() == 0 {
                    present(args, setup, workers, &grain, &runs, &job)?;
                    end_silent_ranks(&mpi, &runs);
                }
                Ok(())
            })
        }
    };
    if let Err(e) = result {
        // Other ranks may be waiting for messages that will never come: end them all.
        let message = format!("{e:#}").replace('\n', " ");
        eprintln!("error: {message}");
        mpi.abort(1);
    }
    Ok(())
}

/// A rank given up as silent may still be stopped (`SIGSTOP`) or hung: the launcher would
/// wait for it forever, so once the results are out every rank is ended, with one error line.
#[cfg(feature = "mpi")]
fn end_silent_ranks<O>(mpi: &hetlb_runtime::transport::mpi::Mpi, runs: &[PolicyRun<O>]) {
    let mut silent: Vec<usize> = runs
        .iter()
        .flat_map(|r| &r.outcome.report.failures)
        .filter(|f| f.kind == hetlb_runtime::FailureKind::Silent)
        .map(|f| f.processor)
        .collect();
    silent.sort_unstable();
    silent.dedup();
    if !silent.is_empty() {
        let _ = crate::output::finish();
        // The launcher forwards this rank's output through a pipe: give it a moment before
        // MPI_Abort tears the job down, or the results could be lost on the way.
        std::thread::sleep(std::time::Duration::from_millis(500));
        eprintln!(
            "error: rank(s) {silent:?} fell silent and were given up (the results above are \
             complete); MPI cannot end a silent rank, so every rank is now ended"
        );
        mpi.abort(1);
    }
}

/// An error already reported by another rank: exit non-zero without printing it again.
#[cfg(feature = "mpi")]
fn quiet(_e: anyhow::Error) -> anyhow::Error {
    std::process::exit(1)
}

/// What one policy's run produced.
struct PolicyRun<O> {
    outcome: Outcome<O>,
}

fn run_policies<J, F>(
    args: &Args,
    setup: &Setup,
    workers: usize,
    job: &Arc<J>,
    mut execute: F,
) -> Result<Vec<PolicyRun<J::Output>>>
where
    J: Job,
    F: FnMut(&RunConfig) -> Result<Option<Outcome<J::Output>>, RuntimeError>,
{
    let mut runs = Vec::new();
    for &policy in &setup.policies {
        let mut cfg = setup.config(args, policy, workers);
        let bar = progress::bar(job.tasks(), format!("{policy} on {workers} processors"));
        let b = bar.clone();
        cfg.progress = Some(Arc::new(move |done, _| b.set_position(done)));
        let outcome = execute(&cfg).with_context(|| format!("{policy} run failed"))?;
        bar.finish_and_clear();
        if let Some(outcome) = outcome {
            runs.push(PolicyRun { outcome });
        }
    }
    Ok(runs)
}
