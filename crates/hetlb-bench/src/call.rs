//! The starts of the MPI call benchmark (`examples/rebalance_mpi`'s `--mode` forms): which
//! items each rank holds before a call, and the floor's exchange — the fewest records that
//! take every rank from its load before to its load after, each sent once.
//!
//! Kept apart from MPI so that the starts are checked (every id held once) without it.

use crate::rebalance::Item64;

/// How the benchmark's call finds the ranks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start {
    /// Every item on rank 0 (the first call of a program that reads its data on one rank).
    Hotspot,
    /// The capacity-proportional share on every rank, then a `share` of each rank's items
    /// drifted to the next rank (`r → r + 1 mod P`), as when particles cross subdomains.
    Drift {
        /// The share of each rank's items that drifted, in `[0, 1]`.
        share: f64,
    },
}

/// Each rank's capacity-proportional share of `items`: `⌊items · c_r / Σc⌋`, the remainder
/// one each to the first ranks.
///
/// # Example
/// ```
/// assert_eq!(hetlb_bench::call::shares(10, &[1.0, 2.0, 2.0]), vec![2, 4, 4]);
/// assert_eq!(hetlb_bench::call::shares(7, &[1.0, 1.0]), vec![4, 3]);
/// ```
pub fn shares(items: u64, capacities: &[f64]) -> Vec<u64> {
    let total: f64 = capacities.iter().sum();
    let mut out: Vec<u64> = capacities
        .iter()
        .map(|c| (items as f64 * c / total).floor() as u64)
        .collect();
    // Below one per rank after flooring: the first ranks take one more each.
    let left = items.saturating_sub(out.iter().sum()) as usize;
    for v in out.iter_mut().take(left) {
        *v += 1;
    }
    out
}

/// The id ranges `[lo, hi)` rank `rank` holds before the call: ids `0..items` in all, each
/// held by exactly one rank.
///
/// # Example
/// ```
/// use hetlb_bench::call::{Start, ranges};
/// let caps = [1.0, 1.0];
/// assert_eq!(ranges(Start::Hotspot, 0, 8, &caps), vec![(0, 8)]);
/// // 4 ids each, a quarter drifted to the next rank.
/// assert_eq!(ranges(Start::Drift { share: 0.25 }, 0, 8, &caps), vec![(0, 3), (7, 8)]);
/// ```
pub fn ranges(start: Start, rank: usize, items: u64, capacities: &[f64]) -> Vec<(u64, u64)> {
    let p = capacities.len();
    match start {
        Start::Hotspot => {
            if rank == 0 {
                vec![(0, items)]
            } else {
                Vec::new()
            }
        }
        Start::Drift { share } => {
            let counts = shares(items, capacities);
            let los: Vec<u64> = counts
                .iter()
                .scan(0, |a, &c| {
                    let lo = *a;
                    *a += c;
                    Some(lo)
                })
                .collect();
            // One rank has no neighbour to drift to.
            let drifted = |r: usize| match p {
                1 => 0,
                _ => (counts[r] as f64 * share.clamp(0.0, 1.0)).floor() as u64,
            };
            let before = (rank + p - 1) % p;
            let mut out = vec![(los[rank], los[rank] + counts[rank] - drifted(rank))];
            let end = los[before] + counts[before];
            if drifted(before) > 0 {
                out.push((end - drifted(before), end));
            }
            out.retain(|&(lo, hi)| hi > lo);
            out
        }
    }
}

/// This rank's items before the call (see [`ranges`]).
pub fn items(start: Start, rank: usize, items: u64, capacities: &[f64]) -> Vec<Item64> {
    ranges(start, rank, items, capacities)
        .into_iter()
        .flat_map(|(lo, hi)| crate::rebalance::items(lo, hi))
        .collect()
}

/// `(peer, records)` pairs: the records this rank sends to (or receives from) each peer.
pub type Counts = Vec<(usize, u64)>;

