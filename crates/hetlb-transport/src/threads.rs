//! The threads flavour: ranks are threads of one process, messages move over crossbeam
//! channels without being copied or serialised, and liveness is shared memory.
//!
//! [`group`] makes one [`Member`] per rank; each rank opens typed endpoints from its member
//! ([`Member::open_any`], or [`Group::open`]); [`network`] does both at once for a single
//! protocol. Every rank of an endpoint owns one unbounded multi-producer inbox and a sender to
//! every inbox, so a send never blocks and never copies: moving a `Vec` of matrix rows costs a
//! pointer.
//!
//! **Liveness.** A busy thread is alive. A rank's endpoint that is dropped — its thread
//! finished with the protocol, or unwound from a panic — is [`Liveness::Closed`] for the
//! others at once, and a wake-up in their inboxes makes a waiting rank look. Only fault
//! injection (`Transport::pause`, feature `fault-injection`) makes a rank [`Liveness::Silent`].

use super::{Envelope, Group, Ledger, Liveness, Message, Transport, TransportError};
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::any::Any;
use std::cell::Cell;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// How long `recv` polls before it parks the thread.
const SPIN_BEFORE_PARKING: Duration = Duration::from_micros(50);
/// How long `recv` spins before it starts yielding the core between checks.
pub const YIELD_AFTER: Duration = Duration::from_micros(5);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What the group shares: each rank's running state and the endpoints opened so far.
struct Shared {
    size: usize,
    /// `Some(since)` while a rank is paused (fault injection).
    paused: Mutex<Vec<Option<Instant>>>,
    /// Endpoint `k`'s channels, created by the first rank to open it.
    ports: Mutex<Vec<(&'static str, Arc<dyn Any + Send + Sync>)>>,
    /// Whether the endpoints offer the group's [`Ledger`].
    ledger: bool,
}

/// One rank's membership in an in-process group made by [`group`]. Hand each to its own
/// thread and open the endpoints it needs, in the same order on every rank.
pub struct Member {
    rank: usize,
    shared: Arc<Shared>,
    opened: Cell<u32>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("rank", &self.rank)
            .field("size", &self.shared.size)
            .finish()
    }
}

/// A group of `size` in-process ranks; element `i` is rank `i`'s membership.
///
/// # Example
/// ```
/// use hetlb_transport::{Group, Transport, threads};
/// let members = threads::group(2);
/// let ends: Vec<_> = members.iter().map(|m| m.open::<String>().unwrap()).collect();
/// ends[0].send(1, "hi".to_string()).unwrap();
/// assert_eq!(ends[1].recv(None).unwrap().unwrap().msg, "hi");
/// ```
pub fn group(size: usize) -> Vec<Member> {
    make_group(size, true)
}

/// A group of `size` in-process ranks whose endpoints offer no [`Ledger`]: protocols that
/// agree through the ledger where the ranks share memory agree by messages instead, as MPI
/// processes do. For tests of those message protocols on threads (with fault injection,
/// [`Transport::pause`]); applications use [`group`].
#[cfg(feature = "fault-injection")]
pub fn group_without_ledger(size: usize) -> Vec<Member> {
    make_group(size, false)
}

fn make_group(size: usize, ledger: bool) -> Vec<Member> {
    let shared = Arc::new(Shared {
        size,
        paused: Mutex::new(vec![None; size]),
        ports: Mutex::new(Vec::new()),
        ledger,
    });
    (0..size)
        .map(|rank| Member {
            rank,
            shared: Arc::clone(&shared),
            opened: Cell::new(0),
        })
        .collect()
}

