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
    let (me, size) = (session.rank(), session.size());
    let mut known: Vec<Option<RankState>> = vec![None; size];
    known[me] = Some(mine);
    let mut count = 1usize;
    let mut round = 0u32;
    while count < size {
        let step = 1usize << round;
        let to = (me + size - step % size) % size;
        let from = (me + step) % size;
        let entries: Vec<RankState> = known.iter().flatten().copied().collect();
        let epoch = session.epoch();
        session.send(
            to,
            Msg::Gather {
                epoch,
                round,
                entries,
            },
        )?;
        let got = session.next(
            |f, m| f == from && matches!(m, Msg::Gather { round: r, .. } if *r == round),
            |p| p == from,
        )?;
        if let Msg::Gather { entries, .. } = got.msg {
            for e in entries {
                let r = e.rank as usize;
                if r >= size {
                    return Err(PeerError::Mismatch(format!(
                        "rank {from} sent the state of rank {r}, but there are {size} ranks"
                    )));
                }
                if known[r].is_none() {
                    known[r] = Some(e);
                    count += 1;
                }
            }
        }
        round += 1;
    }
    Ok(known.into_iter().flatten().collect())
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
