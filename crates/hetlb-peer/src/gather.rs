//! The all-gather that opens every rebalance: each rank learns every rank's load, item count,
//! measured speed and configuration digest.
//!
//! Bruck's dissemination algorithm: in round `k` rank `r` sends what it knows to
//! `r − 2^k (mod P)` and receives from `r + 2^k (mod P)`; after `⌈log₂ P⌉` rounds every rank
//! knows all `P` states. On a hypercube this is as many message steps as a dimension exchange
//! has phases (`log₂ N`), which is why hetlb gathers the loads instead of exchanging them
//! pair by pair: the rule then runs on every rank over the whole vector, so every rank knows
//! the whole plan — which the overlapped and pipelined schedules need — and the decisions are
//! those of `hetlb balance` by construction.

use super::error::PeerError;
use super::session::Session;
use super::wire::{Msg, RankState};
use hetlb_transport::Transport;
use serde::Serialize;

/// Gathers every rank's state; element `i` of the result is rank `i`'s.
///
/// # Errors
/// As [`Session::next`]; [`PeerError::Mismatch`] when a peer answers with a malformed state.
///
/// # Complexity
/// `⌈log₂ P⌉` rounds of one message each way; `P − 1` states received in all.
pub(crate) fn all_gather<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: RankState,
) -> Result<Vec<RankState>, PeerError> {
    disseminate(
        session,
        mine,
        |s| s.rank as usize,
        |epoch, round, entries| Msg::Gather {
            epoch,
            round,
            entries,
        },
        |m| match m {
            Msg::Gather { round, entries, .. } => Some((round, entries)),
            _ => None,
        },
    )
}

/// Gathers every rank's numbers (`mine`, as many on every rank); element `i` of the result
/// is rank `i`'s.
///
/// # Errors
/// As [`all_gather`]; [`PeerError::Mismatch`] when a rank gave another count of numbers.
///
/// # Complexity
/// `⌈log₂ P⌉` rounds of one message each way.
pub(crate) fn all_gather_values<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    mine: Vec<f64>,
) -> Result<Vec<Vec<f64>>, PeerError> {
    let me = session.rank() as u32;
    let count = mine.len();
    let all = disseminate(
        session,
        (me, mine),
        |e| e.0 as usize,
        |epoch, round, entries| Msg::Values {
            epoch,
            round,
            entries,
        },
        |m| match m {
            Msg::Values { round, entries, .. } => Some((round, entries)),
            _ => None,
        },
    )?;
    if let Some((rank, values)) = all.iter().find(|(_, v)| v.len() != count) {
        return Err(PeerError::Mismatch(format!(
            "rank {rank} gave {} numbers to gather where rank {me} gave {count}: every rank must give as many",
            values.len()
        )));
    }
    Ok(all.into_iter().map(|(_, v)| v).collect())
}

/// Bruck's dissemination of one entry per rank (see the module's documentation): `pack`
/// makes a round's message of the entries known, `unpack` reads one back (its round and
/// entries), `rank_of` names an entry's rank. The entries in rank order.
fn disseminate<T: Serialize, E: Transport<Msg<T>>, V: Clone>(
    session: &mut Session<'_, T, E>,
    mine: V,
    rank_of: impl Fn(&V) -> usize,
    pack: impl Fn(u64, u32, Vec<V>) -> Msg<T>,
    unpack: impl Fn(Msg<T>) -> Option<(u32, Vec<V>)>,
) -> Result<Vec<V>, PeerError> {
    let (me, size) = (session.rank(), session.size());
    let mut known: Vec<Option<V>> = vec![None; size];
    known[me] = Some(mine);
    let mut count = 1usize;
    let mut round = 0u32;
    while count < size {
        let step = 1usize << round;
        let to = (me + size - step % size) % size;
        let from = (me + step) % size;
        // Sized exactly: a vector collected from an iterator of unknown length starts with
        // room for 4 entries, which for the ranks' states (about 440 bytes each) is a block
        // large enough to make glibc's allocator consolidate its small free blocks, on every
        // call.
        let mut entries: Vec<V> = Vec::with_capacity(count);
        entries.extend(known.iter().flatten().cloned());
        let epoch = session.epoch();
        session.send(to, pack(epoch, round, entries))?;
        let got = session.next(
            |f, m| f == from && matches!(m, Msg::Gather { round: r, .. } | Msg::Values { round: r, .. } if *r == round),
            |p| p == from,
        )?;
        if let Some((_, entries)) = unpack(got.msg) {
            for e in entries {
                let r = rank_of(&e);
                if r >= size {
                    return Err(PeerError::Mismatch(format!(
                        "rank {from} sent the entry of rank {r}, but there are {size} ranks"
                    )));
                }
                if known[r].is_none() {
                    known[r] = Some(e);
                    count += 1;
                }
            }
        } else {
            return Err(PeerError::Mismatch(format!(
                "rank {from} answered round {round} of a gather with another collective's message"
            )));
        }
        round += 1;
    }
    let mut all = Vec::with_capacity(size);
    all.extend(known.into_iter().flatten());
    Ok(all)
}

/// A barrier by dissemination: in round `k` rank `r` tells `r + 2^k (mod P)` it has arrived
/// and waits for `r − 2^k`; after `⌈log₂ P⌉` rounds every rank knows that every rank arrived.
///
/// # Errors
/// As [`Session::next`].
///
/// # Complexity
/// `⌈log₂ P⌉` rounds of one message each way.
pub(crate) fn barrier<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
) -> Result<(), PeerError> {
    let (me, size) = (session.rank(), session.size());
    let mut round = 0u32;
    while (1usize << round) < size {
        let step = 1usize << round;
        let to = (me + step) % size;
        let from = (me + size - step % size) % size;
        let epoch = session.epoch();
        session.send(to, Msg::Arrive { epoch, round })?;
        session.next(
            |f, m| f == from && matches!(m, Msg::Arrive { round: r, .. } if *r == round),
            |p| p == from,
        )?;
        round += 1;
    }
    Ok(())
}
