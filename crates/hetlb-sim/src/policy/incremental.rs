//! Dimension exchange over a whole hypercube, recomputed only where the loads changed.
//!
//! A threshold policy (Rim, Jang & Kim 2003 §4) balances the whole cube again and again while
//! only a few nodes' loads change in between. Each exchange is a fixed sequence of phases; in
//! phase `k` the pair `(low, low | 2^k)` splits its units by a pure function of the pair's
//! address and its two loads ([`PairRule::split`]). So if the loads entering phase `k` equal,
//! on a pair, the loads that entered phase `k` of the previous exchange, the pair splits as it
//! did then and makes the same transfer. [`IncrementalExchange`] keeps the loads entering every
//! phase of the last exchange and that exchange's transfers, phase by phase; the next exchange
//! evaluates only the pairs that touch a node whose load differs from the kept one, and takes
//! every other pair's transfer from the last exchange. The transfers, their order and the
//! resulting loads are exactly those of [`hetlb_core::exchange::transfers_in_place`] (a
//! property test compares them).

use hetlb_core::Transfer;
use hetlb_core::rules::dimension_exchange::{PairContext, PairRule};
use std::collections::BTreeMap;

/// When the loads of more than `1/DENSE_SHARE` of the nodes changed, every pair is evaluated
/// instead.
const DENSE_SHARE: usize = 8;

/// The state of the last exchange of a hypercube, for the next one.
///
/// # Complexity
/// Memory `(n + 1)·N` loads and the last exchange's transfers for a cube of `N = 2^n` nodes.
/// The first exchange is `O(N log N)`; each later one is `O(Σ_k D_k + T log T)` where `D_k`
/// is the number of nodes whose load entering phase `k` differs from the previous exchange's
/// and `T` the number of transfers.
///
/// # Example
/// ```
/// use hetlb_core::exchange::transfers_in_place;
/// use hetlb_core::rules::dimension_exchange::Oem;
/// use hetlb_sim::policy::IncrementalExchange;
/// let mut ex = IncrementalExchange::default();
/// let mut out = Vec::new();
/// let before = [4, 7, 0, 9, 2, 2, 8, 1];
/// ex.exchange(&Oem, &before, &mut out);
/// // the transfers are carried out; then node 3 receives two tasks and node 6 completes one
/// let mut now = ex.loads().to_vec();
/// now[3] += 2;
/// now[6] -= 1;
/// // every node whose load differs from the last exchange's input
/// let changed: Vec<(usize, u64)> =
///     (0..8).filter(|&v| now[v] != before[v]).map(|v| (v, now[v])).collect();
/// out.clear();
/// ex.update(&Oem, &changed, &mut out);
/// let mut expected = Vec::new();
/// transfers_in_place(&Oem, &mut now, &mut expected).unwrap();
/// assert_eq!(out, expected);
/// assert_eq!(ex.loads(), &now[..]);
/// ```
#[derive(Debug, Clone, Default)]
pub struct IncrementalExchange {
    dims: u32,
    /// `inputs[k]`: the loads entering phase `k` of the last exchange; `inputs[n]` its result.
    inputs: Vec<Vec<u64>>,
    /// The transfers of each phase of the last exchange, by increasing low node.
    transfers: Vec<Vec<Transfer>>,
    /// How many nodes hold each load in the result (for its maximum and minimum).
    histogram: BTreeMap<u64, usize>,
    /// `mark[v] == stamp`: `v` is in the set being built.
    mark: Vec<u32>,
    stamp: u32,
    dirty: Vec<usize>,
    next: Vec<usize>,
    fresh: Vec<Transfer>,
    merged: Vec<Transfer>,
}

impl IncrementalExchange {
    /// True once an exchange of a cube of `nodes` nodes has been made.
    pub fn is_ready_for(&self, nodes: usize) -> bool {
        !self.inputs.is_empty() && self.inputs[0].len() == nodes
    }

    /// The loads of the last exchange's input (the state [`IncrementalExchange::update`]
    /// starts from).
    pub fn inputs_of_last(&self) -> &[u64] {
        self.inputs.first().map_or(&[], Vec::as_slice)
    }

    /// The loads after the last exchange.
    pub fn loads(&self) -> &[u64] {
        self.inputs.last().map_or(&[], Vec::as_slice)
    }

    /// The largest and the smallest load after the last exchange (`(0, 0)` before any).
    pub fn max_min(&self) -> (u64, u64) {
        match (
            self.histogram.last_key_value(),
            self.histogram.first_key_value(),
        ) {
            (Some((&max, _)), Some((&min, _))) => (max, min),
            _ => (0, 0),
        }
    }

