//! What `hetlb reproduce efp` prints and draws.

use crate::output::{Format, print_report};
use crate::plot::{Axes, Series, line_chart, line_chart_with};
use anyhow::{Context, Result};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_experiments::efp::{EfpReport as Report, Point};
use hetlb_experiments::tables;
use std::path::{Path, PathBuf};

/// Prints the report in `format`.
pub(super) fn print(format: Format, report: &Report) -> Result<()> {
    print_report(
        format,
        report,
        || tables::efp::csv(report),
        || tables::efp::text(report),
    )
}

/// Draws Fig. 3, Figs. 9–11 and, per order, the EFP run's rows and times per processor (as
/// the paper's Figs. 4–8).
pub(super) fn plots(dir: &Path, report: &Report) -> Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    let series = |points: &[Point], x: fn(&Point) -> f64, y: &dyn Fn(&Point) -> Option<f64>| {
        [Policy::StaticEqual, Policy::Efp]
            .iter()
            .map(|&policy| Series {
                label: if policy == Policy::Efp {
                    "EFP".into()
                } else {
                    "static".into()
                },
                points: points
                    .iter()
                    .filter(|p| p.policy == policy)
                    .filter_map(|p| y(p).map(|v| (x(p), v)))
                    .collect(),
            })
            .collect::<Vec<_>>()
    };
    let tables: Vec<Point> = report
        .tables
        .iter()
        .filter(|p| p.procs == report.procs)
        .cloned()
        .collect();
    let path = dir.join("fig3-time-vs-order.svg");
    line_chart(
        &path,
        &format!(
            "Fig. 3 — time against the matrix order, {} processors, slow ×{}, median of {} runs",
            report.procs, report.slow_factor, report.runs
        ),
        "matrix order",
        "seconds",
        &series(&tables, |p| p.size as f64, &|p| Some(p.makespan)),
    )
    .context("--out-dir")?;
    written.push(path);
    let one = |p: &Point| report.reference(p).map(|(one, _)| one);
    let sweep = &report.sweep_points;
    for (file, title, label, y) in [
        (
            "fig9-time-vs-procs.svg",
            "Fig. 9 — time against the number of processors",
            "seconds",
            Box::new(|p: &Point| Some(p.makespan)) as Box<dyn Fn(&Point) -> Option<f64>>,
        ),
        (
            "fig10-efficiency-vs-procs.svg",
            "Fig. 10 — efficiency (speedup ÷ P)",
            "efficiency",
            Box::new(move |p: &Point| one(p).map(|o| o / p.makespan / p.procs as f64)),
        ),
        (
            "fig11-speedup-vs-procs.svg",
            "Fig. 11 — speedup against one processor",
            "speedup",
            Box::new(move |p: &Point| one(p).map(|o| o / p.makespan)),
        ),
    ] {
        let path = dir.join(file);
        line_chart_with(
            &path,
            &format!(
                "{title}, {n}×{n}, slow ×{}, median of {} runs",
                report.slow_factor,
                report.runs,
                n = report.sweep_size
            ),
            &Axes::new("processors", label).integer_x(),
            &series(sweep, |p| p.procs as f64, &*y),
        )
        .context("--out-dir")?;
        written.push(path);
    }
    for p in tables.iter().filter(|p| p.policy == Policy::Efp) {
        let path = dir.join(format!("efp-{}.svg", p.size));
        crate::plot::processor_bars(
            &path,
            &format!(
                "EFP — {n}×{n} on {} processors, slow ×{}",
                p.procs,
                report.slow_factor,
                n = p.size
            ),
            "rows",
            &p.processors,
        )
        .context("--out-dir")?;
        written.push(path);
    }
    Ok(written)
}
