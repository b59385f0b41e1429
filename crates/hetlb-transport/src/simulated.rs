//! The simulated flavour, for tests: ranks are threads, but only one of them runs at a time,
//! time is virtual, and every choice the real flavours leave to the machine — which message
//! arrives first, which rank runs next — is drawn from a seed. A run is a function of its
//! seed: a failing trial replays exactly, and timeouts of seconds pass in microseconds.
//!
//! **How it runs.** The group holds a *baton*. A rank runs only while it holds it, and gives
//! it up only inside a transport call that has to wait (a `recv` with nothing to read, a
//! `pause`, a [`Member::sleep`]) or when its membership is dropped. The waiting rank whose
//! wake-up comes first in virtual time — a message's arrival, its deadline, the end of its
//! sleep — gets the baton next, and the clock jumps to that instant; ties go to a seeded draw.
//! Nothing runs until every rank of the group has made its first call (or dropped its
//! membership), so thread start-up order cannot matter.
//!
//! **Messages** take a seeded latency (1 to 200 µs of virtual time), in order per pair of
//! ranks; values move as they are, never serialised. A rank's computation between calls takes
//! no virtual time; [`Member::sleep`] stands for a long one.
//!
//! **Liveness** is the threads flavour's: a running rank is alive, a paused one
//! (`Transport::pause`) silent since it paused, a dropped endpoint closed once every message
//! it sent has been read. When every rank waits with no wake-up to come, the run is stalled:
//! the waiting calls fail with [`TransportError::Stalled`] instead of hanging.
//!
//! # Example
//! ```
//! use hetlb_transport::{Group, Transport, simulated};
//! use std::time::Duration;
//! let members = simulated::group(2, 7);
//! let handles: Vec<_> = members.into_iter().map(|m| std::thread::spawn(move || {
//!     let ep = m.open::<u32>().unwrap();
//!     if m.rank() == 0 {
//!         m.sleep(Duration::from_secs(3600)); // an hour of virtual time
//!         ep.send(1, 42).unwrap();
//!         None
//!     } else {
//!         let start = ep.now();
//!         let got = ep.recv(None).unwrap().unwrap().msg;
//!         Some((got, ep.now() - start >= Duration::from_secs(3600)))
//!     }
//! })).collect();
//! let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
//! assert_eq!(results[1], Some((42, true)));
//! ```

use super::{Envelope, Group, Ledger, Liveness, Message, Transport, TransportError};
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;
use std::any::Any;
use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The shortest and longest latency of a message, in nanoseconds of virtual time.
const LATENCY_NS: std::ops::RangeInclusive<u64> = 1_000..=200_000;

/// What a rank is doing, as the scheduler sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// It has made no call yet.
    Absent,
    /// It holds the baton.
    Running,
    /// It waits inside a call.
    Waiting(Wait),
    /// Its membership is dropped.
    Done,
}

/// What a waiting rank waits for.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Wait {
    /// Its first turn (nothing runs before every rank has arrived).
    Start,
    /// A message on endpoint `port`, until `deadline` (virtual nanoseconds; none: for ever).
    Message { port: u32, deadline: Option<u64> },
    /// The end of a sleep or a pause.
    Until(u64),
}

/// A message on its way: who sent it, its arrival, and the value.
struct InFlight {
    from: usize,
    arrival: u64,
    value: Box<dyn Any + Send>,
}

/// Everything the ranks share, under one lock.
struct World {
    size: usize,
    rng: Pcg64,
    /// Virtual nanoseconds since the group was made.
    now: u64,
    phases: Vec<Phase>,
    /// `Some(since)` while a rank is paused.
    paused: Vec<Option<u64>>,
    /// For a waiting rank whose peer closed an endpoint: when the news arrives (after the
    /// peer's last message), ending its wait as the threads flavour's wake-up does.
    poked: Vec<Option<u64>>,
    stalled: bool,
    /// In-flight messages by (endpoint, receiver), ordered by (arrival, sequence).
    queues: BTreeMap<(u32, usize), BTreeSet<(u64, u64)>>,
    messages: BTreeMap<u64, InFlight>,
    seq: u64,
    /// The last arrival per (endpoint, sender, receiver), for order per pair.
    last_arrival: BTreeMap<(u32, usize, usize), u64>,
    /// Per endpoint: its message type's name, each rank's end closed (with a panic message).
    ports: Vec<PortState>,
}

