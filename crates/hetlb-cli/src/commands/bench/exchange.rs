//! `hetlb bench exchange`: one in-place balance of a 2^n-node cube against a plain pass.

use super::timing::{Case, Comparison, Machine, Report, interleave, timed, with_threads};
use crate::input::whole;
use crate::output::Format;
use anyhow::{Context, Result, bail};
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::exchange::{balance_in_place, simd_target};
use hetlb_core::model::Capacities;
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::{Algorithm, BalanceOptions, balance};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// Arguments of `hetlb bench exchange`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Hypercube dimension n (2^n nodes).
    #[arg(long, default_value_t = 24, value_parser = crate::input::whole::<u32>(1, 30))]
    dims: u32,
    /// Loads are uniform on 0..MAX_LOAD (seeded). Below 2^31 the kernel computes in 32-bit
    /// lanes.
    #[arg(long, default_value_t = 1_000_000, value_parser = crate::input::whole::<u64>(0, 1 << 40))]
    max_load: u64,
    /// Pair rules to time (dem, dem-fixed, dem-improved, dem-hetero, oem).
    #[arg(long, value_delimiter = ',', default_values_t = vec!["dem".to_string(), "oem".to_string()])]
    rules: Vec<String>,
    /// Also time the full planner, which records every transfer (about 12·2^n of them: some
    /// 5 GB at n = 24).
    #[arg(long)]
    full_plan: bool,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 7, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Threads for the kernels and the floor (default: all).
    #[arg(long, value_parser = crate::input::whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Details {
    dims: u32,
    nodes: usize,
    max_load: u64,
    /// The instruction set of the vector kernel on this processor.
    simd: &'static str,
    /// Lane width of the halving rules' kernel for these loads.
    lanes: &'static str,
    /// Median seconds of the plain pass.
    plain_pass_seconds: f64,
    /// Median seconds per timed case (`<rule>_seconds`, `<rule>_plan_seconds`).
    #[serde(flatten)]
    seconds: BTreeMap<String, f64>,
}

/// A seeded pseudo-random vector of `2^dims` loads below `max_load`.
pub(super) fn random_loads(dims: u32, max_load: u64) -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..1usize << dims)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % max_load.max(1)
        })
        .collect()
}

struct InPlace<'a>(&'a mut [u64]);

impl PairRuleVisitor for InPlace<'_> {
    type Output = u128;
    fn visit<R: PairRule>(self, rule: &R) -> u128 {
        balance_in_place(rule, self.0).map_or(0, |s| s.task_hops)
    }
}

/// The floor: one pass over the vector (a wrapping sum), on the same threads.
fn plain_pass(loads: &[u64]) -> u64 {
    loads
        .par_chunks(1 << 16)
        .map(|c| c.iter().fold(0u64, |s, &w| s.wrapping_add(w)))
        .reduce(|| 0, u64::wrapping_add)
}

/// Runs `hetlb bench exchange`.
pub fn run(a: Args) -> Result<()> {
    if a.dims > 30 {
        bail!("--dims: at most 30 (2^30 loads are 8 GiB)");
    }
    if a.max_load == 0 {
        bail!("--max-load: must be at least 1");
    }
    let mut rules = Vec::new();
    for r in &a.rules {
        let alg: Algorithm = r.parse().context("--rules")?;
        if !alg.is_pair_rule() {
            bail!(
                "--rules: {alg} is not a pair rule (dem, dem-fixed, dem-improved, dem-hetero, oem)"
            );
        }
        rules.push(alg);
    }
    let nodes = 1usize << a.dims;
    let loads = random_loads(a.dims, a.max_load);
    let caps = Capacities::uniform(nodes);
    let report = with_threads(a.threads, |threads| {
        let mut work = loads.clone();
        let work = std::cell::RefCell::new(&mut work);
        let mut cases = vec![Case::new("plain pass", || {
            Ok(timed(|| black_box(plain_pass(&work.borrow()))).1)
        })];
        for &alg in &rules {
            let (work, loads, caps) = (&work, &loads, &caps);
            cases.push(Case::new(alg.name(), move || {
                let mut w = work.borrow_mut();
                w.copy_from_slice(loads);
                Ok(timed(|| black_box(visit_pair_rule(alg, caps, InPlace(&mut w)))).1)
            }));
            if a.full_plan {
                cases.push(Case::new(format!("{alg}_plan"), move || {
                    Ok(timed(|| {
                        black_box(
                            balance(alg, loads, &BalanceOptions::default()).map(|p| p.phases.len()),
                        )
                    })
                    .1)
                }));
            }
        }
        let samples = interleave(a.repeat, 1, cases)?;
        let mut comparisons = Vec::new();
        let mut seconds = BTreeMap::new();
        for &alg in &rules {
            let name = alg.name();
            comparisons.push(Comparison::of(
                &samples,
                name,
                (name, &format!("{name}, in place")),
                ("plain pass", "plain pass (sum)"),
                Some(5.0),
            ));
            seconds.insert(format!("{name}_seconds"), samples.median(name));
            if a.full_plan {
                let key = format!("{name}_plan");
                comparisons.push(Comparison::of(
                    &samples,
                    &key,
                    (&key, &format!("{name}, full plan")),
                    ("plain pass", "plain pass (sum)"),
                    None,
                ));
                seconds.insert(format!("{key}_seconds"), samples.median(&key));
            }
        }
        let lanes = if a.max_load.saturating_sub(1).saturating_mul(2) <= u64::from(u32::MAX) {
            "u32"
        } else {
            "u64"
        };
        Ok(Report::new(
            "exchange",
            Machine::here(threads),
            a.repeat,
            Details {
                dims: a.dims,
                nodes,
                max_load: a.max_load,
                simd: simd_target(),
                lanes,
                plain_pass_seconds: samples.median("plain pass"),
                seconds,
            },
            comparisons,
        ))
    })?;
    let title = format!(
        "In-place balance of a {}-cube ({} loads below {}, {} MiB; {} lanes, {})",
        a.dims,
        nodes,
        a.max_load,
        (nodes * 8) >> 20,
        report.details.lanes,
        report.details.simd
    );
    report.print(a.format, &title, &[])
}
