//! The threads backend: ranks are threads of one process; items move as values over crossbeam
//! channels (no serialisation), and liveness is shared memory.
//!
//! A rank's end is a [`ThreadComm`]; [`group`] makes one per rank. When a rank's end is
//! dropped — its thread finished, returned early or panicked — every other rank learns it at
//! once (its state is recorded and a [`Msg::Left`] wakes waiting ranks). A thread that is busy
//! is alive: only a rank marked frozen by fault injection is ever silent here.

use super::comm::{Comm, Liveness, Msg, Received};
use super::error::PeerError;
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender};
use serde::Serialize;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
enum State {
    Alive,
    Aborted(Option<usize>, String),
    Frozen(Instant),
    Left,
    Panicked(String),
}

#[derive(Debug)]
struct Shared {
    states: Mutex<Vec<State>>,
}

impl Shared {
    fn set(&self, rank: usize, state: State) {
        let mut states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        states[rank] = state;
    }

    fn get(&self, rank: usize) -> State {
        let states = self.states.lock().unwrap_or_else(PoisonError::into_inner);
        states[rank].clone()
    }
}

type Envelope<T> = (usize, Msg<T>);

/// One rank's end of an in-process group made by [`group`]. Hand each to its own thread and
/// build a [`Balancer`](super::Balancer) on it.
pub struct ThreadComm<T> {
    rank: usize,
    inbox: Receiver<Envelope<T>>,
    peers: Vec<Sender<Envelope<T>>>,
    shared: Arc<Shared>,
    count_bytes: bool,
}

impl<T> std::fmt::Debug for ThreadComm<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadComm")
            .field("rank", &self.rank)
            .field("size", &self.peers.len())
            .finish()
    }
}

/// A group of `size` in-process ranks; element `i` is rank `i`'s end.
///
/// # Complexity
/// `O(size²)` channel handles.
///
/// # Example
/// ```
/// use hetlb_runtime::peer::{threads, Balancer, BalancerConfig};
/// let ends = threads::group::<u64>(4);
/// let handles: Vec<_> = ends
///     .into_iter()
///     .map(|comm| {
///         std::thread::spawn(move || {
///             let rank = comm.rank_id() as u64;
///             // rank 0 holds 40 unit items, the others none
///             let mut items: Vec<u64> = if rank == 0 { (0..40).collect() } else { vec![] };
///             let mut b = Balancer::new(comm, BalancerConfig::new("oem").unwrap()).unwrap();
///             let report = b.rebalance(&mut items).unwrap();
///             assert_eq!(report.units_after, 10);
///             items.len()
///         })
///     })
///     .collect();
/// let counts: Vec<usize> = handles.into_iter().map(|h| h.join().unwrap()).collect();
/// assert_eq!(counts, vec![10, 10, 10, 10]);
/// ```
pub fn group<T>(size: usize) -> Vec<ThreadComm<T>> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..size).map(|_| channel::unbounded()).unzip();
    let shared = Arc::new(Shared {
        states: Mutex::new(vec![State::Alive; size]),
    });
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, inbox)| ThreadComm {
            rank,
            inbox,
            peers: senders.clone(),
            shared: Arc::clone(&shared),
            count_bytes: true,
        })
        .collect()
}

impl<T> ThreadComm<T> {
    /// This end's rank.
    pub fn rank_id(&self) -> usize {
        self.rank
    }

    /// Whether to count the bytes items would take serialised (postcard), for reports. On by
    /// default; counting costs one serialisation pass over the items sent, without copying.
    pub fn count_bytes(mut self, on: bool) -> Self {
        self.count_bytes = on;
        self
    }
}

impl<T: Serialize> Comm<T> for ThreadComm<T> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.peers.len()
    }

    fn backend(&self) -> &'static str {
        "threads"
    }

    fn send(&mut self, to: usize, msg: Msg<T>) -> Result<u64, PeerError> {
        let bytes = if self.count_bytes && matches!(msg, Msg::Items { .. }) {
            postcard::serialize_with_flavor::<_, postcard::ser_flavors::Size, usize>(
                &msg,
                postcard::ser_flavors::Size::default(),
            )
            .map_err(|e| PeerError::Transport(e.to_string()))? as u64
        } else {
            0
        };
        let peer = self.peers.get(to).ok_or_else(|| {
            PeerError::Transport(format!(
                "rank {to} does not exist ({} ranks)",
                self.peers.len()
            ))
        })?;
        // A receiver that has gone away is noticed through its state, not here.
        let _ = peer.send((self.rank, msg));
        Ok(bytes)
    }

    fn recv(&mut self, until: Instant) -> Result<Option<Received<T>>, PeerError> {
        match self.inbox.recv_deadline(until) {
            Ok((from, msg)) => Ok(Some(Received {
                from,
                msg,
                bytes: 0,
            })),
            Err(RecvTimeoutError::Timeout) => Ok(None),
            // Cannot happen while this end holds a sender to its own inbox.
            Err(RecvTimeoutError::Disconnected) => {
                Err(PeerError::Transport("the group's channels are gone".into()))
            }
        }
    }

    fn liveness(&mut self, peer: usize) -> Liveness {
        match self.shared.get(peer) {
            State::Alive => Liveness::Alive,
            State::Aborted(culprit, reason) => Liveness::Aborted { culprit, reason },
            State::Frozen(since) => Liveness::Silent(since.elapsed()),
            State::Left => Liveness::Left,
            State::Panicked(m) => Liveness::Panicked(m),
        }
    }

    fn proves_liveness_outside_calls(&self) -> bool {
        true
    }

    fn note_call_state(&mut self, aborted: Option<(Option<usize>, String)>) {
        self.shared.set(
            self.rank,
            match aborted {
                Some((culprit, reason)) => State::Aborted(culprit, reason),
                None => State::Alive,
            },
        );
    }

    fn freeze(&mut self, duration: Duration) {
        self.shared.set(self.rank, State::Frozen(Instant::now()));
        std::thread::sleep(duration);
        self.shared.set(self.rank, State::Alive);
    }
}

impl<T> Drop for ThreadComm<T> {
    fn drop(&mut self) {
        let panicked = std::thread::panicking().then(|| "its thread panicked".to_string());
        self.shared.set(
            self.rank,
            match &panicked {
                Some(m) => State::Panicked(m.clone()),
                None => State::Left,
            },
        );
        for (to, peer) in self.peers.iter().enumerate() {
            if to != self.rank {
                let _ = peer.send((
                    self.rank,
                    Msg::Left {
                        panicked: panicked.clone(),
                    },
                ));
            }
        }
    }
}