struct PortState {
    name: &'static str,
    taken: Vec<bool>,
    closed: Vec<Option<Option<String>>>,
    ledger: Arc<Ledger>,
}

struct Shared {
    world: Mutex<World>,
    turn: Condvar,
    base: Instant,
    ledger: bool,
}

fn lock(m: &Mutex<World>) -> MutexGuard<'_, World> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl World {
    /// When a waiting rank wakes, if ever.
    fn wake_time(&self, rank: usize) -> Option<u64> {
        match self.phases[rank] {
            Phase::Waiting(Wait::Start) => Some(0),
            Phase::Waiting(Wait::Until(t)) => Some(t),
            Phase::Waiting(Wait::Message { port, deadline }) => {
                let first = self
                    .queues
                    .get(&(port, rank))
                    .and_then(|q| q.first())
                    .map(|&(arrival, _)| arrival);
                [first, deadline, self.poked[rank]]
                    .into_iter()
                    .flatten()
                    .min()
            }
            _ => None,
        }
    }

    /// Hands the baton to the waiting rank that wakes first (ties: a seeded draw) and moves
    /// the clock to its wake-up. Nobody runs while a rank has not arrived; when nobody can
    /// ever wake, the run is stalled.
    fn pass_baton(&mut self) {
        if self.stalled
            || self.phases.contains(&Phase::Absent)
            || self.phases.contains(&Phase::Running)
        {
            return;
        }
        let times: Vec<(usize, u64)> = (0..self.size)
            .filter_map(|r| self.wake_time(r).map(|t| (r, t)))
            .collect();
        let Some(first) = times.iter().map(|&(_, t)| t).min() else {
            self.stalled = self.phases.iter().any(|p| matches!(p, Phase::Waiting(_)));
            return;
        };
        let tied: Vec<usize> = times
            .iter()
            .filter(|&&(_, t)| t == first)
            .map(|&(r, _)| r)
            .collect();
        let next = tied[self.rng.random_range(0..tied.len())];
        self.now = self.now.max(first);
        self.phases[next] = Phase::Running;
    }

    /// The next message for `rank` on `port` that has arrived by now.
    fn take_arrived(&mut self, port: u32, rank: usize) -> Option<InFlight> {
        let q = self.queues.get_mut(&(port, rank))?;
        let &(arrival, seq) = q.first()?;
        if arrival > self.now {
            return None;
        }
        q.pop_first();
        self.messages.remove(&seq)
    }
}

/// One rank's membership in a simulated group made by [`group`]. Hand each to its own thread
/// and open the endpoints it needs, in the same order on every rank.
pub struct Member {
    rank: usize,
    shared: Arc<Shared>,
    opened: Cell<u32>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member").field("rank", &self.rank).finish()
    }
}

/// A simulated group of `size` ranks whose runs are drawn from `seed`, with the shared
/// [`Ledger`] of the threads flavour; element `i` is rank `i`'s membership.
pub fn group(size: usize, seed: u64) -> Vec<Member> {
    make_group(size, seed, true)
}

/// As [`group`], with no [`Ledger`]: protocols agree by messages, as MPI processes do.
pub fn group_without_ledger(size: usize, seed: u64) -> Vec<Member> {
    make_group(size, seed, false)
}

