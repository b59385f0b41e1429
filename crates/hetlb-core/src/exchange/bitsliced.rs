//! A halving rule's balance of a cube whose loads span at most four values, with every
//! transfer recorded, on bit planes: 64 pairs per word operation, for
//! [`super::transfers_in_place`].
//!
//! Between two of the simulator's balances a cube is nearly balanced: when the threshold
//! policy balances it, every load is within three units of the smallest (`rim-dynamic`). A
//! halving rule gives a pair `⌊s/2⌋` and `⌈s/2⌉`, both between the pair's two loads, so the
//! spread never grows from one dimension to the next and every load stays `min + o` with an
//! offset `o ∈ 0..4`. The offsets are held as two bit planes (bit 0 of node `u`'s offset is
//! bit `u % 64` of word `u / 64` of the first plane, bit 1 of the second), and a dimension
//! decides 64 pairs with a few dozen word operations:
//!
//! * the pair's sum `s = a + b` by a two-bit ripple adder (three bits), its half and odd unit
//!   by a shift of the planes;
//! * whether the low node keeps the odd unit, per rule: always (`Low`), never (`High`), when
//!   `a ≥ b` (`Heavier`, a two-bit comparison), when the real half `min + s/2` is even
//!   (`OddShare`: the parity of `min` is a constant of the balance);
//! * the new loads `s/2 + odd·keeps` and `s/2 + odd·¬keeps`, and the pairs that moved, as masks.
//!
//! Dimensions `0..6` pair bits of the same word (`u` with `u + 2^k`, a shift by `2^k`), the
//! others whole words. The transfers are read from the masks of moved pairs, lowest bit first,
//! so they come out in the planner's order: dimension by dimension, pairs by their low node.

use crate::plan::Transfer;
use crate::rules::dimension_exchange::OddUnit;
use std::cell::RefCell;

/// The largest spread (`max − min`) of the loads the planes hold: two bits of offset.
pub(super) const MAX_SPREAD: u64 = 3;
/// Cubes from `2^6` nodes up: one word of each plane per 64 nodes.
pub(super) const MIN_DIMS: u32 = WORD_DIMS;

/// Dimensions inside one word of a plane.
const WORD_DIMS: u32 = 6;
/// Nodes per word.
const WORD: usize = 1 << WORD_DIMS;

/// For dimension `k < 6`, the bit positions of the low nodes of the pairs of a word (bit `k`
/// of the position clear).
const LOW_LANES: [u64; WORD_DIMS as usize] = [
    0x5555_5555_5555_5555,
    0x3333_3333_3333_3333,
    0x0f0f_0f0f_0f0f_0f0f,
    0x00ff_00ff_00ff_00ff,
    0x0000_ffff_0000_ffff,
    0x0000_0000_ffff_ffff,
];

/// 64 offsets of two bits: bit `j` of `lo` and `hi` is node `j`'s offset's bit 0 and bit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lanes {
    lo: u64,
    hi: u64,
}

impl Lanes {
    /// The offset of lane `j`.
    #[inline(always)]
    fn offset(self, j: u32) -> u64 {
        ((self.lo >> j) & 1) | (((self.hi >> j) & 1) << 1)
    }

    /// The lanes that differ from `other`.
    #[inline(always)]
    fn differ(self, other: Lanes) -> u64 {
        (self.lo ^ other.lo) | (self.hi ^ other.hi)
    }
}