/// A fully connected network of `size` in-process ranks for one protocol; element `i` is
/// rank `i`'s end. Hand each to its own thread.
///
/// # Complexity
/// `O(size²)` sender handles.
///
/// # Example
/// ```
/// use hetlb_transport::{Transport, threads::network};
/// let ranks = network::<u32>(3);
/// ranks[2].send(0, 7).unwrap();
/// assert_eq!(ranks[0].try_recv().unwrap().unwrap().msg, 7);
/// assert!(ranks[1].try_recv().unwrap().is_none());
/// ```
pub fn network<M: Send + 'static>(size: usize) -> Vec<Endpoint<M>> {
    group(size)
        .iter()
        .map(|m| m.open_any::<M>().expect("a fresh group's first endpoint"))
        .collect()
}

enum Wire<M> {
    Msg(usize, M, Instant),
    /// Rank `.0`'s endpoint closed: wakes a waiting rank so that it looks.
    Closed(usize),
}

/// One endpoint's channels, shared by its ranks.
struct Port<M> {
    senders: Vec<Sender<Wire<M>>>,
    receivers: Mutex<Vec<Option<Receiver<Wire<M>>>>>,
    /// `Some(panic message or none)` once a rank's end is dropped.
    closed: Mutex<Vec<Option<Option<String>>>>,
    ledger: Ledger,
}

impl<M> Port<M> {
    fn new(size: usize) -> Self {
        let (senders, receivers): (Vec<_>, Vec<_>) =
            (0..size).map(|_| channel::unbounded()).unzip();
        Self {
            senders,
            receivers: Mutex::new(receivers.into_iter().map(Some).collect()),
            closed: Mutex::new(vec![None; size]),
            ledger: Ledger::new(size),
        }
    }
}

impl Member {
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.shared.size
    }

    /// Opens this rank's end of the next endpoint, for messages of any type (nothing is
    /// serialised on threads).
    ///
    /// # Errors
    /// [`TransportError::Mismatch`] when another rank opened this endpoint with another
    /// message type, or this rank's end of it is already taken.
    pub fn open_any<M: Send + 'static>(&self) -> Result<Endpoint<M>, TransportError> {
        let k = self.opened.get();
        self.opened.set(k + 1);
        let name = std::any::type_name::<M>();
        let port: Arc<Port<M>> = {
            let mut ports = lock(&self.shared.ports);
            while ports.len() <= k as usize {
                let p: Arc<dyn Any + Send + Sync> = Arc::new(Port::<M>::new(self.shared.size));
                ports.push((name, p));
            }
            let (made_for, any) = &ports[k as usize];
            Arc::clone(any)
                .downcast::<Port<M>>()
                .map_err(|_| TransportError::Mismatch {
                    port: k,
                    reason: format!("opened for {made_for} by another rank, here for {name}"),
                })?
        };
        let inbox =
            lock(&port.receivers)[self.rank]
                .take()
                .ok_or_else(|| TransportError::Mismatch {
                    port: k,
                    reason: format!("rank {}'s end is already open", self.rank),
                })?;
        Ok(Endpoint {
            rank: self.rank,
            port,
            shared: Arc::clone(&self.shared),
            inbox,
            read_closed: Mutex::new(vec![false; self.shared.size]),
        })
    }
}

impl Group for Member {
    type Endpoint<M: Message> = Endpoint<M>;

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn backend(&self) -> &'static str {
        "threads"
    }

    fn open<M: Message>(&self) -> Result<Endpoint<M>, TransportError> {
        self.open_any()
    }
}

/// One rank's end of an in-process endpoint.
pub struct Endpoint<M> {
    rank: usize,
    port: Arc<Port<M>>,
    shared: Arc<Shared>,
    inbox: Receiver<Wire<M>>,
    /// Peers whose closing this end has read (every message they sent before it is read).
    read_closed: Mutex<Vec<bool>>,
}

impl<M> std::fmt::Debug for Endpoint<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("rank", &self.rank)
            .field("size", &self.shared.size)
            .finish()
    }
}

