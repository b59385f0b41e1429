//! Moving messages between ranks.
//!
//! A [`Transport`] is one rank's end of a fully connected network of `size` ranks: it sends a
//! message to any rank and receives from all of them in arrival order. Two backends:
//!
//! * [`threads`] — ranks are threads of one process, messages move over crossbeam channels
//!   without being copied or serialised. The default.
//! * `mpi` (cargo feature `mpi`) — ranks are MPI processes started by `mpiexec -n N`; one
//!   thread per process owns MPI (`Threading::Funneled`) and messages are serialised with
//!   serde + postcard.
//!
//! Each received message carries the instant it *arrived* (on the threads backend, the instant
//! it was sent; on MPI, the instant the communication thread took it off the wire), so the
//! receiver can tell how long a request waited for its attention.

pub mod threads;

#[cfg(feature = "mpi")]
pub mod mpi;

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

/// A received message, who sent it and when it arrived.
#[derive(Debug)]
pub struct Envelope<M> {
    /// The sender's rank.
    pub from: usize,
    /// The message.
    pub msg: M,
    /// When it arrived at this rank.
    pub arrived: Instant,
}

/// Why a message could not be moved.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
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
    /// The message-passing library failed.
    #[error("MPI: {0}")]
    Mpi(String),
}

/// One rank's end of a fully connected message network.
///
/// Implementations deliver messages between any two ranks in the order they were sent
/// (per pair of ranks); receiving takes messages from all ranks in arrival order.
///
/// # Example
/// ```
/// use hetlb_runtime::transport::{Transport, threads::network};
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

    /// The backend's name (`threads`, `mpi`).
    fn backend(&self) -> &'static str;

    /// Sends `msg` to rank `to` (possibly this rank). Does not wait for the receiver.
    ///
    /// # Errors
    /// [`TransportError`] for an unknown rank, a closed connection or an encoding failure.
    fn send(&self, to: usize, msg: M) -> Result<(), TransportError>;

    /// Sends `msg` to rank `to` as [`Transport::send`] does, where `now` is a reading of the
    /// clock the caller has just taken: a backend that stamps a message with the instant it
    /// was sent (threads) uses it instead of reading the clock again. By default the same as
    /// `send`.
    ///
    /// # Errors
    /// As [`Transport::send`].
    fn send_at(&self, to: usize, msg: M, now: Instant) -> Result<(), TransportError> {
        let _ = now;
        self.send(to, msg)
    }

    /// The next message from any rank, waiting until `deadline` (forever for `None`);
    /// `Ok(None)` when the deadline passed first.
    ///
    /// # Errors
    /// [`TransportError`] when no message can ever arrive or one cannot be decoded.
    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError>;

    /// The next message if one has already arrived.
    ///
    /// # Errors
    /// As [`Transport::recv`].
    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError>;
}
