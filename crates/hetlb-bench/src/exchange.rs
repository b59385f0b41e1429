//! One in-place balance of a 2^n-node cube by a pair rule against a plain pass over the same
//! vector on the same threads.

use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed, with_threads};
use crate::{BenchError, random_loads};
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::exchange::{balance_in_place, simd_target};
use hetlb_core::model::Capacities;
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::{Algorithm, BalanceOptions, balance};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// The largest cube timed: 2^30 loads are 8 GiB.
pub const MAX_DIMS: u32 = 30;

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExchangeConfig {
    /// Hypercube dimension n (2^n nodes), at most [`MAX_DIMS`].
    pub dims: u32,
    /// Loads are uniform on `0..max_load` (seeded). Below 2^31 the kernel computes in 32-bit
    /// lanes.
    pub max_load: u64,
    /// Pair rules to time (dem, dem-fixed, dem-improved, dem-hetero, oem).
    pub rules: Vec<Algorithm>,
    /// Also time the full planner, which records every transfer (about 12·2^n of them).
    pub full_plan: bool,
    /// Timed repetitions of each case (interleaved, after one untimed).
    pub repeat: usize,
    /// Threads for the kernels and the floor (`None`: all).
    pub threads: Option<usize>,
}

impl Default for ExchangeConfig {
    fn default() -> Self {
        Self {
            dims: 24,
            max_load: 1_000_000,
            rules: vec![Algorithm::Dem, Algorithm::Oem],
            full_plan: false,
            repeat: 7,
            threads: None,
        }
    }
}

crate::setters!(ExchangeConfig { dims: u32, max_load: u64, rules: Vec<Algorithm>, full_plan: bool, repeat: usize, threads: Option<usize> });

impl ExchangeConfig {
    /// An estimate of the bytes [`run`] holds at its peak: the loads, their working copy and
    /// the capacities (8 bytes a node each) and, with `full_plan`, a plan's transfers (`n/2`
    /// a node, with the room of their vectors) and its load vectors.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::exchange::ExchangeConfig;
    /// assert_eq!(ExchangeConfig::default().dims(30).memory_needed(), 32 << 30);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        let nodes = 1u128 << self.dims.min(64);
        let plan = if self.full_plan {
            let per_node = u128::from(self.dims.max(2) / 2) * hetlb_core::limit::TRANSFER_BYTES;
            nodes * (per_node * 3 / 2 + 16)
        } else {
            0
        };
        nodes * 32 + plan
    }
}

/// The parameters and figures of an exchange benchmark.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct ExchangeDetails {
    /// Hypercube dimension.
    pub dims: u32,
    /// `2^dims`.
    pub nodes: usize,
    /// The loads' bound.
    pub max_load: u64,
    /// The instruction set of the vector kernel on this processor.
    pub simd: &'static str,
    /// Lane width of the halving rules' kernel for these loads (`u32` or `u64`).
    pub lanes: &'static str,
    /// Median seconds of the plain pass.
    pub plain_pass_seconds: f64,
    /// Median seconds per timed case (`<rule>_seconds`, `<rule>_plan_seconds`).
    #[serde(flatten)]
    pub seconds: BTreeMap<String, f64>,
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

