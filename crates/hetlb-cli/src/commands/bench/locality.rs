//! `hetlb bench locality`: keeping subdomains compact under a drifting hotspot — hetlb with
//! the items' positions, without them, and a geometric partition from scratch at every step
//! (recursive coordinate bisection), side by side.

use super::flagged;
use crate::input::whole;
use crate::output::{Format, fixed, print_csv, print_json, table};
use anyhow::{Context, Result};
use hetlb_bench::locality::{LocalityConfig, LocalityReport, MAX_ITEMS, MAX_RANKS};
use hetlb_core::algorithm::Algorithm;

/// Arguments of `hetlb bench locality`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:\n  \
    hetlb bench locality\n  \
    hetlb bench locality --ranks 8 --items 200000 --steps 20 --dims 2\n  \
    hetlb bench locality --dims 3 --algorithm dishet --format json")]
pub struct Locality {
    /// Ranks (threads); rank r has capacity r + 1.
    #[arg(long, default_value = "8", value_parser = whole::<usize>(2, MAX_RANKS))]
    ranks: usize,
    /// Items, uniformly placed in the unit square (cube).
    #[arg(long, default_value = "200000", value_parser = whole::<u64>(1, MAX_ITEMS))]
    items: u64,
    /// Steps: the hotspot crosses the domain over them, one rebalance each.
    #[arg(long, default_value = "20", value_parser = whole::<usize>(1, 1000))]
    steps: usize,
    /// Dimensions of the domain: 2 or 3.
    #[arg(long, default_value = "2", value_parser = whole::<usize>(2, 3))]
    dims: usize,
    /// The rule hetlb balances with (direct routing).
    #[arg(long, default_value = "cwa")]
    algorithm: String,
    /// Seed of the items' positions.
    #[arg(long, default_value = "1", value_parser = whole::<u64>(0, u64::MAX))]
    seed: u64,
    /// Print every step, not only the totals.
    #[arg(long)]
    steps_table: bool,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

/// Runs `hetlb bench locality`.
pub fn run(a: Locality) -> Result<()> {
    let mut cfg = LocalityConfig::default();
    (cfg.ranks, cfg.items, cfg.steps, cfg.dims, cfg.seed) =
        (a.ranks, a.items, a.steps, a.dims, a.seed);
    cfg.rule = a.algorithm.parse::<Algorithm>().context("--algorithm")?;
    crate::limits::check(
        "--items",
        &format!("{} items on {} ranks", a.items, a.ranks),
        u128::from(a.items) * 400,
    )?;
    let r = hetlb_bench::locality::run(&cfg).map_err(flagged)?;
    match a.format {
        Format::Json => print_json(&r),
        Format::Csv => print_csv(
            &[
                "step",
                "method",
                "spread",
                "moved",
                "minimum",
                "imbalance",
                "seconds",
            ],
            r.rows.iter().map(|x| {
                [
                    x.step.to_string(),
                    x.method.to_string(),
                    x.spread.to_string(),
                    x.moved.to_string(),
                    x.minimum.to_string(),
                    x.imbalance.to_string(),
                    x.seconds.to_string(),
                ]
            }),
        ),
        Format::Table => {
            print_text(&r, a.steps_table);
            Ok(())
        }
    }
}

fn print_text(r: &LocalityReport, steps: bool) {
    println!(
        "Locality: {} items in {}-D on {} ranks (capacities 1..{}), a hotspot crossing the \
         domain over {} steps, {} with direct routing",
        r.items, r.dims, r.ranks, r.ranks, r.steps, r.rule
    );
    if steps {
        let mut t = table([
            "step",
            "method",
            "spread",
            "moved",
            "minimum",
            "imbalance",
            "ms",
        ]);
        for x in &r.rows {
            t.add_row([
                x.step.to_string(),
                x.method.to_string(),
                fixed(x.spread, 3),
                x.moved.to_string(),
                x.minimum.to_string(),
                fixed(x.imbalance, 3),
                fixed(x.seconds * 1e3, 2),
            ]);
        }
        println!("{t}");
    }
    let mut t = table([
        "method",
        "worst spread",
        "worst spread ÷ rcb",
        "moved ÷ minimum",
        "worst step moved ÷ minimum",
        "worst imbalance",
        "median ms",
    ]);
    for m in &r.totals {
        t.add_row([
            m.method.to_string(),
            fixed(m.worst_spread, 3),
            fixed(m.worst_spread_over_rcb, 3),
            fixed(m.moved_over_minimum, 3),
            fixed(m.worst_moved_over_minimum, 3),
            fixed(m.worst_imbalance, 4),
            fixed(m.median_seconds * 1e3, 2),
        ]);
    }
    println!("{t}");
    println!(
        "spread: RMS distance of a rank's items from its centroid over that of all items (1.0 \
         random, lower compact); moved: units whose rank changed, against the minimum (the \
         positive excesses over the capacity-proportional targets); rcb: recursive coordinate \
         bisection from scratch at every step, its time computing the partition on one thread."
    );
}
