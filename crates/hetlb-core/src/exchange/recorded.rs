//! A halving rule's dimensions with every transfer recorded, for [`super::transfers_in_place`].
//!
//! After the first balance most pairs of a nearly balanced cube move nothing (the simulator's
//! threshold policy balances a cube of 16,384 nodes and records about 700 transfers among
//! 229,000 pair decisions). Two kernels therefore decide pairs without a branch and write a
//! transfer only where a pair moves, in the order [`super::exchange_dimension`] gives:
//!
//! * [`halving_dimension`], for dimensions `3..n`: [`GROUP`] pairs at a time by the vectorised
//!   [`super::lanes::pair`], a group's transfers written only when one of its pairs moves;
//! * [`super::cells::low_dimensions`], for dimensions `0..3`, whose pairs are neighbours 1 to
//!   4 apart: the three dimensions together on each cell of eight nodes.
//!
//! A cube whose loads span at most four values (the simulator's, between two balances) skips
//! both and goes through [`super::bitsliced`], 64 pairs per word operation.

use super::lanes::{self, HEAVIER, HIGH, LOW, ODD_SHARE};
use crate::plan::Transfer;
use crate::rules::dimension_exchange::OddUnit;

/// Pairs decided together; dimensions whose pairs are fewer than this per chunk go pair by
/// pair through the rule.
pub(super) const GROUP: usize = 8;

multiversioned! {
    /// Applies dimension `k` to `loads` (a cube of `loads.len()` nodes, `2^k ≥ GROUP`), the odd
    /// unit of a pair placed by `odd[b]`, `b` being bit `k + 1` of the pair's addresses, and
    /// appends the transfers in pair order.
    pub(super) fn halving_dimension(
        odd: [OddUnit; 2],
        loads: &mut [u64],
        k: u32,
        transfers: &mut Vec<Transfer>,
    ) {
        let half = 1usize << k;
        debug_assert!(half >= GROUP);
        for (c, chunk) in loads.chunks_exact_mut(2 * half).enumerate() {
            let first = c * 2 * half;
            let (lows, highs) = chunk.split_at_mut(half);
            match odd[c & 1] {
                OddUnit::Heavier => chunk_pairs::<HEAVIER>(lows, highs, first, transfers),
                OddUnit::Low => chunk_pairs::<LOW>(lows, highs, first, transfers),
                OddUnit::High => chunk_pairs::<HIGH>(lows, highs, first, transfers),
                OddUnit::OddShare => chunk_pairs::<ODD_SHARE>(lows, highs, first, transfers),
            }
        }
    }
}

/// The transfers of a group whose low nodes went from `before` to `after`, in pair order; pair
/// `i`'s low node is `first_low + i`, its partner `first_low + i + half`.
#[inline(always)]
fn push_moves(
    before: &[u64; GROUP],
    after: &[u64; GROUP],
    first_low: usize,
    half: usize,
    transfers: &mut Vec<Transfer>,
) {
    for (i, (&a, &new_low)) in before.iter().zip(after).enumerate() {
        let low = first_low + i;
        if let Some(transfer) = Transfer::of_pair(low, low + half, a, new_low) {
            transfers.push(transfer);
        }
    }
}

/// The pairs `(lows[i], highs[i])`, node `first + i` with node `first + half + i`.
#[inline(always)]
fn chunk_pairs<const ODD: u8>(
    lows: &mut [u64],
    highs: &mut [u64],
    first: usize,
    transfers: &mut Vec<Transfer>,
) {
    let half = lows.len();
    for (g, (lo, hi)) in lows
        .chunks_exact_mut(GROUP)
        .zip(highs.chunks_exact_mut(GROUP))
        .enumerate()
    {
        let mut before = [0u64; GROUP];
        before.copy_from_slice(lo);
        let mut moved_any = 0u64;
        for i in 0..GROUP {
            let (a, b) = (before[i], hi[i]);
            let (new_low, moved) = lanes::pair::<u64, ODD>(a, b);
            lo[i] = new_low;
            hi[i] = a + b - new_low;
            moved_any |= moved;
        }
        if moved_any != 0 {
            let after: &[u64; GROUP] = (&*lo).try_into().expect("groups of GROUP pairs");
            push_moves(&before, after, first + g * GROUP, half, transfers);
        }
    }
}