    /// Exchanges `loads` (a power-of-two length, a total that fits in `u64`: the caller checks
    /// both) in every dimension, evaluating every pair; appends the transfers to `out`.
    ///
    /// # Complexity
    /// `O(N log N)`.
    pub fn exchange<R: PairRule>(&mut self, rule: &R, loads: &[u64], out: &mut Vec<Transfer>) {
        let n = loads.len();
        debug_assert!(n.is_power_of_two());
        self.dims = n.trailing_zeros();
        let phases = self.dims as usize;
        self.inputs.resize_with(phases + 1, Vec::new);
        self.transfers.resize_with(phases, Vec::new);
        self.inputs[0].clear();
        self.inputs[0].extend_from_slice(loads);
        for k in 0..phases {
            let (before, after) = self.inputs.split_at_mut(k + 1);
            let (input, output) = (&before[k], &mut after[0]);
            output.clear();
            output.extend_from_slice(input);
            let phase = &mut self.transfers[k];
            phase.clear();
            let half = 1usize << k;
            for low in (0..n).filter(|v| v & half == 0) {
                let (new_low, new_high) = split(rule, self.dims, k as u32, low, input);
                if let Some(t) = transfer(low, half, input[low], new_low) {
                    phase.push(t);
                }
                output[low] = new_low;
                output[low | half] = new_high;
            }
            out.extend_from_slice(phase);
        }
        self.histogram.clear();
        for &w in &self.inputs[phases] {
            *self.histogram.entry(w).or_insert(0) += 1;
        }
        self.mark.clear();
        self.mark.resize(n, 0);
        self.stamp = 0;
    }

    /// Exchanges the loads of the last exchange's input updated with `changed` (`(node, new
    /// load)` pairs; every node not listed has the load it had in that input, whatever the
    /// exchange gave it) and appends the transfers to `out`: exactly what
    /// [`IncrementalExchange::exchange`] of the whole vector would append.
    ///
    /// # Panics
    /// When no exchange was made before ([`IncrementalExchange::is_ready_for`]), or a node is
    /// out of range.
    pub fn update<R: PairRule>(
        &mut self,
        rule: &R,
        changed: &[(usize, u64)],
        out: &mut Vec<Transfer>,
    ) {
        assert!(!self.inputs.is_empty(), "update before the first exchange");
        let limit = self.inputs[0].len() / DENSE_SHARE;
        self.update_within(rule, changed, out, limit);
    }

    /// [`IncrementalExchange::update`], evaluating every pair when the loads of more than
    /// `limit` nodes changed.
    fn update_within<R: PairRule>(
        &mut self,
        rule: &R,
        changed: &[(usize, u64)],
        out: &mut Vec<Transfer>,
        limit: usize,
    ) {
        let stamp = self.next_stamp();
        self.dirty.clear();
        for &(v, w) in changed {
            if self.inputs[0][v] != w {
                self.inputs[0][v] = w;
                if self.mark[v] != stamp {
                    self.mark[v] = stamp;
                    self.dirty.push(v);
                }
            }
        }
        if self.dirty.len() > limit {
            let loads = std::mem::take(&mut self.inputs[0]);
            self.exchange(rule, &loads, out);
            return;
        }
        let phases = self.dims as usize;
        for k in 0..phases {
            let half = 1usize << k;
            // the pairs that touch a node whose input differs from the last exchange's, each
            // once, in any order (the pairs of a phase are disjoint)
            let stamp = self.next_stamp();
            self.next.clear();
            self.fresh.clear();
            let (before, after) = self.inputs.split_at_mut(k + 1);
            let (input, output) = (&before[k], &mut after[0]);
            let last = k + 1 == phases;
            for &v in &self.dirty {
                let low = v & !half;
                if self.mark[low] == stamp {
                    continue;
                }
                self.mark[low] = stamp;
                let (new_low, new_high) = split(rule, self.dims, k as u32, low, input);
                if let Some(t) = transfer(low, half, input[low], new_low) {
                    self.fresh.push(t);
                }
                for (v, w) in [(low, new_low), (low | half, new_high)] {
                    if output[v] != w {
                        if last {
                            remove_one(&mut self.histogram, output[v]);
                            *self.histogram.entry(w).or_insert(0) += 1;
                        }
                        output[v] = w;
                        self.next.push(v);
                    }
                }
            }
            // the last exchange's transfers of the other pairs, merged by low node
            self.fresh.sort_unstable_by_key(|t| t.from.min(t.to));
            self.merged.clear();
            let mut fresh = self.fresh.iter().peekable();
            for t in &self.transfers[k] {
                let low = t.from.min(t.to);
                if self.mark[low] == stamp {
                    continue;
                }
                while let Some(f) = fresh.next_if(|f| f.from.min(f.to) < low) {
                    self.merged.push(*f);
                }
                self.merged.push(*t);
            }
            self.merged.extend(fresh);
            out.extend_from_slice(&self.merged);
            std::mem::swap(&mut self.transfers[k], &mut self.merged);
            std::mem::swap(&mut self.dirty, &mut self.next);
        }
    }

