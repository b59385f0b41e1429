//! What a balancer needs from the ranks' network: typed messages to any rank, the next message
//! with a deadline, and what is known of each peer's liveness.
//!
//! Two backends implement [`Comm`]: [`super::threads`] (ranks are threads of one process;
//! items move as values) and `super::mpi` (feature `mpi`; ranks are MPI processes on a
//! duplicate of the application's communicator; items move serialised with postcard).

use super::error::PeerError;
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// What one rank contributes to the gather at the start of a rebalance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RankState {
    /// The rank.
    pub rank: u32,
    /// Units it holds (Σ of its items' loads).
    pub units: u64,
    /// Items it holds.
    pub items: u64,
    /// Its measured speed in units per second, when it has one.
    pub speed: Option<f64>,
    /// A digest of its configuration; every rank's must be equal.
    pub fingerprint: u64,
}

/// What one rank reports when it has finished its part of the move.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct DoneSummary {
    /// Units it holds after the move.
    pub units: u64,
    /// Items it holds after the move.
    pub items: u64,
    /// Seconds from the start of its move to its last transfer.
    pub move_seconds: f64,
    /// Σ over its sent transfers of the seconds from the first send to the acknowledgement.
    pub link_seconds: f64,
    /// Units in those transfers.
    pub link_units: u64,
}

/// The messages of the rebalance protocol (see the module documentation of
/// [`crate::peer`]). `T` is the application's item.
#[derive(Debug, Serialize, Deserialize)]
pub enum Msg<T> {
    /// One step of the all-gather of the ranks' states.
    Gather {
        /// The call.
        epoch: u64,
        /// The step (Bruck's round).
        round: u32,
        /// The states the sender knows.
        entries: Vec<RankState>,
    },
    /// Items carrying (part of) a planned transfer.
    Items {
        /// The call.
        epoch: u64,
        /// The transfer's number in the plan.
        transfer: u32,
        /// True on the transfer's last message.
        last: bool,
        /// Σ of the items' loads.
        units: u64,
        /// The items.
        items: Vec<T>,
    },
    /// A transfer fully received.
    Ack {
        /// The call.
        epoch: u64,
        /// The transfer.
        transfer: u32,
    },
    /// The sender has finished its part of the move.
    Done {
        /// The call.
        epoch: u64,
        /// What it holds and measured.
        summary: DoneSummary,
    },
    /// The sender stopped the call because of a failure; everyone rolls back.
    Abort {
        /// The call.
        epoch: u64,
        /// The failed rank, when known.
        culprit: Option<u32>,
        /// Why.
        reason: String,
    },
    /// The sender is alive (sent while it waits in a call).
    Heartbeat {
        /// The call it waits in.
        epoch: u64,
    },
    /// The sender's balancer was dropped; `Some(message)` when its thread panicked.
    Left {
        /// The panic message.
        panicked: Option<String>,
    },
}

/// A received message.
#[derive(Debug)]
pub struct Received<T> {
    /// The sender.
    pub from: usize,
    /// The message.
    pub msg: Msg<T>,
    /// Bytes it took on the wire (0 when not measured).
    pub bytes: u64,
}

/// What a rank knows of a peer.
#[derive(Debug, Clone, PartialEq)]
pub enum Liveness {
    /// Known to be alive, or nothing says otherwise.
    Alive,
    /// Heard from last this long ago.
    Silent(Duration),
    /// Its balancer was dropped while its thread panicked.
    Panicked(String),
    /// Its balancer was dropped.
    Left,
    /// It gave up the current call because of a failure (it rolled back).
    Aborted {
        /// The rank it holds responsible, when known.
        culprit: Option<usize>,
        /// Why.
        reason: String,
    },
}

/// One rank's end of the balancer's network. Messages between two ranks arrive in the order
/// they were sent.
pub trait Comm<T> {
    /// This rank, in `0..size`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// The backend's name (`threads`, `mpi`).
    fn backend(&self) -> &'static str;

    /// Sends `msg` to rank `to` without waiting for the receiver; returns the bytes it takes
    /// on the wire.
    ///
    /// # Errors
    /// [`PeerError::Transport`] when the message cannot be encoded or the network is gone.
    fn send(&mut self, to: usize, msg: Msg<T>) -> Result<u64, PeerError>;

    /// The next message from any rank, or `None` once `until` has passed.
    ///
    /// # Errors
    /// [`PeerError::Transport`] when a message cannot be decoded or the network is gone.
    fn recv(&mut self, until: Instant) -> Result<Option<Received<T>>, PeerError>;

    /// What this rank knows of `peer`'s liveness, as judged by the backend: on threads, the
    /// state its balancer left behind; on MPI, how long ago anything was heard from it.
    fn liveness(&mut self, peer: usize) -> Liveness;

    /// Called regularly while this rank waits in call `epoch`: a backend that proves liveness
    /// with messages sends its heartbeats here.
    fn keep_alive(&mut self, _epoch: u64) {}

    /// True when a peer that is busy outside a call can still prove it is alive (threads
    /// always; MPI with a heartbeat thread). Otherwise a peer that has not reached the call
    /// is only judged by the entry timeout.
    fn proves_liveness_outside_calls(&self) -> bool;

    /// Records, for peers that look at this rank, that this rank gave up its current call
    /// (`Some`) or has entered a new one (`None`). A backend with shared state (threads) shows
    /// it at once; others may ignore it (their `Abort` messages carry the same news).
    fn note_call_state(&mut self, _aborted: Option<(Option<usize>, String)>) {}

    /// Fault injection: stop answering for `duration` (threads: marked silent; MPI: no
    /// heartbeats), then carry on.
    fn freeze(&mut self, duration: Duration) {
        std::thread::sleep(duration);
    }
}
