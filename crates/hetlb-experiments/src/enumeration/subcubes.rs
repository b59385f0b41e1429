//! The distinct states of balanced subcubes, counted, built from the smallest subcubes up.
//!
//! See `README.md` beside this file for why this is exact and what it saves.

use crate::histogram::Histogram;
use hetlb_core::rules::dimension_exchange::{PairContext, PairRule};
use rayon::prelude::*;
use rustc_hash::FxHashMap;

/// Where a subcube sits and what it holds: processors `base..base + size`, raw values in
/// `0..values`, in a cube of `procs` processors and `n` dimensions.
#[derive(Debug, Clone, Copy)]
pub(super) struct Span {
    pub base: usize,
    pub size: usize,
    pub procs: usize,
    pub values: usize,
    pub n: u32,
}

impl Span {
    /// The group of a raw subcube whose values run from `lo` to `hi`. Only what a neighbour
    /// can constrain is kept: nothing lies left of the first subcube, so its smallest value
    /// never matters (0 stands for any), nor the largest of the last one.
    fn key(&self, lo: usize, hi: usize) -> usize {
        let lo = if self.base == 0 { 0 } else { lo };
        let hi = if self.base + self.size == self.procs {
            self.values - 1
        } else {
            hi
        };
        lo * self.values + hi
    }

    fn halves(&self) -> (Span, Span) {
        let size = self.size / 2;
        (
            Span { size, ..*self },
            Span {
                base: self.base + size,
                size,
                ..*self
            },
        )
    }
}

/// The distinct balanced states of one group of raw subcubes, sorted, with how many raw
/// subcubes end in each.
#[derive(Debug, Default, Clone)]
pub(super) struct Group {
    /// The states, `size` bytes each, one after the other.
    states: Vec<u8>,
    /// `counts[i]`: raw subcubes whose balanced state is state `i`.
    counts: Vec<u64>,
}

impl Group {
    fn len(&self) -> usize {
        self.counts.len()
    }

    fn state(&self, i: usize, size: usize) -> &[u8] {
        &self.states[i * size..(i + 1) * size]
    }

    fn from_counted(counted: FxHashMap<Box<[u8]>, u64>) -> Self {
        let mut entries: Vec<(Box<[u8]>, u64)> = counted.into_iter().collect();
        entries.sort_unstable();
        let mut group = Group::default();
        for (state, c) in entries {
            group.states.extend_from_slice(&state);
            group.counts.push(c);
        }
        group
    }
}

/// Every group of one subcube: `groups[lo * values + hi]` holds the raw subcubes (non-decreasing,
/// values in `0..values`) running from `lo` to `hi`, after the phases `0..log2(size)`, which
/// stay inside the subcube; identical states merged and counted.
#[derive(Debug)]
pub(super) struct Subcube {
    span: Span,
    groups: Vec<Group>,
}

impl Subcube {
    /// The states of every raw subcube of `span`, balanced: single processors hold their raw
    /// value; larger subcubes join their two halves.
    ///
    /// # Complexity
    /// `O(size)` lane operations per compatible pair of distinct half states, spread over
    /// rayon's threads.
    pub(super) fn build<R: PairRule>(rule: &R, span: Span) -> Self {
        if span.size == 1 {
            let mut groups = vec![Group::default(); span.values * span.values];
            for v in 0..span.values {
                let g = &mut groups[span.key(v, v)];
                g.states.push(v as u8);
                g.counts.push(1);
            }
            return Self { span, groups };
        }
        let (left, right) = span.halves();
        let (left, right) = rayon::join(|| Self::build(rule, left), || Self::build(rule, right));
        let groups = (0..span.values * span.values)
            .into_par_iter()
            .map(|key| Group::from_counted(join_group(rule, &left, &right, span, key)))
            .collect();
        Self { span, groups }
    }

    /// The raw subcubes that group `key` stands for.
    fn group_total(&self, key: usize) -> u64 {
        self.groups[key].counts.iter().sum()
    }
}

/// The non-empty groups of a subcube: `(smallest raw value, largest, group)`.
fn groups(cube: &Subcube) -> Vec<(usize, usize, &Group)> {
    let k = cube.span.values;
    cube.groups
        .iter()
        .enumerate()
        .filter(|(_, g)| g.len() > 0)
        .map(|(key, g)| (key / k, key % k, g))
        .collect()
}

/// The joined states of group `key` of `span`: every state of a left group and a compatible
/// right group (the left's largest raw value at most the right's smallest), with the phase
/// `log2(span.size / 2)` applied.
fn join_group<R: PairRule>(
    rule: &R,
    left: &Subcube,
    right: &Subcube,
    span: Span,
    key: usize,
) -> FxHashMap<Box<[u8]>, u64> {
    let half = span.size / 2;
    let dimension = half.trailing_zeros();
    let mut counted: FxHashMap<Box<[u8]>, u64> = FxHashMap::default();
    let mut joined = vec![0u8; span.size];
    let rights = groups(right);
    for (lo, mid_left, a_group) in groups(left) {
        for &(mid_right, hi, b_group) in &rights {
            if mid_left > mid_right || span.key(lo, hi) != key {
                continue;
            }
            for i in 0..a_group.len() {
                let a = a_group.state(i, half);
                for j in 0..b_group.len() {
                    let b = b_group.state(j, half);
                    for (l, (&x, &y)) in a.iter().zip(b).enumerate() {
                        let ctx = PairContext {
                            dimension,
                            dimensions: span.n,
                            low: span.base + l,
                        };
                        let nx = rule.split(ctx, x, y);
                        joined[l] = nx;
                        joined[half + l] = x + y - nx;
                    }
                    let c = a_group.counts[i] * b_group.counts[j];
                    match counted.get_mut(joined.as_slice()) {
                        Some(x) => *x += c,
                        None => {
                            counted.insert(joined.as_slice().into(), c);
                        }
                    }
                }
            }
        }
    }
    counted
}

