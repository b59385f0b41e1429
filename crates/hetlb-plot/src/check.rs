//! Where things are on a rendered PNG chart, found from its pixels: the plot (data) areas, the
//! legends and the titles. The tests of this crate and of the command line check a chart's
//! layout with it (the legend outside the data, the data reaching the top of the y range,
//! titles apart and whole); it is no part of the drawing.
//!
//! * A plot area is an L of black axis lines (the y axis down its left side, the x axis along
//!   its bottom) with no line across its top.
//! * A legend is a closed rectangle of black lines (its border).
//! * A title is a cluster of dark text above every plot area and legend.
//! * Data are the coloured (not grey) pixels inside a plot area.

use std::path::Path;

/// A decoded PNG chart: its pixels as RGB.
#[derive(Debug, Clone)]
pub struct Picture {
    width: u32,
    height: u32,
    rgb: Vec<u8>,
}

impl Picture {
    /// The PNG file at `path`, decoded.
    ///
    /// # Errors
    /// The file cannot be read or is no image.
    pub fn open(path: &Path) -> Result<Self, String> {
        let (width, height, rgb) = crate::png_file::read_rgb(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        Ok(Self { width, height, rgb })
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The colour at `(x, y)`; white outside the picture.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        if x >= self.width || y >= self.height {
            return [255; 3];
        }
        let i = 3 * (y as usize * self.width as usize + x as usize);
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    fn black(&self, x: u32, y: u32) -> bool {
        self.pixel(x, y).iter().all(|&c| c < 60)
    }

    /// Text: dark and grey (antialiased glyphs).
    fn dark(&self, x: u32, y: u32) -> bool {
        let [r, g, b] = self.pixel(x, y);
        let (lo, hi) = (r.min(g).min(b), r.max(g).max(b));
        hi < 128 && hi - lo < 40
    }

    /// Data: a colour, neither grey nor black nor white.
    fn coloured(&self, x: u32, y: u32) -> bool {
        let [r, g, b] = self.pixel(x, y);
        r.max(g).max(b) - r.min(g).min(b) >= 30
    }
}

/// A rectangle of pixels, its bounds included.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rect {
    /// First column.
    pub left: u32,
    /// First row.
    pub top: u32,
    /// Last column.
    pub right: u32,
    /// Last row.
    pub bottom: u32,
}

impl Rect {
    /// Whether the two share a pixel.
    pub fn intersects(&self, other: &Rect) -> bool {
        self.left <= other.right
            && other.left <= self.right
            && self.top <= other.bottom
            && other.top <= self.bottom
    }

    /// Whether `(x, y)` is inside.
    pub fn contains(&self, x: u32, y: u32) -> bool {
        (self.left..=self.right).contains(&x) && (self.top..=self.bottom).contains(&y)
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.bottom - self.top + 1
    }