impl<M> Endpoint<M> {
    fn take(&self, w: Wire<M>) -> Option<Envelope<M>> {
        match w {
            Wire::Msg(from, msg, arrived) => Some(Envelope {
                from,
                msg,
                arrived,
                bytes: 0,
            }),
            Wire::Closed(from) => {
                if let Some(r) = lock(&self.read_closed).get_mut(from) {
                    *r = true;
                }
                None
            }
        }
    }

    fn try_wire(&self) -> Result<Option<Wire<M>>, TransportError> {
        match self.inbox.try_recv() {
            Ok(w) => Ok(Some(w)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(TransportError::Closed(self.rank)),
        }
    }
}

impl<M> Transport<M> for Endpoint<M> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.shared.size
    }

    fn backend(&self) -> &'static str {
        "threads"
    }

    fn send(&self, to: usize, msg: M) -> Result<u64, TransportError> {
        self.send_at(to, msg, Instant::now())
    }

    /// Stamps the message with `now` as the instant it was sent (and so arrived).
    fn send_at(&self, to: usize, msg: M, now: Instant) -> Result<u64, TransportError> {
        let peer = self
            .port
            .senders
            .get(to)
            .ok_or(TransportError::NoSuchRank {
                rank: to,
                size: self.shared.size,
            })?;
        peer.send(Wire::Msg(self.rank, msg, now))
            .map_err(|_| TransportError::Closed(to))?;
        Ok(0)
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError> {
        self.recv_until(|| deadline)
    }

    fn recv_until(
        &self,
        deadline: impl FnOnce() -> Option<Instant>,
    ) -> Result<Option<Envelope<M>>, TransportError> {
        // A reply usually follows within microseconds; waiting for it briefly before parking
        // saves two thread wake-ups per request (tens of microseconds on a virtual machine).
        // After a few microseconds the poll yields the core between checks: when the other
        // end waits for a turn on the same core (a loaded machine), spinning would only delay
        // it. The deadline is needed only to park.
        if let Some(w) = super::poll(SPIN_BEFORE_PARKING, Some(YIELD_AFTER), || self.try_wire())? {
            return Ok(self.take(w));
        }
        self.recv_sleeping(deadline())
    }

    fn recv_sleeping(
        &self,
        deadline: Option<Instant>,
    ) -> Result<Option<Envelope<M>>, TransportError> {
        let w = match deadline {
            None => self
                .inbox
                .recv()
                .map_err(|_| TransportError::Closed(self.rank))?,
            Some(d) => match self.inbox.recv_deadline(d) {
                Ok(w) => w,
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(TransportError::Closed(self.rank));
                }
            },
        };
        Ok(self.take(w))
    }

    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError> {
        loop {
            match self.try_wire()? {
                None => return Ok(None),
                Some(w) => {
                    if let Some(e) = self.take(w) {
                        return Ok(Some(e));
                    }
                }
            }
        }
    }

    /// A peer is [`Liveness::Closed`] once every message it sent before closing has been
    /// read here (its closing was read, or nothing is waiting).
    fn liveness(&self, peer: usize) -> Liveness {
        if let Some(Some(panicked)) = lock(&self.port.closed).get(peer) {
            let read = lock(&self.read_closed).get(peer).copied().unwrap_or(false);
            if read || self.inbox.is_empty() {
                return Liveness::Closed {
                    panicked: panicked.clone(),
                };
            }
        }
        match lock(&self.shared.paused).get(peer) {
            Some(Some(since)) => Liveness::Silent(since.elapsed()),
            _ => Liveness::Alive,
        }
    }

    fn ledger(&self) -> Option<&Ledger> {
        self.shared.ledger.then_some(&self.port.ledger)
    }

    #[cfg(feature = "fault-injection")]
    fn pause(&self, duration: Option<Duration>) {
        lock(&self.shared.paused)[self.rank] = Some(Instant::now());
        if let Some(d) = duration {
            std::thread::sleep(d);
            lock(&self.shared.paused)[self.rank] = None;
        }
    }
}

