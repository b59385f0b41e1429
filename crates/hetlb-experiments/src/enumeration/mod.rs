//! Exhaustive enumeration of load vectors (Rim, Jang & Kim 2003, §4, Table 1).
//!
//! Rim et al. count, over *every* non-decreasing load vector with values in `0..K` placed on
//! processors `0..P−1`, how many end with each max difference. There are `C(K−1+P, P)` such
//! vectors: 350,343,565 for `P = 32, K = 10`, 1,329,890,705 for `P = 64, K = 8`.
//!
//! A straightforward loop balances each vector from scratch. Instead, every phase but the last
//! stays inside a half of the cube, and inside a half every phase but its last stays inside a
//! quarter, and so on: a subcube's state after its own phases depends only on its own raw
//! values. Subcube states are built from the smallest subcubes up, grouped by their smallest
//! and largest raw value, and identical states are merged and counted. The last phase then
//! joins every compatible pair of *distinct* half states (the left's largest raw value at most
//! the right's smallest), weighted by the number of raw vectors the pair stands for. Design
//! notes: `README.md` beside this file.

mod subcubes;

use crate::histogram::Histogram;
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::topology::Hypercube;
use hetlb_core::{Algorithm, BalanceOptions, Capacities, balance};
use rayon::prelude::*;
use subcubes::{Span, histogram};
use thiserror::Error;

/// Largest number of distinct values (loads `0..=127`, so pair sums fit in a `u8`).
pub const MAX_VALUES: u32 = 128;
/// Largest enumeration accepted for the dimension-exchange rules.
pub const MAX_VECTORS: u128 = 100_000_000_000;
/// Largest enumeration accepted for `cwa` and `hybrid`, which are planned one vector at a time.
pub const MAX_PLANNED_VECTORS: u128 = 50_000_000;

/// Why an enumeration cannot run.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum EnumerationError {
    /// Processor count not a power of two.
    #[error(transparent)]
    Procs(#[from] hetlb_core::ModelError),
    /// Value count out of range.
    #[error("the number of values must be between 1 and {MAX_VALUES}, not {0}")]
    Values(u32),
    /// Too many vectors.
    #[error("{count} vectors is more than the {limit} this enumeration accepts for {algorithm}")]
    TooMany {
        /// Vectors that would be enumerated.
        count: u128,
        /// The limit.
        limit: u128,
        /// The algorithm.
        algorithm: Algorithm,
    },
}

/// `C(K−1+P, P)`: the number of non-decreasing vectors of `procs` values in `0..values`,
/// saturating at `u128::MAX`.
///
/// # Example
/// ```
/// use hetlb_experiments::enumeration::vector_count;
/// assert_eq!(vector_count(8, 18), 1_081_575);
/// assert_eq!(vector_count(32, 10), 350_343_565);
/// ```
pub fn vector_count(procs: usize, values: u32) -> u128 {
    if values == 0 {
        return 0;
    }
    let (n, k) = (u128::from(values) - 1 + procs as u128, procs as u128);
    let k = k.min(n - k);
    let mut c: u128 = 1;
    for i in 0..k {
        // c·(n−i) is divisible by (i+1) after the multiplication.
        match c.checked_mul(n - i) {
            Some(x) => c = x / (i + 1),
            None => return u128::MAX,
        }
    }
    c
}

