//! # hetlb-plot
//!
//! The charts of hetlb, written with plotters as SVG or PNG (chosen by the file extension):
//!
//! * [`line_chart`] and [`line_chart_with`] — lines over linear, integer or logarithmic axes
//!   ([`Axes`]), with vertical marks; long series are sampled down to [`MAX_POINTS`] and
//!   identical series drawn once;
//! * [`stacked_bars`] and [`stacked_bar_panels`] — one stacked bar per category ([`Stack`]),
//!   several panels side by side;
//! * [`gantt`] — activity per row over time ([`Bar`]);
//! * [`Downsampler`] — a vector that changes step by step as lines a chart can show (every
//!   component, or the largest, mean and smallest of many).
//!
//! A series whose label starts with the name of an algorithm or policy (`dishet`, `oem
//! (phased)`, `EFP`, …) is drawn in that algorithm's colour, the same in every chart.
//!
//! plotters is built without its system-font support, so the DejaVu Sans font shipped in
//! `assets/` is registered as "sans-serif" before the first chart; the charts then look the
//! same on every machine.
//!
//! ```
//! use hetlb_plot::{Axes, Series, line_chart_with};
//! let path = std::env::temp_dir().join(format!("hetlb-plot-doc-{}.svg", std::process::id()));
//! let series = [Series::new("dishet", vec![(0.0, 4.0), (1.0, 2.0), (2.0, 1.0)])];
//! line_chart_with(&path, "Imbalance", &Axes::new("round", "max − min").integer_x(), &series)
//!     .unwrap();
//! assert!(std::fs::read_to_string(&path).unwrap().contains("<svg"));
//! # std::fs::remove_file(&path).ok();
//! ```

mod bars;
#[doc(hidden)]
pub mod check;
mod gantt;
mod legend;
mod line;
mod palette;
mod png_file;
mod sample;
mod scale;

pub use bars::{Stack, stacked_bar_panels, stacked_bars};
pub use gantt::{Bar, gantt};
pub use line::{MAX_POINTS, Series, line_chart, line_chart_with};
pub use sample::Downsampler;
pub use scale::{Axes, Scale};

use plotters::style::FontStyle;
use std::path::{Path, PathBuf};
use std::sync::Once;
use thiserror::Error;

/// Why a chart could not be written.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum PlotError {
    /// The file name ends in neither `.svg` nor `.png`.
    #[error("plot file '{}' must end in .svg or .png", path.display())]
    Extension {
        /// The file asked for.
        path: PathBuf,
    },
    /// Drawing the chart or writing its file failed.
    #[error("cannot write plot '{}'", path.display())]
    Write {
        /// The file being written.
        path: PathBuf,
        /// What plotters reported.
        #[source]
        source: DrawError,
    },
}

/// What plotters reported while drawing or writing a chart (its error types are generic over
/// the backend, so the message is kept).
#[derive(Debug, Error)]
#[error("{0}")]
#[non_exhaustive]
pub struct DrawError(String);

static FONT: &[u8] = include_bytes!("../assets/DejaVuSans.ttf");

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font is compiled in and known to be valid; a failure would only lose the text.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
}

/// Chart size in pixels.
const SIZE: (u32, u32) = (960, 600);

type DrawResult = Result<(), Box<dyn std::error::Error>>;

/// The two file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Svg,
    Png,
}

fn format_of(path: &Path) -> Result<Format, PlotError> {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("svg") => Ok(Format::Svg),
        Some("png") => Ok(Format::Png),
        _ => Err(PlotError::Extension {
            path: path.to_path_buf(),
        }),
    }
}

/// Draws on an SVG or PNG backend, chosen by the extension of `$path`: the font registered,
/// an extension other than `.svg` or `.png` refused before anything is written, a drawing
/// error named with the file.
macro_rules! render {
    ($path:expr, |$root:ident| $body:expr) => {{
        use plotters::prelude::*;
        let path: &std::path::Path = $path;
        $crate::register_font();
        let drawn: $crate::DrawResult = match $crate::format_of(path)? {
            $crate::Format::Svg => {
                let $root = SVGBackend::new(path, $crate::SIZE).into_drawing_area();
                $body
            }
            $crate::Format::Png => {
                let mut pixels = $crate::png_file::blank($crate::SIZE);
                let drawn: $crate::DrawResult = {
                    let $root =
                        BitMapBackend::with_buffer(&mut pixels, $crate::SIZE).into_drawing_area();
                    $body
                };
                drawn.and_then(|()| $crate::png_file::write(path, $crate::SIZE, &pixels))
            }
        };
        drawn.map_err(|e| $crate::PlotError::Write {
            path: path.to_path_buf(),
            source: $crate::DrawError(e.to_string()),
        })
    }};
}
pub(crate) use render;

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
        let pdf = dir.join("x.pdf");
        let e = line_chart(&pdf, "t", "x", "y", &series).unwrap_err();
        assert!(matches!(e, PlotError::Extension { .. }), "{e}");
        assert!(!pdf.exists());
        let gantt_svg = dir.join("gantt.svg");
        let bars = [Bar {
            row: 1,
            start: 0.5,
            len: 2.0,
            color: 3,
        }];
        gantt(
            &gantt_svg,
            "links",
            "step",
            &["0 → 1".into(), "1 → 0".into()],
            &bars,
            &[(3, "phase 1".into())],
        )
        .unwrap();
        let text = std::fs::read_to_string(&gantt_svg).unwrap();
        assert!(text.contains("phase 1") && text.contains("0 → 1"));
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_file_that_cannot_be_written_is_named_with_the_cause() {
        let path = std::env::temp_dir()
            .join(format!("hetlb-plot-missing-{}", std::process::id()))
            .join("no-such-dir")
            .join("x.png");
        let series = [Series::new("a", vec![(0.0, 1.0), (1.0, 2.0)])];
        let e = line_chart(&path, "t", "x", "y", &series).unwrap_err();
        assert!(matches!(e, PlotError::Write { .. }), "{e}");
        assert!(e.to_string().starts_with("cannot write plot '"), "{e}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
