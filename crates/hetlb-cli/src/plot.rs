//! Charts written with plotters: SVG or PNG, chosen by the file extension.
//!
//! plotters is built without its system-font support, so the DejaVu Sans font shipped in
//! `assets/` is registered as "sans-serif" before the first chart; the charts then look the
//! same on every machine.

use anyhow::{Context, Result, bail};
use plotters::coord::Shift;
use plotters::prelude::*;
use std::path::Path;
use std::sync::Once;

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in and known to be valid; a failure would only lose the text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// The one notice, on stderr, that names the plot files a command wrote.
pub fn notice(paths: &[std::path::PathBuf]) {
    match paths {
        [] => {}
        [one] => eprintln!("note: plot written to {}", one.display()),
        many => {
            let dirs: std::collections::BTreeSet<_> =
                many.iter().filter_map(|p| p.parent()).collect();
            match dirs.iter().next() {
                Some(dir) if dirs.len() == 1 && !dir.as_os_str().is_empty() => notice_dir(dir),
                _ => eprintln!(
                    "note: plots written to {}",
                    many.iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            }
        }
    }
}

/// The notice for a command that wrote its plots into `dir`.
pub fn notice_dir(dir: &std::path::Path) {
    eprintln!("note: plots written to {}/", dir.display());
}

/// One line of a line chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(x, y)` points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// Chart size in pixels.
const SIZE: (u32, u32) = (960, 600);

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// Draws on an SVG or PNG backend, chosen by the extension of `$path`.
macro_rules! render {
    ($path:expr, |$root:ident| $body:expr) => {{
        let path: &Path = $path;
        let drawn: DrawResult = match extension(path)? {
            "svg" => {
                let $root = SVGBackend::new(path, SIZE).into_drawing_area();
                $body
            }
            _ => {
                let $root = BitMapBackend::new(path, SIZE).into_drawing_area();
                $body
            }
        };
        drawn.map_err(|e| anyhow::anyhow!("{e}"))
    }};
}

/// A line chart of `series` written to `path` (`.svg` or `.png`).
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    register_font();
    render!(path, |root| draw_lines(
        &root, title, x_label, y_label, series
    ))
    .with_context(|| format!("cannot write plot '{}'", path.display()))
}

/// One layer of a stacked bar chart: a value per category.
#[derive(Debug, Clone)]
pub struct Stack {
    /// Legend text.
    pub label: String,
    /// One value per category.
    pub values: Vec<f64>,
}

/// A stacked bar chart, one bar per category, written to `path` (`.svg` or `.png`).
#[cfg_attr(not(test), allow(dead_code))] // the runtime's reports draw panels
pub fn stacked_bars(
    path: &Path,
    title: &str,
    categories: &[String],
    y_label: &str,
    stacks: &[Stack],
) -> Result<()> {
    register_font();
    render!(path, |root| draw_panels(
        &root,
        title,
        categories,
        &[(y_label, stacks)]
    ))
    .with_context(|| format!("cannot write plot '{}'", path.display()))
}

/// Several stacked bar charts side by side over the same categories, in one file: one panel
/// per `(y_label, stacks)`.
pub fn stacked_bar_panels(
    path: &Path,
    title: &str,
    categories: &[String],
    panels: &[(&str, &[Stack])],
) -> Result<()> {
    register_font();
    render!(path, |root| draw_panels(&root, title, categories, panels))
        .with_context(|| format!("cannot write plot '{}'", path.display()))
}

fn extension(path: &Path) -> Result<&'static str> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok("svg"),
        Some("png") => Ok("png"),
        _ => bail!("plot file '{}' must end in .svg or .png", path.display()),
    }
}

fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
    ];
    COLORS[i % COLORS.len()]
}

