//! The all-to-all of the proxy path (which of its items each owner's proxies reached), on
//! hetlb's duplicate of the communicator.

use crate::collective::{all_to_all_bytes, all_to_all_i32, max_i32};
use crate::error::CapiError;
use mpi::topology::SimpleCommunicator;

/// The parts of `bytes` that came from each rank (`counts[r]` bytes from rank `r`, in
/// order), with their rank.
pub(super) fn by_rank<'b>(
    bytes: &'b [u8],
    counts: &'b [usize],
) -> impl Iterator<Item = (usize, &'b [u8])> {
    counts.iter().enumerate().scan(0usize, move |at, (r, &c)| {
        let part = &bytes[*at..*at + c];
        *at += c;
        Some((r, part))
    })
}

/// All-to-all of byte strings held end to end: `send_counts[r]` bytes of `send`, in rank
/// order, go to rank `r`; returns the bytes received, end to end in rank order, and how many
/// came from each rank. Every rank learns whether any would send or receive 2 GiB or more
/// (`HETLB_ERR_INVALID` on every rank, nothing moved) before a byte moves.
pub(super) fn exchange(
    comm: &SimpleCommunicator,
    send: &[u8],
    send_counts: &[usize],
) -> Result<(Vec<u8>, Vec<usize>), CapiError> {
    let fits = |x: usize| i32::try_from(x).is_ok();
    let sends_fit = fits(send.len());
    // When the sum fits every count does; otherwise they are clamped and the verdict below
    // stops every rank.
    let send_counts: Vec<i32> = send_counts
        .iter()
        .map(|&c| i32::try_from(c).unwrap_or(i32::MAX))
        .collect();
    let recv_counts = all_to_all_i32(comm, &send_counts)?;
    let received = recv_counts.iter().try_fold(0usize, |sum, &c| {
        usize::try_from(c).ok().map(|c| sum.saturating_add(c))
    });
    let verdict = i32::from(!(sends_fit && received.is_some_and(fits)));
    let any = max_i32(comm, verdict)?;
    if any != 0 {
        return Err(CapiError::Invalid(
            "a rank would send or receive 2 GiB or more in one exchange; nothing moved".into(),
        ));
    }
    let displs = |counts: &[i32]| -> Vec<i32> {
        counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect()
    };
    let mut recv = vec![0u8; received.unwrap_or(0)];
    // Empty buffers (a rank that sends or receives nothing) go through the transport's buffer
    // function like the others: never a dangling address.
    all_to_all_bytes(
        comm,
        send,
        &send_counts,
        &displs(&send_counts),
        &mut recv,
        &recv_counts,
        &displs(&recv_counts),
    )?;
    let recv_counts = recv_counts.iter().map(|&c| c as usize).collect();
    Ok((recv, recv_counts))
}
