//! `hetlb run`: real tasks on real workers — EFP or a baseline, on threads or on MPI.
//!
//! Prints the per-processor report of the paper's Tables 2–6 (rows, T_exec, T_comp, T_comm,
//! T_wait), the makespan, the efficiency against the ideal makespan and the speedup against
//! one worker; beside the paper's numbers when the matrix order matches one of its tables.

use crate::input::parse_list;
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Stack, stacked_bar_panels};
use crate::progress;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::grain::paper_granularity;
use hetlb_runtime::paper::table_for;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{Job, Outcome, RunConfig, RunReport, RuntimeError, Slowdown, run_sequential};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `hetlb run`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run matmul --size 1000 --workers 9 --slowdown 1,3,3,3,3,3,3,3,3\n  \
    hetlb run matmul --size 1000 --workers 9 --slowdown 1,3,3,3,3,3,3,3,3 --policy all --plot efp.svg\n  \
    hetlb run matmul --size 600 --workers 4 --slowdown-change 2:6@0.5 --format json\n  \
    hetlb run synthetic --size 2000 --cost 20000 --workers 4 --slowdown 1,2,2,4\n  \
    mpiexec -n 4 hetlb run matmul --size 1000 --slowdown 1,3,3,3 --backend mpi")]
pub struct Args {
    /// Workload: `matmul` (C = A·B split by rows, the paper's benchmark) or `synthetic`
    /// (CPU-bound tasks of configurable cost).
    workload: String,
    /// Matrix order for matmul; number of tasks for synthetic.
    #[arg(long, default_value_t = 1000)]
    size: u64,
    /// Processors, the master included (on MPI: the number of ranks, the default there).
    #[arg(long)]
    workers: Option<usize>,
    /// Slowdown factor per processor, whole numbers ≥ 1: `1,3,3,…` (default: all 1). The
    /// kernel is repeated that many times; the balancer never sees these factors.
    #[arg(long)]
    slowdown: Option<String>,
    /// Change one processor's factor during the run: `PROC:FACTOR@SECONDS`.
    #[arg(long, value_name = "PROC:FACTOR@SECONDS")]
    slowdown_change: Option<String>,
    /// efp, static (equal split), proportional (split by capacity), self (one task per
    /// request), or all (each in turn, compared).
    #[arg(long, default_value = "efp")]
    policy: String,
    /// threads (default) or mpi (under mpiexec; needs a build with `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Number of tasks G (matmul); default: eq. (1) of the paper with `--grain-n` and a
    /// seeded rand().
    #[arg(long)]
    granularity: Option<u64>,
    /// The multiplier n of eq. (1), 1 to 3.
    #[arg(long, default_value_t = 3)]
    grain_n: u32,
    /// Seed of the matrices and of rand() in eq. (1).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Rounds of work per synthetic task.
    #[arg(long, default_value_t = 100_000)]
    cost: u64,
    /// Given capacities, one per processor, instead of a calibration: `3,1,1,…`.
    #[arg(long)]
    capacities: Option<String>,
    /// Milliseconds each processor runs the calibration task (one after the other).
    #[arg(long, default_value_t = 100)]
    calibration_ms: u64,
    /// Seconds a processor holding tasks may stay silent before the run fails.
    #[arg(long, default_value_t = 60.0)]
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Threads,
    Mpi,
}

