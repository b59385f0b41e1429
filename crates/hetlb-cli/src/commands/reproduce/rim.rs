//! `hetlb reproduce rim-table1`: Rim et al.'s Table 1 (004_…, §4), by exhaustive enumeration.

use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::progress::bar;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::Algorithm;
use hetlb_experiments::Histogram;
use hetlb_experiments::enumeration::{enumerate, vector_count};
use hetlb_experiments::paper::{RimColumn, rim_column};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Arguments of `hetlb reproduce rim-table1`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Processors: 8, 16 or 32 (the paper's sizes; repeat or comma-separate; default all three).
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    procs: Vec<usize>,
    /// Algorithms to enumerate (the paper's columns are dem and oem).
    #[arg(long, num_args = 1.., value_delimiter = ',', default_value = "dem,oem")]
    algorithm: Vec<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// The paper's value range for each size: loads `0..values`.
fn paper_values(procs: usize) -> Option<u32> {
    match procs {
        8 => Some(18),
        16 => Some(13),
        32 => Some(10),
        _ => None,
    }
}

#[derive(Serialize)]
struct PaperColumn {
    algorithm: &'static str,
    /// Difference → count; the last key is `">=4"`.
    histogram: BTreeMap<String, u64>,
}

#[derive(Serialize)]
struct Row {
    algorithm: Algorithm,
    procs: usize,
    values: u32,
    vectors: u64,
    histogram: Histogram,
    average: f64,
    seconds: f64,
    paper: Option<PaperColumn>,
    /// True when every published count (0, 1, 2, 3, ≥4) equals ours.
    matches_paper: Option<bool>,
}

/// Rows of the paper's table: differences 0..=3 and "≥ 4".
const ROWS: [&str; 5] = ["0", "1", "2", "3", ">=4"];

fn bucketed(h: &Histogram) -> [u64; 5] {
    [
        h.count(0),
        h.count(1),
        h.count(2),
        h.count(3),
        h.count_at_least(4),
    ]
}

fn paper_name(algorithm: Algorithm) -> Option<&'static str> {
    match algorithm {
        Algorithm::Dem => Some("DEM"),
        Algorithm::Oem => Some("OEM"),
        _ => None,
    }
}

/// Runs `hetlb reproduce rim-table1`.
pub fn run(args: Args) -> Result<()> {
    let procs = if args.procs.is_empty() {
        vec![8, 16, 32]
    } else {
        args.procs.clone()
    };
    let algorithms = args
        .algorithm
        .iter()
        .map(|a| a.parse::<Algorithm>().context("--algorithm"))
        .collect::<Result<Vec<_>>>()?;
    let mut rows = Vec::new();
    for &p in &procs {
        let Some(values) = paper_values(p) else {
            bail!(
                "--procs: the paper's Table 1 has 8, 16 and 32 processors, not {p} (use `hetlb enumerate` for other sizes)"
            );
        };
        for &algorithm in &algorithms {
            let count = vector_count(p, values);
            let progress = bar(count as u64, format!("{algorithm}, {p} processors"));
            let started = Instant::now();
            let histogram = enumerate(algorithm, p, values, &|done| progress.inc(done))
                .map_err(|e| anyhow!("--procs: {e}"))?;
            let seconds = started.elapsed().as_secs_f64();
            progress.finish_and_clear();
            let column = paper_name(algorithm).and_then(|name| rim_column(p, name));
            rows.push(Row {
                algorithm,
                procs: p,
                values,
                vectors: histogram.total(),
                average: histogram.average(),
                seconds,
                matches_paper: column.map(|c| c.counts == bucketed(&histogram)),
                paper: column.map(paper_column),
                histogram,
            });
        }
    }
    match args.format {
        Format::Json => print_json(&rows),
        Format::Csv => print_csv(
            &[
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
            ],
            rows.iter().flat_map(|r| {
                let ours = csv_row(
                    r,
                    "hetlb",
                    bucketed(&r.histogram),
                    Some(r.average),
                    Some(r.seconds),
                );
                let paper = paper_name(r.algorithm)
                    .and_then(|name| rim_column(r.procs, name))
                    .map(|c| csv_row(r, "paper", c.counts, None, None));
                std::iter::once(ours).chain(paper)
            }),
        ),
        Format::Table => {
            print_table(&procs, &rows);
            Ok(())
        }
    }
}

fn paper_column(c: &RimColumn) -> PaperColumn {
    PaperColumn {
        algorithm: c.algorithm,
        histogram: ROWS.iter().map(|r| r.to_string()).zip(c.counts).collect(),
    }
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

fn print_table(procs: &[usize], rows: &[Row]) {
    crate::out!(
        "Rim, Jang & Kim, Table 1 — every non-decreasing load vector, balanced exhaustively"
    );
    for &p in procs {
        let group: Vec<&Row> = rows.iter().filter(|r| r.procs == p).collect();
        let Some(first) = group.first() else { continue };
        let seconds: f64 = group.iter().map(|r| r.seconds).sum();
        crate::out!(
            "\n{p} processors, loads 0..={}, {} vectors per algorithm ({} s)",
            first.values - 1,
            first.vectors,
            fixed(seconds, 2)
        );
        let mut header = vec!["max difference".to_string()];
        for r in &group {
            header.push(format!("{} hetlb", r.algorithm));
            if r.paper.is_some() {
                header.push(format!("{} paper", r.algorithm));
            }
        }
        let mut t = table(header);
        for (i, label) in ROWS.iter().enumerate() {
            let mut line = vec![label.replace(">=", "≥ ")];
            for r in &group {
                let ours = bucketed(&r.histogram)[i];
                match paper_name(r.algorithm).and_then(|name| rim_column(p, name)) {
                    Some(c) => {
                        let mark = if c.counts[i] == ours { "" } else { " ≠" };
                        line.push(format!("{ours}{mark}"));
                        line.push(c.counts[i].to_string());
                    }
                    None => line.push(ours.to_string()),
                }
            }
            t.add_row(line);
        }
        let mut avg = vec!["average".to_string()];
        for r in &group {
            avg.push(fixed(r.average, 4));
            if let Some(c) = paper_name(r.algorithm).and_then(|name| rim_column(p, name)) {
                let h = Histogram::from_dense(&c.counts);
                avg.push(format!("{} (≥4 as 4)", fixed(h.average(), 4)));
            }
        }
        t.add_row(avg);
        crate::out!("{t}");
        for r in &group {
            if let Some(m) = r.matches_paper {
                let verdict = if m {
                    "matches the paper exactly"
                } else {
                    "differs from the paper (rows marked ≠)"
                };
                crate::out!("{} column: {verdict}", r.algorithm);
            }
        }
    }
}
