//! Legends in a strip of their own above a chart's plot area, so that they cover none of the
//! data and the value axis need not be stretched to make room for them.

use crate::DrawResult;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// How a legend entry shows its series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Swatch {
    /// A line in this colour (line charts).
    Line(RGBColor),
    /// A dashed line in this colour (vertical marks).
    Dashed(RGBColor),
    /// A filled square in this colour (bars, the keys of a Gantt chart).
    Block(RGBColor),
    /// None: the entry that says how many entries did not fit.
    Nothing,
}

/// One entry of a legend: a swatch and its label.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub(crate) label: String,
    pub(crate) swatch: Swatch,
}

impl Entry {
    pub(crate) fn new(label: impl Into<String>, swatch: Swatch) -> Self {
        Self {
            label: label.into(),
            swatch,
        }
    }
}

/// Width of a swatch, pixels.
const SWATCH: i32 = 20;
/// From a swatch to its label.
const TEXT_GAP: i32 = 6;
/// Between two entries of a row.
const ENTRY_GAP: i32 = 18;
/// Inside the legend's border.
const PAD: i32 = 6;
/// Between the border and the strip's edges.
const OUTSIDE: i32 = 6;
/// The most rows a legend takes; what does not fit is counted in its last entry.
const MAX_ROWS: usize = 6;

/// An entry placed in its row: `x` from the row's start, `width` of swatch and label.
#[derive(Debug, Clone)]
struct Placed {
    entry: Entry,
    x: i32,
    width: i32,
}

/// A legend laid out in rows for the width it has.
#[derive(Debug, Clone)]
pub(crate) struct Legend {
    rows: Vec<Vec<Placed>>,
    /// Height of a row.
    row: i32,
    font: u32,
}

impl Legend {
    /// `entries` laid out in rows as wide as `area` less `inset` (the part of `area` left of
    /// the plot area), in a `font`-pixel font; a label too long for a row is shortened with
    /// `…`, entries beyond [`MAX_ROWS`] rows are counted in a last entry.
    pub(crate) fn new<DB: DrawingBackend>(
        area: &DrawingArea<DB, Shift>,
        entries: &[Entry],
        font: u32,
        inset: u32,
    ) -> Result<Self, Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let style = text_style(font);
        let (w, _) = area.dim_in_pixel();
        let max = (i64::from(w) - i64::from(inset) - i64::from(2 * (PAD + OUTSIDE))).max(120);
        let max = i32::try_from(max).unwrap_or(i32::MAX);
        let text_w = |s: &str| -> Result<i32, Box<dyn std::error::Error>> {
            let (tw, _) = area.estimate_text_size(s, &style)?;
            Ok(i32::try_from(tw).unwrap_or(i32::MAX))
        };
        let mut rows: Vec<Vec<Placed>> = Vec::new();
        let mut x = 0;
        for e in entries {
            let mut label = e.label.clone();
            let mut width = SWATCH + TEXT_GAP + text_w(&label)?;
            while width > max && label.chars().count() > 1 {
                let keep = label
                    .trim_end_matches('…')
                    .chars()
                    .count()
                    .saturating_sub(1);
                label = label.chars().take(keep).collect::<String>() + "…";
                width = SWATCH + TEXT_GAP + text_w(&label)?;
            }
            match rows.last_mut() {
                Some(row) if x + width <= max => row.push(Placed {
                    entry: Entry::new(label, e.swatch),
                    x,
                    width,
                }),
                _ => {
                    x = 0;
                    rows.push(vec![Placed {
                        entry: Entry::new(label, e.swatch),
                        x,
                        width,
                    }]);
                }
            }
            x += width + ENTRY_GAP;
        }
        if rows.len() > MAX_ROWS {
            let mut hidden: usize = rows[MAX_ROWS..].iter().map(Vec::len).sum();
            rows.truncate(MAX_ROWS);
            if let Some(last) = rows.last_mut() {
                loop {
                    let more = format!("… {hidden} more");
                    let width = text_w(&more)?;
                    let x = last.last().map_or(0, |p| p.x + p.width + ENTRY_GAP);
                    if x + width <= max || last.len() <= 1 {
                        last.push(Placed {
                            entry: Entry::new(more, Swatch::Nothing),
                            x,
                            width,
                        });
                        break;
                    }
                    last.pop();
                    hidden += 1;
                }
            }
        }
        Ok(Self {
            rows,
            row: i32::try_from(font).unwrap_or(14) + 6,
            font,
        })
    }

    /// Width inside the border.
    fn width(&self) -> i32 {
        self.rows
            .iter()
            .filter_map(|r| r.last())
            .map(|p| p.x + p.width)
            .max()
            .unwrap_or(0)
    }

    /// Height of the strip the legend needs (0 without entries).
    pub(crate) fn height(&self) -> u32 {
        if self.rows.is_empty() {
            return 0;
        }
        let h = self.rows.len() as i32 * self.row + 2 * (PAD + OUTSIDE);
        u32::try_from(h).unwrap_or(0)
    }

    /// Draws the legend in `strip` (as tall as [`Legend::height`]), centred over the part of
    /// it right of `inset` pixels (over the plot area).
    pub(crate) fn draw<DB: DrawingBackend>(
        &self,
        strip: &DrawingArea<DB, Shift>,
        inset: u32,
    ) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        if self.rows.is_empty() {
            return Ok(());
        }
        let (w, _) = strip.dim_in_pixel();
        let inset = i32::try_from(inset).unwrap_or(0);
        let w = i32::try_from(w).unwrap_or(i32::MAX);
        let box_w = self.width() + 2 * PAD;
        let box_h = self.rows.len() as i32 * self.row + 2 * PAD;
        let left = (inset + (w - inset - box_w) / 2).clamp(0, (w - box_w).max(0));
        let top = OUTSIDE;
        strip.draw(&Rectangle::new(
            [(left, top), (left + box_w, top + box_h)],
            BLACK.stroke_width(1),
        ))?;
        let style = text_style(self.font).pos(Pos::new(HPos::Left, VPos::Center));
        for (r, row) in self.rows.iter().enumerate() {
            let y = top + PAD + r as i32 * self.row + self.row / 2;
            for Placed { entry, x, .. } in row {
                let x = left + PAD + x;
                let text_x = match entry.swatch {
                    Swatch::Nothing => x,
                    swatch => {
                        draw_swatch(strip, swatch, (x, y))?;
                        x + SWATCH + TEXT_GAP
                    }
                };
                strip.draw_text(&entry.label, &style, (text_x, y))?;
            }
        }
        Ok(())
    }
}

fn text_style(font: u32) -> TextStyle<'static> {
    TextStyle::from(("sans-serif", font).into_font()).color(&BLACK)
}

/// A swatch `SWATCH` wide, its left end at `x`, centred on `y`.
fn draw_swatch<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    swatch: Swatch,
    (x, y): (i32, i32),
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    match swatch {
        Swatch::Line(color) => {
            area.draw(&PathElement::new(
                vec![(x, y), (x + SWATCH, y)],
                color.stroke_width(3),
            ))?;
        }
        Swatch::Dashed(color) => {
            for s in (0..SWATCH).step_by(8) {
                area.draw(&PathElement::new(
                    vec![(x + s, y), (x + (s + 4).min(SWATCH), y)],
                    color.stroke_width(1),
                ))?;
            }
        }
        Swatch::Block(color) => {
            area.draw(&Rectangle::new(
                [(x + 3, y - 7), (x + SWATCH - 3, y + 7)],
                color.filled(),
            ))?;
        }
        Swatch::Nothing => {}
    }
    Ok(())
}
