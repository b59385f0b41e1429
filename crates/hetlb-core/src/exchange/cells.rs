//! Dimensions 0, 1 and 2 of a halving rule with every transfer recorded, on cells of eight
//! nodes, for [`super::transfers_in_place`].
//!
//! These dimensions pair nodes 1, 2 and 4 apart, within aligned cells of eight nodes, so a
//! cell goes through all three at once, its loads held in registers. Vectorising them (per-pair
//! placement masks on cells of 16 nodes) compiled to gathers and scatters and was no faster.
//!
//! Between two of the simulator's balances most cells are *near*: their eight loads are `q` or
//! `q + 1` for some `q` (96% of the cells at 16,384 nodes on `rim-dynamic`). A halving rule
//! keeps every pair within its two loads, so such a cell stays near through the three
//! dimensions, every transfer is of one unit, and the outcome depends only on which nodes hold
//! `q + 1`, on the parity of `q` (the odd-share rule looks at it) and on bit 3 of the cell's
//! address (the placement of dimension 2). [`NearTable`] holds the 1,024 outcomes, computed by
//! the same pair decision as the other cells; a near cell is then one lookup, and one that
//! moves nothing (most) is not written back.

use super::lanes::Placement;
use crate::plan::Transfer;
use crate::rules::dimension_exchange::OddUnit;
use std::cell::RefCell;

/// Nodes of a cell: the three lowest dimensions pair nodes within it.
pub(super) const CELL: usize = 8;

/// The pairs `(l, h)` of a cell in dimensions 0, 1 and 2, each dimension's in pair order.
const PAIRS: [[(usize, usize); 4]; 3] = [
    [(0, 1), (2, 3), (4, 5), (6, 7)],
    [(0, 2), (1, 3), (4, 6), (5, 7)],
    [(0, 4), (1, 5), (2, 6), (3, 7)],
];

/// Bit `k + 1` of the addresses of pair `p` of dimension `k` in a cell, for `k < 2` (that of
/// dimension 2 is the cell's lowest bit).
const NEXT_BIT: [[usize; 4]; 2] = [[0, 1, 0, 1], [0, 0, 1, 1]];

/// Applies dimensions 0, 1 and 2 to the cell `w` whose lowest address bit is `cell_bit`,
/// calling `moved(k, p, before, after)` for pair `p` of dimension `k` whose low node went from
/// `before` to `after` units, in the order of the transfers.
#[inline(always)]
fn cell_dimensions(
    place: &[[Placement; 2]; 3],
    w: &mut [u64; CELL],
    cell_bit: usize,
    mut moved: impl FnMut(usize, usize, u64, u64),
) {
    for (k, pairs) in PAIRS.iter().enumerate() {
        for (p, &(l, h)) in pairs.iter().enumerate() {
            let next_bit = if k < 2 { NEXT_BIT[k][p] } else { cell_bit };
            let (a, b) = (w[l], w[h]);
            let new_low = place[k][next_bit].new_low(a, b);
            if new_low != a {
                moved(k, p, a, new_low);
            }
            w[l] = new_low;
            w[h] = a + b - new_low;
        }
    }
}

/// The outcome of the three dimensions on a near cell.
#[derive(Debug, Clone, Copy, Default)]
struct NearOutcome {
    /// Bit `i` set when node `i` ends with `q + 1`.
    after: u8,
    /// Per dimension, bit `p` set when pair `p` moves a unit.
    moved: [u8; 3],
    /// Per dimension, bit `p` set when pair `p`'s unit goes to its low node.
    to_low: [u8; 3],
}

/// The outcomes of near cells under one rule's placements, indexed by [`NearTable::index`].
struct NearTable {
    odd: [[OddUnit; 2]; 3],
    outcomes: Box<[NearOutcome; 1024]>,
}

impl NearTable {
    /// Index of a near cell: which nodes hold `q + 1`, the parity of `q`, the cell's lowest bit.
    #[inline(always)]
    fn index(high_mask: u8, q: u64, cell_bit: usize) -> usize {
        usize::from(high_mask) | ((q & 1) as usize) << 8 | cell_bit << 9
    }