impl<M> Drop for Endpoint<M> {
    fn drop(&mut self) {
        let panicked = std::thread::panicking().then(|| "its thread panicked".to_string());
        lock(&self.port.closed)[self.rank] = Some(panicked);
        self.port.ledger.release(self.rank, u64::MAX);
        for (to, peer) in self.port.senders.iter().enumerate() {
            if to != self.rank {
                let _ = peer.send(Wire::Closed(self.rank));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivers_in_order_per_pair_and_times_out() {
        let ranks = network::<u32>(2);
        for i in 0..5 {
            ranks[0].send(1, i).unwrap();
        }
        let got: Vec<u32> = (0..5)
            .map(|_| ranks[1].recv(None).unwrap().unwrap().msg)
            .collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        let later = Instant::now() + Duration::from_millis(5);
        assert!(ranks[1].recv(Some(later)).unwrap().is_none());
        assert_eq!(
            ranks[0].send(2, 0),
            Err(TransportError::NoSuchRank { rank: 2, size: 2 })
        );
    }

    #[test]
    fn works_across_threads() {
        let mut ranks = network::<String>(2);
        let b = ranks.pop().unwrap();
        let a = ranks.pop().unwrap();
        let h = std::thread::spawn(move || {
            let e = b.recv(None).unwrap().unwrap();
            b.send(e.from, format!("{}!", e.msg)).unwrap();
        });
        a.send(1, "ping".into()).unwrap();
        assert_eq!(a.recv(None).unwrap().unwrap().msg, "ping!");
        h.join().unwrap();
    }

    #[test]
    fn endpoints_keep_their_messages_apart() {
        let members = group(2);
        let a: Vec<Endpoint<u8>> = members.iter().map(|m| m.open_any().unwrap()).collect();
        let b: Vec<Endpoint<String>> = members.iter().map(|m| m.open_any().unwrap()).collect();
        a[0].send(1, 5).unwrap();
        b[0].send(1, "five".into()).unwrap();
        assert_eq!(b[1].try_recv().unwrap().unwrap().msg, "five");
        assert_eq!(a[1].try_recv().unwrap().unwrap().msg, 5);
    }

    #[test]
    fn opening_an_endpoint_with_another_type_is_refused() {
        let members = group(2);
        let _a: Endpoint<u8> = members[0].open_any().unwrap();
        let b = members[1].open_any::<String>();
        assert!(matches!(b, Err(TransportError::Mismatch { port: 0, .. })));
    }

    #[test]
    fn a_paused_end_is_silent_and_a_dropped_one_closed_after_its_last_message() {
        let mut ranks = network::<u8>(3);
        let c = ranks.pop().unwrap();
        let b = ranks.pop().unwrap();
        let a = ranks.pop().unwrap();
        assert_eq!(a.liveness(1), Liveness::Alive);
        b.pause(None);
        assert!(matches!(a.liveness(1), Liveness::Silent(_)));
        c.send(0, 9).unwrap();
        drop(c);
        // Its last message is waiting: not closed yet.
        assert_eq!(a.liveness(2), Liveness::Alive);
        assert_eq!(a.try_recv().unwrap().unwrap().msg, 9);
        // The wake-up is not a message; once read, the end is closed.
        assert!(a.try_recv().unwrap().is_none());
        assert_eq!(a.liveness(2), Liveness::Closed { panicked: None });
    }

    #[test]
    fn a_panicking_thread_is_told_apart() {
        let mut ranks = network::<u8>(2);
        let b = ranks.pop().unwrap();
        let a = ranks.pop().unwrap();
        let _ = std::thread::spawn(move || {
            let _b = b;
            panic!("on purpose");
        })
        .join();
        assert!(a.recv(None).unwrap().is_none(), "woken, with no message");
        assert!(matches!(
            a.liveness(1),
            Liveness::Closed { panicked: Some(_) }
        ));
    }
}
