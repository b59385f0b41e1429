//! Moving messages between ranks: the one transport every runtime of hetlb runs on.
//!
//! A rank belongs to a *group* of `size` ranks ([`Group`]): the threads of one process
//! ([`threads::group`]) or the processes of an MPI communicator (`mpi::Mpi`, feature `mpi`).
//! From its membership a rank opens typed *endpoints* ([`Group::open`]), one per protocol
//! (the master-worker, peer rebalancing, a scenario run): an endpoint sends a message to any
//! rank of the group and receives from all of them, per pair in the order sent. Each
//! protocol keeps its message enum private; endpoints opened in the same order on every rank
//! talk to each other, and never see another endpoint's messages.
//!
//! ```text
//!              Group (one per rank)                      Endpoint<M> (one per protocol)
//! threads      shared memory: each rank's state         crossbeam channels; values moved
//!              (running, paused, gone)                   as they are, never serialised
//! mpi          a duplicate of the application's          serde + postcard over the
//!              communicator; a progress thread that      duplicate; messages routed to
//!              beats, receives and sends                 their endpoint by a port number
//! ```
//!
//! **Liveness** is the group's, one mechanism per flavour: on threads a rank's state is shared
//! memory (a busy thread is alive; a paused or finished one is seen at once); on MPI every
//! process beats to every other from its progress thread, so silence — never a long
//! computation — is what makes a peer [`Liveness::Silent`], and silence is counted from the
//! moment this process itself last resumed from a pause at the earliest (a process stopped
//! with `SIGSTOP` and continued first reads what arrived before it blames anyone).
//!
//! **Decisions.** Where the ranks share memory, the group also offers a [`Ledger`]: one
//! write-once outcome per key, so that an agreement among ranks is an atomic operation (see
//! the peer balancer's design note).

mod ledger;
mod rank_graph;
#[cfg(feature = "simulated")]
pub mod simulated;
pub mod threads;

#[cfg(feature = "mpi")]
pub mod mpi;

pub use ledger::{Ledger, LedgerOutcome};
pub use rank_graph::RankGraph;

use serde::Serialize;
use serde::de::DeserializeOwned;
use std::time::{Duration, Instant};
use thiserror::Error;

/// Channel checks between two readings of the clock while [`poll`]ing.
const CHECKS_PER_CLOCK_READ: u32 = 32;

/// Calls `try_recv` until it yields a message or `spin` has passed, pausing between calls,
/// and from `yield_after` on (never for `None`) yielding the core between batches of calls;
/// `Ok(None)` when the time ran out.
///
/// The channel is checked after every pause: a pause lasts tens of cycles on recent
/// processors, and a batch of them between checks would delay every reply by as much. The
/// clock is read only every 32 checks, and not at all for a message that comes within them.
/// Yielding lets a peer that waits for a turn on the same core (a loaded machine) run; doing it
/// only after a few microseconds keeps the quick replies of a peer on another core quick.
pub(crate) fn poll<T>(
    spin: Duration,
    yield_after: Option<Duration>,
    mut try_recv: impl FnMut() -> Result<Option<T>, TransportError>,
) -> Result<Option<T>, TransportError> {
    let mut started = None;
    loop {
        for _ in 0..CHECKS_PER_CLOCK_READ {
            if let Some(x) = try_recv()? {
                return Ok(Some(x));
            }
            std::hint::spin_loop();
        }
        let now = Instant::now();
        let since = now - *started.get_or_insert(now);
        if since >= spin {
            return Ok(None);
        }
        if yield_after.is_some_and(|y| since >= y) {
            std::thread::yield_now();
        }
    }
}

/// A received message, who sent it, when it arrived and what it took on the wire.
#[derive(Debug)]
pub struct Envelope<M> {
    /// The sender's rank.
    pub from: usize,
    /// The message.
    pub msg: M,
    /// When it arrived at this rank (on threads, when it was sent).
    pub arrived: Instant,
    /// Bytes it took on the wire (0 on threads, where nothing is serialised).
    pub bytes: u64,
}

/// What a rank knows of a peer's liveness.
#[derive(Debug, Clone, PartialEq)]
pub enum Liveness {
    /// Running, as far as anything shows (a busy rank is alive).
    Alive,
    /// Nothing heard from it for this long (counted from this rank's own last resume at the
    /// earliest).
    Silent(Duration),
    /// Its endpoint is gone: the rank finished with this protocol, or its thread panicked
    /// (`Some(message)`).
    Closed {
        /// The panic message, when its thread panicked.
        panicked: Option<String>,
    },
}

