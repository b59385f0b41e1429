//! Stacked bar charts.

use crate::legend::{Entry, Legend, Swatch};
use crate::palette::palette;
use crate::scale::Scale;
use crate::{DrawResult, PlotError, render};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;

/// One layer of a stacked bar chart: a value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct Stack {
    /// Legend text.
    pub label: String,
    /// One value per category (missing or non-finite values count as 0).
    pub values: Vec<f64>,
}

impl Stack {
    /// A layer labelled `label` with one value per category.
    pub fn new(label: impl Into<String>, values: Vec<f64>) -> Self {
        Self {
            label: label.into(),
            values,
        }
    }
}

/// A stacked bar chart, one bar per category, written to `path` (`.svg` or `.png`).
///
/// # Errors
/// [`PlotError::Extension`] for another extension, [`PlotError::Write`] when the file cannot
/// be drawn or written.
///
/// # Example
/// ```
/// use hetlb_plot::{Stack, stacked_bars};
/// let path = std::env::temp_dir().join(format!("hetlb-bars-doc-{}.svg", std::process::id()));
/// let cats = vec!["P0".to_string(), "P1".to_string()];
/// let stacks = [Stack::new("T_comp", vec![1.0, 2.5]), Stack::new("T_wait", vec![0.5, 0.0])];
/// stacked_bars(&path, "Time per processor", &cats, "seconds", &stacks).unwrap();
/// # std::fs::remove_file(&path).ok();
/// ```
pub fn stacked_bars(
    path: &Path,
    title: &str,
    categories: &[String],
    y_label: &str,
    stacks: &[Stack],
) -> Result<(), PlotError> {
    render!(path, |root| draw_panels(
        &root,
        title,
        categories,
        &[(y_label, stacks)]
    ))
}

/// Several stacked bar charts side by side over the same categories, in one file: one panel
/// per `(y_label, stacks)`.
///
/// # Errors
/// As [`stacked_bars`].
pub fn stacked_bar_panels(
    path: &Path,
    title: &str,
    categories: &[String],
    panels: &[(&str, &[Stack])],
) -> Result<(), PlotError> {
    render!(path, |root| draw_panels(&root, title, categories, panels))
}

/// Width of the y axis's labels and description, pixels.
const Y_LABELS: u32 = 72;

/// Room above the tallest bar, as a fraction of its height.
const HEADROOM: f64 = 0.05;

/// The panels side by side on `root`, presented once (an SVG presented after its first
/// panel would end there). Each panel has its caption, then its legend in a strip of its own
/// (as tall as the tallest of the panels', so that the plot areas line up), then its bars.
fn draw_panels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    categories: &[String],
    panels: &[(&str, &[Stack])],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let (areas, captions): (Vec<_>, Vec<&str>) = if panels.len() <= 1 {
        (vec![root.margin(0, 0, 0, 0)], vec![title])
    } else {
        // The figure's title once, across the panels (a title per panel overlapped its
        // neighbours' and was cut at the left); each panel is captioned by what it shows.
        let below = root.titled(title, ("sans-serif", 18))?;
        (
            below.split_evenly((1, panels.len())),
            panels.iter().map(|(y_label, _)| *y_label).collect(),
        )
    };
    let mut parts = Vec::with_capacity(panels.len());
    for ((area, caption), (_, stacks)) in areas.iter().zip(&captions).zip(panels) {
        let below = area
            .margin(10, 16, 16, 24)
            .titled(caption, ("sans-serif", 18))?;
        let entries: Vec<Entry> = stacks
            .iter()
            .enumerate()
            .map(|(i, s)| Entry::new(s.label.clone(), Swatch::Block(palette(i))))
            .collect();
        let legend = Legend::new(&below, &entries, 14, Y_LABELS)?;
        parts.push((below, legend));
    }
    let strip = parts.iter().map(|(_, l)| l.height()).max().unwrap_or(0);
    for ((below, legend), (y_label, stacks)) in parts.iter().zip(panels) {
        let (top, body) = below.split_vertically(strip);
        legend.draw(&top, Y_LABELS)?;
        draw_bars(&body, categories, y_label, stacks)?;
    }
    root.present()?;
    Ok(())
}

/// One stacked bar per category on `root` (which the caller fills and presents), the
/// categories labelled under their bars.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    categories: &[String],
    y_label: &str,
    stacks: &[Stack],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    let n = categories.len();
    let top = (0..n)
        .map(|c| {
            stacks
                .iter()
                .map(|s| s.values.get(c).copied().unwrap_or(0.0))
                .sum::<f64>()
        })
        .filter(|x| x.is_finite())
        .fold(0.0, f64::max)
        .max(f64::MIN_POSITIVE);
    let mut chart = ChartBuilder::on(root)
        .margin_top(12)
        .x_label_area_size(48)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(
            (0..n.saturating_sub(1)).into_segmented(),
            0f64..top * (1.0 + HEADROOM),
        )?;
    let labels = categories.to_vec();
    let whole = stacks
        .iter()
        .all(|s| s.values.iter().all(|v| v.fract() == 0.0));
    let scale = if whole { Scale::Integer } else { Scale::Linear };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_label_formatter(&move |v| scale.label(*v))
        .x_labels(n.max(1))
        .x_label_formatter(&move |x| match x {
            SegmentValue::CenterOf(i) => labels.get(*i).cloned().unwrap_or_default(),
            _ => String::new(),
        })
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()?;
    let mut base = vec![0.0; n];
    for (i, s) in stacks.iter().enumerate() {
        let color = palette(i);
        let rects: Vec<_> = (0..n)
            .map(|c| {
                let v = s
                    .values
                    .get(c)
                    .copied()
                    .filter(|v| v.is_finite())
                    .unwrap_or(0.0);
                let mut r = Rectangle::new(
                    [
                        (SegmentValue::Exact(c), base[c]),
                        (SegmentValue::Exact(c + 1), base[c] + v),
                    ],
                    color.filled(),
                );
                r.set_margin(0, 0, 6, 6);
                base[c] += v;
                r
            })
            .collect();
        chart.draw_series(rects)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Side-by-side panels share one title: drawn once across the figure, each panel
    /// captioned by its own label (a title per panel overlapped the next one's).
    #[test]
    fn panels_share_one_title() {
        let dir = std::env::temp_dir().join(format!("hetlb-bars-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let svg = dir.join("panels.svg");
        let rows = [Stack::new("rows", vec![10.0, 20.0])];
        let times = [
            Stack::new("T_comp", vec![1.0, 2.0]),
            Stack::new("T_wait", vec![0.5, 0.0]),
        ];
        let panels: [(&str, &[Stack]); 2] = [("rows", &rows), ("seconds", &times)];
        let title = "EFP — a long title of the run, 9 processors, slowdowns 1,3,3,3,3,3,3,3,3";
        stacked_bar_panels(&svg, title, &["p0".into(), "p1".into()], &panels).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert_eq!(text.matches("a long title of the run").count(), 1);
        // "seconds": the second panel's caption and its axis.
        assert_eq!(
            text.matches("\nseconds\n").count(),
            2,
            "each panel captioned"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