fn make_group(size: usize, seed: u64, ledger: bool) -> Vec<Member> {
    let shared = Arc::new(Shared {
        world: Mutex::new(World {
            size,
            rng: Pcg64::seed_from_u64(seed),
            now: 0,
            phases: vec![Phase::Absent; size],
            paused: vec![None; size],
            poked: vec![None; size],
            stalled: false,
            queues: BTreeMap::new(),
            messages: BTreeMap::new(),
            seq: 0,
            last_arrival: BTreeMap::new(),
            ports: Vec::new(),
        }),
        turn: Condvar::new(),
        base: Instant::now(),
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

impl Shared {
    /// Waits inside a call until `rank` holds the baton again, after setting it to `wait`
    /// (or, from `Absent`, arriving). Returns the locked world, or `Stalled`.
    fn wait_turn<'a>(
        &'a self,
        mut world: MutexGuard<'a, World>,
        rank: usize,
        wait: Wait,
    ) -> Result<MutexGuard<'a, World>, TransportError> {
        world.phases[rank] = Phase::Waiting(wait);
        world.pass_baton();
        self.turn.notify_all();
        while world.phases[rank] != Phase::Running {
            if world.stalled {
                world.phases[rank] = Phase::Done;
                return Err(TransportError::Stalled(format!(
                    "rank {rank}: every rank waits and nothing can wake any of them"
                )));
            }
            world = self
                .turn
                .wait(world)
                .unwrap_or_else(PoisonError::into_inner);
        }
        Ok(world)
    }

    /// The world, with `rank` holding the baton (its first call waits for its first turn).
    fn enter(&self, rank: usize) -> Result<MutexGuard<'_, World>, TransportError> {
        let world = lock(&self.world);
        match world.phases[rank] {
            Phase::Absent => self.wait_turn(world, rank, Wait::Start),
            _ => Ok(world),
        }
    }

    fn instant(&self, ns: u64) -> Instant {
        self.base + Duration::from_nanos(ns)
    }

    fn nanos(&self, t: Instant) -> u64 {
        u64::try_from(t.saturating_duration_since(self.base).as_nanos()).unwrap_or(u64::MAX)
    }
}

impl Member {
    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        lock(&self.shared.world).size
    }

    /// Lets `duration` of virtual time pass for this rank, as a long computation would: the
    /// others run meanwhile. (On the real flavours an application just computes.)
    pub fn sleep(&self, duration: Duration) {
        sleep(&self.shared, self.rank, duration);
    }

    /// The virtual clock.
    pub fn now(&self) -> Instant {
        let world = lock(&self.shared.world);
        self.shared.instant(world.now)
    }
}

fn sleep(shared: &Shared, rank: usize, duration: Duration) {
    let Ok(world) = shared.enter(rank) else {
        return;
    };
    let until = world
        .now
        .saturating_add(u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX));
    // A stalled run ends the sleep; the next call reports it.
    drop(shared.wait_turn(world, rank, Wait::Until(until)));
}

impl Drop for Member {
    fn drop(&mut self) {
        let mut world = lock(&self.shared.world);
        world.phases[self.rank] = Phase::Done;
        world.pass_baton();
        self.shared.turn.notify_all();
    }
}

impl Group for Member {
    type Endpoint<M: Message> = Endpoint<M>;

    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        Member::size(self)
    }

    fn backend(&self) -> &'static str {
        "simulated"
    }

    fn open<M: Message>(&self) -> Result<Endpoint<M>, TransportError> {
        let k = self.opened.get();
        self.opened.set(k + 1);
        let name = std::any::type_name::<M>();
        let mut world = self.shared.enter(self.rank)?;
        let size = world.size;
        while world.ports.len() <= k as usize {
            world.ports.push(PortState {
                name,
                taken: vec![false; size],
                closed: vec![None; size],
                ledger: Arc::new(Ledger::new(size)),
            });
        }
        let port = &mut world.ports[k as usize];
        if port.name != name {
            return Err(TransportError::Mismatch {
                port: k,
                reason: format!("opened for {} by another rank, here for {name}", port.name),
            });
        }
        if std::mem::replace(&mut port.taken[self.rank], true) {
            return Err(TransportError::Mismatch {
                port: k,
                reason: format!("rank {}'s end is already open", self.rank),
            });
        }
        let ledger = Arc::clone(&port.ledger);
        Ok(Endpoint {
            rank: self.rank,
            size,
            port: k,
            shared: Arc::clone(&self.shared),
            ledger: self.shared.ledger.then_some(ledger),
            _message: std::marker::PhantomData,
        })
    }

    fn sleep(&self, duration: Duration) {
        Member::sleep(self, duration);
    }
}

/// One rank's end of a simulated endpoint.
pub struct Endpoint<M> {
    rank: usize,
    size: usize,
    port: u32,
    shared: Arc<Shared>,
    ledger: Option<Arc<Ledger>>,
    _message: std::marker::PhantomData<fn() -> M>,
}