impl Liveness {
    /// How long the peer has been silent: zero when alive, forever when closed.
    pub fn silence(&self) -> Duration {
        match self {
            Liveness::Alive => Duration::ZERO,
            Liveness::Silent(d) => *d,
            Liveness::Closed { .. } => Duration::MAX,
        }
    }
}

/// Why a message could not be moved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TransportError {
    /// A rank outside `0..size`.
    #[error("rank {rank} does not exist (there are {size} ranks)")]
    NoSuchRank {
        /// The rank asked for.
        rank: usize,
        /// The number of ranks.
        size: usize,
    },
    /// The other end has gone away.
    #[error("the connection to rank {0} is closed")]
    Closed(usize),
    /// A message could not be encoded or decoded.
    #[error("message encoding: {0}")]
    Encoding(String),
    /// Ranks opened their endpoints in different orders or with different message types.
    #[error("endpoint {port}: {reason}")]
    Mismatch {
        /// The endpoint's number in opening order.
        port: u32,
        /// What differs.
        reason: String,
    },
    /// The message-passing library failed.
    #[error("MPI: {0}")]
    Mpi(String),
    /// The simulated flavour: every rank waits and none can ever wake (a deadlock).
    #[error("simulated transport stalled: {0}")]
    Stalled(String),
}

/// A message that can cross any flavour of the transport (serialisable, sendable).
pub trait Message: Serialize + DeserializeOwned + Send + 'static {}

impl<M: Serialize + DeserializeOwned + Send + 'static> Message for M {}

/// One rank's membership in a group of ranks, from which it opens typed endpoints.
///
/// Every rank of the group must open its endpoints in the same order with the same message
/// types: the `k`-th endpoint of every rank forms one network.
pub trait Group {
    /// The endpoint type for messages `M`.
    type Endpoint<M: Message>: Transport<M>;

    /// This rank, in `0..size`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// The flavour's name (`threads`, `mpi`).
    fn backend(&self) -> &'static str;

    /// Opens this rank's end of the next endpoint.
    ///
    /// # Errors
    /// [`TransportError::Mismatch`] when another rank opened the same endpoint with another
    /// message type; [`TransportError::Mpi`] when the MPI flavour has stopped.
    fn open<M: Message>(&self) -> Result<Self::Endpoint<M>, TransportError>;

    /// Lets `duration` pass for this rank, as a long computation would: the thread sleeps
    /// (on the simulated flavour, virtual time passes while the others run).
    fn sleep(&self, duration: Duration) {
        std::thread::sleep(duration);
    }

    /// The neighbourhood the application declared on the group's communicator (an MPI
    /// Cartesian or graph topology), if it declared one; `None` by default (threads have
    /// none).
    fn rank_graph(&self) -> Option<&RankGraph> {
        None
    }
}

/// One rank's end of a fully connected message network (an endpoint of a [`Group`]).
///
/// Implementations deliver messages between any two ranks in the order they were sent (per
/// pair of ranks); receiving takes messages from all ranks in arrival order.
///
/// # Example
/// ```
/// use hetlb_transport::{Transport, threads::network};
/// let mut ranks = network::<&str>(2);
/// let b = ranks.pop().unwrap();
/// let a = ranks.pop().unwrap();
/// a.send(1, "hello").unwrap();
/// let got = b.recv(None).unwrap().unwrap();
/// assert_eq!((got.from, got.msg), (0, "hello"));
/// ```
pub trait Transport<M> {
    /// This rank, in `0..size`.
    fn rank(&self) -> usize;

    /// The number of ranks.
    fn size(&self) -> usize;

    /// The backend's name (`threads`, `mpi`, `simulated`).
    fn backend(&self) -> &'static str;

    /// The clock deadlines and silences are counted on: the monotonic clock, or the
    /// simulated flavour's virtual one.
    fn now(&self) -> Instant {
        Instant::now()
    }

    /// Sends `msg` to rank `to` (possibly this rank) without waiting for the receiver;
    /// returns the bytes it takes on the wire (0 on threads).
    ///
    /// # Errors
    /// [`TransportError`] for an unknown rank, a closed connection or an encoding failure.
    fn send(&self, to: usize, msg: M) -> Result<u64, TransportError>;