    /// A new stamp for `mark`, clearing the marks when the counter wraps.
    fn next_stamp(&mut self) -> u32 {
        self.stamp = self.stamp.wrapping_add(1);
        if self.stamp == 0 {
            self.mark.fill(0);
            self.stamp = 1;
        }
        self.stamp
    }
}

/// The new loads of the pair `(low, low | 2^k)` under `rule`.
#[inline]
fn split<R: PairRule>(rule: &R, dims: u32, k: u32, low: usize, loads: &[u64]) -> (u64, u64) {
    let high = low | (1usize << k);
    let (a, b) = (loads[low], loads[high]);
    let ctx = PairContext {
        dimension: k,
        dimensions: dims,
        low,
    };
    let new_low = rule.split(ctx, a, b);
    (new_low, a + b - new_low)
}

/// The transfer of a pair whose low node goes from `a` to `new_low`, if any.
#[inline]
fn transfer(low: usize, half: usize, a: u64, new_low: u64) -> Option<Transfer> {
    let high = low | half;
    match new_low.cmp(&a) {
        std::cmp::Ordering::Equal => None,
        std::cmp::Ordering::Greater => Some(Transfer {
            from: high,
            to: low,
            units: new_low - a,
        }),
        std::cmp::Ordering::Less => Some(Transfer {
            from: low,
            to: high,
            units: a - new_low,
        }),
    }
}

fn remove_one(histogram: &mut BTreeMap<u64, usize>, w: u64) {
    if let Some(c) = histogram.get_mut(&w) {
        *c -= 1;
        if *c == 0 {
            histogram.remove(&w);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::Capacities;
    use hetlb_core::exchange::transfers_in_place;
    use hetlb_core::rules::dimension_exchange::{Dem, DemFixed, DemHetero, DemImproved, Oem};
    use proptest::prelude::*;

    /// Runs a sequence of exchanges, each after a few loads changed, incrementally (`sparse`:
    /// never falling back to the whole exchange) and with the core's in-place exchange; both
    /// must give the same transfers, in the same order, and the same loads every time.
    fn agree<R: PairRule>(
        rule: &R,
        dims: u32,
        start: &[u64],
        steps: &[Vec<(usize, u64)>],
        sparse: bool,
    ) {
        let n = 1usize << dims;
        let mut loads: Vec<u64> = start.iter().cycle().take(n).copied().collect();
        let mut ex = IncrementalExchange::default();
        let mut got = Vec::new();
        ex.exchange(rule, &loads, &mut got);
        let mut expected = Vec::new();
        transfers_in_place(rule, &mut loads, &mut expected).unwrap();
        assert_eq!(got, expected);
        assert_eq!(ex.loads(), &loads[..]);
        for step in steps {
            let before = ex.inputs_of_last().to_vec();
            for &(v, w) in step {
                loads[v % n] = w;
            }
            // every node that differs from the last input, and the listed ones even if not
            let mut changed: Vec<(usize, u64)> = (0..n)
                .filter(|&v| loads[v] != before[v])
                .map(|v| (v, loads[v]))
                .collect();
            changed.extend(step.iter().map(|&(v, _)| (v % n, loads[v % n])));
            got.clear();
            if sparse {
                ex.update_within(rule, &changed, &mut got, usize::MAX);
            } else {
                ex.update(rule, &changed, &mut got);
            }
            expected.clear();
            transfers_in_place(rule, &mut loads, &mut expected).unwrap();
            assert_eq!(got, expected);
            assert_eq!(ex.loads(), &loads[..]);
            let (max, min) = ex.max_min();
            assert_eq!(max, *loads.iter().max().unwrap());
            assert_eq!(min, *loads.iter().min().unwrap());
        }
    }

    proptest! {
        #[test]
        fn incremental_equals_the_whole_exchange(
            dims in 1u32..7,
            start in proptest::collection::vec(0u64..6, 1..70),
            steps in proptest::collection::vec(
                proptest::collection::vec((0usize..64, 0u64..7), 0..12), 1..8),
        ) {
            for sparse in [false, true] {
                agree(&Oem, dims, &start, &steps, sparse);
                agree(&Dem, dims, &start, &steps, sparse);
                agree(&DemFixed, dims, &start, &steps, sparse);
                agree(&DemImproved, dims, &start, &steps, sparse);
                let caps = (0..1usize << dims).map(|i| 1.0 + (i % 3) as f64).collect();
                let caps = Capacities::new(caps).unwrap();
                agree(&DemHetero::new(&caps), dims, &start, &steps, sparse);
            }
        }
    }
}