/// The pairs of 64 lanes, low nodes `a` with high nodes `b`: the new low and high lanes, the
/// low node keeping the odd unit where `place` says for a lane whose bit `k + 1` is clear in
/// `next_bit`, and as `place_set` says where it is set.
#[inline(always)]
fn pairs(
    a: Lanes,
    b: Lanes,
    place: [OddUnit; 2],
    next_bit: u64,
    min_is_odd: bool,
) -> (Lanes, Lanes) {
    // s = a + b: bit 0, then bits 1 and 2 with the carry.
    let odd = a.lo ^ b.lo;
    let carry = a.lo & b.lo;
    let high_xor = a.hi ^ b.hi;
    let half_lo = high_xor ^ carry;
    let half_hi = (a.hi & b.hi) | (carry & high_xor);
    let keeps = |unit: OddUnit| match unit {
        OddUnit::Low => !0,
        OddUnit::High => 0,
        // a ≥ b: a larger bit 1, or equal bits 1 and not (a 0, b 1) at bit 0.
        OddUnit::Heavier => (a.hi & !b.hi) | (!high_xor & (a.lo | !b.lo)),
        // the real half, min + s/2, even
        OddUnit::OddShare => {
            if min_is_odd {
                half_lo
            } else {
                !half_lo
            }
        }
    };
    let keeps = (keeps(place[0]) & !next_bit) | (keeps(place[1]) & next_bit);
    // s/2 plus one unit where it goes; never past 3, since s ≤ 6.
    let plus = |unit: u64| Lanes {
        lo: half_lo ^ unit,
        hi: half_hi ^ (half_lo & unit),
    };
    (plus(odd & keeps), plus(odd & !keeps))
}

multiversioned! {
    /// The offsets of `loads` above `min` as two planes, one word per 64 loads.
    fn to_planes(loads: &[u64], min: u64, lo: &mut Vec<u64>, hi: &mut Vec<u64>) {
        lo.clear();
        hi.clear();
        for chunk in loads.chunks_exact(WORD) {
            let (mut l, mut h) = (0u64, 0u64);
            for (j, &x) in (0u32..).zip(chunk) {
                let o = x - min;
                l |= (o & 1) << j;
                h |= ((o >> 1) & 1) << j;
            }
            lo.push(l);
            hi.push(h);
        }
    }
}

multiversioned! {
    /// Writes back the loads of the words whose planes changed from `before` to `after`.
    fn from_planes(loads: &mut [u64], min: u64, before: [&[u64]; 2], after: [&[u64]; 2]) {
        let words = before[0]
            .iter()
            .zip(before[1])
            .zip(after[0].iter().zip(after[1]));
        for (chunk, ((&l0, &h0), (&l, &h))) in loads.chunks_exact_mut(WORD).zip(words) {
            if (l0, h0) != (l, h) {
                let lanes = Lanes { lo: l, hi: h };
                for (j, x) in (0u32..).zip(chunk) {
                    *x = min + lanes.offset(j);
                }
            }
        }
    }
}

/// Appends the transfers of the pairs in `moved`, lowest bit first: lane `j`'s low node is
/// `first + j`, its partner `first + j + half`; its offset went from `before` to `after`.
#[inline(always)]
fn push_moves(
    mut moved: u64,
    before: Lanes,
    after: Lanes,
    first: usize,
    half: usize,
    min: u64,
    transfers: &mut Vec<Transfer>,
) {
    while moved != 0 {
        let j = moved.trailing_zeros();
        moved &= moved - 1;
        let low = first + j as usize;
        let (a, new_low) = (min + before.offset(j), min + after.offset(j));
        transfers.extend(Transfer::of_pair(low, low + half, a, new_low));
    }
}

/// One dimension of a balance on the planes: `k`, who keeps the odd unit by bit `k + 1` of a
/// pair's addresses, and the smallest load the offsets are counted from.
#[derive(Debug, Clone, Copy)]
struct Phase {
    k: u32,
    place: [OddUnit; 2],
    min: u64,
}

/// Dimension `k < 6`: the pairs inside each word.
fn word_dimension(phase: Phase, lo: &mut [u64], hi: &mut [u64], transfers: &mut Vec<Transfer>) {
    let Phase { k, place, min } = phase;
    let shift = 1u32 << k;
    let low_lanes = LOW_LANES[k as usize];
    // Lanes whose bit k + 1 is set: a bit of the position below 6, of the word's index at 6.
    let next_bit_in_word = LOW_LANES.get(k as usize + 1).map(|&m| !m);
    let min_is_odd = min & 1 == 1;
    for (w, (l, h)) in lo.iter_mut().zip(hi.iter_mut()).enumerate() {
        let next_bit = next_bit_in_word.unwrap_or(if w & 1 == 1 { !0 } else { 0 });
        let a = Lanes {
            lo: *l & low_lanes,
            hi: *h & low_lanes,
        };
        let b = Lanes {
            lo: (*l >> shift) & low_lanes,
            hi: (*h >> shift) & low_lanes,
        };
        let (new_low, new_high) = pairs(a, b, place, next_bit, min_is_odd);
        let moved = new_low.differ(a) & low_lanes;
        if moved != 0 {
            *l = (new_low.lo & low_lanes) | ((new_high.lo & low_lanes) << shift);
            *h = (new_low.hi & low_lanes) | ((new_high.hi & low_lanes) << shift);
            push_moves(moved, a, new_low, w * WORD, 1 << k, min, transfers);
        }
    }
}