    /// Every outcome, from the cell with `q` of the given parity (0 or 1: a halving rule looks
    /// at `q` through its parity only) by [`cell_dimensions`]. 1,024 cells of 12 pairs.
    fn new(odd: [[OddUnit; 2]; 3], place: &[[Placement; 2]; 3]) -> Self {
        let mut outcomes = Box::new([NearOutcome::default(); 1024]);
        for (i, outcome) in outcomes.iter_mut().enumerate() {
            let (mask, q, cell_bit) = (i & 0xff, (i >> 8) as u64 & 1, i >> 9);
            let mut w: [u64; CELL] = std::array::from_fn(|j| q + ((mask >> j) & 1) as u64);
            cell_dimensions(place, &mut w, cell_bit, |k, p, before, after| {
                debug_assert_eq!(before.abs_diff(after), 1, "a near cell moves single units");
                outcome.moved[k] |= 1 << p;
                outcome.to_low[k] |= u8::from(after > before) << p;
            });
            debug_assert!(w.iter().all(|&x| x == q || x == q + 1));
            outcome.after = (0..CELL).fold(0, |m, j| m | (u8::from(w[j] > q) << j));
        }
        Self { odd, outcomes }
    }
}

thread_local! {
    /// The last tables built on this thread (a rule's placements change with the cube's
    /// dimension count only in the last dimensions, so a few suffice).
    static NEAR_TABLES: RefCell<Vec<NearTable>> = const { RefCell::new(Vec::new()) };
}

/// Tables kept per thread at most.
const KEPT_TABLES: usize = 4;

/// Applies dimensions 0, 1 and 2 to `loads` (a cube of at least [`CELL`] nodes), the odd unit
/// of a pair of dimension `k` placed by `odd[k][b]`, `b` being bit `k + 1` of the pair's
/// addresses, and appends the transfers of dimension 0, then 1, then 2, each in pair order.
///
/// `O(N)`; allocates only for the transfers of dimensions 1 and 2, and a table of 1,024 near
/// outcomes (8 KiB) the first time a thread sees a rule's placements.
pub(super) fn low_dimensions(
    odd: [[OddUnit; 2]; 3],
    loads: &mut [u64],
    transfers: &mut Vec<Transfer>,
) {
    debug_assert!(loads.len() >= CELL && loads.len().is_power_of_two());
    let place = odd.map(|pair| pair.map(Placement::of));
    NEAR_TABLES.with_borrow_mut(|tables| {
        let at = match tables.iter().position(|t| t.odd == odd) {
            Some(at) => at,
            None => {
                if tables.len() == KEPT_TABLES {
                    tables.remove(0);
                }
                tables.push(NearTable::new(odd, &place));
                tables.len() - 1
            }
        };
        cells(&place, &tables[at], loads, transfers);
    });
}

/// [`low_dimensions`] with the near outcomes of its placements.
fn cells(
    place: &[[Placement; 2]; 3],
    table: &NearTable,
    loads: &mut [u64],
    transfers: &mut Vec<Transfer>,
) {
    let mut later: [Vec<Transfer>; 2] = Default::default();
    for (c, cell) in loads.chunks_exact_mut(CELL).enumerate() {
        let base = c * CELL;
        let cell_bit = c & 1;
        let mut w: [u64; CELL] = (&*cell).try_into().expect("cells of CELL nodes");
        let q = w.iter().fold(u64::MAX, |m, &x| m.min(x));
        let (mut near, mut high_mask) = (true, 0u8);
        for (j, &x) in w.iter().enumerate() {
            let d = x - q;
            near &= d <= 1;
            high_mask |= u8::from(d == 1) << j;
        }
        if near {
            let outcome = table.outcomes[NearTable::index(high_mask, q, cell_bit)];
            if outcome.moved == [0; 3] {
                continue;
            }
            for (j, x) in cell.iter_mut().enumerate() {
                *x = q + u64::from((outcome.after >> j) & 1);
            }
            for (k, pairs) in PAIRS.iter().enumerate() {
                let out = if k == 0 {
                    &mut *transfers
                } else {
                    &mut later[k - 1]
                };
                for (p, &(l, h)) in pairs.iter().enumerate() {
                    if (outcome.moved[k] >> p) & 1 == 1 {
                        let (from, to) = if (outcome.to_low[k] >> p) & 1 == 1 {
                            (base + h, base + l)
                        } else {
                            (base + l, base + h)
                        };
                        out.push(Transfer { from, to, units: 1 });
                    }
                }
            }
        } else {
            cell_dimensions(place, &mut w, cell_bit, |k, p, before, after| {
                let (l, h) = PAIRS[k][p];
                let out = if k == 0 {
                    &mut *transfers
                } else {
                    &mut later[k - 1]
                };
                out.extend(Transfer::of_pair(base + l, base + h, before, after));
            });
            cell.copy_from_slice(&w);
        }
    }
    for moves in &later {
        transfers.extend_from_slice(moves);
    }
}
