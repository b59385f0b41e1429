//! `hetlb reproduce rim-table1`: Rim, Jang & Kim's Table 1 (2003, §4) by exhaustive
//! enumeration, and the 64-processor column the paper does not have, from
//! [`hetlb_experiments::rim_table1`].

use crate::limits;
use crate::output::{Format, fixed, print_csv, print_json, table};
use crate::progress::bar;
use anyhow::{Context, Result, anyhow, bail};
use hetlb_core::Algorithm;
use hetlb_experiments::enumeration::{memory_needed, vector_count};
use hetlb_experiments::rim_table1::{
    PAPER_PROCS, ROWS, Table1Row as Row, bound_source, bucketed, column, published, values_for,
};

/// Arguments of `hetlb reproduce rim-table1`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  hetlb reproduce rim-table1\n  hetlb reproduce rim-table1 --procs 16\n  hetlb reproduce rim-table1 --procs 64 --format json"
)]
pub struct Args {
    /// Processors: 8, 16 or 32 (the paper's sizes, loads 0..=17, 0..=12, 0..=9), or 64 (loads
    /// 0..=7, beyond the paper); repeat or comma-separate [default: 8,16,32].
    #[arg(long, num_args = 1.., value_delimiter = ',', value_parser = crate::input::whole::<usize>(1, 1024))]
    procs: Vec<usize>,
    /// Algorithms to enumerate (the paper's columns are dem and oem).
    #[arg(long, num_args = 1.., value_delimiter = ',', default_value = "dem,oem")]
    algorithm: Vec<String>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb reproduce rim-table1`.
pub fn run(mut args: Args) -> Result<()> {
    args.procs = crate::input::unique(args.procs, "--procs");
    let procs = if args.procs.is_empty() {
        PAPER_PROCS.to_vec()
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
        let Some(values) = values_for(p) else {
            bail!(
                "--procs: the paper's Table 1 has 8, 16 and 32 processors (and this command adds 64), not {p} (use `hetlb enumerate` for other sizes)"
            );
        };
        for &algorithm in &algorithms {
            let count = vector_count(p, values);
            limits::check(
                "--procs",
                &format!("enumerating {count} vectors of {p} processors"),
                memory_needed(algorithm, p, values),
            )?;
            let progress = bar(count as u64, format!("{algorithm}, {p} processors"));
            let row = column(algorithm, p, &|done| progress.inc(done))
                .map_err(|e| anyhow!("--procs: {e}"))?;
            progress.finish_and_clear();
            rows.push(row);
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
                let paper = r
                    .published()
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
                match published(r.algorithm, p) {
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
            if let Some(c) = published(r.algorithm, p) {
                avg.push(format!("{} (≥4 as 4)", fixed(c.average(), 4)));
            }
        }
        t.add_row(avg);
        crate::out!("{t}");
        if group.iter().all(|r| r.published().is_none()) {
            crate::out!(
                "The paper's Table 1 stops at 32 processors: there is no published column to \
                 compare with. C({}, {p}) = {} vectors per algorithm.",
                p + first.values as usize - 1,
                first.vectors
            );
        }
        for r in &group {
            if let Some(m) = r.matches_paper {
                let verdict = if m {
                    "matches the paper exactly"
                } else {
                    "differs from the paper (rows marked ≠)"
                };
                crate::out!("{} column: {verdict}", r.algorithm);
            }
            if let (Some(b), Some(holds)) = (r.bound, r.bound_holds()) {
                let verdict = if holds {
                    "holds on every vector"
                } else {
                    "is EXCEEDED"
                };
                crate::out!(
                    "{}: largest max difference {} against the bound {b} ({}) — the bound {verdict}",
                    r.algorithm,
                    r.max_difference,
                    bound_source(r.algorithm)
                );
            }
        }
    }
}