/// The floor's exchange for this rank: `(to, records)` it sends and `(from, records)` it
/// receives, the fewest records that take the loads `before` to `after` (each sent once,
/// [`hetlb_core::routing::direct`]).
///
/// # Errors
/// When the totals of `before` and `after` differ.
pub fn floor_exchange(
    rank: usize,
    before: &[u64],
    after: &[u64],
) -> Result<(Counts, Counts), String> {
    let transfers = hetlb_core::routing::direct(before, after).map_err(|e| e.to_string())?;
    let sends = transfers
        .iter()
        .filter(|t| t.from == rank)
        .map(|t| (t.to, t.units))
        .collect();
    let receives = transfers
        .iter()
        .filter(|t| t.to == rank)
        .map(|t| (t.from, t.units))
        .collect();
    Ok((sends, receives))
}

/// Where each peer's part starts in an `MPI_Alltoallv` buffer: the running sums of `counts`.
///
/// # Example
/// ```
/// assert_eq!(hetlb_bench::call::displacements(&[3, 0, 2]), vec![0, 3, 3]);
/// ```
pub fn displacements(counts: &[i32]) -> Vec<i32> {
    counts
        .iter()
        .scan(0, |a, &x| {
            let d = *a;
            *a += x;
            Some(d)
        })
        .collect()
}

/// Writes `item` as 64 little-endian bytes (the id, then the payload) into `slot`.
///
/// # Panics
/// If `slot` is shorter than 64 bytes.
pub fn encode_record(item: &Item64, slot: &mut [u8]) {
    for (k, w) in std::iter::once(item.id).chain(item.data).enumerate() {
        slot[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
    }
}

/// The items in `bytes`, 64 bytes each as [`encode_record`] writes them (a shorter tail is
/// left out).
///
/// # Example
/// ```
/// use hetlb_bench::call::{decode_records, encode_record};
/// let item = hetlb_bench::rebalance::items(5, 6).remove(0);
/// let mut bytes = [0u8; 64];
/// encode_record(&item, &mut bytes);
/// assert_eq!(decode_records(&bytes), vec![item]);
/// ```
pub fn decode_records(bytes: &[u8]) -> Vec<Item64> {
    let mut items = Vec::new();
    append_records(bytes, &mut items);
    items
}

/// [`decode_records`] onto the end of `items` (an application's vector), each record read
/// once and written once.
///
/// # Example
/// ```
/// use hetlb_bench::call::{append_records, encode_record};
/// let mut held = hetlb_bench::rebalance::items(0, 2);
/// let item = hetlb_bench::rebalance::items(5, 6).remove(0);
/// let mut bytes = [0u8; 64];
/// encode_record(&item, &mut bytes);
/// append_records(&bytes, &mut held);
/// assert_eq!(held.iter().map(|i| i.id).collect::<Vec<_>>(), [0, 1, 5]);
/// ```
pub fn append_records(bytes: &[u8], items: &mut Vec<Item64>) {
    items.extend(bytes.chunks_exact(64).map(|c| {
        let w = |k: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&c[8 * k..8 * k + 8]);
            u64::from_le_bytes(b)
        };
        Item64 {
            id: w(0),
            data: [w(1), w(2), w(3), w(4), w(5), w(6), w(7)],
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_id_once(start: Start, items: u64, caps: &[f64]) {
        let mut all: Vec<u64> = (0..caps.len())
            .flat_map(|r| ranges(start, r, items, caps))
            .flat_map(|(lo, hi)| lo..hi)
            .collect();
        all.sort_unstable();
        assert_eq!(all, (0..items).collect::<Vec<_>>(), "{start:?} {caps:?}");
    }

    #[test]
    fn every_start_holds_every_id_once() {
        for caps in [
            vec![1.0],
            vec![1.0, 2.0],
            vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        ] {
            for items in [0, 1, 7, 1000, 12_345] {
                every_id_once(Start::Hotspot, items, &caps);
                for share in [0.0, 0.05, 0.5, 1.0] {
                    every_id_once(Start::Drift { share }, items, &caps);
                }
            }
        }
    }

    #[test]
    fn the_floor_sends_each_surplus_once() {
        let before = [10, 0, 2, 0];
        let after = [3, 3, 3, 3];
        let (mut sent, mut received) = (0, 0);
        for r in 0..4 {
            let (sends, receives) = floor_exchange(r, &before, &after).unwrap();
            sent += sends.iter().map(|s| s.1).sum::<u64>();
            received += receives.iter().map(|s| s.1).sum::<u64>();
        }
        assert_eq!((sent, received), (7, 7));
        assert!(floor_exchange(0, &[1], &[2]).is_err());
    }
}
