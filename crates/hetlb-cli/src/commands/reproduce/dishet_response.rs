//! `hetlb reproduce dishet-response`: throughput and average response time of DISHET against
//! its baselines while tasks execute (Neelakantan 2012, §5), from
//! [`hetlb_experiments::dishet::response`] (which describes the model).

use super::dishet_error;
use crate::input::real;
use crate::limits;
use crate::output::{Format, print_report};
use crate::plot::{Series, line_chart};
use crate::progress;
use anyhow::{Context, Result, bail};
use hetlb_core::algorithm::Algorithm;
use hetlb_experiments::dishet::response::{
    Cell, MAX_TOTAL, MAX_TOTAL_WHY, Policy, Response, ResponseReport,
};
use hetlb_experiments::tables;
use hetlb_sim::model::Distribution as Service;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce dishet-response`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb reproduce dishet-response\n  \
    hetlb reproduce dishet-response --sizes 8,16 --runs 5 --interval 0.5\n  \
    hetlb reproduce dishet-response --link-rate inf --link-delay 0 --format csv > response.csv")]
pub struct Args {
    #[command(flatten)]
    grid: super::DishetGrid,
    /// Policies compared: none and any of dishet, dishet-tight, random-biasing,
    /// dynamic-biasing, diffusion, gdem.
    #[arg(
        long,
        default_value = "none,dishet,dishet-tight,random-biasing,dynamic-biasing,diffusion,gdem",
        value_name = "P,…"
    )]
    algorithms: String,
    /// Tasks per second a node executes per unit of capacity.
    #[arg(long, default_value = "1", value_name = "TASKS/S", value_parser = real(1e-6, 1e9, false))]
    rate: f64,
    /// Seconds between balancing rounds (the first at 0).
    #[arg(long, default_value = "1", value_name = "SECONDS", value_parser = real(1e-6, 1e9, false))]
    interval: f64,
    /// Tasks per second a link carries (`inf`: instant).
    #[arg(long, default_value = "50", value_name = "TASKS/S", value_parser = link_rate)]
    link_rate: f64,
    /// Seconds a batch spends on a link after its transfer.
    #[arg(long, default_value = "0.1", value_name = "SECONDS", value_parser = real(0.0, 1e9, false))]
    link_delay: f64,
    /// Task execution times: deterministic or exponential (Poisson completions).
    #[arg(long, default_value = "deterministic")]
    service: String,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format. JSON and CSV give every cell (size, total, distribution, policy).
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

fn link_rate(s: &str) -> Result<f64, String> {
    if s.trim() == "inf" {
        return Ok(f64::INFINITY);
    }
    real(1e-6, 1e15, false)(s)
}

/// The experiment, checked before anything runs.
fn setup(args: &Args) -> Result<Response> {
    let config = args.grid.config(
        Algorithm::DIFFUSION.to_vec(),
        hetlb_core::rounds::DEFAULT_MAX_ROUNDS,
        MAX_TOTAL,
        MAX_TOTAL_WHY,
    )?;
    let policies = args
        .algorithms
        .split([',', ' '])
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse::<Policy>().context("--algorithms"))
        .collect::<Result<Vec<_>>>()?;
    if policies.is_empty() {
        bail!("--algorithms: give at least one policy");
    }
    let service = match args.service.as_str() {
        "deterministic" => Service::Deterministic,
        "exponential" => Service::Exponential,
        other => bail!("--service: '{other}' is not deterministic or exponential"),
    };
    let experiment = Response::new(config, policies)
        .rate(args.rate)
        .interval(args.interval)
        .link_rate(args.link_rate)
        .link_delay(args.link_delay)
        .service(service);
    let max_total = experiment.grid.totals.iter().copied().max().unwrap_or(0);
    // Every task is a queue entry (with its entry time) in every run of every thread.
    let threads = rayon::current_num_threads();
    limits::check(
        "--totals",
        &format!("simulating {max_total} tasks on each of {threads} threads"),
        experiment.memory_estimate(threads),
    )?;
    experiment.check().map_err(dishet_error)?;
    Ok(experiment)
}

/// Runs `hetlb reproduce dishet-response`.
pub fn run_command(args: Args) -> Result<()> {
    let experiment = setup(&args)?;
    let bar = progress::bar(experiment.grid.trial_count(), "dishet-response runs");
    let report = experiment.run(&|| bar.inc(1)).map_err(dishet_error)?;
    bar.finish_and_clear();
    if let Some(dir) = args.plots.dir("dishet-response")? {
        let written = write_plots(&dir, &args, &report).context("--out-dir")?;
        crate::plot::notice(&written);
    }
    print_report(
        args.format,
        &report,
        || tables::dishet_response::csv(&report),
        || tables::dishet_response::text(&report),
    )
}

fn write_plots(dir: &Path, args: &Args, s: &ResponseReport) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for &d in &s.setup.distributions {
        for (what, label, f) in [
            (
                "response",
                "average response time (s)",
                (|x: &Cell| x.response_time) as fn(&Cell) -> f64,
            ),
            ("throughput", "throughput (tasks/s)", |x: &Cell| {
                x.throughput
            }),
        ] {
            let series: Vec<Series> = s
                .policies
                .iter()
                .map(|&p| Series {
                    label: p.name().to_string(),
                    points: s
                        .setup
                        .totals
                        .iter()
                        .map(|&w| {
                            let m = s.mean(
                                |x| x.distribution == d && x.total == w && x.policy == p.name(),
                                f,
                            );
                            (w as f64, m)
                        })
                        .collect(),
                })
                .collect();
            // The balancing rules often lie within a fraction of a percent of each other:
            // beside the absolute chart, one of each rule against dishet shows them apart.
            if s.policies.contains(&Policy::Rule(Algorithm::Dishet)) {
                let base = series
                    .iter()
                    .find(|x| x.label == "dishet")
                    .map(|x| x.points.clone())
                    .unwrap_or_default();
                let relative: Vec<Series> = series
                    .iter()
                    .filter(|x| x.label != "dishet" && x.label != "none")
                    .map(|x| Series {
                        label: x.label.clone(),
                        points: x
                            .points
                            .iter()
                            .zip(&base)
                            .filter(|(_, b)| b.1 != 0.0)
                            .map(|(p, b)| (p.0, 100.0 * (p.1 - b.1) / b.1))
                            .collect(),
                    })
                    .collect();
                if !relative.is_empty() {
                    let path = dir.join(format!("{what}-{}-vs-dishet.svg", d.name()));
                    line_chart(
                        &path,
                        &format!(
                            "{} — {label} against dishet's: a round every {} s, seed {}",
                            d.describe(),
                            args.interval,
                            s.setup.base_seed
                        ),
                        "total load (tasks)",
                        "difference from dishet (%)",
                        &relative,
                    )?;
                    written.push(path);
                }
            }
            let path = dir.join(format!("{what}-{}.svg", d.name()));
            line_chart(
                &path,
                &format!(
                    "{} — {label}: a round every {} s, links {} tasks/s, {} s; seed {}",
                    d.describe(),
                    args.interval,
                    args.link_rate,
                    args.link_delay,
                    s.setup.base_seed
                ),
                "total load (tasks)",
                label,
                &series,
            )?;
            written.push(path);
        }
    }
    Ok(written)
}
