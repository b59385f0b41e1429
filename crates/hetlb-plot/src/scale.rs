//! Axes: how values are scaled and how ticks are labelled.

/// How an axis is scaled and labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
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
    /// `v` in the axis's coordinate: itself on linear axes, its logarithm on logarithmic
    /// ones (`None` at or below 0 there).
    pub(crate) fn forward(self, v: f64) -> Option<f64> {
        match self {
            Scale::Linear | Scale::Integer => Some(v),
            Scale::Log2 => (v > 0.0).then(|| v.log2()),
            Scale::Log10 => (v > 0.0).then(|| v.log10()),
        }
    }

    /// The tick label at `t` (in the transformed coordinate), or nothing between ticks.
    pub(crate) fn label(self, t: f64) -> String {
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
    // Four significant digits, whatever the magnitude: ticks a step of 0.0005 apart read
    // 0.0015, 0.002, 0.0025 (three decimals made two of them "0.002").
    let decimals = (3 - a.log10().floor() as i32).clamp(0, 9) as usize;
    let text = format!("{v:.decimals$}");
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

/// The axes of a line chart: labels, scales, and vertical marks (say, the iterations at
/// which a run rebalanced).
///
/// # Example
/// ```
/// use hetlb_plot::Axes;
/// let axes = Axes::new("iteration", "milliseconds")
///     .integer_x()
///     .marks(vec![5.5, 10.5], "rebalance");
/// # let _ = axes;
/// ```
#[derive(Debug, Clone, Default)]
pub struct Axes {
    pub(crate) x_label: String,
    pub(crate) y_label: String,
    pub(crate) x: Scale,
    pub(crate) y: Scale,
    pub(crate) marks: Vec<f64>,
    pub(crate) marks_label: String,
}

impl Axes {
    /// Linear axes with these labels.
    #[must_use]
    pub fn new(x_label: &str, y_label: &str) -> Self {
        Self {
            x_label: x_label.into(),
            y_label: y_label.into(),
            ..Self::default()
        }
    }

    /// Ticks at whole numbers on the x axis.
    #[must_use]
    pub fn integer_x(mut self) -> Self {
        self.x = Scale::Integer;
        self
    }

    /// A base-2 logarithmic x axis, ticked at powers of two.
    #[must_use]
    pub fn log2_x(mut self) -> Self {
        self.x = Scale::Log2;
        self
    }

    /// A base-10 logarithmic y axis (points at or below 0 are left out).
    #[must_use]
    pub fn log10_y(mut self) -> Self {
        self.y = Scale::Log10;
        self
    }

    /// Vertical marks at `xs`, named `label` in the legend.
    #[must_use]
    pub fn marks(mut self, xs: Vec<f64>, label: &str) -> Self {
        self.marks = xs;
        self.marks_label = label.into();
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_whole_numbers_or_powers_where_asked() {
        assert_eq!(Scale::Integer.label(3.0), "3");
        assert_eq!(Scale::Integer.label(2.5), "");
        assert_eq!(Scale::Log2.label(5.0), "32");
        assert_eq!(Scale::Log10.label(6.0), "1e6");
        assert_eq!(Scale::Log10.label(-1.0), "0.1");
        assert_eq!(Scale::Linear.label(0.25), "0.25");
        assert_eq!(Scale::Linear.label(2.5e-5), "2.5e-5");
        assert_eq!(Scale::Linear.label(12.0), "12");
        assert_eq!(Scale::Linear.label(120.0), "120");
        assert_eq!(Scale::Linear.label(123_456.0), "123456");
        assert_eq!(Scale::Linear.label(0.1 + 0.2), "0.3");
    }

    #[test]
    fn ticks_closer_than_a_thousandth_keep_distinct_labels() {
        for step in [0.0005, 0.0002, 0.00025, 0.001, 0.05, 2.5] {
            let labels: Vec<String> = (1..12)
                .map(|k| Scale::Linear.label(k as f64 * step))
                .collect();
            let distinct: std::collections::BTreeSet<&String> = labels.iter().collect();
            assert_eq!(distinct.len(), labels.len(), "step {step}: {labels:?}");
        }
        assert_eq!(Scale::Linear.label(0.0015), "0.0015");
        assert_eq!(Scale::Linear.label(0.0025), "0.0025");
    }

    #[test]
    fn logarithmic_axes_leave_out_what_they_cannot_show() {
        assert_eq!(Scale::Log10.forward(0.0), None);
        assert_eq!(Scale::Log2.forward(8.0), Some(3.0));
        assert_eq!(Scale::Linear.forward(-1.0), Some(-1.0));
    }
}