impl<M> std::fmt::Debug for Endpoint<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("rank", &self.rank)
            .field("port", &self.port)
            .finish()
    }
}

impl<M: Send + 'static> Endpoint<M> {
    fn envelope(&self, m: InFlight) -> Envelope<M> {
        let msg = *m
            .value
            .downcast::<M>()
            .unwrap_or_else(|_| unreachable!("an endpoint carries one message type"));
        Envelope {
            from: m.from,
            msg,
            arrived: self.shared.instant(m.arrival),
            bytes: 0,
        }
    }
}

impl<M: Send + 'static> Transport<M> for Endpoint<M> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn backend(&self) -> &'static str {
        "simulated"
    }

    fn send(&self, to: usize, msg: M) -> Result<u64, TransportError> {
        if to >= self.size {
            return Err(TransportError::NoSuchRank {
                rank: to,
                size: self.size,
            });
        }
        let mut world = self.shared.enter(self.rank)?;
        if world.ports[self.port as usize].closed[to].is_some() {
            return Err(TransportError::Closed(to));
        }
        let latency = world.rng.random_range(LATENCY_NS);
        let key = (self.port, self.rank, to);
        let after = world.last_arrival.get(&key).map_or(0, |&a| a + 1);
        let arrival = (world.now + latency).max(after);
        world.last_arrival.insert(key, arrival);
        world.seq += 1;
        let seq = world.seq;
        world.messages.insert(
            seq,
            InFlight {
                from: self.rank,
                arrival,
                value: Box::new(msg),
            },
        );
        world
            .queues
            .entry((self.port, to))
            .or_default()
            .insert((arrival, seq));
        Ok(0)
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError> {
        let deadline = deadline.map(|d| self.shared.nanos(d));
        let mut world = self.shared.enter(self.rank)?;
        loop {
            if let Some(m) = world.take_arrived(self.port, self.rank) {
                return Ok(Some(self.envelope(m)));
            }
            if deadline.is_some_and(|d| world.now >= d) {
                return Ok(None);
            }
            if world.poked[self.rank].is_some_and(|t| t <= world.now) {
                world.poked[self.rank] = None;
                return Ok(None);
            }
            let wait = Wait::Message {
                port: self.port,
                deadline,
            };
            world = self.shared.wait_turn(world, self.rank, wait)?;
        }
    }

    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError> {
        let mut world = self.shared.enter(self.rank)?;
        Ok(world
            .take_arrived(self.port, self.rank)
            .map(|m| self.envelope(m)))
    }

    /// A peer is closed once its end is dropped and every message it sent here has been read.
    fn liveness(&self, peer: usize) -> Liveness {
        let world = lock(&self.shared.world);
        let Some(port) = world.ports.get(self.port as usize) else {
            return Liveness::Alive;
        };
        if let Some(Some(panicked)) = port.closed.get(peer) {
            let unread = world
                .queues
                .get(&(self.port, self.rank))
                .is_some_and(|q| q.iter().any(|(_, s)| world.messages[s].from == peer));
            if !unread {
                return Liveness::Closed {
                    panicked: panicked.clone(),
                };
            }
        }
        match world.paused.get(peer) {
            Some(Some(since)) => Liveness::Silent(Duration::from_nanos(world.now - since)),
            _ => Liveness::Alive,
        }
    }

    fn ledger(&self) -> Option<&Ledger> {
        self.ledger.as_deref()
    }

    fn now(&self) -> Instant {
        let world = lock(&self.shared.world);
        self.shared.instant(world.now)
    }

    #[cfg(feature = "fault-injection")]
    fn pause(&self, duration: Option<Duration>) {
        let Ok(mut world) = self.shared.enter(self.rank) else {
            return;
        };
        world.paused[self.rank] = Some(world.now);
        let Some(d) = duration else {
            return;
        };
        let until = world
            .now
            .saturating_add(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        if let Ok(mut world) = self.shared.wait_turn(world, self.rank, Wait::Until(until)) {
            world.paused[self.rank] = None;
        }
    }
}

impl<M> Drop for Endpoint<M> {
    fn drop(&mut self) {
        let panicked = std::thread::panicking().then(|| "its thread panicked".to_string());
        let mut world = lock(&self.shared.world);
        if let Some(port) = world.ports.get_mut(self.port as usize) {
            port.closed[self.rank] = Some(panicked);
        }
        for r in (0..world.size).filter(|&r| r != self.rank) {
            if matches!(world.phases[r], Phase::Waiting(Wait::Message { port, .. }) if port == self.port)
            {
                let last = world.last_arrival.get(&(self.port, self.rank, r)).copied();
                world.poked[r] = Some(last.map_or(world.now, |a| a.max(world.now)) + 1);
            }
        }
        if let Some(l) = &self.ledger {
            l.release(self.rank, u64::MAX);
        }
        self.shared.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The next message, past the wake-ups of peers that closed.
    fn next<M: Send + 'static>(ep: &Endpoint<M>) -> M {
        loop {
            if let Some(e) = ep.recv(None).unwrap() {
                return e.msg;
            }
        }
    }

    /// Every rank sends its rank to every other, then reads `size − 1` messages; the order in
    /// which each rank read them.
    fn exchange(size: usize, seed: u64) -> Vec<Vec<usize>> {
        let handles: Vec<_> = group(size, seed)
            .into_iter()
            .map(|m| {
                std::thread::spawn(move || {
                    let ep = m.open::<usize>().unwrap();
                    for to in (0..m.size()).filter(|&t| t != m.rank()) {
                        ep.send(to, m.rank()).unwrap();
                    }
                    (1..m.size()).map(|_| next(&ep)).collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    #[test]
    fn a_seed_replays_and_seeds_differ() {
        let a = exchange(5, 1);
        assert_eq!(a, exchange(5, 1));
        assert!(
            (2..20).any(|s| exchange(5, s) != a),
            "every seed gave one order"
        );
        for (r, got) in a.iter().enumerate() {
            let mut sorted = got.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, (0..5).filter(|&x| x != r).collect::<Vec<_>>());
        }
    }

    #[test]
    fn order_per_pair_holds_and_deadlines_pass_in_virtual_time() {
        let handles: Vec<_> = group(2, 3)
            .into_iter()
            .map(|m| {
                std::thread::spawn(move || {
                    let ep = m.open::<u32>().unwrap();
                    if m.rank() == 0 {
                        for i in 0..50 {
                            ep.send(1, i).unwrap();
                        }
                        m.sleep(Duration::from_secs(7200)); // alive, and quiet
                        Vec::new()
                    } else {
                        let mut got: Vec<u32> = (0..50).map(|_| next(&ep)).collect();
                        let t = ep.now();
                        let hour = Duration::from_secs(3600);
                        assert!(ep.recv(Some(t + hour)).unwrap().is_none());
                        assert!(ep.now() >= t + hour);
                        got.push(99);
                        got
                    }
                })
            })
            .collect();
        let got: Vec<Vec<u32>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let mut want: Vec<u32> = (0..50).collect();
        want.push(99);
        assert_eq!(got[1], want);
    }

    #[test]
    fn a_closed_peer_is_seen_and_a_stall_is_an_error() {
        let handles: Vec<_> = group(2, 5)
            .into_iter()
            .map(|m| {
                std::thread::spawn(move || {
                    let ep = m.open::<u8>().unwrap();
                    if m.rank() == 0 {
                        ep.send(1, 1).unwrap();
                        drop(ep);
                        None
                    } else {
                        assert_eq!(next(&ep), 1);
                        // The peer's last message is read: it is closed now.
                        while ep.liveness(0) == Liveness::Alive {
                            let _ = ep.recv(Some(ep.now() + Duration::from_millis(1)));
                        }
                        Some(ep.liveness(0))
                    }
                })
            })
            .collect();
        let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(out[1], Some(Liveness::Closed { panicked: None }));

        let handles: Vec<_> = group(2, 5)
            .into_iter()
            .map(|m| {
                std::thread::spawn(move || {
                    let ep = m.open::<u8>().unwrap();
                    ep.recv(None).map(|_| ())
                })
            })
            .collect();
        for h in handles {
            assert!(matches!(h.join().unwrap(), Err(TransportError::Stalled(_))));
        }
    }
}
