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

/// One line of a line chart.
#[derive(Debug, Clone)]
pub struct Series {
    /// Legend text. A label that starts with the name of an algorithm or policy (`dishet`,
    /// `oem (phased)`, `EFP`, …) is drawn in that algorithm's colour, the same in every chart.
    pub label: String,
    /// `(x, y)` points, in drawing order.
    pub points: Vec<(f64, f64)>,
}

/// The most points a line is drawn with: longer series are sampled down by their callers
/// (one point per pixel column is all a chart can show).
pub const MAX_POINTS: usize = 1200;

/// How an axis is scaled and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scale {
    /// Linear, any tick.
    #[default]
    Linear,
    /// Linear, ticks at whole numbers only (rounds, dimensions, processors).
    Integer,
    /// Logarithmic in base 2, ticks at powers of two (processor counts 8, 16, 32, 64).
    Log2,
    /// Logarithmic in base 10, ticks at powers of ten (quantities over several orders).
    Log10,
}

impl Scale {
    fn forward(self, v: f64) -> Option<f64> {
        match self {
            Scale::Linear | Scale::Integer => Some(v),
            Scale::Log2 => (v > 0.0).then(|| v.log2()),
            Scale::Log10 => (v > 0.0).then(|| v.log10()),
        }
    }

    /// The tick label at `t` (in the transformed coordinate), or nothing between ticks.
    fn label(self, t: f64) -> String {
        let whole = (t - t.round()).abs() < 1e-9;
        match self {
            Scale::Linear => number(t),
            Scale::Integer if whole => format!("{}", t.round() as i64),
            Scale::Log2 if whole => number(2f64.powi(t.round() as i32)),
            Scale::Log10 if whole => number(10f64.powi(t.round() as i32)),
            _ => String::new(),
        }
    }
}