/// The histogram of the final max difference over every raw vector of the whole cube
/// `span`: every compatible pair of distinct half states, joined by the last phase, counted
/// with the number of raw vectors it stands for. `progress` is called with the number of
/// vectors just counted.
///
/// # Complexity
/// `O(P/2)` lane operations per compatible pair of distinct half states, spread over rayon's
/// threads.
pub(super) fn histogram<R: PairRule>(
    rule: &R,
    span: Span,
    progress: &(dyn Fn(u64) + Sync),
) -> Histogram {
    let (left, right) = span.halves();
    let (left, right) = rayon::join(
        || Subcube::build(rule, left),
        || Subcube::build(rule, right),
    );
    let half = span.size / 2;
    let k = span.values;
    let rights = groups(&right);
    // partners[m]: raw right halves whose smallest value is at least m.
    let partners: Vec<u64> = (0..k)
        .map(|m| {
            rights
                .iter()
                .filter(|(lo, ..)| *lo >= m)
                .map(|(lo, hi, _)| right.group_total(lo * k + hi))
                .sum()
        })
        .collect();
    const STATES_PER_TASK: usize = 64;
    let lefts = groups(&left);
    let tasks: Vec<(usize, usize)> = lefts
        .iter()
        .enumerate()
        .flat_map(|(g, (_, _, group))| {
            (0..group.len())
                .step_by(STATES_PER_TASK)
                .map(move |start| (g, start))
        })
        .collect();
    let dimension = span.n - 1;
    let dense = tasks
        .par_iter()
        .map(|&(g, start)| {
            let (_, mid_left, group) = lefts[g];
            let mut dense = vec![0u64; k];
            let mut per_state = vec![0u64; k];
            let mut done = 0u64;
            for i in start..(start + STATES_PER_TASK).min(group.len()) {
                let a = group.state(i, half);
                per_state.fill(0);
                for &(mid_right, _, b_group) in &rights {
                    if mid_right < mid_left {
                        continue;
                    }
                    for (j, &c) in b_group.counts.iter().enumerate() {
                        let b = b_group.state(j, half);
                        per_state[difference(rule, a, b, dimension, span.n) as usize] += c;
                    }
                }
                let weight = group.counts[i];
                for (d, x) in dense.iter_mut().zip(&per_state) {
                    *d += weight * x;
                }
                done += weight * partners[mid_left];
            }
            progress(done);
            dense
        })
        .reduce(
            || vec![0u64; k],
            |mut x, y| {
                x.iter_mut().zip(&y).for_each(|(a, b)| *a += b);
                x
            },
        );
    Histogram::from_dense(&dense)
}

/// Max − min after the phase `dimension` joins halves `a` and `b` (whose first processor
/// is 0).
#[inline(always)]
fn difference<R: PairRule>(rule: &R, a: &[u8], b: &[u8], dimension: u32, n: u32) -> u8 {
    let (mut hi, mut lo) = (0u8, u8::MAX);
    for (l, (&x, &y)) in a.iter().zip(b).enumerate() {
        let ctx = PairContext {
            dimension,
            dimensions: n,
            low: l,
        };
        let nx = rule.split(ctx, x, y);
        let ny = x + y - nx;
        hi = hi.max(nx.max(ny));
        lo = lo.min(nx.min(ny));
    }
    hi - lo
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::rules::dimension_exchange::{DemImproved, Oem};

    fn span(base: usize, size: usize, procs: usize, values: usize) -> Span {
        Span {
            base,
            size,
            procs,
            values,
            n: procs.trailing_zeros(),
        }
    }

    fn total(cube: &Subcube) -> u64 {
        cube.groups.iter().flat_map(|g| &g.counts).sum()
    }

    #[test]
    fn groups_count_every_raw_subcube_once() {
        // subcubes of 4 processors with values 0..5: C(8, 4) = 70 raw subcubes, wherever
        // they sit in a cube of 16
        for base in [0, 4, 8, 12] {
            let cube = Subcube::build(&DemImproved, span(base, 4, 16, 5));
            assert_eq!(total(&cube), 70, "base {base}");
            for g in &cube.groups {
                assert_eq!(g.states.len(), g.len() * 4);
                // sorted and distinct
                let mut states = g.states.chunks(4);
                let mut previous = states.next();
                for s in states {
                    assert!(previous < Some(s));
                    previous = Some(s);
                }
            }
        }
    }

    #[test]
    fn only_constrained_ends_are_kept() {
        let inner = span(4, 4, 16, 5);
        assert_eq!(inner.key(1, 3), 5 + 3); // lo · K + hi
        assert_eq!(span(0, 4, 16, 5).key(1, 3), 3);
        assert_eq!(span(12, 4, 16, 5).key(1, 3), 5 + 4);
        let h = histogram(&Oem, span(0, 8, 8, 18), &|_| {});
        assert_eq!(h.total(), 1_081_575);
    }
}