#[derive(Debug, Clone, Copy)]
enum Workload {
    Matmul,
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
    fn parse(args: &Args) -> Result<Self> {
        let workload = match args.workload.as_str() {
            "matmul" => Workload::Matmul,
            "synthetic" => Workload::Synthetic,
            other => bail!("workload: unknown workload '{other}' (expected matmul or synthetic)"),
        };
        if args.size == 0 {
            bail!("--size: must be at least 1");
        }
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
        if args.workers == Some(0) {
            bail!("--workers: at least one worker is needed");
        }
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
        if !(args.timeout.is_finite() && args.timeout > 0.0) {
            bail!("--timeout: must be a positive number of seconds");
        }
        if args.grain_n == 0 {
            bail!("--grain-n: must be at least 1");
        }
        if args.granularity == Some(0) {
            bail!("--granularity: must be at least 1");
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

    /// Checks the per-processor lists against the number of processors.
    fn check_workers(&self, workers: usize) -> Result<()> {
        if workers == 0 {
            bail!("--workers: at least one worker is needed");
        }
        if let Some(s) = &self.slowdowns {
            if s.len() != workers {
                bail!("--slowdown: {} values given for {workers} workers", s.len());
            }
        }
        if let Some(c) = &self.capacities {
            if c.len() != workers {
                bail!(
                    "--capacities: {} values given for {workers} workers",
                    c.len()
                );
            }
        }
        if let Some((p, _, _)) = self.change {
            if p >= workers {
                bail!("--slowdown-change: processor {p} does not exist ({workers} workers)");
            }
        }
        Ok(())
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
    if !(at.is_finite() && at >= 0.0) {
        bail!("--slowdown-change: the time must be a non-negative number of seconds");
    }
    Ok((p, f, at))
}

/// How the number of tasks was chosen.
#[derive(Debug, Clone, Serialize)]
struct Grain {
    tasks: u64,
    source: String,
}

fn grain(args: &Args, workload: Workload, workers: usize) -> Result<Grain> {
    if matches!(workload, Workload::Synthetic) {
        return Ok(Grain {
            tasks: args.size,
            source: "one task per unit".into(),
        });
    }
    if let Some(g) = args.granularity {
        return Ok(Grain {
            tasks: g.min(args.size),
            source: "given".into(),
        });
    }
    let (g, draw) =
        paper_granularity(args.grain_n, workers, args.size, args.seed).context("--grain-n")?;
    Ok(Grain {
        tasks: g,
        source: format!("eq. (1): n = {}, rand() = {draw:.4}", args.grain_n),
    })
}

/// Runs `hetlb run`.
pub fn run(args: Args) -> Result<()> {
    let setup = Setup::parse(&args)?;
    match setup.backend {
        Backend::Threads => {
            let workers = args.workers.unwrap_or(9);
            setup.check_workers(workers)?;
            let grain = grain(&args, setup.workload, workers)?;
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
    if let Some(w) = args.workers {
        if w != workers {
            let e = anyhow!("--workers: {w} given but mpiexec started {workers} ranks");
            return if mpi.rank() == 0 {
                Err(e)
            } else {
                Err(quiet(e))
            };
        }
    }
    if let Err(e) = setup.check_workers(workers) {
        return if mpi.rank() == 0 {
            Err(e)
        } else {
            Err(quiet(e))
        };
    }
    let grain = grain(args, setup.workload, workers)?;
    let result = match setup.workload {
        Workload::Matmul => {
            let job = Arc::new(MatmulJob::new(args.size as usize, grain.tasks, args.seed));
            run_policies(args, setup, workers, &job, |cfg| {
                hetlb_runtime::run_mpi(&mpi, &*job, cfg)
            })
            .and_then(|runs| {
                if mpi.rank() == 0 {
                    present(args, setup, workers, &grain, &runs, &job)
                } else {
                    Ok(())
                }
            })
        }
        Workload::Synthetic => {
            let job = Arc::new(Synthetic::new(args.size, args.cost));
            run_policies(args, setup, workers, &job, |cfg| {
                hetlb_runtime::run_mpi(&mpi, &*job, cfg)
            })
            .and_then(|runs| {
                if mpi.rank() == 0 {
                    present(args, setup, workers, &grain, &runs, &job)
                } else {
                    Ok(())
                }
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

/// A job whose result can be checked.
trait Checked: Job {
    /// Compares the outputs with a single-threaded reference; returns the largest error.
    fn check(&self, outputs: &[Self::Output]) -> Result<f64>;
    /// Human name of the workload.
    fn describe(&self) -> String;
}

impl Checked for MatmulJob {
    fn check(&self, outputs: &[Vec<f64>]) -> Result<f64> {
        let c = self.assemble(outputs).map_err(|e| anyhow!("result: {e}"))?;
        Ok(c.max_abs_diff(&self.reference()))
    }
    fn describe(&self) -> String {
        let n = self.order();
        format!("matmul {n}×{n}")
    }
}

impl Checked for Synthetic {
    fn check(&self, outputs: &[u64]) -> Result<f64> {
        let wrong = outputs
            .iter()
            .enumerate()
            .filter(|(i, o)| self.run(&(*i as u64)).ok() != Some(**o))
            .count();
        Ok(wrong as f64)
    }
    fn describe(&self) -> String {
        format!("synthetic, {} tasks", self.tasks())
    }
}

#[derive(Serialize)]
struct ProcessorJson<'a> {
    processor: usize,
    role: &'a str,
    slowdown: u32,
    rows: u64,
    tasks: u64,
    batches: u64,
    t_exec: f64,
    t_comp: f64,
    t_comm: f64,
    t_wait: f64,
    capacity: f64,
    failed: Option<&'a str>,
}

#[derive(Serialize)]
struct RunJson<'a> {
    workload: String,
    size: u64,
    workers: usize,
    policy: Policy,
    backend: &'a str,
    granularity: &'a Grain,
    master: usize,
    calibrated: bool,
    processors: Vec<ProcessorJson<'a>>,
    makespan: f64,
    ideal: f64,
    efficiency: f64,
    finish_spread: f64,
    one_worker: Option<f64>,
    speedup: Option<f64>,
    speedup_vs_static: Option<f64>,
    max_error: Option<f64>,
    failures: &'a [hetlb_runtime::Failure],
    requeued: u64,
    duplicates_dropped: u64,
    timeline: &'a [hetlb_runtime::Dispatch],
}

fn present<J: Checked>(
    args: &Args,
    setup: &Setup,
    workers: usize,
    grain: &Grain,
    runs: &[PolicyRun<J::Output>],
    job: &Arc<J>,
) -> Result<()> {
    // The one-worker time: every task in order on this thread, no slowdown.
    let one = if args.no_check {
        None
    } else {
        Some(run_sequential(&**job).context("one-worker reference")?.1)
    };
    let mut errors = Vec::new();
    for r in runs {
        let e = if args.no_check {
            None
        } else {
            Some(job.check(&r.outcome.outputs)?)
        };
        errors.push(e);
    }
    let static_makespan = runs
        .iter()
        .find(|r| r.outcome.report.policy == Policy::StaticEqual)
        .map(|r| r.outcome.report.makespan);
    let slowdown_of = |p: usize| setup.slowdowns.as_ref().map_or(1, |s| s[p]);
    let docs: Vec<RunJson> = runs
        .iter()
        .zip(&errors)
        .map(|(r, e)| {
            let rep = &r.outcome.report;
            RunJson {
                workload: job.describe(),
                size: args.size,
                workers,
                policy: rep.policy,
                backend: &rep.backend,
                granularity: grain,
                master: rep.master,
                calibrated: rep.calibrated,
                processors: rep
                    .processors
                    .iter()
                    .map(|p| ProcessorJson {
                        processor: p.processor,
                        role: &p.role,
                        slowdown: slowdown_of(p.processor),
                        rows: p.rows,
                        tasks: p.tasks,
                        batches: p.batches,
                        t_exec: p.t_exec,
                        t_comp: p.t_comp,
                        t_comm: p.t_comm,
                        t_wait: p.t_wait,
                        capacity: p.capacity,
                        failed: p.failed.as_deref(),
                    })
                    .collect(),
                makespan: rep.makespan,
                ideal: rep.ideal,
                efficiency: rep.efficiency,
                finish_spread: rep.finish_spread(),
                one_worker: one,
                speedup: one.map(|t| t / rep.makespan),
                speedup_vs_static: static_makespan.map(|s| s / rep.makespan),
                max_error: *e,
                failures: &rep.failures,
                requeued: rep.requeued,
                duplicates_dropped: rep.duplicates_dropped,
                timeline: &rep.timeline,
            }
        })
        .collect();
    if let Some(path) = &args.plot {
        for r in runs {
            let target = if runs.len() > 1 {
                suffixed(path, r.outcome.report.policy.name())
            } else {
                path.clone()
            };
            plot(&target, &r.outcome.report, &job.describe())?;
        }
    }
    match args.format {
        Format::Json => {
            if docs.len() == 1 {
                print_json(&docs[0])
            } else {
                print_json(&serde_json::json!({ "runs": docs }))
            }
        }
        Format::Csv => print_csv(
            &[
                "policy",
                "processor",
                "role",
                "slowdown",
                "rows",
                "tasks",
                "batches",
                "t_exec",
                "t_comp",
                "t_comm",
                "t_wait",
                "makespan",
                "efficiency",
            ],
            docs.iter().flat_map(|d| {
                d.processors.iter().map(move |p| {
                    vec![
                        d.policy.name().to_string(),
                        p.processor.to_string(),
                        p.role.to_string(),
                        p.slowdown.to_string(),
                        p.rows.to_string(),
                        p.tasks.to_string(),
                        p.batches.to_string(),
                        format!("{:.6}", p.t_exec),
                        format!("{:.6}", p.t_comp),
                        format!("{:.6}", p.t_comm),
                        format!("{:.6}", p.t_wait),
                        format!("{:.6}", d.makespan),
                        format!("{:.6}", d.efficiency),
                    ]
                })
            }),
        ),
        Format::Table => {
            for d in &docs {
                print_run(d, runs.len() == 1);
            }
            if docs.len() > 1 {
                print_comparison(&docs);
            }
            if let (Workload::Matmul, Some(paper)) = (setup.workload, table_for(args.size as usize))
            {
                if workers == 9 {
                    if let Some(efp) = docs.iter().find(|d| d.policy == Policy::Efp) {
                        print_paper(efp, paper);
                    }
                }
            }
            Ok(())
        }
    }
}

fn suffixed(path: &std::path::Path, name: &str) -> PathBuf {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("run");
    let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("svg");
    path.with_file_name(format!("{stem}-{name}.{ext}"))
}

fn plot(path: &std::path::Path, rep: &RunReport, what: &str) -> Result<()> {
    let cats: Vec<String> = rep
        .processors
        .iter()
        .map(|p| format!("{} ({})", p.processor, p.role))
        .collect();
    let pick = |f: fn(&hetlb_runtime::ProcessorReport) -> f64| -> Vec<f64> {
        rep.processors.iter().map(f).collect()
    };
    let times = [
        Stack {
            label: "T_comp".into(),
            values: pick(|p| p.t_comp),
        },
        Stack {
            label: "T_comm".into(),
            values: pick(|p| p.t_comm),
        },
        Stack {
            label: "T_wait".into(),
            values: pick(|p| p.t_wait),
        },
    ];
    let rows = [Stack {
        label: rep.unit.clone(),
        values: pick(|p| p.rows as f64),
    }];
    stacked_bar_panels(
        path,
        &format!("{} — {what}", rep.policy.name().to_uppercase()),
        &cats,
        &[(&rep.unit, &rows), ("seconds", &times)],
    )
    .context("--plot")
}

fn print_run(d: &RunJson, alone: bool) {
    println!(
        "{} on {}: {}, {} processors, G = {} tasks ({}); capacities {}; master = processor {}",
        d.policy.name().to_uppercase(),
        d.backend,
        d.workload,
        d.workers,
        d.granularity.tasks,
        d.granularity.source,
        if d.calibrated { "calibrated" } else { "given" },
        d.master
    );
    let mut t = table([
        "proc", "role", "slowdown", "rows", "tasks", "batches", "T_exec", "T_comp", "T_comm",
        "T_wait",
    ]);
    for p in &d.processors {
        t.add_row(vec![
            p.processor.to_string(),
            p.role.to_string(),
            p.slowdown.to_string(),
            p.rows.to_string(),
            p.tasks.to_string(),
            p.batches.to_string(),
            fixed(p.t_exec, 3),
            fixed(p.t_comp, 3),
            fixed(p.t_comm, 3),
            fixed(p.t_wait, 3),
        ]);
    }
    println!("{t}");
    let mut line = format!(
        "makespan {:.3} s · ideal {:.3} s · efficiency {:.3} · finish spread {:.1}%",
        d.makespan,
        d.ideal,
        d.efficiency,
        100.0 * d.finish_spread
    );
    if let (Some(one), Some(s)) = (d.one_worker, d.speedup) {
        line += &format!(" · one worker {one:.3} s → speedup {s:.2}");
    }
    println!("{line}");
    match d.max_error {
        Some(e) if d.workload.starts_with("matmul") => println!(
            "result checked against a single-threaded triple loop: max |C − C_ref| = {e:.2e}"
        ),
        Some(e) => println!("result checked task by task: {e} wrong"),
        None => {}
    }
    if !d.failures.is_empty() {
        println!(
            "survived {} failure(s), {} task(s) put back, {} duplicate result(s) dropped:",
            d.failures.len(),
            d.requeued,
            d.duplicates_dropped
        );
        for f in d.failures {
            println!("  processor {}: {:?}: {}", f.processor, f.kind, f.message);
        }
    }
    if !alone {
        println!();
    }
}

fn print_comparison(docs: &[RunJson]) {
    let mut t = table([
        "policy",
        "makespan",
        "ideal",
        "efficiency",
        "finish spread",
        "speedup vs one worker",
        "speedup vs static",
    ]);
    for d in docs {
        t.add_row(vec![
            d.policy.name().to_string(),
            fixed(d.makespan, 3),
            fixed(d.ideal, 3),
            fixed(d.efficiency, 3),
            format!("{:.1}%", 100.0 * d.finish_spread),
            d.speedup.map_or("–".into(), |s| fixed(s, 2)),
            d.speedup_vs_static.map_or("–".into(), |s| fixed(s, 2)),
        ]);
    }
    println!("{t}");
}

fn print_paper(d: &RunJson, paper: &hetlb_runtime::paper::PaperTable) {
    println!(
        "\nBeside the paper, Table {} ({}×{}; master PIII 1000 MHz, eight PII 333 MHz, Fast \
         Ethernet, C + MPI):",
        paper.table, paper.size, paper.size
    );
    let mut t = table([
        "role",
        "rows",
        "T_exec",
        "T_comp",
        "T_comm",
        "T_wait",
        "paper proc",
        "paper rows",
        "paper T_exec",
        "paper T_comp",
        "paper T_comm",
        "paper T_wait",
    ]);
    // The paper lists its master last (processor 8); ours is P0.
    let mut ours: Vec<&ProcessorJson> = d.processors.iter().collect();
    ours.sort_by_key(|p| {
        p.role
            .trim_start_matches('P')
            .parse::<usize>()
            .unwrap_or(usize::MAX)
    });
    let theirs: Vec<_> = std::iter::once(&paper.rows[8])
        .chain(paper.rows[..8].iter())
        .collect();
    for (o, p) in ours.iter().zip(theirs) {
        t.add_row(vec![
            o.role.to_string(),
            o.rows.to_string(),
            fixed(o.t_exec, 3),
            fixed(o.t_comp, 3),
            fixed(o.t_comm, 3),
            fixed(o.t_wait, 3),
            p.processor.to_string(),
            p.rows.to_string(),
            fixed(p.t_exec, 3),
            fixed(p.t_comp, 3),
            fixed(p.t_comm, 3),
            fixed(p.t_wait, 3),
        ]);
    }
    println!("{t}");
    let master = d.processors.iter().find(|p| p.processor == d.master);
    let others: Vec<u64> = d
        .processors
        .iter()
        .filter(|p| p.processor != d.master)
        .map(|p| p.rows)
        .collect();
    if let Some(m) = master {
        let mean = others.iter().sum::<u64>() as f64 / others.len().max(1) as f64;
        println!(
            "master rows ÷ mean worker rows: ours {:.2}, paper {:.2} · finish spread: ours \
             {:.1}%, paper {:.1}%",
            m.rows as f64 / mean.max(f64::MIN_POSITIVE),
            paper.master_ratio(),
            100.0 * d.finish_spread,
            100.0 * paper.finish_spread()
        );
    }
    println!(
        "Absolute times are not comparable (2004 hardware and network, naive C kernel; here \
         threads share this machine's cores and the slow processors repeat the kernel)."
    );
}
