//! `hetlb run scenario`: the simulator's scenario files on real workers, the prediction beside
//! the measurement (`hetlb_experiments::drivers::scenario`).

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::plot::{Axes, Series, line_chart_with};
use anyhow::{Context, Result, anyhow, bail};
use hetlb_experiments::drivers::scenario::{
    Balancings, Comparison, PredictionError, compare, predict, relative_error,
};
use hetlb_runtime::scenario::{
    Calibration, LinkMeasure, RealConfig, Work, check, default_time_scale, run_threads,
};
use hetlb_sim::{Report, Scenario};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `hetlb run scenario`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb run scenario examples/scenarios/mirtaheri-compensated.toml --compare\n  \
    hetlb run scenario examples/scenarios/*.toml --compare --work sleep\n  \
    hetlb run scenario examples/scenarios/rim-dynamic.toml --time-scale 0.002 --format json\n  \
    mpiexec -n 6 hetlb run scenario examples/scenarios/mirtaheri-compensated.toml --backend mpi --compare")]
pub struct Args {
    /// Scenario files (TOML), as `hetlb simulate` reads them; one rank per node.
    #[arg(required = true)]
    scenarios: Vec<PathBuf>,
    /// threads (default) or mpi (under mpiexec with one process per node; needs a build with
    /// `--features mpi`).
    #[arg(long, default_value = "threads")]
    backend: String,
    /// Real seconds per scenario second (default: the run lasts about --target-seconds).
    #[arg(long, value_name = "S", value_parser = crate::input::real(0.0, 1e6, true))]
    time_scale: Option<f64>,
    /// Real seconds a run should last when --time-scale is not given.
    #[arg(long, default_value = "3", value_parser = crate::input::real(0.0, 3600.0, true))]
    target_seconds: f64,
    /// What a task does for its service time: `cpu` (calibrated CPU work for all of it; ranks
    /// beyond the cores share them and slow down), `sleep` (a timed wait: a core per rank,
    /// emulated), `share:F` (CPU work for a fraction F of it, then a wait), or `auto`: `cpu`
    /// when there are no more nodes than cores, else `share` with F = cores ÷ nodes, so that
    /// every node can compute at once without needing more cores than the machine has.
    #[arg(long, default_value = "auto")]
    work: String,
    /// Also run the simulator on the same file and seed, and print both side by side with the
    /// relative errors.
    #[arg(long)]
    compare: bool,
    /// Override the scenario's seed (the simulator's and the real run's).
    #[arg(long, value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: Option<u64>,
    /// Override the algorithm of a hypercube policy (`dem`, `oem`, `dem-improved`, `cwa`, …):
    /// Rim et al.'s OEM-against-DEM comparison on the same file.
    #[arg(long)]
    algorithm: Option<String>,
    /// Seconds the ranks may take to measure their links and to report at the end.
    #[arg(long, default_value = "60", value_parser = crate::input::real(0.0, 86_400.0, true))]
    timeout: f64,
    /// Finish time per node, simulated and measured: `.svg` or `.png` (one file per scenario
    /// when several are given: NAME-SCENARIO.svg).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// A time scale as a person reads it: `0.0025`, `3.1e-7`.
fn scale_text(s: f64) -> String {
    if s != 0.0 && !(1e-3..1e6).contains(&s.abs()) {
        format!("{s:.3e}")
    } else {
        format!("{s:.4}")
    }
}

/// Runs `hetlb run scenario`.
pub fn run(args: Args) -> Result<()> {
    // The ranges of the numbers are clap's (`real`).
    let work = parse_work(&args.work)?;
    if crate::input::mpi_backend(&args.backend)? {
        return run_mpi(&args, work);
    }
    let calibration = Calibration::measure(Duration::from_millis(50));
    let mut outcomes = Vec::new();
    for path in &args.scenarios {
        let (scenario, sim) = prepare(path, &args, hetlb_runtime::scenario::MAX_RANKS)?;
        let work = work.unwrap_or_else(|| Work::auto(scenario.node_count()));
        let length = scenario_length(&sim);
        let scale = args
            .time_scale
            .unwrap_or_else(|| default_time_scale(&scenario, length, args.target_seconds));
        check(&scenario, hetlb_runtime::scenario::MAX_RANKS, scale, length)
            .map_err(|e| anyhow!("{}: {e}", path.display()))?;
        let cfg = RealConfig::new(scale, work).timeout(Duration::from_secs_f64(args.timeout));
        let expected = length * scale;
        if args.time_scale.is_none() && expected > 2.0 * args.target_seconds {
            eprintln!(
                "note: {}: tasks of at least 100 µs make this run last about {expected:.0} s, \
                 not the {} s of --target-seconds",
                path.display(),
                args.target_seconds
            );
        } else if expected > 10.0 && !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
            eprintln!(
                "note: running {} on real workers for about {expected:.0} s (time scale {})",
                path.display(),
                scale_text(scale)
            );
        }
        let spinner =
            crate::progress::spinner(format!("running {} on real workers", path.display()));
        let real = run_threads(&scenario, &cfg, calibration)
            .with_context(|| path.display().to_string())?;
        spinner.finish_and_clear();
        let label = path.display().to_string();
        outcomes.push(compare(
            &label,
            &scenario,
            &real,
            args.compare.then_some(&sim),
        ));
    }
    present(&args, &outcomes)
}

/// How long the scenario runs, in scenario seconds, as the simulator saw it: to its last
/// completion, or to its `end_time` when tasks were left then (whose run on real workers
/// lasts as long).
fn scenario_length(sim: &Report) -> f64 {
    sim.makespan.max(sim.horizon)
}

/// `None` for `auto`.
fn parse_work(spec: &str) -> Result<Option<Work>> {
    Ok(Some(match spec {
        "auto" => return Ok(None),
        "cpu" => Work::Cpu,
        "sleep" => Work::Sleep,
        s => match s.strip_prefix("share:").map(str::parse::<f64>) {
            Some(Ok(f)) if f > 0.0 && f <= 1.0 => Work::Share(f),
            _ => bail!("--work: '{s}' is not auto, cpu, sleep or share:F with 0 < F ≤ 1"),
        },
    }))
}

/// Reads a scenario, refuses it when the prediction or the real run would need more than
/// --max-memory, or when it does not fit `ranks` real workers, and runs the simulator on it
/// (for the prediction and the default scale).
fn prepare(path: &Path, args: &Args, ranks: usize) -> Result<(Scenario, Report)> {
    let scenario = Scenario::from_path_within(path, crate::limits::bytes())
        .map_err(|e| crate::limits::scenario_error(path, e))?;
    crate::limits::check(
        &path.display().to_string(),
        "the run (every task is a queue entry of the prediction, then of the real workers)",
        hetlb_experiments::drivers::scenario::memory_estimate(&scenario),
    )?;
    hetlb_runtime::scenario::check_size(&scenario, ranks)
        .map_err(|e| anyhow!("{}: {e}", path.display()))?;
    let mut scenario = scenario;
    let algorithm = args
        .algorithm
        .as_deref()
        .map(|a| a.parse::<hetlb_core::Algorithm>())
        .transpose()
        .map_err(|e| anyhow!("--algorithm: {e}"))?;
    let sim = predict(&mut scenario, args.seed, algorithm).map_err(|e| match e {
        PredictionError::NoHypercubePolicy => anyhow!(
            "--algorithm: {} has no hypercube policy to change",
            path.display()
        ),
        other => anyhow::Error::new(other).context(path.display().to_string()),
    })?;
    Ok((scenario, sim))
}

fn present(args: &Args, outcomes: &[Comparison]) -> Result<()> {
    for o in outcomes.iter().filter(|o| !o.warnings.is_empty()) {
        eprintln!(
            "warning: {}: the measured times do not stand for the scenario's: {} (time scale {}; a larger --time-scale, --work sleep or a quieter machine help)",
            o.scenario,
            o.warnings.join("; "),
            scale_text(o.time_scale)
        );
    }
    if let Some(path) = &args.plot {
        for o in outcomes {
            plot_finish(path, o, outcomes.len() > 1).context("--plot")?;
        }
    }
    match args.format {
        Format::Json => {
            if outcomes.len() == 1 {
                print_json(&outcomes[0])
            } else {
                print_json(&serde_json::json!({ "scenarios": outcomes }))
            }
        }
        Format::Csv => print_csv(
            &[
                "scenario",
                "figure",
                "node",
                "simulated",
                "measured",
                "relative_error",
            ],
            outcomes.iter().flat_map(|o| {
                let cell = |x: Option<f64>| x.map_or(String::new(), |v| format!("{v:.6}"));
                o.figures().into_iter().map(move |f| {
                    vec![
                        o.scenario.clone(),
                        f.figure.into(),
                        f.node.map_or(String::new(), |n| n.to_string()),
                        cell(f.simulated),
                        format!("{:.6}", f.measured),
                        cell(f.relative_error),
                    ]
                })
            }),
        ),
        Format::Table => {
            for o in outcomes {
                print_outcome(o);
            }
            if outcomes.len() > 1 && outcomes.iter().all(|o| o.simulated.is_some()) {
                print_summary(outcomes);
            }
            Ok(())
        }
    }
}

/// Every node's finish time, measured and simulated, drawn to `path` (with `several`
/// scenarios, to `PATH-NAME.ext`, one file each).
fn plot_finish(path: &Path, o: &Comparison, several: bool) -> Result<()> {
    let target = if several {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("finish");
        let ext = path.extension().and_then(|s| s.to_str()).unwrap_or("svg");
        let name = Path::new(&o.scenario)
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("scenario");
        path.with_file_name(format!("{stem}-{name}.{ext}"))
    } else {
        path.to_path_buf()
    };
    let line = |label: &str, finish: &[f64]| Series {
        label: label.into(),
        points: finish
            .iter()
            .enumerate()
            .map(|(i, &f)| (i as f64, f))
            .collect(),
    };
    let mut series = vec![line("measured", &o.measured.finish)];
    if let Some(s) = &o.simulated {
        series.push(line("simulated", &s.finish));
    }
    line_chart_with(
        &target,
        &format!(
            "Finish time per node: {}, {}, time scale {}",
            o.name.as_deref().unwrap_or(&o.scenario),
            o.work.describe(),
            scale_text(o.time_scale)
        ),
        &Axes::new("node", "seconds (scenario time)").integer_x(),
        &series,
    )
}

/// One row per scenario: the makespans simulated, measured and published, and whether the
/// run kept to its time scale.
fn print_summary(outcomes: &[Comparison]) {
    let mut t = table([
        "scenario",
        "policy",
        "simulated makespan",
        "measured",
        "error",
        "paper",
        "timing",
    ]);
    for o in outcomes {
        let s = o.simulated.as_ref().map_or(0.0, |s| s.makespan);
        let e = o.relative_error.as_ref().map_or(0.0, |e| e.makespan);
        t.add_row(vec![
            o.name.clone().unwrap_or_else(|| o.scenario.clone()),
            o.policy.clone(),
            fixed(s, 3),
            fixed(o.measured.makespan, 3),
            format!("{:+.1}%", 100.0 * e),
            o.paper_makespan.map_or("–".into(), |p| fixed(p, 2)),
            if o.warnings.is_empty() {
                "kept to scale".into()
            } else {
                "NOT COMPARABLE".into()
            },
        ]);
    }
    crate::out!("{t}");
}

fn print_outcome(o: &Comparison) {
    crate::out!(
        "{} ({}) on {} workers, policy {}: time scale {} real s per scenario s, tasks are {}; \
         {} tasks completed ({} arrived, {} injected), every one exactly once; {:.2} s real",
        o.name.as_deref().unwrap_or(&o.scenario),
        o.scenario,
        o.backend,
        o.policy,
        scale_text(o.time_scale),
        o.work.describe(),
        o.tasks_completed,
        o.tasks_arrived,
        o.tasks_injected,
        o.real_seconds
    );
    print_figures(o);
    let tm = &o.timing.timing;
    crate::out!(
        "timing: tasks took {} of their service times; CPU while computing {}; events noticed {} \
         s late on average, {} s at worst (scenario time){}",
        tm.service_stretch
            .map_or("–".into(), |s| format!("{:.0}%", 100.0 * s)),
        tm.cpu_obtained
            .map_or("– (no CPU work)".into(), |c| format!(
                "{:.0}% of a core",
                100.0 * c
            )),
        scale_text(tm.mean_event_lateness),
        scale_text(tm.max_event_lateness),
        if o.warnings.is_empty() {
            String::new()
        } else {
            format!(
                ": NOT COMPARABLE with the simulation ({})",
                o.warnings.join("; ")
            )
        }
    );
    if let Some(p) = o.paper_makespan {
        crate::out!("paper (Mirtaheri & Grandinetti 2017, §5): makespan {p} s");
    }
    if let Some(b) = &o.balancings {
        print_balancings(b, o.simulated_balancings.as_ref());
    }
    if !o.links.is_empty() {
        print_links(&o.links);
    }
    crate::out!();
}

/// The figures, simulated beside measured, and the mean response time.
fn print_figures(o: &Comparison) {
    let mut t = table([
        "figure (scenario time)",
        "simulated",
        "measured",
        "relative error",
    ]);
    let cell = |x: Option<f64>, d: usize| x.map_or("–".to_string(), |v| fixed(v, d));
    let pct = |x: Option<f64>| x.map_or("–".to_string(), |v| format!("{:+.1}%", 100.0 * v));
    for f in o.figures() {
        let (label, digits) = match (f.figure, f.node) {
            ("makespan", _) => ("makespan (s)".to_string(), 3),
            ("total_idle", _) => ("total idle (s)".to_string(), 3),
            ("tasks_moved", _) => ("tasks moved".to_string(), 0),
            (_, node) => (format!("finish, node {} (s)", node.unwrap_or(0)), 3),
        };
        t.add_row(vec![
            label,
            cell(f.simulated, digits),
            fixed(f.measured, digits),
            pct(f.relative_error),
        ]);
    }
    if o.mean_response_time.is_some() {
        t.add_row(vec![
            "mean response time (s)".to_string(),
            cell(o.simulated_mean_response_time, 3),
            cell(o.mean_response_time, 3),
            pct(o
                .mean_response_time
                .zip(o.simulated_mean_response_time)
                .map(|(m, s)| relative_error(m, s))),
        ]);
    }
    crate::out!("{t}");
}

/// What the threshold policy did, measured beside simulated.
fn print_balancings(b: &Balancings, s: Option<&Balancings>) {
    let opt = |x: Option<f64>| x.map_or("–".to_string(), |v| fixed(v, 3));
    let mut t = table([
        "threshold balancing (Rim, Jang & Kim 2003, §4)",
        "simulated",
        "measured",
    ]);
    t.add_row(vec![
        "balancings".to_string(),
        s.map_or("–".into(), |s| s.count.to_string()),
        b.count.to_string(),
    ]);
    t.add_row(vec![
        "mean max − min after".to_string(),
        opt(s.and_then(|s| s.mean_max_difference_after)),
        opt(b.mean_max_difference_after),
    ]);
    t.add_row(vec![
        "mean batch speedup (Σ loads ÷ max)".to_string(),
        opt(s.and_then(|s| s.mean_batch_speedup)),
        opt(b.mean_batch_speedup),
    ]);
    crate::out!("{t}");
}

/// Every link as the delay-aware policy saw it.
fn print_links(links: &[LinkMeasure]) {
    let mut l = table([
        "link",
        "file rate",
        "measured rate",
        "file delay",
        "measured delay",
    ]);
    for m in links {
        l.add_row(vec![
            format!("{} → {}", m.from, m.to),
            fixed(m.file_rate, 1),
            fixed(m.measured_rate, 1),
            fixed(m.file_delay, 4),
            fixed(m.measured_delay, 4),
        ]);
    }
    crate::out!(
        "links as the delay-aware policy saw them (tasks/s, seconds; measured by probes over the emulated links):\n{l}"
    );
}

#[cfg(not(feature = "mpi"))]
fn run_mpi(_args: &Args, _work: Option<Work>) -> Result<()> {
    bail!("{}", crate::input::NO_MPI)
}

/// Each scenario on the MPI job's ranks, one rank per node; rank 0 prints (see
/// `hetlb_experiments::drivers::scenario::run_mpi_job`).
#[cfg(feature = "mpi")]
fn run_mpi(args: &Args, work: Option<Work>) -> Result<()> {
    use hetlb_experiments::drivers::{mpi_job::MpiJob, scenario::run_mpi_job};
    let job = MpiJob::init().map_err(|e| anyhow!("--backend: {e}"))?;
    let calibration = Calibration::measure(Duration::from_millis(50));
    let mut outcomes = Vec::new();
    for path in &args.scenarios {
        let (scenario, sim, cfg) = job.agreed((|| {
            let (scenario, sim) = prepare(path, args, usize::MAX)?;
            if scenario.node_count() != job.size() {
                bail!(
                    "{}: nodes.count: the scenario has {} nodes but mpiexec started {} ranks \
                     (one rank per node)",
                    path.display(),
                    scenario.node_count(),
                    job.size()
                );
            }
            let length = scenario_length(&sim);
            let scale = args
                .time_scale
                .unwrap_or_else(|| default_time_scale(&scenario, length, args.target_seconds));
            check(&scenario, usize::MAX, scale, length)
                .map_err(|e| anyhow!("{}: {e}", path.display()))?;
            // On MPI the ranks may be on several machines: auto means the share of this one.
            let work = work.unwrap_or_else(|| Work::auto(scenario.node_count()));
            let cfg = RealConfig::new(scale, work).timeout(Duration::from_secs_f64(args.timeout));
            Ok((scenario, sim, cfg))
        })());
        let label = path.display().to_string();
        let real = run_mpi_job(&job, &label, &scenario, &cfg, calibration);
        if let Some(real) = real {
            outcomes.push(compare(
                &label,
                &scenario,
                &real,
                args.compare.then_some(&sim),
            ));
        }
    }
    if job.rank() == 0 {
        present(args, &outcomes)?;
    }
    Ok(())
}