/// Times every rule of `cfg` balancing the same seeded loads in place (and, with
/// `full_plan`, planning them in full) against a plain pass over the vector; `progress(done,
/// total)` is told after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for `dims` above [`MAX_DIMS`], a `max_load` of 0, a rule that is
/// not a pair rule, no repetition or no thread.
///
/// # Complexity
/// `O(repeat × rules × n·2^n)` work; `8·2^n` bytes of loads (and, with `full_plan`, the
/// transfers of a plan).
///
/// # Example
/// ```
/// use hetlb_bench::exchange::{self, ExchangeConfig};
/// let cfg = ExchangeConfig::default().dims(6).repeat(1);
/// let r = exchange::run(&cfg, &mut |_, _| {}).unwrap();
/// assert_eq!(r.comparisons.len(), 2); // dem and oem, each against the plain pass
/// assert!(r.ratios.contains_key("oem_ratio"));
/// ```
pub fn run(
    cfg: &ExchangeConfig,
    progress: Progress<'_>,
) -> Result<Report<ExchangeDetails>, BenchError> {
    if cfg.dims > MAX_DIMS {
        return Err(BenchError::setting(
            "dims",
            "at most 30 (2^30 loads are 8 GiB)",
        ));
    }
    if cfg.max_load == 0 {
        return Err(BenchError::setting("max_load", "must be at least 1"));
    }
    if let Some(alg) = cfg.rules.iter().find(|a| !a.is_pair_rule()) {
        return Err(BenchError::setting(
            "rules",
            format!("{alg} is not a pair rule (dem, dem-fixed, dem-improved, dem-hetero, oem)"),
        ));
    }
    let rules = &cfg.rules;
    let nodes = 1usize << cfg.dims;
    let loads = random_loads(cfg.dims, cfg.max_load);
    let caps = Capacities::uniform(nodes);
    with_threads(cfg.threads, |threads| {
        let mut work = loads.clone();
        let work = std::cell::RefCell::new(&mut work);
        let mut cases = vec![Case::new("plain pass", || {
            Ok(timed(|| black_box(plain_pass(&work.borrow()))).1)
        })];
        for &alg in rules {
            let (work, loads, caps) = (&work, &loads, &caps);
            cases.push(Case::new(alg.name(), move || {
                let mut w = work.borrow_mut();
                w.copy_from_slice(loads);
                Ok(timed(|| black_box(visit_pair_rule(alg, caps, InPlace(&mut w)))).1)
            }));
            if cfg.full_plan {
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
        let samples = interleave(cfg.repeat, 1, cases, progress)?;
        let mut comparisons = Vec::new();
        let mut seconds = BTreeMap::new();
        for &alg in rules {
            let name = alg.name();
            comparisons.push(Comparison::of(
                &samples,
                name,
                (name, &format!("{name}, in place")),
                ("plain pass", "plain pass (sum)"),
                Some(5.0),
            ));
            seconds.insert(format!("{name}_seconds"), samples.median(name));
            if cfg.full_plan {
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
        let lanes = if cfg.max_load.saturating_sub(1).saturating_mul(2) <= u64::from(u32::MAX) {
            "u32"
        } else {
            "u64"
        };
        Ok(Report::new(
            "exchange",
            Machine::here(threads),
            cfg.repeat,
            ExchangeDetails {
                dims: cfg.dims,
                nodes,
                max_load: cfg.max_load,
                simd: simd_target(),
                lanes,
                plain_pass_seconds: samples.median("plain pass"),
                seconds,
            },
            comparisons,
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_full_plan_is_timed_on_request_and_other_rules_are_refused() {
        let mut cfg = ExchangeConfig::default()
            .dims(5)
            .repeat(1)
            .full_plan(true)
            .threads(Some(1));
        let r = run(&cfg, &mut |_, _| {}).unwrap();
        let keys: Vec<&str> = r.comparisons.iter().map(|c| c.key.as_str()).collect();
        assert_eq!(keys, ["dem", "dem_plan", "oem", "oem_plan"]);
        assert_eq!(r.details.lanes, "u32");
        assert_eq!(r.machine.threads, 1);
        cfg.rules = vec![Algorithm::Cwa];
        assert!(matches!(
            run(&cfg, &mut |_, _| {}),
            Err(BenchError::Setting {
                setting: "rules",
                ..
            })
        ));
        cfg.rules = vec![Algorithm::Dem];
        cfg.max_load = 0;
        assert!(matches!(
            run(&cfg, &mut |_, _| {}),
            Err(BenchError::Setting {
                setting: "max_load",
                ..
            })
        ));
    }
}