/// A tick value as a person reads it: `12`, `0.25`, `1e6`.
fn number(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if !(1e-3..1e6).contains(&a) {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        if (m - m.round()).abs() < 1e-9 {
            return format!("{}e{e}", m.round());
        }
        return format!("{v:.1e}");
    }
    let text = format!("{v:.3}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The axes of a line chart: labels, scales, and vertical marks (say, the iterations at
/// which a run rebalanced).
#[derive(Debug, Clone, Default)]
pub struct Axes {
    x_label: String,
    y_label: String,
    x: Scale,
    y: Scale,
    marks: Vec<f64>,
    marks_label: String,
}

impl Axes {
    /// Linear axes with these labels.
    pub fn new(x_label: &str, y_label: &str) -> Self {
        Self {
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..Self::default()
        }
    }

    /// Ticks at whole numbers on the x axis.
    pub fn integer_x(mut self) -> Self {
        self.x = Scale::Integer;
        self
    }

    /// A base-2 logarithmic x axis, ticked at powers of two.
    pub fn log2_x(mut self) -> Self {
        self.x = Scale::Log2;
        self
    }

    /// A base-10 logarithmic y axis (points at or below 0 are left out).
    pub fn log10_y(mut self) -> Self {
        self.y = Scale::Log10;
        self
    }

    /// Vertical marks at `xs`, named `label` in the legend.
    pub fn marks(mut self, xs: Vec<f64>, label: &str) -> Self {
        self.marks = xs;
        self.marks_label = label.into();
        self
    }
}

/// A line chart of `series` written to `path` (`.svg` or `.png`), linear axes.
pub fn line_chart(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
) -> Result<()> {
    line_chart_with(path, title, &Axes::new(x_label, y_label), series)
}

/// A line chart of `series` with the given axes, written to `path` (`.svg` or `.png`).
/// Series longer than [`MAX_POINTS`] are sampled down (every k-th point, the last kept).
pub fn line_chart_with(path: &Path, title: &str, axes: &Axes, series: &[Series]) -> Result<()> {
    register_font();
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
        .with_context(|| format!("cannot write plot '{}'", path.display()))
}

/// Series with exactly the same points drawn once, their labels joined with ` = ` (four
/// nodes whose queues never differ are one line, named as four).
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
    if stride > 1 {
        if let Some(&last) = points.last() {
            out.push(last);
        }
    }
    out
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

/// Twenty distinguishable colours: a chart of up to twenty lines repeats none.
const PALETTE: [RGBColor; 20] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
    RGBColor(174, 199, 232),
    RGBColor(255, 187, 120),
    RGBColor(152, 223, 138),
    RGBColor(255, 152, 150),
    RGBColor(197, 176, 213),
    RGBColor(196, 156, 148),
    RGBColor(247, 182, 210),
    RGBColor(0, 0, 0),
    RGBColor(219, 219, 141),
    RGBColor(158, 218, 229),
];

fn palette(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Every algorithm and policy a chart may show, each with its colour (an index into
/// [`PALETTE`]), so that one algorithm has one colour in every chart.
const NAMED: [(&str, usize); 20] = [
    ("in-transit", 17),
    ("dishet", 0),
    ("dishet-tight", 10),
    ("diffusion", 1),
    ("random-biasing", 2),
    ("dynamic-biasing", 3),
    ("gdem", 4),
    ("none", 7),
    ("dem", 5),
    ("dem-fixed", 15),
    ("dem-improved", 6),
    ("dem-hetero", 16),
    ("oem", 9),
    ("cwa", 8),
    ("hybrid", 19),
    ("efp", 0),
    ("static", 3),
    ("static-equal", 3),
    ("proportional", 2),
    ("self", 4),
];

/// The colour of the algorithm a label starts with, if it starts with one.
fn named_color(label: &str) -> Option<RGBColor> {
    let first = label
        .split([' ', '(', ',', ':'])
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    NAMED
        .iter()
        .find(|(name, _)| *name == first)
        .map(|&(_, i)| PALETTE[i])
}

/// The colour of series `i` of a chart: its algorithm's, or the next palette colour that no
/// named series of the chart uses.
fn series_colors(series: &[Series]) -> Vec<RGBColor> {
    let named: Vec<Option<RGBColor>> = series.iter().map(|s| named_color(&s.label)).collect();
    let taken: Vec<RGBColor> = named.iter().flatten().copied().collect();
    let mut free = PALETTE.iter().copied().filter(|c| !taken.contains(c));
    named
        .into_iter()
        .enumerate()
        .map(|(i, c)| c.or_else(|| free.next()).unwrap_or_else(|| palette(i)))
        .collect()
}

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
    // Linear value axes start at 0 (a reader compares heights); log axes at the data.
    if axes.y != Scale::Log10 {
        y0 = y0.min(0.0);
    }
    if x1 <= x0 {
        (x0, x1) = (x0 - 0.5, x1 + 0.5);
    }
    if y1 <= y0 {
        y1 = y0 + 1.0;
    }
    // A band above the data as tall as the legend, so that the legend covers none of the
    // lines: the legend takes `f` of the plot's height, the band `h/(1+h)` of it.
    let labelled =
        series.iter().filter(|s| !s.label.is_empty()).count() + usize::from(!axes.marks.is_empty());
    let f = ((labelled as f64 * 19.0 + 24.0) / PLOT_HEIGHT).min(0.6);
    let top = y1 + (y1 - y0) * f / (1.0 - f);
    let size = if title.chars().count() > 110 {
        13
    } else if title.chars().count() > 90 {
        16
    } else if title.chars().count() > 70 {
        19
    } else {
        22
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", size))
        .margin(16)
        .margin_right(48)
        .x_label_area_size(48)
        .y_label_area_size(84)
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
    if !axes.marks.is_empty() {
        let grey = RGBColor(150, 150, 150);
        for (k, &m) in axes.marks.iter().enumerate() {
            let Some(m) = axes.x.forward(m) else { continue };
            let drawn = chart.draw_series(DashedLineSeries::new(
                [(m, y0), (m, y1)],
                4,
                4,
                grey.stroke_width(1),
            ))?;
            if k == 0 {
                drawn.label(axes.marks_label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], grey.stroke_width(1))
                });
            }
        }
    }
    let colors = series_colors(series);
    let n = series.len();
    for (i, s) in series.iter().enumerate() {
        let color = colors[i];
        // Lines drawn first are wider, so a line hidden under a later one still shows as
        // its border (queues of nodes that stay equal, policies that coincide).
        let width = if n <= 8 {
            2 + (n - 1 - i).min(4) as u32
        } else {
            2
        };
        chart
            .draw_series(LineSeries::new(
                s.points.iter().copied(),
                color.stroke_width(width),
            ))?
            .label(s.label.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3))
            });
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
    if labelled > 0 {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .position(legend_corner(series, (x0, x1)))
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

/// A Gantt chart of `bars` over `rows` (labelled when there are few enough), with a key
/// naming each colour index used (`keys`: colour index and its meaning), written to `path`
/// (`.svg` or `.png`).
pub fn gantt(
    path: &Path,
    title: &str,
    x_label: &str,
    rows: &[String],
    bars: &[Bar],
    keys: &[(usize, String)],
) -> Result<()> {
    register_font();
    render!(path, |root| draw_gantt(
        &root, title, x_label, rows, bars, keys
    ))
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
    keys: &[(usize, String)],
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let end = bars.iter().map(|b| b.start + b.len).fold(1.0, f64::max);
    let n = rows.len().max(1);
    let labels = rows.to_vec();
    // The key sits in a band above the rows.
    let band = if keys.is_empty() {
        0.0
    } else {
        (keys.len() as f64 * 24.0 + 16.0) / 440.0 * n as f64
    };
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .margin_right(48)
        .x_label_area_size(48)
        .y_label_area_size(if rows.len() <= LABELLED_ROWS { 80 } else { 24 })
        .build_cartesian_2d(0f64..end, -0.5f64..n as f64 - 0.5 + band)?;
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
    for (i, label) in keys {
        let color = palette(*i);
        chart
            .draw_series(std::iter::empty::<Rectangle<(f64, f64)>>())?
            .label(label.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    if !keys.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.9))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    root.present()?;
    Ok(())
}

/// Height of a line chart's plotting area, pixels (the image less caption, margins and the
/// x labels).
const PLOT_HEIGHT: f64 = 470.0;

/// The upper corner for the legend: it sits in the band above the data (see `draw_lines`),
/// on the side where the data reach least high, so that it covers nothing.
fn legend_corner(series: &[Series], (x0, x1): (f64, f64)) -> SeriesLabelPosition {
    let mid = (x0 + x1) / 2.0;
    let highest = |left: bool| {
        series
            .iter()
            .flat_map(|s| s.points.iter())
            .filter(|p| (p.0 < mid) == left)
            .map(|p| p.1)
            .fold(f64::MIN, f64::max)
    };
    if highest(true) < highest(false) {
        SeriesLabelPosition::UpperLeft
    } else {
        SeriesLabelPosition::UpperRight
    }
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
    // Room above the bars for the legend, so that it covers none of them.
    let headroom = 1.1 + 0.09 * stacks.len() as f64;
    let mut chart = ChartBuilder::on(root)
        .caption(title, ("sans-serif", 18))
        .margin(16)
        .margin_right(24)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(
            (0..n.saturating_sub(1)).into_segmented(),
            0f64..top * headroom,
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
    fn identical_lines_are_drawn_once_and_named_together() {
        let a = Series {
            label: "node 0".into(),
            points: vec![(0.0, 1.0), (1.0, 0.0)],
        };
        let b = Series {
            label: "node 1".into(),
            ..a.clone()
        };
        let c = Series {
            label: "node 2".into(),
            points: vec![(0.0, 2.0)],
        };
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

    #[test]
    fn ticks_are_whole_numbers_or_powers_where_asked() {
        assert_eq!(Scale::Integer.label(3.0), "3");
        assert_eq!(Scale::Integer.label(2.5), "");
        assert_eq!(Scale::Log2.label(5.0), "32");
        assert_eq!(Scale::Log10.label(6.0), "1e6");
        assert_eq!(Scale::Log10.label(-1.0), "0.1");
        assert_eq!(Scale::Linear.label(0.25), "0.25");
    }

    #[test]
    fn an_algorithm_has_one_colour_in_every_chart() {
        let one = series_colors(&[
            Series {
                label: "x".into(),
                points: vec![],
            },
            Series {
                label: "dishet".into(),
                points: vec![],
            },
        ]);
        let two = series_colors(&[Series {
            label: "dishet (mean)".into(),
            points: vec![],
        }]);
        assert_eq!(one[1], two[0]);
        assert_ne!(one[0], one[1]);
    }

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
