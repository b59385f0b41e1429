//! The probe before the first move, for a balancer that learns its cost model
//! ([`BalancerConfig::learn_cost`](super::BalancerConfig::learn_cost)).
//!
//! Before any move has been measured the model is only the configured prior. So at the first
//! call that decides, every rank first synchronises (a dissemination barrier), then times two
//! dissemination exchanges of `⌈log₂ P⌉` rounds each — one of empty messages, one of
//! [`PROBE_BYTES`]-byte messages. In every round a rank sends one message and receives one,
//! so each exchange is a sample of the Hockney model as a move is
//! ([`MoveSample`]: messages and bytes sent or received, seconds): the first gives the cost
//! per message, the difference the cost per byte. The samples join the rank's learner; the
//! group decides with rank 0's model, which reaches every rank in the call's gather, so the
//! ranks' own timings never make them decide differently.
//!
//! Every rank probes in the same call (the first that decides), whatever its outcome, so no
//! rank waits for a probe message that will not come. A group of one rank has nothing to
//! probe.

use super::error::PeerError;
use super::gather::barrier;
use super::session::Session;
use super::wire::Msg;
use hetlb_core::advice::MoveSample;
use hetlb_transport::Transport;
use serde::Serialize;

/// The size of one message of the probe's second exchange.
pub const PROBE_BYTES: usize = 256 << 10;

/// Runs the probe; its two samples (empty messages, then [`PROBE_BYTES`]-byte messages), or
/// `None` for a group of one rank.
///
/// # Errors
/// As [`Session::next`].
///
/// # Complexity
/// `3⌈log₂ P⌉` rounds of one message each way; `⌈log₂ P⌉ · PROBE_BYTES` bytes sent.
pub(crate) fn probe<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
) -> Result<Option<[MoveSample; 2]>, PeerError> {
    if session.size() < 2 {
        return Ok(None);
    }
    barrier(session)?;
    let empty = exchange(session, 0, &[])?;
    let full = exchange(session, 1, &vec![0u8; PROBE_BYTES])?;
    Ok(Some([empty, full]))
}

/// One timed dissemination exchange of `payload`-sized messages: in round `k` rank `r`
/// sends to `r + 2^k (mod P)` and waits for `r − 2^k`.
fn exchange<T: Serialize, E: Transport<Msg<T>>>(
    session: &mut Session<'_, T, E>,
    pass: u32,
    payload: &[u8],
) -> Result<MoveSample, PeerError> {
    let (me, size, epoch) = (session.rank(), session.size(), session.epoch());
    let start = session.ep.now();
    let mut round = 0u32;
    let mut sample = MoveSample {
        messages: 0.0,
        bytes: 0.0,
        seconds: 0.0,
    };
    while (1usize << round) < size {
        let step = 1usize << round;
        let to = (me + step) % size;
        let from = (me + size - step % size) % size;
        let bytes = payload.to_vec();
        session.send(
            to,
            Msg::Probe {
                epoch,
                pass,
                round,
                bytes,
            },
        )?;
        session.next(
            |f, m| {
                f == from
                    && matches!(m, Msg::Probe { pass: p, round: r, .. } if *p == pass && *r == round)
            },
            |p| p == from,
        )?;
        sample.messages += 2.0;
        sample.bytes += 2.0 * payload.len() as f64;
        round += 1;
    }
    sample.seconds = session
        .ep
        .now()
        .saturating_duration_since(start)
        .as_secs_f64();
    Ok(sample)
}