/// Dimension `k ≥ 6`: word `w` pairs with word `w + 2^(k−6)`.
fn cross_dimension(phase: Phase, lo: &mut [u64], hi: &mut [u64], transfers: &mut Vec<Transfer>) {
    let Phase { k, place, min } = phase;
    let step = 1usize << (k - WORD_DIMS);
    let min_is_odd = min & 1 == 1;
    let lo_chunks = lo.chunks_exact_mut(2 * step);
    for (c, (lo_chunk, hi_chunk)) in lo_chunks.zip(hi.chunks_exact_mut(2 * step)).enumerate() {
        // Bit k + 1 of the addresses: the chunk's lowest bit.
        let next_bit = if c & 1 == 1 { !0 } else { 0 };
        let (lo_low, lo_high) = lo_chunk.split_at_mut(step);
        let (hi_low, hi_high) = hi_chunk.split_at_mut(step);
        let words = lo_low.iter_mut().zip(hi_low.iter_mut());
        let partners = lo_high.iter_mut().zip(hi_high.iter_mut());
        for (i, ((ll, lh), (hl, hh))) in words.zip(partners).enumerate() {
            let a = Lanes { lo: *ll, hi: *lh };
            let b = Lanes { lo: *hl, hi: *hh };
            let (new_low, new_high) = pairs(a, b, place, next_bit, min_is_odd);
            let moved = new_low.differ(a);
            if moved != 0 {
                (*ll, *lh, *hl, *hh) = (new_low.lo, new_low.hi, new_high.lo, new_high.hi);
                let first = (c * 2 * step + i) * WORD;
                push_moves(moved, a, new_low, first, 1 << k, min, transfers);
            }
        }
    }
}

/// The planes of one thread, kept from one balance to the next.
#[derive(Default)]
struct Planes {
    lo: Vec<u64>,
    hi: Vec<u64>,
    lo_before: Vec<u64>,
    hi_before: Vec<u64>,
}

thread_local! {
    static PLANES: RefCell<Planes> = RefCell::default();
}

impl Planes {
    /// The planes of `loads`, whose values lie in `min..=min + 3`.
    fn make(&mut self, loads: &[u64], min: u64) {
        to_planes(loads, min, &mut self.lo, &mut self.hi);
    }

    /// Balances the planes of a cube of `2^n ≥ 64` nodes, `n = place.len()`, with a halving
    /// rule, `place[k]` placing dimension `k`'s odd unit by bit `k + 1` of a pair's addresses;
    /// appends every transfer in the planner's order.
    fn balance(&mut self, place: &[[OddUnit; 2]], min: u64, transfers: &mut Vec<Transfer>) {
        debug_assert!(
            place.len() >= MIN_DIMS as usize && self.lo.len() << WORD_DIMS == 1 << place.len()
        );
        for (k, &place) in (0..).zip(place) {
            let phase = Phase { k, place, min };
            if k < WORD_DIMS {
                word_dimension(phase, &mut self.lo, &mut self.hi, transfers);
            } else {
                cross_dimension(phase, &mut self.lo, &mut self.hi, transfers);
            }
        }
    }