fn draw_lines<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let points = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, 0.0f64, f64::MIN);
    for &(x, y) in points {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    if x0 > x1 {
        (x0, x1, y1) = (0.0, 1.0, 1.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(x0..x1, y0..(y1 * 1.05))?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(y_label)
        .label_style(("sans-serif", 14))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let color = palette(i);
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(2),
            ))?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2))
            });
        if s.points.len() <= 40 {
            chart.draw_series(s.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    if series.iter().any(|s| !s.label.is_empty()) {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(emptiest_corner(series, (x0, x1), (y0, y1 * 1.05)))
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// One bar of a Gantt chart: row `row` is busy from `start` for `len` time units.
#[derive(Debug, Clone, Copy)]
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

/// A Gantt chart of `bars` over `rows` (labelled when there are few enough), written to `path`
/// (`.svg` or `.png`).
pub fn gantt(path: &Path, title: &str, x_label: &str, rows: &[String], bars: &[Bar]) -> Result<()> {
    register_font();
    render!(path, |root| draw_gantt(&root, title, x_label, rows, bars))
        .with_context(|| format!("cannot write plot '{}'", path.display()))
}

/// Rows labelled up to this many; beyond, the chart shows only their activity.
const LABELLED_ROWS: usize = 48;

fn draw_gantt<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    x_label: &str,
    rows: &[String],
    bars: &[Bar],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let end = bars.iter().map(|b| b.start + b.len).fold(1.0, f64::max);
    let n = rows.len().max(1);
    let labels = rows.to_vec();
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 24))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(if rows.len() <= LABELLED_ROWS { 80 } else { 24 })
        .build_cartesian_2d(0f64..end, -0.5f64..n as f64 - 0.5)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(if rows.len() <= LABELLED_ROWS { n } else { 0 })
        .y_label_formatter(&move |y| {
            let i = y.round();
            if (y - i).abs() < 0.01 && i >= 0.0 {
                labels.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
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

/// The corner of the plot area (a third of each axis) crossed by the fewest points, so the
/// legend hides as little data as possible.
fn emptiest_corner(
    series: &[Series],
    (x0, x1): (f64, f64),
    (y0, y1): (f64, f64),
) -> SeriesLabelPosition {
    let corners = [
        (SeriesLabelPosition::UpperRight, true, true),
        (SeriesLabelPosition::UpperLeft, false, true),
        (SeriesLabelPosition::LowerRight, true, false),
        (SeriesLabelPosition::LowerLeft, false, false),
    ];
    let (wx, wy) = ((x1 - x0) / 3.0, (y1 - y0) / 3.0);
    let inside = |&(_, right, upper): &(SeriesLabelPosition, bool, bool), (x, y): (f64, f64)| {
        let in_x = if right { x >= x1 - wx } else { x <= x0 + wx };
        let in_y = if upper { y >= y1 - wy } else { y <= y0 + wy };
        in_x && in_y
    };
    corners
        .iter()
        .min_by_key(|c| {
            series
                .iter()
                .flat_map(|s| s.points.iter())
                .filter(|&&p| inside(c, p))
                .count()
        })
        .map_or(SeriesLabelPosition::UpperRight, |c| c.0.clone())
}

/// The panels side by side on `root`, presented once (an SVG presented after its first
/// panel would end there).
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
    let parts = root.split_evenly((1, panels.len().max(1)));
    for ((y_label, stacks), area) in panels.iter().zip(&parts) {
        draw_bars(area, title, categories, y_label, stacks)?;
    }
    root.present()?;
    Ok(())
}

/// One stacked bar per category on `root` (which the caller fills and presents), the
/// categories labelled under their bars.
fn draw_bars<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
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
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d((0..n.saturating_sub(1)).into_segmented(), 0f64..top * 1.1)?;
    let labels = categories.to_vec();
    chart
        .configure_mesh()
        .disable_x_mesh()
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
        chart
            .draw_series(rects)?
            .label(s.label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    Ok(())
}

/// The paper's per-processor bar charts (001_… Figs. 4–8): work done and the time split into
/// computation, communication and wait, one bar per processor, written to `path`.
pub fn processor_bars(
    path: &Path,
    title: &str,
    unit: &str,
    processors: &[hetlb_runtime::ProcessorReport],
) -> Result<()> {
    let cats: Vec<String> = processors
        .iter()
        .map(|p| format!("{} ({})", p.processor, p.role))
        .collect();
    let pick = |f: fn(&hetlb_runtime::ProcessorReport) -> f64| -> Vec<f64> {
        processors.iter().map(f).collect()
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
    let work = [Stack {
        label: unit.to_string(),
        values: pick(|p| p.rows as f64),
    }];
    stacked_bar_panels(path, title, &cats, &[(unit, &work), ("seconds", &times)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_svg_and_png_and_rejects_other_extensions() {
        let dir = std::env::temp_dir().join(format!("hetlb-plot-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let series = [Series {
            label: "a".into(),
            points: vec![(0.0, 1.0), (1.0, 3.0), (2.0, 2.0)],
        }];
        let svg = dir.join("lines.svg");
        line_chart(&svg, "title", "x", "y", &series).unwrap();
        let text = std::fs::read_to_string(&svg).unwrap();
        assert!(text.contains("<svg") && text.contains("title"));
        let png = dir.join("bars.png");
        let stacks = [Stack {
            label: "compute".into(),
            values: vec![1.0, 2.0],
        }];
        stacked_bars(&png, "bars", &["p0".into(), "p1".into()], "s", &stacks).unwrap();
        assert_eq!(&std::fs::read(&png).unwrap()[1..4], b"PNG");
        assert!(line_chart(&dir.join("x.pdf"), "t", "x", "y", &series).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