/// The histogram of the final max difference of `algorithm` over every non-decreasing load
/// vector of `procs` processors with values in `0..values`.
///
/// `progress` is called with the number of vectors just finished.
///
/// # Errors
/// [`EnumerationError`] for a processor count that is not a power of two, a value count
/// outside `1..=128`, or more vectors than [`MAX_VECTORS`] ([`MAX_PLANNED_VECTORS`] for
/// `cwa` and `hybrid`).
///
/// # Complexity
/// For the pair rules, `O(s)` lane operations per compatible pair of distinct states of the
/// two halves of every subcube of `2s` processors — at most `C(K−1+P, P)` pairs at the top,
/// and in practice far fewer (about 250 million instead of 1.33 billion for `P = 64, K = 8`);
/// spread over rayon's threads. Deterministic whatever the thread count.
///
/// # Example
/// ```
/// use hetlb_core::Algorithm;
/// use hetlb_experiments::enumeration::enumerate;
/// let h = enumerate(Algorithm::Oem, 8, 18, &|_| {}).unwrap();
/// assert_eq!([h.count(0), h.count(1), h.count(2), h.count_at_least(3)], [87_034, 925_739, 68_802, 0]);
/// ```
pub fn enumerate(
    algorithm: Algorithm,
    procs: usize,
    values: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Histogram, EnumerationError> {
    let cube = Hypercube::for_nodes(procs)?;
    if values == 0 || values > MAX_VALUES {
        return Err(EnumerationError::Values(values));
    }
    let count = vector_count(procs, values);
    let limit = if algorithm.is_pair_rule() {
        MAX_VECTORS
    } else {
        MAX_PLANNED_VECTORS
    };
    if count > limit {
        return Err(EnumerationError::TooMany {
            count,
            limit,
            algorithm,
        });
    }
    if procs == 1 {
        progress(u64::from(values));
        return Ok(Histogram::from_dense(&[u64::from(values)]));
    }
    struct Halves<'a> {
        cube: Hypercube,
        values: u32,
        progress: &'a (dyn Fn(u64) + Sync),
    }
    impl PairRuleVisitor for Halves<'_> {
        type Output = Histogram;
        fn visit<R: PairRule>(self, rule: &R) -> Histogram {
            by_halves(rule, self.cube, self.values, self.progress)
        }
    }
    let caps = Capacities::uniform(procs);
    let halves = Halves {
        cube,
        values,
        progress,
    };
    Ok(match visit_pair_rule(algorithm, &caps, halves) {
        Some(h) => h,
        None => one_by_one(algorithm, procs, values, progress),
    })
}

/// An upper bound on the bytes [`enumerate`] holds at its peak. For the pair rules: the
/// distinct half states of both sides (at most `C(K−1+H, H)` each, `H = P/2`, with their
/// counts and the hash tables that merge them) and one batch of raw halves per side; in
/// practice far fewer states are distinct (about 0.5 million of 15 million for `P = 64,
/// K = 8`). For the others, every vector (`P·C(K−1+P, P)`). Saturates at `u128::MAX`.
///
/// # Example
/// ```
/// use hetlb_core::Algorithm;
/// use hetlb_experiments::enumeration::memory_needed;
/// // 64 processors, loads 0..=7: at most 15,380,937 distinct states of 32 bytes per side.
/// assert!(memory_needed(Algorithm::Oem, 64, 8) < 4 << 30);
/// assert!(memory_needed(Algorithm::Oem, 64, 16) > 100 << 30);
/// ```
pub fn memory_needed(algorithm: Algorithm, procs: usize, values: u32) -> u128 {
    if algorithm.is_pair_rule() && procs >= 2 {
        let half = procs as u128 / 2;
        // a distinct state while counting: its bytes, a boxed key (pointer, length, heap
        // header), its count and hash-table slack; once counted: its bytes and count
        let counting = 2 * half + 64;
        let counted = half + 8;
        vector_count(procs / 2, values).saturating_mul(counting + counted)
    } else {
        vector_count(procs, values).saturating_mul(procs as u128)
    }
}

/// Every non-decreasing vector of `len` values in `0..values`, in lexicographic order (so
/// sorted by first element), flattened.
fn non_decreasing(len: usize, values: u32) -> Vec<u8> {
    let top = (values - 1) as u8;
    let mut out = Vec::with_capacity(len * vector_count(len, values) as usize);
    let mut v = vec![0u8; len];
    loop {
        out.extend_from_slice(&v);
        let Some(i) = v.iter().rposition(|&x| x < top) else {
            return out;
        };
        let next = v[i] + 1;
        v[i..].fill(next);
    }
}