    /// Sends `msg` to rank `to` as [`Transport::send`] does, where `now` is a reading of the
    /// clock the caller has just taken: a backend that stamps a message with the instant it
    /// was sent (threads) uses it instead of reading the clock again.
    ///
    /// # Errors
    /// As [`Transport::send`].
    fn send_at(&self, to: usize, msg: M, now: Instant) -> Result<u64, TransportError> {
        let _ = now;
        self.send(to, msg)
    }

    /// Sends the message `owned` makes, also given as `view`: a borrowed form of it that
    /// serialises to exactly the bytes `owned()` would (the sender's items as a slice of its
    /// own vector, say). A backend that serialises messages (MPI) encodes `view` and never
    /// calls `owned`, so the contents are not copied before they are encoded; one that hands
    /// values over (threads, simulated) sends `owned()`. Returns what [`Transport::send`]
    /// returns.
    ///
    /// # Errors
    /// As [`Transport::send`].
    ///
    /// # Example
    /// ```
    /// use hetlb_transport::{Transport, threads::network};
    /// let ranks = network::<Vec<u32>>(1);
    /// let mine = vec![1, 2, 3, 4];
    /// // a slice serialises as the vector it would be copied into
    /// ranks[0].send_view(0, &mine[1..3], || mine[1..3].to_vec()).unwrap();
    /// assert_eq!(ranks[0].try_recv().unwrap().unwrap().msg, vec![2, 3]);
    /// ```
    fn send_view<V: Serialize + ?Sized>(
        &self,
        to: usize,
        view: &V,
        owned: impl FnOnce() -> M,
    ) -> Result<u64, TransportError>
    where
        Self: Sized,
    {
        let _ = view;
        self.send(to, owned())
    }

    /// The next message from any rank, waiting until `deadline` (forever for `None`).
    /// `Ok(None)` when the deadline passed first, or earlier when a peer's liveness changed
    /// (a peer's endpoint closed), so that a waiting rank can judge it at once.
    ///
    /// # Errors
    /// [`TransportError`] when no message can ever arrive or one cannot be decoded.
    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError>;

    /// As [`Transport::recv`], with the deadline worked out only when no message has come
    /// within the transport's short poll: a caller whose deadline takes work to find (the
    /// silences of its peers) pays for it only when it is about to sleep, not on every message
    /// of a busy exchange.
    ///
    /// # Errors
    /// As [`Transport::recv`].
    fn recv_until(
        &self,
        deadline: impl FnOnce() -> Option<Instant>,
    ) -> Result<Option<Envelope<M>>, TransportError>
    where
        Self: Sized,
    {
        self.recv(deadline())
    }

    /// As [`Transport::recv`], but the thread sleeps at once instead of polling for a moment
    /// first: for waits that are usually long (a collective of many ranks, whose last message
    /// comes from the slowest), where polling would take the core from the ranks still working.
    ///
    /// # Errors
    /// As [`Transport::recv`].
    fn recv_sleeping(
        &self,
        deadline: Option<Instant>,
    ) -> Result<Option<Envelope<M>>, TransportError> {
        self.recv(deadline)
    }

    /// The next message if one has already arrived.
    ///
    /// # Errors
    /// As [`Transport::recv`].
    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError>;

    /// What this rank knows of `peer`'s liveness.
    fn liveness(&self, peer: usize) -> Liveness;

    /// True when a peer that is busy outside any exchange can still prove that it is alive
    /// (threads always; MPI with a progress thread). Otherwise a peer is heard only while it
    /// waits for messages itself.
    fn proves_liveness_outside_calls(&self) -> bool {
        true
    }

    /// Called regularly while this rank waits: a flavour without a progress thread proves
    /// this rank alive here.
    fn keep_alive(&self) {}

    /// The group's [`Ledger`], where the ranks share memory.
    fn ledger(&self) -> Option<&Ledger> {
        None
    }

    /// Fault injection: this rank stops answering for `duration` (for good with `None`) —
    /// on threads it is marked paused, on MPI its beats stop — then carries on. Returns at
    /// once for `None`; sleeps for `duration` otherwise.
    #[cfg(feature = "fault-injection")]
    fn pause(&self, duration: Option<Duration>) {
        if let Some(d) = duration {
            std::thread::sleep(d);
        }
    }
}
