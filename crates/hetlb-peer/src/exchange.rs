//! A sparse exchange of byte strings between ranks that know whom they send to and whom they
//! receive from (the C two-step form's migrate: its plan says both), over the balancer's own
//! endpoint, so that it is timed as every call is and waits with the transport's waits
//! instead of spinning in an MPI collective.

use crate::error::PeerError;
use crate::session::Session;
use crate::store::ByteChunk;
use crate::wire::Msg;
use hetlb_transport::Transport;
use serde::Serialize;

/// Bytes of one message at most: a part longer than this travels in several pieces (MPI
/// counts are 32-bit).
pub(crate) const PIECE_BYTES: usize = 64 << 20;

/// Sends every `(rank, bytes)` of `send` to its rank (in pieces of at most
/// [`PIECE_BYTES`]; a part that fits in one travels without a copy) and receives one byte
/// string from every rank of `from`; returns those in the order of `from`.
///
/// # Errors
/// [`PeerError::Mismatch`] for a rank out of range or named twice, or when a rank sends
/// this rank bytes it did not expect; failures of peers, as [`Session::next`].
///
/// # Complexity
/// One message per piece; `O(Σ bytes)` copied into and out of messages.
pub(crate) fn exchange<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    send: Vec<(usize, Vec<u8>)>,
    from: &[usize],
) -> Result<Vec<Vec<u8>>, PeerError> {
    let size = session.size();
    let mut slot = vec![usize::MAX; size];
    for (k, &r) in from.iter().enumerate() {
        match slot.get_mut(r) {
            Some(s) if *s == usize::MAX => *s = k,
            _ => {
                return Err(PeerError::Mismatch(format!(
                    "rank {r} named twice or out of range in an exchange of {size} ranks"
                )));
            }
        }
    }
    if let Some(&(r, _)) = send.iter().find(|(r, _)| *r >= size) {
        return Err(PeerError::Mismatch(format!(
            "a part for rank {r} in an exchange of {size} ranks"
        )));
    }
    let epoch = session.epoch();
    for (to, bytes) in send {
        if bytes.len() <= PIECE_BYTES {
            session.send(to, part(epoch, true, bytes))?;
            continue;
        }
        let mut pieces = bytes.chunks(PIECE_BYTES).peekable();
        while let Some(piece) = pieces.next() {
            session.send(to, part(epoch, pieces.peek().is_none(), piece.to_vec()))?;
        }
    }
    let mut received: Vec<Vec<u8>> = vec![Vec::new(); from.len()];
    let mut done = vec![false; from.len()];
    let mut waiting = from.len();
    while waiting > 0 {
        let got = session.next(
            |f, m| matches!(m, Msg::Part { .. }) && f < size,
            |p| slot[p] != usize::MAX && !done[slot[p]],
        )?;
        let k = slot[got.from];
        if k == usize::MAX || done[k] {
            return Err(PeerError::Mismatch(format!(
                "rank {} sent bytes this rank did not expect from it",
                got.from
            )));
        }
        if let Msg::Part { last, bytes, .. } = got.msg {
            let bytes = bytes.into_bytes();
            if received[k].is_empty() {
                received[k] = bytes;
            } else {
                received[k].extend_from_slice(&bytes);
            }
            if last {
                done[k] = true;
                waiting -= 1;
            }
        }
    }
    Ok(received)
}

fn part<T>(epoch: u64, last: bool, bytes: Vec<u8>) -> Msg<T> {
    Msg::Part {
        epoch,
        last,
        bytes: ByteChunk::raw(bytes),
    }
}