/// Distinct subcube states first: see the module documentation.
fn by_halves<R: PairRule>(
    rule: &R,
    cube: Hypercube,
    values: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Histogram {
    let span = Span {
        base: 0,
        size: cube.nodes(),
        procs: cube.nodes(),
        values: values as usize,
        n: cube.dimensions(),
    };
    histogram(rule, span, progress)
}

/// Every vector planned from scratch: for the algorithms that are not pair rules.
fn one_by_one(
    algorithm: Algorithm,
    procs: usize,
    values: u32,
    progress: &(dyn Fn(u64) + Sync),
) -> Histogram {
    let raw = non_decreasing(procs, values);
    let dense = raw
        .par_chunks(procs * 4096)
        .map(|chunk| {
            let mut dense = vec![0u64; values as usize];
            for v in chunk.chunks_exact(procs) {
                let loads: Vec<u64> = v.iter().map(|&x| u64::from(x)).collect();
                let plan =
                    balance(algorithm, &loads, &BalanceOptions::default()).expect("valid loads");
                let max = plan.final_loads.iter().max().copied().unwrap_or(0);
                let min = plan.final_loads.iter().min().copied().unwrap_or(0);
                dense[(max - min) as usize] += 1;
            }
            progress((chunk.len() / procs) as u64);
            dense
        })
        .reduce(
            || vec![0u64; values as usize],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(a, b)| *a += b);
                x
            },
        );
    Histogram::from_dense(&dense)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::exchange::plan;
    use hetlb_core::rules::dimension_exchange::{Dem, DemImproved, Oem};

    fn brute<R: PairRule>(rule: &R, procs: usize, values: u32) -> Histogram {
        let raw = non_decreasing(procs, values);
        let mut h = Histogram::default();
        for v in raw.chunks_exact(procs) {
            let loads: Vec<u64> = v.iter().map(|&x| u64::from(x)).collect();
            let p = plan(rule, &loads).unwrap();
            let max = p.final_loads.iter().max().unwrap();
            let min = p.final_loads.iter().min().unwrap();
            h.add(max - min, 1);
        }
        h
    }

    #[test]
    fn halves_agree_with_planning_every_vector() {
        for (procs, values) in [(2, 9), (4, 7), (8, 5), (16, 3)] {
            let caps = Capacities::uniform(procs);
            for alg in [
                Algorithm::Dem,
                Algorithm::Oem,
                Algorithm::DemImproved,
                Algorithm::DemFixed,
                Algorithm::DemHetero,
            ] {
                let fast = enumerate(alg, procs, values, &|_| {}).unwrap();
                struct Brute(usize, u32);
                impl PairRuleVisitor for Brute {
                    type Output = Histogram;
                    fn visit<R: PairRule>(self, rule: &R) -> Histogram {
                        brute(rule, self.0, self.1)
                    }
                }
                let slow = visit_pair_rule(alg, &caps, Brute(procs, values)).unwrap();
                assert_eq!(fast, slow, "{alg} P={procs} K={values}");
                assert_eq!(u128::from(fast.total()), vector_count(procs, values));
            }
        }
        let _ = (Dem, Oem, DemImproved);
    }

    #[test]
    fn counts_and_limits() {
        assert_eq!(vector_count(16, 13), 30_421_755);
        assert_eq!(vector_count(1, 5), 5);
        assert_eq!(vector_count(3, 0), 0);
        assert_eq!(vector_count(1024, 128), u128::MAX);
        assert_eq!(
            non_decreasing(2, 3),
            vec![0, 0, 0, 1, 0, 2, 1, 1, 1, 2, 2, 2]
        );
        assert!(matches!(
            enumerate(Algorithm::Oem, 6, 4, &|_| {}),
            Err(EnumerationError::Procs(_))
        ));
        assert_eq!(
            enumerate(Algorithm::Oem, 8, 0, &|_| {}),
            Err(EnumerationError::Values(0))
        );
        assert_eq!(
            enumerate(Algorithm::Oem, 8, 129, &|_| {}),
            Err(EnumerationError::Values(129))
        );
        assert!(matches!(
            enumerate(Algorithm::Oem, 64, 100, &|_| {}),
            Err(EnumerationError::TooMany { .. })
        ));
        assert!(matches!(
            enumerate(Algorithm::Cwa, 16, 20, &|_| {}),
            Err(EnumerationError::TooMany { .. })
        ));
        let one = enumerate(Algorithm::Dem, 1, 7, &|_| {}).unwrap();
        assert_eq!(one.count(0), 7);
    }

    #[test]
    fn cube_walking_enumerates_within_one() {
        let h = enumerate(Algorithm::Cwa, 8, 6, &|_| {}).unwrap();
        assert_eq!(u128::from(h.total()), vector_count(8, 6));
        assert_eq!(h.count_at_least(2), 0);
    }
}