    /// The smallest and the largest offset the planes hold.
    fn extremes(&self) -> (u64, u64) {
        // Lane masks of the offsets 0, 1, 2 and 3, over all words.
        let mut held = [0u64; 4];
        for (&l, &h) in self.lo.iter().zip(&self.hi) {
            held[0] |= !h & !l;
            held[1] |= !h & l;
            held[2] |= h & !l;
            held[3] |= h & l;
        }
        let mut offsets = (0..4u64).filter(|&o| held[o as usize] != 0);
        let min = offsets.next().unwrap_or(0);
        (min, offsets.next_back().unwrap_or(min))
    }
}

/// Balances `loads` in place (a cube of `2^n ≥ 64` nodes, `n = place.len()`, whose loads lie
/// in `min..=min + 3`; see [`Planes::balance`]), writing back only the words of 64 loads that
/// changed.
///
/// `O(N log N / 64)` word operations, plus `O(N)` to make the planes and to write back, plus
/// the transfers.
pub(super) fn balance_in_place(
    place: &[[OddUnit; 2]],
    loads: &mut [u64],
    min: u64,
    transfers: &mut Vec<Transfer>,
) {
    PLANES.with_borrow_mut(|planes| {
        planes.make(loads, min);
        planes.lo_before.clone_from(&planes.lo);
        planes.hi_before.clone_from(&planes.hi);
        planes.balance(place, min, transfers);
        let Planes {
            lo,
            hi,
            lo_before,
            hi_before,
        } = planes;
        from_planes(loads, min, [lo_before, hi_before], [lo, hi]);
    });
}

/// The transfers of a balance of `loads` (as for [`balance_in_place`]), which stay as they are,
/// and the smallest and largest load after it.
///
/// `O(N log N / 64)` word operations, plus `O(N)` to make the planes, plus the transfers.
pub(super) fn balance_extremes(
    place: &[[OddUnit; 2]],
    loads: &[u64],
    min: u64,
    transfers: &mut Vec<Transfer>,
) -> (u64, u64) {
    PLANES.with_borrow_mut(|planes| {
        planes.make(loads, min);
        planes.balance(place, min, transfers);
        let (low, high) = planes.extremes();
        (min + low, min + high)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::lanes::{self, HEAVIER, HIGH, LOW, ODD_SHARE};

    fn scalar(unit: OddUnit, a: u64, b: u64) -> u64 {
        match unit {
            OddUnit::Heavier => lanes::pair::<u64, HEAVIER>(a, b).0,
            OddUnit::Low => lanes::pair::<u64, LOW>(a, b).0,
            OddUnit::High => lanes::pair::<u64, HIGH>(a, b).0,
            OddUnit::OddShare => lanes::pair::<u64, ODD_SHARE>(a, b).0,
        }
    }

    /// Every pair of offsets, every placement, both parities of `min`, in one lane each: the
    /// planes give the scalar rule's new loads.
    #[test]
    fn each_lane_decides_as_the_scalar_rule() {
        let units = [
            OddUnit::Heavier,
            OddUnit::Low,
            OddUnit::High,
            OddUnit::OddShare,
        ];
        for min in [6u64, 7] {
            for clear in units {
                for set in units {
                    let (mut a, mut b) = (Lanes { lo: 0, hi: 0 }, Lanes { lo: 0, hi: 0 });
                    // lanes 0..16 with bit k + 1 clear, 16..32 with it set
                    let next_bit = 0xffff_0000u64;
                    let case = |j: u32| (u64::from(j % 4), u64::from((j / 4) % 4));
                    for j in 0..32 {
                        let (x, y) = case(j);
                        a.lo |= (x & 1) << j;
                        a.hi |= (x >> 1) << j;
                        b.lo |= (y & 1) << j;
                        b.hi |= (y >> 1) << j;
                    }
                    let (new_low, new_high) = pairs(a, b, [clear, set], next_bit, min & 1 == 1);
                    for j in 0..32 {
                        let (x, y) = case(j);
                        let unit = if j < 16 { clear } else { set };
                        let expected = scalar(unit, min + x, min + y);
                        assert_eq!(min + new_low.offset(j), expected, "{unit:?} {x} {y}");
                        assert_eq!(min + new_high.offset(j), 2 * min + x + y - expected);
                    }
                }
            }
        }
    }
}
