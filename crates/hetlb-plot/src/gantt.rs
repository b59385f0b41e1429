//! Gantt charts.

use crate::legend::{Entry, Legend, Swatch};
use crate::palette::palette;
use crate::scale::Scale;
use crate::{DrawResult, PlotError, render};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One bar of a Gantt chart: row `row` is busy from `start` for `len` time units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bar {
    /// Row index into the chart's row labels.
    pub row: usize,
    /// Start time.
    pub start: f64,
    /// Duration.
    pub len: f64,
    /// Colour index (bars of the same index share a colour).
    pub color: usize,
}

/// Rows labelled up to this many; beyond, the chart shows only their activity.
const LABELLED_ROWS: usize = 48;

/// A Gantt chart of `bars` over `rows` (labelled when there are at most 48), with a key
/// naming each colour index used (`keys`: colour index and its meaning) in a strip above the
/// rows, written to `path` (`.svg` or `.png`).
///
/// # Errors
/// [`PlotError::Extension`] for another extension, [`PlotError::Write`] when the file cannot
/// be drawn or written.
///
/// # Example
/// ```
/// use hetlb_plot::{Bar, gantt};
/// let path = std::env::temp_dir().join(format!("hetlb-gantt-doc-{}.svg", std::process::id()));
/// let bars = [Bar { row: 0, start: 0.0, len: 3.0, color: 0 }, Bar { row: 1, start: 3.0, len: 1.0, color: 1 }];
/// let keys = [(0, "phase 1".to_string()), (1, "phase 2".to_string())];
/// gantt(&path, "Links", "step", &["0 → 1".into(), "2 → 3".into()], &bars, &keys).unwrap();
/// # std::fs::remove_file(&path).ok();
/// ```
pub fn gantt(
    path: &Path,
    title: &str,
    x_label: &str,
    rows: &[String],
    bars: &[Bar],
    keys: &[(usize, String)],
) -> Result<(), PlotError> {
    render!(path, |root| draw_gantt(
        &root, title, x_label, rows, bars, keys
    ))
}

fn draw_gantt<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    rows: &[String],
    bars: &[Bar],
    keys: &[(usize, String)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let end = bars.iter().map(|b| b.start + b.len).fold(1.0, f64::max);
    let n = rows.len().max(1);
    let labels = rows.to_vec();
    let y_labels = if rows.len() <= LABELLED_ROWS { 80 } else { 24 };
    // The key sits in a strip of its own above the rows.
    let entries: Vec<Entry> = keys
        .iter()
        .map(|(i, label)| Entry::new(label.clone(), Swatch::Block(palette(*i))))
        .collect();
    let below = root
        .margin(10, 16, 16, 48)
        .titled(title, ("sans-serif", 22))?;
    let legend = Legend::new(&below, &entries, 13, y_labels)?;
    let (strip, body) = below.split_vertically(legend.height());
    legend.draw(&strip, y_labels)?;
    let mut chart = ChartBuilder::on(&body)
        .margin_top(12)
        .x_label_area_size(48)
        .y_label_area_size(y_labels)
        .build_cartesian_2d(0f64..end, -0.5f64..n as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(if rows.len() <= LABELLED_ROWS {
            4 * n + 8
        } else {
            0
        })
        .y_label_formatter(&move |y| {
            let i = y.round();
            if (y - i).abs() < 0.01 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .x_label_formatter(&|x| Scale::Integer.label(*x))
        .x_desc(x_label)
        .label_style(("sans-serif", 12))
        .draw()?;
    chart.draw_series(bars.iter().map(|b| {
        let color = palette(b.color);
        Rectangle::new(
            [
                (b.start, b.row as f64 - 0.35),
                (b.start + b.len, b.row as f64 + 0.35),
            ],
            color.filled(),
        )
    }))?;
    root.present()?;
    Ok(())
}
