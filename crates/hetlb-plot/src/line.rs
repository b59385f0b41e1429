//! Line charts.

use crate::legend::{Entry, Legend, Swatch};
use crate::palette::series_colors;
use crate::scale::{Axes, Scale};
use crate::{DrawResult, PlotError, render};
use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::path::Path;

/// One line of a line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend text. A label that starts with the name of an algorithm or policy (`dishet`,
    /// `oem (phased)`, `EFP`, …) is drawn in that algorithm's colour, the same in every chart.
    pub label: String,
    /// `(x, y)` points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A line labelled `label` through `points`.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            points,
        }
    }
}

/// The most points a line is drawn with: longer series are sampled down (one point per pixel
/// column is all a chart can show).
pub const MAX_POINTS: usize = 1200;

/// Room above the highest value, as a fraction of the value range: enough for a marker drawn
/// on it, little enough that the data fill the chart.
const HEADROOM: f64 = 0.05;

/// Width of the y axis's labels and description, pixels.
const Y_LABELS: u32 = 84;

/// The grey of vertical marks.
const MARK_GREY: RGBColor = RGBColor(150, 150, 150);

/// A line chart of `series` written to `path` (`.svg` or `.png`), linear axes.
///
/// # Errors
/// [`PlotError::Extension`] for another extension, [`PlotError::Write`] when the file cannot
/// be drawn or written.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<(), PlotError> {
    line_chart_with(path, title, &Axes::new(x_label, y_label), series)
}

/// A line chart of `series` with the given axes, written to `path` (`.svg` or `.png`).
///
/// Series with exactly the same points are drawn once, their labels joined with ` = ` (four
/// nodes whose queues never differ are one line, named as four); series longer than
/// [`MAX_POINTS`] are sampled down (every k-th point, the last kept); points a logarithmic
/// axis cannot show are left out. The legend sits in a strip of its own between the title and
/// the plot area, outside the data; the value axis spans the data (from 0 on a linear axis)
/// and a little headroom.
///
/// # Complexity
/// `O(S² + P)` for `S` series of `P` points in all (identical series are found pairwise).
///
/// # Errors
/// [`PlotError::Extension`] for another extension, [`PlotError::Write`] when the file cannot
/// be drawn or written.
///
/// # Example
/// ```
/// use hetlb_plot::{Axes, Series, line_chart_with};
/// let path = std::env::temp_dir().join(format!("hetlb-line-doc-{}.png", std::process::id()));
/// let cubes = Series::new("oem", (1..=6).map(|n| (f64::from(1 << n), f64::from(n))).collect());
/// line_chart_with(&path, "Phases", &Axes::new("processors", "phases").log2_x(), &[cubes])
///     .unwrap();
/// # std::fs::remove_file(&path).ok();
/// ```
pub fn line_chart_with(
    path: &Path,
    title: &str,
    axes: &Axes,
    series: &[Series],
) -> Result<(), PlotError> {
    let shown: Vec<Series> = merge_identical(series)
        .iter()
        .map(|s| Series {
            label: s.label.clone(),
            points: sample(&s.points)
                .into_iter()
                .filter_map(|(x, y)| Some((axes.x.forward(x)?, axes.y.forward(y)?)))
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect(),
        })
        .collect();
    render!(path, |root| draw_lines(&root, title, axes, &shown))
}

/// Series with exactly the same points drawn once, their labels joined with ` = `.
fn merge_identical(series: &[Series]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::with_capacity(series.len());
    for s in series {
        match out
            .iter_mut()
            .find(|o| o.points == s.points && !s.points.is_empty())
        {
            Some(o) if !s.label.is_empty() => o.label = format!("{} = {}", o.label, s.label),
            Some(_) => {}
            None => out.push(s.clone()),
        }
    }
    out
}

/// At most [`MAX_POINTS`] of `points`: every k-th, and the last.
fn sample(points: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let stride = points.len().div_ceil(MAX_POINTS).max(1);
    let mut out: Vec<(f64, f64)> = points.iter().step_by(stride).copied().collect();
    if stride > 1
        && let Some(&last) = points.last()
    {
        out.push(last);
    }
    out
}

/// The chart of a line chart: `f64` on both axes.
type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    axes: &Axes,
    series: &[Series],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (x0, x1, _, y1) = bounds(axes, series);
    let (y0, top) = y_range(axes, series);
    let labels: Vec<&str> = series.iter().map(|s| s.label.as_str()).collect();
    let colors = series_colors(&labels);
    let mut entries = Vec::new();
    if !axes.marks_label.is_empty() && axes.marks.iter().any(|&m| axes.x.forward(m).is_some()) {
        entries.push(Entry::new(
            axes.marks_label.clone(),
            Swatch::Dashed(MARK_GREY),
        ));
    }
    entries.extend(
        series
            .iter()
            .zip(&colors)
            .filter(|(s, _)| !s.label.is_empty())
            .map(|(s, &c)| Entry::new(s.label.clone(), Swatch::Line(c))),
    );
    let area = root.margin(10, 16, 16, 48);
    let below = area.titled(title, ("sans-serif", caption_size(title)))?;
    let legend = Legend::new(&below, &entries, 14, Y_LABELS)?;
    let (strip, body) = below.split_vertically(legend.height());
    legend.draw(&strip, Y_LABELS)?;
    let mut chart = ChartBuilder::on(&body)
        .margin_top(12)
        .x_label_area_size(48)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x0..x1, y0..top)?;
    let (xs, ys) = (axes.x, axes.y);
    let x_format = move |v: &f64| xs.label(*v);
    let y_format = move |v: &f64| ys.label(*v);
    let x_ticks = match axes.x {
        Scale::Linear => 10,
        _ => ((x1 - x0).round() as usize + 1).clamp(2, 16),
    };
    let y_ticks = match axes.y {
        Scale::Log10 => ((top - y0).ceil() as usize + 1).clamp(2, 12),
        _ => 10,
    };
    chart
        .configure_mesh()
        .x_desc(axes.x_label.as_str())
        .y_desc(axes.y_label.as_str())
        .x_labels(x_ticks)
        .y_labels(y_ticks)
        .x_label_formatter(&x_format)
        .y_label_formatter(&y_format)
        .label_style(("sans-serif", 14))
        .draw()?;
    draw_marks(&mut chart, axes, (y0, y1))?;
    draw_series(&mut chart, series, &colors)?;
    root.present()?;
    Ok(())
}

