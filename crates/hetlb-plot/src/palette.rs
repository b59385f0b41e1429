//! Colours: twenty distinguishable ones, and one per algorithm in every chart.

use plotters::style::RGBColor;

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

/// Colour `i` of the palette (it repeats after twenty).
pub(crate) fn palette(i: usize) -> RGBColor {
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

/// The colour of the series of a chart, by their labels: its algorithm's, or the next palette
/// colour that no named series of the chart uses.
pub(crate) fn series_colors(labels: &[&str]) -> Vec<RGBColor> {
    let named: Vec<Option<RGBColor>> = labels.iter().map(|l| named_color(l)).collect();
    let taken: Vec<RGBColor> = named.iter().flatten().copied().collect();
    let mut free = PALETTE.iter().copied().filter(|c| !taken.contains(c));
    named
        .into_iter()
        .enumerate()
        .map(|(i, c)| c.or_else(|| free.next()).unwrap_or_else(|| palette(i)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_algorithm_has_one_colour_in_every_chart() {
        let one = series_colors(&["x", "dishet"]);
        let two = series_colors(&["dishet (mean)"]);
        assert_eq!(one[1], two[0]);
        assert_ne!(one[0], one[1]);
    }

    #[test]
    fn unnamed_series_take_colours_no_named_series_uses() {
        let c = series_colors(&["efp", "node 0", "node 1"]);
        assert_eq!(c[0], PALETTE[0]);
        assert!(c[1] != c[0] && c[2] != c[0] && c[1] != c[2]);
    }
}
