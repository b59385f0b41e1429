//! `hetlb reproduce mirtaheri`: Mirtaheri & Grandinetti (2017) §5, from
//! [`hetlb_experiments::mirtaheri`]: the 6-node scenarios beside the paper's numbers, the
//! delayed sweep, eq. 25 on the paper's inputs and the neighbourhood comparison.

use crate::output::{Format, print_report};
use crate::plot::{Axes, Series, line_chart_with};
use anyhow::Result;
use hetlb_experiments::mirtaheri::{Mirtaheri, MirtaheriError, SWEEP_POLICIES, SweepRow};
use hetlb_experiments::tables;
use std::path::Path;

/// Arguments of `hetlb reproduce mirtaheri`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb reproduce mirtaheri\n  hetlb reproduce mirtaheri --runs 1000 --out-dir plots/\n  hetlb reproduce mirtaheri --ratios 0.25,0.5,1,2 --format json"
)]
pub struct Args {
    /// Runs with Poisson task completions per scenario (seeds SEED, SEED+1, …).
    #[arg(long, default_value = "100", value_parser = crate::input::whole::<u64>(1, 10_000_000))]
    runs: u64,
    /// First seed of the Poisson runs.
    #[arg(long, default_value = "1", value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Transfer rate / execution rate ratios of the delayed sweep.
    #[arg(long, num_args = 1.., value_delimiter = ',', default_values_t = vec![0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 10.0], value_parser = crate::input::real(0.0, 1e6, true))]
    ratios: Vec<f64>,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb reproduce mirtaheri`.
pub fn run(mut args: Args) -> Result<()> {
    args.ratios = crate::input::unique(args.ratios, "--ratios");
    let experiment = Mirtaheri::new()
        .runs(args.runs)
        .seed(args.seed)
        .ratios(args.ratios.clone());
    let progress = crate::progress::bar(experiment.steps(), "mirtaheri scenarios");
    let output = experiment.run(&|| progress.inc(1)).map_err(|e| {
        let field = match &e {
            MirtaheriError::NoRuns => "--runs",
            MirtaheriError::Ratio(_) => "--ratios",
            _ => return anyhow::Error::new(e),
        };
        anyhow::Error::new(e).context(field)
    })?;
    progress.finish_and_clear();

    let plot_dir = args.plots.dir("mirtaheri")?;
    if let Some(dir) = &plot_dir {
        for case in &output.cases {
            let path = dir.join(format!("mirtaheri-{}.svg", case.key));
            crate::queues::plot_queues(&path, case.title, &case.report, |i| {
                format!("node {} (paper {})", i, i + 1)
            })?;
        }
        plot_sweep(dir, &output.sweep)?;
    }
    if let Some(dir) = &plot_dir {
        crate::plot::notice_dir(dir);
    }
    print_report(
        args.format,
        &output,
        || tables::mirtaheri::csv(&output),
        || tables::mirtaheri::text(&output),
    )
}

fn plot_sweep(dir: &Path, rows: &[SweepRow]) -> Result<()> {
    let series = |value: fn(&SweepRow) -> f64| -> Vec<Series> {
        SWEEP_POLICIES
            .iter()
            .map(|p| Series {
                label: p.to_string(),
                points: rows
                    .iter()
                    .filter(|r| r.policy == *p)
                    .map(|r| (r.ratio, value(r)))
                    .collect(),
            })
            .collect()
    };
    line_chart_with(
        &dir.join("mirtaheri-sweep-makespan.svg"),
        "Delayed scenario: finish time against the transfer/execution rate ratio",
        &Axes::new("transfer rate ÷ execution rate", "finish time (s)").log2_x(),
        &series(|r| r.makespan),
    )?;
    line_chart_with(
        &dir.join("mirtaheri-sweep-idle.svg"),
        "Delayed scenario: total idle time against the transfer/execution rate ratio",
        &Axes::new("transfer rate ÷ execution rate", "total idle (s)").log2_x(),
        &series(|r| r.total_idle),
    )
}