/// The value axis's range for `series` drawn on `axes` (in the axis's coordinate: logarithms
/// on a logarithmic axis): the data's, from 0 on a linear axis, and [`HEADROOM`] above the
/// highest value, never more than 1.25 times the data's range.
pub(crate) fn y_range(axes: &Axes, series: &[Series]) -> (f64, f64) {
    let (_, _, y0, y1) = bounds(axes, series);
    (y0, y1 + (y1 - y0) * HEADROOM)
}

/// `(x0, x1, y0, y1)`: the data and the marks, linear value axes from 0 (a reader compares
/// heights), log axes from the data; never an empty range.
fn bounds(axes: &Axes, series: &[Series]) -> (f64, f64, f64, f64) {
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    for &m in &axes.marks {
        if let Some(m) = axes.x.forward(m) {
            x0 = x0.min(m);
            x1 = x1.max(m);
        }
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 0.0, 1.0);
    }
    if axes.y != Scale::Log10 {
        y0 = y0.min(0.0);
    }
    if x1 <= x0 {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    (x0, x1, y0, y1)
}

/// The caption's font size: smaller for longer titles.
fn caption_size(title: &str) -> u32 {
    match title.chars().count() {
        n if n > 110 => 13,
        n if n > 90 => 16,
        n if n > 70 => 19,
        _ => 22,
    }
}

/// The axis' marks as dashed vertical lines from `y0` to `y1`.
fn draw_marks<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    axes: &Axes,
    (y0, y1): (f64, f64),
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    for &m in &axes.marks {
        let Some(m) = axes.x.forward(m) else { continue };
        chart.draw_series(DashedLineSeries::new(
            [(m, y0), (m, y1)],
            4,
            4,
            MARK_GREY.stroke_width(1),
        ))?;
    }
    Ok(())
}

/// Every series as a line in its colour (`colors`, one per series), with markers when it has
/// few points.
fn draw_series<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    series: &[Series],
    colors: &[RGBColor],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let n = series.len();
    for (i, (s, &color)) in series.iter().zip(colors).enumerate() {
        // Lines drawn first are wider, so a line hidden under a later one still shows as
        // its border (queues of nodes that stay equal, policies that coincide).
        let width = if n <= 8 {
            2 + (n - 1 - i).min(4) as u32
        } else {
            2
        };
        chart.draw_series(LineSeries::new(
            s.points.iter().copied(),
            color.stroke_width(width),
        ))?;
        if s.points.len() <= 40 {
            let style = color.filled();
            match i % 3 {
                0 => {
                    chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 4, style)))?;
                }
                1 => {
                    chart
                        .draw_series(s.points.iter().map(|&p| TriangleMarker::new(p, 5, style)))?;
                }
                _ => {
                    chart.draw_series(s.points.iter().map(|&p| Cross::new(p, 4, style)))?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_lines_are_drawn_once_and_named_together() {
        let a = Series::new("node 0", vec![(0.0, 1.0), (1.0, 0.0)]);
        let b = Series {
            label: "node 1".into(),
            ..a.clone()
        };
        let c = Series::new("node 2", vec![(0.0, 2.0)]);
        let merged = merge_identical(&[a, b, c]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].label, "node 0 = node 1");
    }

    #[test]
    fn long_series_are_sampled_and_keep_their_last_point() {
        let points: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, i as f64)).collect();
        let s = sample(&points);
        assert!(s.len() <= MAX_POINTS + 1);
        assert_eq!(s.last(), points.last());
        assert_eq!(sample(&points[..10]).len(), 10);
    }

    /// The value axis spans the data: a ring of 16 nodes balanced from 800 units on one node
    /// is drawn up to at most 1000 (it was stretched to 2000 to make room for the legend).
    #[test]
    fn the_value_axis_spans_the_data() {
        let series: Vec<Series> = (0..16)
            .map(|i| {
                let y = |r: f64| {
                    if i == 0 {
                        50.0 + 750.0 * (-r).exp()
                    } else {
                        50.0
                    }
                };
                Series::new(
                    format!("node {i}"),
                    (0..46).map(|r| (f64::from(r), y(f64::from(r)))).collect(),
                )
            })
            .collect();
        let axes = Axes::new("round", "load").integer_x();
        let (y0, top) = y_range(&axes, &series);
        assert_eq!(y0, 0.0, "a linear value axis starts at 0");
        assert!(
            (800.0..=1000.0).contains(&top),
            "axis top {top} for data up to 800"
        );
        let marked = axes.marks(vec![10.0, 20.0], "rebalance");
        assert_eq!(y_range(&marked, &series), (y0, top), "marks add no height");
        // On a logarithmic axis the range is in decades: 1 to 1000 is 0 to 3.
        let log = [Series::new("a", vec![(0.0, 0.0), (1.0, 3.0)])];
        let (l0, l1) = y_range(&Axes::new("x", "y").log10_y(), &log);
        assert!(l0 == 0.0 && (3.0..=3.75).contains(&l1), "{l0}..{l1}");
    }
}
