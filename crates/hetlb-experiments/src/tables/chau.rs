//! What `chau-table1` and `chau-table2` print: our histogram beside Chau & Fu's (Tables 1–2).

use crate::Histogram;
use crate::chau::{ChauTable, TableRow};
use crate::monte_carlo::MonteCarlo;
use hetlb_core::Algorithm;
use hetlb_core::table::{Table, Text, fixed};

/// Our rows and, under each, the paper's: counts of each final max difference, the average
/// and the largest two-sample |z| of a column.
pub fn text(which: ChauTable, mc: &MonteCarlo, rows: &[TableRow]) -> Text {
    let mut text = Text::new();
    text.line(format!(
        "{} — reproduced with {}",
        which.title(),
        mc.algorithm
    ));
    text.line(format!(
        "{} trials per row, loads uniform on 0..={}, seed {}; |z| is the largest two-sample z of a column against the paper",
        mc.trials, mc.max_load, mc.seed
    ));
    let top = rows
        .iter()
        .map(|r| {
            r.histogram
                .max_difference()
                .max(r.paper.as_ref().map_or(0, |p| p.histogram.max_difference()))
        })
        .max()
        .unwrap_or(0)
        .max(7);
    let mut header = vec!["n".to_string(), "source".to_string()];
    header.extend((0..=top).map(|d| d.to_string()));
    header.extend(["avg".to_string(), "|z|".to_string()]);
    let mut t = Table::new(header);
    for r in rows {
        let mut ours = vec![r.n.to_string(), "hetlb".to_string()];
        ours.extend((0..=top).map(|d| r.histogram.count(d).to_string()));
        ours.push(fixed(r.average, 3));
        ours.push(r.max_abs_z.map(|z| fixed(z, 1)).unwrap_or_default());
        t.row(ours);
        if let Some(p) = &r.paper {
            let mut paper = vec![String::new(), "paper".to_string()];
            paper.extend((0..=top).map(|d| p.histogram.count(d).to_string()));
            paper.push(fixed(p.average, 2));
            paper.push(String::new());
            t.row(paper);
        }
    }
    text.table(t);
    text
}

/// One line per row and source (ours, then the paper's): counts of max difference 0 to 7,
/// 8 and more, and the average.
pub fn csv(rows: &[TableRow]) -> Table {
    let mut t = Table::new([
        "algorithm",
        "n",
        "source",
        "trials",
        "d0",
        "d1",
        "d2",
        "d3",
        "d4",
        "d5",
        "d6",
        "d7",
        "d8+",
        "average",
    ]);
    for r in rows {
        t.row(csv_row(
            r.algorithm,
            r.n,
            "hetlb",
            r.trials,
            &r.histogram,
            r.average,
        ));
        if let Some(p) = &r.paper {
            t.row(csv_row(
                r.algorithm,
                r.n,
                "paper",
                p.trials,
                &p.histogram,
                p.average,
            ));
        }
    }
    t
}

fn csv_row(
    algorithm: Algorithm,
    n: u32,
    source: &str,
    trials: u64,
    h: &Histogram,
    average: f64,
) -> Vec<String> {
    let mut row = vec![
        algorithm.to_string(),
        n.to_string(),
        source.to_string(),
        trials.to_string(),
    ];
    row.extend((0..8).map(|d| h.count(d).to_string()));
    row.push(h.count_at_least(8).to_string());
    row.push(format!("{average:.4}"));
    row
}
