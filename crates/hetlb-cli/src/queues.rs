//! The plot of a simulation's queue lengths over time, drawn by `hetlb simulate --plot` and by
//! `hetlb reproduce mirtaheri`.

use crate::plot::{Series, line_chart};
use anyhow::Result;
use hetlb_sim::Report;
use std::path::Path;

/// `(time, count)` samples as a step line.
fn steps(points: &[(f64, u64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(points.len() * 2);
    for (i, &(t, len)) in points.iter().enumerate() {
        if i > 0 {
            out.push((t, points[i - 1].1 as f64));
        }
        out.push((t, len as f64));
    }
    out
}

/// Every node's queue length over time as step lines, labelled by `label(node)`, and the
/// tasks on links (which no queue counts while they travel) when any moved.
pub fn queue_series(report: &Report, label: impl Fn(usize) -> String) -> Vec<Series> {
    let mut series: Vec<Series> = report
        .series
        .iter()
        .enumerate()
        .map(|(node, points)| Series {
            label: label(node),
            points: steps(points),
        })
        .collect();
    if report.transit_series.iter().any(|&(_, n)| n > 0) {
        series.push(Series {
            label: "in-transit tasks (on links)".into(),
            points: steps(&report.transit_series),
        });
    }
    series
}

/// Plots [`queue_series`] to `path`.
pub fn plot_queues(
    path: &Path,
    title: &str,
    report: &Report,
    label: impl Fn(usize) -> String,
) -> Result<()> {
    line_chart(
        path,
        title,
        "time (s)",
        "tasks at the node",
        &queue_series(report, label),
    )
}