    fn union(&self, other: &Rect) -> Rect {
        Rect {
            left: self.left.min(other.left),
            top: self.top.min(other.top),
            right: self.right.max(other.right),
            bottom: self.bottom.max(other.bottom),
        }
    }
}

/// What a chart shows where.
#[derive(Debug, Clone, Default)]
pub struct Layout {
    /// The plot areas, bounded by their axes (one per panel).
    pub plots: Vec<Rect>,
    /// The legends' borders.
    pub legends: Vec<Rect>,
    /// The titles (figure title and panel captions) above them.
    pub titles: Vec<Rect>,
}

/// A straight run of black pixels: `at` is the row (horizontal) or column (vertical), from
/// `from` to `to` included.
#[derive(Debug, Clone, Copy)]
struct Run {
    at: u32,
    from: u32,
    to: u32,
}

/// The runs at least `min` long, along `len_inner` for every `at` in `0..len_outer`, of
/// pixels `kind` calls black (2) or, when `bridge`, black or data (1) with at least half of
/// them black and gaps of at most [`GAP`] pixels: an axis partly drawn over by data is still
/// one run.
fn runs(
    (len_outer, len_inner): (u32, u32),
    kind: impl Fn(u32, u32) -> u8,
    min: u32,
    bridge: bool,
) -> Vec<Run> {
    let gap = if bridge { GAP } else { 0 };
    let mut out = Vec::new();
    for at in 0..len_outer {
        // The run so far: its first and last pixel on, and how many are black.
        let mut run: Option<(u32, u32, u32)> = None;
        for i in 0..=len_inner {
            let k = if i < len_inner { kind(at, i) } else { 0 };
            let on = k == 2 || (bridge && k == 1);
            let black = u32::from(k == 2);
            run = match run {
                None if on => Some((i, i, black)),
                Some((from, _, b)) if on => Some((from, i, b + black)),
                Some((from, to, b)) if i < len_inner && i - to <= gap => Some((from, to, b)),
                Some((from, to, b)) => {
                    let len = to + 1 - from;
                    if len >= min && 2 * b >= len {
                        out.push(Run { at, from, to });
                    }
                    None
                }
                None => None,
            };
        }
    }
    out
}

/// The longest gap a run of an axis drawn over by data may have (pixels at the edges of data
/// lines that are neither the axis nor the data's colour).
const GAP: u32 = 4;

fn near(a: u32, b: u32, by: u32) -> bool {
    a.abs_diff(b) <= by
}

/// Adds `r`, merged with any it overlaps (a line two pixels wide is found twice).
fn add_merged(list: &mut Vec<Rect>, r: Rect) {
    if let Some(o) = list.iter_mut().find(|o| o.intersects(&r)) {
        *o = o.union(&r);
    } else {
        list.push(r);
    }
}

/// The plot areas, legends and titles of `p`.
pub fn layout(p: &Picture) -> Layout {
    // Black, or data that may cover an axis: coloured or grey (not the light grid).
    let kind = |x: u32, y: u32| {
        if p.black(x, y) {
            2
        } else {
            u8::from(p.coloured(x, y) || p.pixel(x, y).iter().all(|&c| c < 180))
        }
    };
    let rows = runs((p.height, p.width), |y, x| kind(x, y), 30, false);
    let cols = runs((p.width, p.height), kind, 12, false);
    let axis_rows = runs((p.height, p.width), |y, x| kind(x, y), 60, true);
    let axis_cols = runs((p.width, p.height), kind, 60, true);
    // A horizontal run from about `x0` to about `x1` at about row `y`.
    let across = |y: u32, x0: u32, x1: u32| {
        rows.iter()
            .any(|h| near(h.at, y, 2) && h.from <= x0 + 2 && h.to + 2 >= x1 && h.to - h.from >= 20)
    };
    // A vertical run covering rows `y0..=y1` at about column `x`.
    let down = |x: u32, y0: u32, y1: u32| {
        cols.iter()
            .any(|v| near(v.at, x, 1) && v.from <= y0 + 2 && v.to + 2 >= y1)
    };
    let mut layout = Layout::default();
    for v in &axis_cols {
        for h in &axis_rows {
            // The bottom-left corner of an L: the vertical run ends on the horizontal one,
            // which starts at its column (data drawn over the corner may hide a few pixels).
            if near(v.to, h.at, 8) && near(h.from, v.at, 8) && !across(v.from, h.from, h.to) {
                let r = Rect {
                    left: v.at.min(h.from),
                    top: v.from,
                    right: h.to,
                    bottom: h.at.max(v.to),
                };
                add_merged(&mut layout.plots, r);
            }
        }
    }
    for (i, top) in rows.iter().enumerate() {
        for bottom in &rows[i + 1..] {
            let closed = bottom.at >= top.at + 10
                && near(top.from, bottom.from, 2)
                && near(top.to, bottom.to, 2)
                && down(top.from, top.at, bottom.at)
                && down(top.to, top.at, bottom.at);
            if closed {
                let r = Rect {
                    left: top.from.min(bottom.from),
                    top: top.at,
                    right: top.to.max(bottom.to),
                    bottom: bottom.at,
                };
                add_merged(&mut layout.legends, r);
            }
        }
    }
    // A legend drawn over a plot area may be found as a plot area too (its border's left
    // and bottom sides): what is closed is a legend.
    let legends = layout.legends.clone();
    layout.plots.retain(|r| {
        !legends
            .iter()
            .any(|l| near(l.left, r.left, 2) && near(l.top, r.top, 2))
    });
    let first = layout
        .plots
        .iter()
        .chain(&layout.legends)
        .map(|r| r.top)
        .min()
        .unwrap_or(p.height);
    layout.titles = titles(p, first.saturating_sub(10));
    layout
}

/// The clusters of dark text in rows `0..limit`: lines of text apart by 3 blank rows, words
/// of one title apart by fewer than 24 blank columns.
fn titles(p: &Picture, limit: u32) -> Vec<Rect> {
    let mut out = Vec::new();
    let dark_row = |y: u32| (0..p.width).any(|x| p.dark(x, y));
    let mut y = 0;
    while y < limit {
        if !dark_row(y) {
            y += 1;
            continue;
        }
        let top = y;
        let mut bottom = y;
        while y < limit && (y..(y + 3).min(limit)).any(&dark_row) {
            if dark_row(y) {
                bottom = y;
            }
            y += 1;
        }
        let dark_col = |x: u32| (top..=bottom).any(|y| p.dark(x, y));
        let mut x = 0;
        while x < p.width {
            if !dark_col(x) {
                x += 1;
                continue;
            }
            let left = x;
            let mut right = x;
            while x < p.width && (x..(x + 24).min(p.width)).any(dark_col) {
                if dark_col(x) {
                    right = x;
                }
                x += 1;
            }
            out.push(Rect {
                left,
                top,
                right,
                bottom,
            });
        }
    }
    out
}

/// How high the data reach in `plot`, as a fraction of its height from its bottom (1 at its
/// top): the highest coloured pixel inside it and outside `legends`; `None` without data.
pub fn data_reach(p: &Picture, plot: &Rect, legends: &[Rect]) -> Option<f64> {
    let inside =
        (plot.top + 1..plot.bottom).flat_map(|y| (plot.left + 1..plot.right).map(move |x| (x, y)));
    let (_, y) = inside
        .filter(|&(x, y)| !legends.iter().any(|l| l.contains(x, y)))
        .find(|&(x, y)| p.coloured(x, y))?;
    Some(f64::from(plot.bottom - y) / f64::from(plot.bottom - plot.top))
}

/// The layout of the PNG chart at `path`, checked: at least `plots` plot areas and one
/// legend, no legend over a plot area, no title over a plot area, a legend or another title,
/// and every title whole (off the picture's edges).
///
/// # Errors
/// What is wrong, with the layout found.
pub fn check_chart(path: &Path, plots: usize) -> Result<(Picture, Layout), String> {
    let p = Picture::open(path)?;
    let l = layout(&p);
    let fail = |what: String| Err(format!("{}: {what}; layout {l:?}", path.display()));
    if l.plots.len() < plots {
        return fail(format!(
            "{} plot areas found, {plots} expected",
            l.plots.len()
        ));
    }
    if l.legends.is_empty() {
        return fail("no legend found".into());
    }
    for legend in &l.legends {
        if let Some(plot) = l.plots.iter().find(|r| r.intersects(legend)) {
            return fail(format!("legend {legend:?} inside plot area {plot:?}"));
        }
    }
    if l.titles.is_empty() {
        return fail("no title found".into());
    }
    for (i, t) in l.titles.iter().enumerate() {
        if let Some(o) = l
            .plots
            .iter()
            .chain(&l.legends)
            .chain(&l.titles[i + 1..])
            .find(|r| r.intersects(t))
        {
            return fail(format!("title {t:?} overlaps {o:?}"));
        }
        if t.left == 0 || t.right + 1 >= p.width {
            return fail(format!("title {t:?} cut at the picture's edge"));
        }
    }
    Ok((p, l))
}
