//! Runs of pair exchanges under a halving rule, in vector instructions chosen at run time.
//!
//! A *run* is two equally long slices `lo` and `hi` whose `i`-th entries form a pair, with the
//! same [`OddUnit`] for every pair. The loop body is branch-free (adds, shifts, compares and
//! selects), so the compiler vectorises it; [`multiversion`] compiles it for AVX-512, AVX2 and
//! SSE4.2 as well as the baseline, and picks the best one the processor has on the first call
//! (one atomic load per call after that). The default build thus stays baseline x86-64.

use super::engine::DimStats;
use crate::rules::dimension_exchange::OddUnit;
use crate::units::Units;
use multiversion::multiversion;

const HEAVIER: u8 = 0;
const LOW: u8 = 1;
const HIGH: u8 = 2;
const ODD_SHARE: u8 = 3;

/// One run with the odd unit placed by `ODD`; adds the run's totals to `stats`.
#[inline(always)]
fn run<C: Units, const ODD: u8>(lo: &mut [C], hi: &mut [C], stats: &mut DimStats) {
    let (mut hops, mut messages, mut tmax) = (0u64, 0u64, C::ZERO);
    for (l, h) in lo.iter_mut().zip(hi.iter_mut()) {
        let (a, b) = (*l, *h);
        let sum = a + b;
        let keeps = match ODD {
            HEAVIER => a >= b,
            LOW => true,
            HIGH => false,
            _ => (sum >> 1) & C::ONE == C::ZERO,
        };
        let new_low = (sum >> 1) + (sum & C::from_bool(keeps));
        *l = new_low;
        *h = sum - new_low;
        let moved = new_low.max(a) - new_low.min(a);
        hops += moved.to_u64();
        messages += u64::from(moved != C::ZERO);
        tmax = tmax.max(moved);
    }
    stats.hops += hops;
    stats.messages += messages;
    stats.tmax = stats.tmax.max(tmax.to_u64());
}

/// Applies one dimension to `data`, seen as consecutive chunks of `2·half` entries whose first
/// half pairs with the second. Each half is cut into runs of `run_len` entries; run `r` of
/// chunk `c` places the odd unit as `odd_unit(c, r)` says.
///
/// `half` must be a multiple of `run_len`, and `data.len()` of `2·half`; every pair's sum
/// must fit in `C`.
///
/// # Complexity
/// `O(data.len())`, in vectors of 16 (AVX-512, `u32`) to 2 (baseline, `u64`) lanes.
#[multiversion(targets(
    "x86_64+avx512f+avx512bw+avx512vl+avx512dq+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+avx2+fma+bmi1+bmi2+lzcnt+popcnt",
    "x86_64+sse4.2+popcnt",
))]
pub(super) fn halve_chunks<C: Units, F: Fn(usize, usize) -> OddUnit>(
    data: &mut [C],
    half: usize,
    run_len: usize,
    odd_unit: F,
) -> DimStats {
    let mut stats = DimStats::default();
    for (c, chunk) in data.chunks_exact_mut(2 * half).enumerate() {
        let (lo, hi) = chunk.split_at_mut(half);
        for (r, (l, h)) in lo
            .chunks_exact_mut(run_len)
            .zip(hi.chunks_exact_mut(run_len))
            .enumerate()
        {
            match odd_unit(c, r) {
                OddUnit::Heavier => run::<C, HEAVIER>(l, h, &mut stats),
                OddUnit::Low => run::<C, LOW>(l, h, &mut stats),
                OddUnit::High => run::<C, HIGH>(l, h, &mut stats),
                OddUnit::OddShare => run::<C, ODD_SHARE>(l, h, &mut stats),
            }
        }
    }
    stats
}

/// The instruction set [`halve_chunks`] runs with on this processor.
pub(super) fn selected_target() -> &'static str {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            return "avx512";
        }
        if std::arch::is_x86_feature_detected!("avx2")
            && std::arch::is_x86_feature_detected!("fma")
            && std::arch::is_x86_feature_detected!("bmi1")
            && std::arch::is_x86_feature_detected!("bmi2")
            && std::arch::is_x86_feature_detected!("lzcnt")
        {
            return "avx2";
        }
        if std::arch::is_x86_feature_detected!("sse4.2") {
            return "sse4.2";
        }
    }
    "baseline"
}
