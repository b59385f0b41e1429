//! What `rim-table1` prints: Rim, Jang & Kim's Table 1 beside our exhaustive counts.

use crate::rim_table1::{ROWS, Table1Row as Row, bound_source, bucketed, published};
use hetlb_core::table::{Table, Text, fixed};

/// One line per column and source (ours, then the paper's where it has one): counts of max
/// difference 0 to 3 and 4 or more, our average and seconds.
pub fn csv(rows: &[Row]) -> Table {
    let mut t = Table::new([
        "algorithm",
        "procs",
        "values",
        "source",
        "d0",
        "d1",
        "d2",
        "d3",
        "d4+",
        "average",
        "seconds",
    ]);
    for r in rows {
        t.row(csv_row(
            r,
            "hetlb",
            bucketed(&r.histogram),
            Some(r.average),
            Some(r.seconds),
        ));
        if let Some(c) = r.published() {
            t.row(csv_row(r, "paper", c.counts, None, None));
        }
    }
    t
}

fn csv_row(
    r: &Row,
    source: &str,
    counts: [u64; 5],
    average: Option<f64>,
    seconds: Option<f64>,
) -> Vec<String> {
    let mut row = vec![
        r.algorithm.to_string(),
        r.procs.to_string(),
        r.values.to_string(),
        source.to_string(),
    ];
    row.extend(counts.iter().map(u64::to_string));
    row.push(average.map(|a| format!("{a:.6}")).unwrap_or_default());
    row.push(seconds.map(|s| format!("{s:.3}")).unwrap_or_default());
    row
}

/// Per number of processors: the counts of each max difference, ours beside the paper's
/// (a differing count marked ≠), the averages, and whether each column and bound holds.
pub fn text(procs: &[usize], rows: &[Row]) -> Text {
    let mut text = Text::new();
    text.line("Rim, Jang & Kim, Table 1 — every non-decreasing load vector, balanced exhaustively");
    for &p in procs {
        let group: Vec<&Row> = rows.iter().filter(|r| r.procs == p).collect();
        let Some(first) = group.first() else { continue };
        let seconds: f64 = group.iter().map(|r| r.seconds).sum();
        text.line(format!(
            "\n{p} processors, loads 0..={}, {} vectors per algorithm ({} s)",
            first.values - 1,
            first.vectors,
            fixed(seconds, 2)
        ));
        let mut header = vec!["max difference".to_string()];
        for r in &group {
            header.push(format!("{} hetlb", r.algorithm));
            if r.paper.is_some() {
                header.push(format!("{} paper", r.algorithm));
            }
        }
        let mut t = Table::new(header);
        for (i, label) in ROWS.iter().enumerate() {
            let mut line = vec![label.replace(">=", "≥ ")];
            for r in &group {
                let ours = bucketed(&r.histogram)[i];
                match published(r.algorithm, p) {
                    Some(c) => {
                        let mark = if c.counts[i] == ours { "" } else { " ≠" };
                        line.push(format!("{ours}{mark}"));
                        line.push(c.counts[i].to_string());
                    }
                    None => line.push(ours.to_string()),
                }
            }
            t.row(line);
        }
        let mut avg = vec!["average".to_string()];
        for r in &group {
            avg.push(fixed(r.average, 4));
            if let Some(c) = published(r.algorithm, p) {
                avg.push(format!("{} (≥4 as 4)", fixed(c.average(), 4)));
            }
        }
        t.row(avg);
        text.table(t);
        if group.iter().all(|r| r.published().is_none()) {
            text.line(format!(
                "The paper's Table 1 stops at 32 processors: there is no published column to \
                 compare with. C({}, {p}) = {} vectors per algorithm.",
                p + first.values as usize - 1,
                first.vectors
            ));
        }
        for r in &group {
            if let Some(m) = r.matches_paper {
                let verdict = if m {
                    "matches the paper exactly"
                } else {
                    "differs from the paper (rows marked ≠)"
                };
                text.line(format!("{} column: {verdict}", r.algorithm));
            }
            if let (Some(b), Some(holds)) = (r.bound, r.bound_holds()) {
                let verdict = if holds {
                    "holds on every vector"
                } else {
                    "is EXCEEDED"
                };
                text.line(format!(
                    "{}: largest max difference {} against the bound {b} ({}) — the bound {verdict}",
                    r.algorithm,
                    r.max_difference,
                    bound_source(r.algorithm)
                ));
            }
        }
    }
    text
}
