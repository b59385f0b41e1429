//! `hetlb reproduce rim-overhead`: the cost of moving the units (Rim, Jang & Kim 2003, §5.2,
//! §6.3; Figs. 12–13 and 22–23), from [`hetlb_experiments::overhead`].

use crate::output::{Format, print_report};
use crate::plot::{Series, line_chart};
use crate::progress::bar;
use anyhow::{Result, anyhow};
use hetlb_core::Algorithm;
use hetlb_experiments::overhead::{ALGORITHMS, FACTORS, Overhead, OverheadError, OverheadRow, row};
use hetlb_experiments::tables;
use std::path::{Path, PathBuf};

/// Arguments of `hetlb reproduce rim-overhead`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Processors (comma-separated powers of two).
    #[arg(long, num_args = 1.., value_delimiter = ',', default_value = "8,16", value_parser = crate::input::whole::<usize>(1, 1 << 16))]
    procs: Vec<usize>,
    /// Imbalance percentages: the share of processors holding k times more load.
    #[arg(
        long,
        num_args = 1..,
        value_delimiter = ',',
        default_value = "10,20,30,40,50,60,70,80,90"
    )]
    imbalance: Vec<u32>,
    /// Random choices of the heavy processors per (imbalance, k).
    #[arg(long = "runs", visible_alias = "repetitions", value_name = "N", default_value = "50", value_parser = crate::input::whole::<u64>(1, 100_000_000))]
    repetitions: u64,
    /// Units held by a light processor; heavy ones hold k times as many.
    #[arg(long, default_value = "10", value_parser = crate::input::whole::<u64>(1, 1 << 40))]
    base: u64,
    /// Seed of the random choice of heavy processors.
    #[arg(long, default_value = "1", value_parser = crate::input::whole::<u64>(0, u64::MAX))]
    seed: u64,
    #[command(flatten)]
    plots: super::PlotOptions,
    /// Image format of the plots: svg or png.
    #[arg(long, value_parser = ["svg", "png"], default_value = "svg")]
    plot_format: String,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb reproduce rim-overhead`.
pub fn run(mut args: Args) -> Result<()> {
    args.procs = crate::input::unique(args.procs, "--procs");
    args.imbalance = crate::input::unique(args.imbalance, "--imbalance");
    let mut rows: Vec<OverheadRow> = Vec::new();
    if let Some(bad) = args.procs.iter().find(|&&p| p == 0 || !p.is_power_of_two()) {
        anyhow::bail!("--procs: {bad} is not a power of two (1, 2, 4, …)");
    }
    let settings = Overhead::new(1)
        .imbalances(args.imbalance.clone())
        .factors(FACTORS.to_vec())
        .base(args.base)
        .repetitions(args.repetitions)
        .seed(args.seed);
    for &procs in &args.procs {
        let mut exp = settings.clone();
        exp.procs = procs;
        let total = (args.imbalance.len() * FACTORS.len()) as u64 * args.repetitions;
        let progress = bar(total, format!("transmission, {procs} processors"));
        let result = exp.run(&|done| progress.inc(done)).map_err(|e| {
            let field = match e {
                OverheadError::Procs(_) => "--procs",
                OverheadError::Imbalance(_) => "--imbalance",
                OverheadError::Repetitions => "--runs",
                _ => "--base",
            };
            anyhow!("{field}: {e}")
        })?;
        progress.finish_and_clear();
        rows.extend(result);
    }
    let plots = match args.plots.dir("rim-overhead")? {
        None => Vec::new(),
        Some(dir) => write_plots(&dir, &args, &rows)?,
    };
    crate::plot::notice(&plots);
    print_report(
        args.format,
        &rows,
        || tables::overhead::csv(&rows),
        || tables::overhead::text(&settings, &args.procs, &rows),
    )
}

fn write_plots(dir: &Path, args: &Args, rows: &[OverheadRow]) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for &procs in &args.procs {
        for alg in ALGORITHMS {
            let pick = |f: fn(&OverheadRow) -> f64| -> Vec<(f64, f64)> {
                args.imbalance
                    .iter()
                    .filter_map(|&i| row(rows, procs, i, alg).map(|r| (f64::from(i), f(r))))
                    .collect()
            };
            let series = [
                Series {
                    label: format!("{alg} (phased)"),
                    points: pick(|_| 1.0),
                },
                Series {
                    label: "overlapping".into(),
                    points: pick(|r| r.overlap_normalised),
                },
                Series {
                    label: "overlapping + pipelining".into(),
                    points: pick(|r| r.pipeline_normalised),
                },
            ];
            let path = dir.join(format!("rim-overhead-{procs}-{alg}.{}", args.plot_format));
            line_chart(
                &path,
                &format!("{alg}, {procs} processors: transmission time normalised by phased"),
                "imbalance (% of processors with k times more load)",
                "normalised transmission time",
                &series,
            )?;
            written.push(path);
        }
        let series: Vec<Series> = [Algorithm::Cwa, Algorithm::Oem]
            .into_iter()
            .map(|alg| Series {
                label: format!("{alg}"),
                points: args
                    .imbalance
                    .iter()
                    .filter_map(|&i| row(rows, procs, i, alg).map(|r| (f64::from(i), r.phased)))
                    .collect(),
            })
            .collect();
        let path = dir.join(format!(
            "rim-overhead-{procs}-sum-tmax.{}",
            args.plot_format
        ));
        line_chart(
            &path,
            &format!("Σ Tmax of CWA and OEM, {procs} processors"),
            "imbalance (% of processors with k times more load)",
            "mean Σ Tmax (T_comm)",
            &series,
        )?;
        written.push(path);
    }
    Ok(written)
}
