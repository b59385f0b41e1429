//! The MPI flavour: ranks are the processes of an MPI communicator.
//!
//! **One way in.** [`Mpi::init`] starts MPI for a program that leaves MPI to hetlb (the
//! `hetlb` binary); [`Mpi::adopt`] joins an application that owns MPI, on a duplicate of the
//! communicator it hands over, so that hetlb's messages never mix with the application's.
//! Either way every message of every endpoint goes over that one duplicate, serialised with
//! serde + postcard, with a small frame saying which endpoint it is for.
//!
//! **Errors are returned, never fatal.** The duplicate has `MPI_ERRORS_RETURN` ([`duplicate`]),
//! every MPI call hetlb makes checks its return code ([`check`]), and the first MPI error
//! the engine meets fails every later call of every endpoint with [`TransportError::Mpi`]
//! (MPI's own description of the error included). Every buffer argument is built by
//! [`send_buffer`] / [`recv_buffer`], so an empty buffer is never passed as the dangling
//! address of an empty slice (which is Open MPI's `MPI_IN_PLACE`). Tested with MPICH and
//! Open MPI.
//!
//! **One engine.** All MPI calls on the duplicate are made by one engine, one caller at a
//! time: non-blocking sends on buffers it owns (`MPI_Isend`), matched probes for arrivals
//! (`MPI_Improbe` + `MPI_Mrecv`), and a heartbeat every [`BEAT`]: a gossip of the newest beat
//! number known of every rank, sent to `⌈log₂ P⌉` peers, so that liveness costs `O(log P)`
//! messages per rank and reaches every rank within `⌈log₂ P⌉` beats. A rank that
//! waits for a message drives the engine itself, so an exchange costs no hand-over between
//! threads. A waiter polls, yielding the core, for 1 ms before it sleeps in steps of up to
//! 100 µs — a large message moves only while its receiver drives MPI — or for 50 µs when its
//! node runs more of the job's processes than they may use cores (the union of their allowed
//! CPUs, learned when the engine starts: a launcher that binds each process to its own core
//! does not oversubscribe). Where MPI allows it (`MPI_THREAD_MULTIPLE`, which hetlb asks for
//! when it starts MPI) a keeper thread also drives the engine between calls, so a process
//! proves it is alive while its application computes, and a process stopped between two
//! exchanges (`SIGSTOP`) falls silent within a beat. Below `MULTIPLE` the engine runs only
//! inside hetlb's calls, on the adopting thread: then a peer is heard only while it waits for
//! messages itself
//! ([`Transport::proves_liveness_outside_calls`] is false). If hetlb starts MPI and the
//! library offers less than `MULTIPLE`, the engine lives on hetlb's own thread, the only one
//! allowed to call MPI, and endpoints hand it their messages over a channel.
//!
//! **Silence** is counted from the moment this process last resumed from a pause at the
//! earliest: a process that was itself stopped reads what arrived meanwhile before it blames
//! anyone.
//!
//! **Ending.** Dropping the [`Mpi`] sends a farewell to every peer and keeps receiving until
//! every peer's farewell arrived (at most [`FAREWELL_WAIT`]), so that no message is left
//! unmatched; a send that a silent peer never took is freed and its buffer leaked, as MPI
//! requires. A peer whose farewell has arrived is sent nothing more, not even a beat: it may
//! already be in `MPI_Finalize`, and a send it never takes would keep this process's own
//! `MPI_Finalize` from returning (as when a master checks results for longer than
//! [`FAREWELL_WAIT`] after its workers left). There is no pending collective at any time.
//! Under MPI's fail-stop model a process that dies ends the job through the launcher; what
//! hetlb survives are processes that stop and go on, or fall silent.

use super::{Envelope, Group, Liveness, Message, Transport, TransportError};
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use mpi::Threading;
use mpi::topology::Communicator;
use serde::{Deserialize, Serialize};
use std::cell::Cell;
use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{JoinHandle, ThreadId};
use std::time::{Duration, Instant};

/// The tag of every frame on the duplicate.
const TAG: i32 = 0x4845;
/// How often a process beats to every peer.
pub const BEAT: Duration = Duration::from_millis(100);
/// The longest the progress thread sleeps between two polls when idle.
pub const MAX_IDLE_SLEEP: Duration = Duration::from_micros(200);
/// How long the progress thread keeps polling after the last message before it sleeps.
const SPIN: Duration = Duration::from_micros(300);
/// How long a waiter that drives a shared engine polls it, yielding the core, before it
/// sleeps in a long wait ([`Transport::recv_sleeping`]), when its node has a core for each of
/// the job's processes there: long enough to cover a peer's entry into the same call and a
/// transfer of megabytes, which move only while the receiver drives MPI (a receiver asleep
/// between looks made a 1 MB move at 2 ranks take twice as long).
const SPIN_BEFORE_SLEEPING: Duration = Duration::from_millis(1);
/// The same when the node runs more of the job's processes than it has cores: about one
/// message's round trip between processes of a node, so that a reply already on its way is
/// taken at once and the cores are left to the processes that compute.
const SPIN_BEFORE_SLEEPING_OVERSUBSCRIBED: Duration = Duration::from_micros(50);
/// The longest a waiter that drives a shared engine sleeps between two looks: a reply that
/// comes while it sleeps waits at most this long.
const MAX_NAP: Duration = Duration::from_micros(100);
/// How long a waiter that drives a shared engine polls it without yielding the core (none
/// when the node runs more of the job's processes than it has cores).
const SPIN_BEFORE_YIELDING: Duration = Duration::from_micros(5);
/// How long an endpoint polls its channel before it blocks on it.
const SPIN_BEFORE_BLOCKING: Duration = Duration::from_micros(100);
/// How long a closing process waits for its peers' farewells.
pub const FAREWELL_WAIT: Duration = Duration::from_secs(2);
/// The longest the keeper of a shared engine sleeps between two looks.
const KEEPER_IDLE_NAP: Duration = Duration::from_millis(1);
/// A gap this much longer than a beat between two looks of the engine means this process was
/// not running (stopped, or starved): silence is then counted from its resumption.
const PAUSE_GAP: Duration = Duration::from_millis(300);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The frame at the end of every message on the duplicate.
#[derive(Debug, Serialize, Deserialize)]
enum Frame {
    /// A message for endpoint `port` (the payload precedes the frame).
    Data { port: u32 },
    /// The sender is alive; the payload is its table of the newest beat known of every rank.
    Beat,
    /// The sender's end of endpoint `port` was dropped (`Some` when its thread panicked).
    Closed { port: u32, panicked: Option<String> },
    /// The sender is shutting down; nothing more follows.
    Farewell,
}

/// The largest message encoded on the stack first (bytes): above it, into a kept buffer.
const SMALL_MESSAGE: usize = 1024;

/// Room kept after a small message for its frame (a port number) and the frame's length.
const FRAME_ROOM: usize = 16;

/// Encodes `payload` then `frame` and the frame's length in the last byte.
fn encode<M: Serialize + ?Sized>(
    msg: Option<&M>,
    frame: &Frame,
) -> Result<Vec<u8>, TransportError> {
    let enc = |e: postcard::Error| TransportError::Encoding(e.to_string());
    let mut small = [0u8; SMALL_MESSAGE];
    let mut bytes = match msg.map(|m| (m, postcard::to_slice(m, &mut small))) {
        // A small message (the states a call gathers, its votes) is copied out of the stack
        // into a vector of its size, with room for the frame: one allocation.
        Some((_, Ok(payload))) => {
            let mut bytes = Vec::with_capacity(payload.len() + FRAME_ROOM);
            bytes.extend_from_slice(payload);
            bytes
        }
        // A larger one into a kept buffer (see `pool`), given back once the send completes.
        Some((m, Err(postcard::Error::SerializeBufferFull))) => {
            postcard::to_extend(m, pool::take_largest()).map_err(enc)?
        }
        Some((_, Err(e))) => return Err(enc(e)),
        None => Vec::new(),
    };
    let before = bytes.len();
    bytes = postcard::to_extend(frame, bytes).map_err(enc)?;
    let frame_len = u8::try_from(bytes.len() - before)
        .map_err(|_| TransportError::Encoding("frame longer than 255 bytes".into()))?;
    bytes.push(frame_len);
    Ok(pool::fitted(bytes))
}

/// Splits a received message into its frame and payload (the payload keeps the buffer).
fn decode(mut bytes: Vec<u8>) -> Option<(Frame, Vec<u8>)> {
    let n = usize::from(*bytes.last()?);
    let end = bytes.len() - 1;
    let start = end.checked_sub(n)?;
    let frame = postcard::from_bytes(&bytes[start..end]).ok()?;
    bytes.truncate(start);
    Some((frame, bytes))
}

enum Delivery {
    Msg(usize, Vec<u8>, Instant),
    /// Rank `.0` closed its end of this endpoint: wakes a waiting rank.
    Closed(usize),
}

#[derive(Default)]
struct Slot {
    tx: Option<Sender<Delivery>>,
    parked: Vec<Delivery>,
    gone: bool,
}

/// What the engine and the endpoints share.
struct Inner {
    rank: usize,
    size: usize,
    local_ranks: usize,
    /// Cores the job's processes on this node may use between them.
    local_cores: usize,
    /// When each peer was last heard (directly, or a newer beat of it relayed by another).
    heard: Mutex<Vec<Instant>>,
    /// The newest beat number known of every rank (this rank's own at its index).
    beats: Mutex<Vec<u64>>,
    /// When this process last resumed from a pause (or started).
    resumed: Mutex<Instant>,
    /// Fault injection: no beats while set (`None`: for good).
    paused: Mutex<Option<Option<Instant>>>,
    slots: Mutex<Vec<Slot>>,
    closed: Mutex<HashMap<(usize, u32), Option<String>>>,
    /// The engine has stopped (shut down, or its thread ended).
    stopped: AtomicBool,
    /// The first MPI error the engine met (the duplicate has `MPI_ERRORS_RETURN`): every call
    /// after it fails with it.
    failure: Failure,
    mode: Mode,
}

/// The first MPI error of an engine, shared with the endpoints, which look at it before
/// every use of the engine: a flag read without a lock, the message behind it.
#[derive(Default)]
struct FirstError {
    met: AtomicBool,
    message: Mutex<Option<String>>,
}

type Failure = Arc<FirstError>;

enum Mode {
    /// The engine lives on hetlb's own thread, which alone may call MPI (hetlb started MPI
    /// and the library offers less than `MPI_THREAD_MULTIPLE`); endpoints talk to it over a
    /// channel.
    Owned(Sender<Command>),
    /// The engine is shared: whoever waits for a message drives it (one at a time). Under
    /// `MPI_THREAD_MULTIPLE` a keeper thread also drives it every millisecond or so, so that
    /// beats go out and arrivals are heard while the application computes; below, only the
    /// adopting thread (`only`) may call in, and only inside hetlb's calls.
    Shared {
        engine: Mutex<Option<Engine>>,
        only: Option<ThreadId>,
        keeper: bool,
    },
}

enum Command {
    Send(usize, Vec<u8>),
    Abort(i32),
    Shutdown,
}

impl Inner {
    fn new(rank: usize, size: usize, node: raw::NodeShare, failure: Failure, mode: Mode) -> Self {
        let now = Instant::now();
        Self {
            rank,
            size,
            local_ranks: node.processes,
            local_cores: node.cores,

            heard: Mutex::new(vec![now; size]),
            beats: Mutex::new(vec![0; size]),
            resumed: Mutex::new(now),
            paused: Mutex::new(None),
            slots: Mutex::new(Vec::new()),
            closed: Mutex::new(HashMap::new()),
            stopped: AtomicBool::new(false),
            failure,
            mode,
        }
    }

    /// The node runs more of the job's processes than they may use cores (the union of their
    /// allowed CPUs): waiters leave the cores sooner.
    fn oversubscribed(&self) -> bool {
        self.local_ranks > self.local_cores
    }

    fn stopped_error() -> TransportError {
        TransportError::Mpi("hetlb's MPI engine has stopped".into())
    }

    /// The engine's MPI error, if it met one.
    fn failed(&self) -> Result<(), TransportError> {
        if !self.failure.met.load(Ordering::Acquire) {
            return Ok(());
        }
        match lock(&self.failure.message).as_ref() {
            None => Ok(()),
            Some(e) => Err(TransportError::Mpi(e.clone())),
        }
    }

    fn deliver(&self, port: u32, d: Delivery) {
        let mut slots = lock(&self.slots);
        let k = port as usize;
        if slots.len() <= k {
            slots.resize_with(k + 1, Slot::default);
        }
        let slot = &mut slots[k];
        if slot.gone {
            return;
        }
        match &slot.tx {
            Some(tx) => {
                let _ = tx.send(d);
            }
            None => slot.parked.push(d),
        }
    }

    /// Takes in a peer's table of beat numbers: every rank whose number went up was heard.
    fn merge_beats(&self, payload: &[u8], arrived: Instant) {
        let Ok(theirs) = postcard::from_bytes::<Vec<u64>>(payload) else {
            return;
        };
        let mut beats = lock(&self.beats);
        let mut heard = lock(&self.heard);
        for (r, (&b, mine)) in theirs.iter().zip(beats.iter_mut()).enumerate() {
            if b > *mine && r != self.rank {
                *mine = b;
                if let Some(h) = heard.get_mut(r) {
                    *h = arrived;
                }
            }
        }
    }

    fn silence(&self, peer: usize) -> Duration {
        let heard = lock(&self.heard).get(peer).copied();
        let resumed = *lock(&self.resumed);
        heard.map_or(Duration::MAX, |h| h.max(resumed).elapsed())
    }

    fn beats_paused(&self) -> bool {
        match *lock(&self.paused) {
            None => false,
            Some(None) => true,
            Some(Some(until)) => Instant::now() < until,
        }
    }

    /// Hands `bytes` for rank `to` to the engine.
    fn post(&self, to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        self.failed()?;
        if to >= self.size {
            return Err(TransportError::NoSuchRank {
                rank: to,
                size: self.size,
            });
        }
        match &self.mode {
            Mode::Owned(commands) => commands
                .send(Command::Send(to, bytes))
                .map_err(|_| Self::stopped_error()),
            // Without a keeper the engine may not have looked for arrivals since the
            // application last called: a farewell that came meanwhile is read first.
            Mode::Shared { keeper: false, .. } => self.with_engine(|e, inner| {
                e.pump(inner);
                e.post(to, bytes)
            })?,
            Mode::Shared { .. } => self.with_engine(|e, _| e.post(to, bytes))?,
        }
    }

    /// Runs `f` on the shared engine (from the adopting thread only, below
    /// `MPI_THREAD_MULTIPLE`).
    fn with_engine<R>(
        &self,
        f: impl FnOnce(&mut Engine, &Inner) -> R,
    ) -> Result<R, TransportError> {
        let Mode::Shared { engine, only, .. } = &self.mode else {
            return Err(TransportError::Mpi("the engine is not shared".into()));
        };
        if only.is_some_and(|t| t != std::thread::current().id()) {
            return Err(TransportError::Mpi(
                "MPI was adopted below MPI_THREAD_MULTIPLE: hetlb must be called from the \
                 thread that adopted it"
                    .into(),
            ));
        }
        let mut guard = lock(engine);
        let e = guard.as_mut().ok_or_else(Self::stopped_error)?;
        Ok(f(e, self))
    }

    /// True when callers drive the engine themselves.
    fn shared(&self) -> bool {
        matches!(self.mode, Mode::Shared { .. })
    }

    /// True when a thread of hetlb's keeps the engine going between calls.
    fn has_thread(&self) -> bool {
        matches!(
            self.mode,
            Mode::Owned(_) | Mode::Shared { keeper: true, .. }
        )
    }
}

/// The keeper of a shared engine: drives it when no caller does, often while there is
/// traffic and every millisecond when idle, until told to stop.
fn keep(inner: &Inner, stop: &Receiver<()>) {
    let Mode::Shared { engine, .. } = &inner.mode else {
        return;
    };
    let mut nap = Duration::from_micros(100);
    loop {
        match stop.recv_timeout(nap) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let active = match engine.try_lock() {
            Ok(mut g) => g.as_mut().is_some_and(|e| e.pump(inner)),
            Err(_) => true, // a caller drives it
        };
        nap = if active {
            Duration::from_micros(100)
        } else {
            (nap * 2).min(KEEPER_IDLE_NAP)
        };
    }
}

/// The engine: the only code that calls MPI on the duplicate.
struct Engine {
    comm: raw::OwnedComm,
    sends: Vec<raw::PendingSend>,
    last_beat: Instant,
    last_look: Instant,
    farewells: Vec<bool>,
    /// The first MPI error met (shared with [`Inner::failure`], where callers read it).
    failure: Failure,
}

impl Engine {
    fn new(comm: raw::OwnedComm, size: usize) -> Self {
        let now = Instant::now();
        Self {
            comm,
            sends: Vec::new(),
            last_beat: now - BEAT,
            last_look: now,
            farewells: vec![false; size],
            failure: Arc::default(),
        }
    }

    /// Keeps the first MPI error: every later call of an endpoint fails with it.
    fn fail(&self, e: &TransportError) {
        let mut failure = lock(&self.failure.message);
        if failure.is_none() {
            *failure = Some(match e {
                TransportError::Mpi(m) => m.clone(),
                other => other.to_string(),
            });
            self.failure.met.store(true, Ordering::Release);
        }
    }

    /// Starts sending `bytes` to `to`, unless `to` has said farewell: a process that left may
    /// already be in `MPI_Finalize`, and a send it never receives would keep this process's
    /// own `MPI_Finalize` from returning.
    fn post(&mut self, to: usize, bytes: Vec<u8>) -> Result<(), TransportError> {
        if self.left(to) {
            return Err(TransportError::Closed(to));
        }
        let to = i32::try_from(to).map_err(|_| TransportError::NoSuchRank {
            rank: to,
            size: self.farewells.len(),
        })?;
        // Too large for one MPI call: this message fails, the engine goes on.
        if i32::try_from(bytes.len()).is_err() {
            return Err(TransportError::Encoding(format!(
                "a message of {} bytes is too large for MPI",
                bytes.len()
            )));
        }
        // An MPI error is kept: every later call fails with it.
        let s =
            raw::PendingSend::start(&self.comm, to, TAG, bytes).inspect_err(|e| self.fail(e))?;
        self.sends.push(s);
        self.progress_sends();
        Ok(())
    }

    /// True once rank `r`'s farewell has arrived: it sends nothing more and is sent nothing.
    fn left(&self, r: usize) -> bool {
        self.farewells.get(r).copied().unwrap_or(false)
    }

    fn progress_sends(&mut self) {
        let mut first_error = None;
        self.sends.retain_mut(|s| match s.test() {
            Ok(true) => {
                pool::give(s.take_buffer());
                false
            }
            Ok(false) => true,
            Err(e) => {
                first_error.get_or_insert(e);
                false
            }
        });
        if let Some(e) = first_error {
            self.fail(&e);
        }
    }

    /// Receives everything waiting, completes sends, beats when due. True when anything
    /// arrived.
    fn pump(&mut self, inner: &Inner) -> bool {
        self.pump_at(inner, Instant::now())
    }

    /// [`Engine::pump`] at `now`, a time the caller has just read.
    fn pump_at(&mut self, inner: &Inner, now: Instant) -> bool {
        if now.duration_since(self.last_look) > PAUSE_GAP + BEAT {
            // This process was not running: peers' silence counts from now at the earliest.
            *lock(&inner.resumed) = now;
        }
        self.last_look = now;
        self.progress_sends();
        let mut active = false;
        loop {
            let (from, bytes) = match raw::try_receive(self.comm.get(), TAG) {
                Ok(Some(m)) => m,
                Ok(None) => break,
                Err(e) => {
                    self.fail(&e);
                    break;
                }
            };
            let arrived = Instant::now();
            if let Some(h) = lock(&inner.heard).get_mut(from) {
                *h = arrived;
            }
            active = true;
            match decode(bytes) {
                Some((Frame::Data { port }, payload)) => {
                    inner.deliver(port, Delivery::Msg(from, payload, arrived));
                }
                Some((Frame::Closed { port, panicked }, _)) => {
                    lock(&inner.closed).insert((from, port), panicked);
                    inner.deliver(port, Delivery::Closed(from));
                }
                Some((Frame::Farewell, _)) => {
                    if let Some(f) = self.farewells.get_mut(from) {
                        *f = true;
                    }
                }
                Some((Frame::Beat, payload)) => inner.merge_beats(&payload, arrived),
                None => {}
            }
        }
        if now.duration_since(self.last_beat) >= BEAT && !inner.beats_paused() {
            self.last_beat = now;
            self.beat(inner);
        }
        active
    }

    /// One beat: this rank's beat number goes up, and its table of the newest beat known of
    /// every rank goes to `⌈log₂ P⌉` peers — `rank + 2^k` — so that news of every rank
    /// reaches every other within `⌈log₂ P⌉` beats, at `O(log P)` messages per rank per beat
    /// (gossip, as van Renesse, Minsky and Hayden's failure detector).
    fn beat(&mut self, inner: &Inner) {
        let table = {
            let mut beats = lock(&inner.beats);
            beats[inner.rank] += 1;
            beats.clone()
        };
        let Ok(bytes) = encode(Some(&table), &Frame::Beat) else {
            return;
        };
        let mut step = 1usize;
        while step < inner.size {
            let to = (inner.rank + step) % inner.size;
            let _ = self.post(to, bytes.clone());
            step <<= 1;
        }
    }

    fn broadcast(&mut self, inner: &Inner, frame: &Frame) {
        if let Ok(bytes) = encode::<()>(None, frame) {
            for to in (0..inner.size).filter(|&r| r != inner.rank) {
                let _ = self.post(to, bytes.clone());
            }
        }
    }

    /// Says farewell, receives until every peer's farewell is in (at most
    /// [`FAREWELL_WAIT`]), then frees what never completed.
    fn shutdown(mut self, inner: &Inner) {
        // Farewells that already arrived spare their senders a farewell of ours.
        self.pump_quietly(inner);
        self.broadcast(inner, &Frame::Farewell);
        let until = Instant::now() + FAREWELL_WAIT;
        let me = inner.rank;
        loop {
            self.pump_quietly(inner);
            let all = (0..inner.size).all(|r| r == me || self.farewells[r]);
            if (all && self.sends.is_empty()) || Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        inner.stopped.store(true, Ordering::SeqCst);
        // Sends still pending are freed and their buffers leaked by PendingSend's Drop.
    }

    /// As [`Engine::pump`], without beats (the process is leaving).
    fn pump_quietly(&mut self, inner: &Inner) {
        *lock(&inner.paused) = Some(None);
        self.pump(inner);
    }
}

/// This process's MPI, as hetlb uses it: the rank, the size, and the engine. Create it once
/// per process with [`Mpi::init`] or [`Mpi::adopt`], then open typed endpoints from it
/// ([`Group::open`]) in the same order on every rank.
///
/// The lifetime `'u` ties everything to the application's MPI universe when MPI is adopted
/// (no endpoint can outlive `MPI_Finalize`); it is `'static` when hetlb started MPI itself.
pub struct Mpi<'u> {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<()>>,
    /// Tells the keeper of a shared engine to stop.
    stop_keeper: Option<Sender<()>>,
    opened: Cell<u32>,
    /// The neighbourhood declared on the adopted communicator, if any.
    rank_graph: Option<crate::RankGraph>,
    _universe: PhantomData<&'u mpi::environment::Universe>,
}

impl std::fmt::Debug for Mpi<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.inner.rank)
            .field("size", &self.inner.size)
            .field("progress_thread", &self.has_progress_thread())
            .finish()
    }
}

impl Mpi<'static> {
    /// Starts MPI for this process on a progress thread of hetlb's, which owns it until the
    /// returned value is dropped (then MPI is finalised). For programs that make no MPI call
    /// of their own, such as the `hetlb` binary. Under `mpiexec -n N` every process gets its
    /// rank in `0..N`; run directly, the process is a world of one.
    ///
    /// # Errors
    /// [`TransportError::Mpi`] when MPI is already initialised or offers too little threading
    /// support.
    pub fn init() -> Result<Self, TransportError> {
        let (cmd_tx, cmd_rx) = channel::unbounded::<Command>();
        let (stop_tx, stop_rx) = channel::bounded::<()>(1);
        type Ready = Result<(usize, usize, raw::NodeShare, Failure, Option<Engine>), String>;
        let (ready_tx, ready_rx) = channel::bounded::<Ready>(1);
        let (inner_tx, inner_rx) = channel::bounded::<Arc<Inner>>(1);
        let thread = std::thread::Builder::new()
            .name("hetlb-mpi".into())
            .spawn(move || {
                let Some((universe, threading)) =
                    mpi::initialize_with_threading(Threading::Multiple)
                else {
                    let _ = ready_tx.send(Err("MPI is already initialised in this process".into()));
                    return;
                };
                if threading < Threading::Funneled {
                    let _ = ready_tx.send(Err(format!(
                        "the MPI library offers only {threading:?}, Funneled is needed"
                    )));
                    return;
                }
                let world = universe.world();
                let made = raw::OwnedComm::duplicate_on_this_thread(&world).and_then(|comm| {
                    let (rank, size, local) = raw::rank_size_local(comm.get())?;
                    Ok((rank, size, local, Engine::new(comm, size)))
                });
                let (rank, size, local, engine) = match made {
                    Ok(x) => x,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let failure = Arc::clone(&engine.failure);
                if threading == Threading::Multiple {
                    // Shared: callers drive the engine; this thread keeps it going between
                    // calls and finalises MPI at the end.
                    if ready_tx
                        .send(Ok((rank, size, local, failure, Some(engine))))
                        .is_err()
                    {
                        return;
                    }
                    let Ok(inner) = inner_rx.recv() else { return };
                    keep(&inner, &stop_rx);
                } else {
                    if ready_tx
                        .send(Ok((rank, size, local, failure, None)))
                        .is_err()
                    {
                        return;
                    }
                    let Ok(inner) = inner_rx.recv() else { return };
                    progress_loop(engine, &inner, &cmd_rx);
                }
                drop(universe);
            })
            .map_err(|e| TransportError::Mpi(format!("cannot start the MPI thread: {e}")))?;
        let (rank, size, local, failure, shared) = match ready_rx.recv() {
            Ok(Ok(x)) => x,
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(TransportError::Mpi(e));
            }
            Err(_) => {
                let _ = thread.join();
                return Err(TransportError::Mpi(
                    "the MPI thread ended during initialisation".into(),
                ));
            }
        };
        let (mode, stop_keeper) = match shared {
            Some(engine) => (
                Mode::Shared {
                    engine: Mutex::new(Some(engine)),
                    only: None,
                    keeper: true,
                },
                Some(stop_tx),
            ),
            None => (Mode::Owned(cmd_tx), None),
        };
        let inner = Arc::new(Inner::new(rank, size, local, failure, mode));
        let _ = inner_tx.send(Arc::clone(&inner));
        Ok(Self {
            inner,
            thread: Some(thread),
            stop_keeper,
            opened: Cell::new(0),
            rank_graph: None,
            _universe: PhantomData,
        })
    }
}

impl Mpi<'static> {
    /// [`Mpi::adopt`] for a caller that has no rsmpi [`Universe`](mpi::environment::Universe)
    /// because MPI was initialised by foreign code (a C, C++ or Fortran application that
    /// embeds hetlb through its C interface): hetlb works on a duplicate of `comm` (collective).
    ///
    /// # Errors
    /// [`TransportError::Mpi`] when MPI is not initialised, or already finalised, or refuses
    /// to duplicate `comm`.
    ///
    /// # Safety
    /// MPI must stay initialised until the returned value, and every endpoint opened from
    /// it, are dropped: the caller calls `MPI_Finalize` only after that (the lifetime
    /// `'static` cannot tie them to a universe that Rust does not own).
    #[allow(unsafe_code)]
    pub unsafe fn adopt_foreign<C: Communicator>(comm: &C) -> Result<Self, TransportError> {
        if !mpi::environment::is_initialized() {
            return Err(TransportError::Mpi("MPI is not initialised".into()));
        }
        if mpi::environment::is_finalized() {
            return Err(TransportError::Mpi("MPI is already finalised".into()));
        }
        Self::adopt_comm(comm)
    }
}

impl<'u> Mpi<'u> {
    /// Joins an application that owns MPI: hetlb works on a duplicate of `comm` (a collective
    /// call: every rank of `comm` must make it). Under `MPI_THREAD_MULTIPLE` the engine runs
    /// on a progress thread; below, on the calling thread inside hetlb's calls, which must
    /// then all come from this thread.
    ///
    /// # Example
    /// ```no_run
    /// use hetlb_transport::{Group, mpi::Mpi};
    /// let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Multiple).unwrap();
    /// let mpi = Mpi::adopt(&universe, &universe.world());
    /// println!("rank {} of {}", mpi.rank(), mpi.size());
    /// ```
    ///
    /// # Panics
    /// When MPI refuses to duplicate `comm` (which, under the default error handler of
    /// `comm`, ends the job first); [`Mpi::try_adopt`] returns the error instead.
    pub fn adopt<C: Communicator>(universe: &'u mpi::environment::Universe, comm: &C) -> Self {
        match Self::try_adopt(universe, comm) {
            Ok(mpi) => mpi,
            Err(e) => panic!("hetlb cannot adopt the communicator: {e}"),
        }
    }

    /// [`Mpi::adopt`], returning MPI's refusal to duplicate `comm` as an error.
    ///
    /// # Errors
    /// [`TransportError::Mpi`] when a call of the duplication fails.
    pub fn try_adopt<C: Communicator>(
        universe: &'u mpi::environment::Universe,
        comm: &C,
    ) -> Result<Self, TransportError> {
        let _ = universe;
        Self::adopt_comm(comm)
    }

    fn adopt_comm<C: Communicator>(comm: &C) -> Result<Self, TransportError> {
        let dup = raw::OwnedComm::duplicate_on_this_thread(comm)?;
        let (rank, size, local) = raw::rank_size_local(dup.get())?;
        let rank_graph = topo::rank_graph(dup.get(), size)?;
        let engine = Engine::new(dup, size);
        let failure = Arc::clone(&engine.failure);
        let multiple = mpi::environment::threading_support() == Threading::Multiple;
        let mode = Mode::Shared {
            engine: Mutex::new(Some(engine)),
            only: (!multiple).then(|| std::thread::current().id()),
            keeper: multiple,
        };
        let inner = Arc::new(Inner::new(rank, size, local, failure, mode));
        let (mut thread, mut stop_keeper) = (None, None);
        if multiple {
            let (stop_tx, stop_rx) = channel::bounded::<()>(1);
            let shared = Arc::clone(&inner);
            thread = std::thread::Builder::new()
                .name("hetlb-mpi".into())
                .spawn(move || keep(&shared, &stop_rx))
                .ok();
            stop_keeper = Some(stop_tx);
        }
        Ok(Self {
            inner,
            thread,
            stop_keeper,
            opened: Cell::new(0),
            rank_graph,
            _universe: PhantomData,
        })
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.inner.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.inner.size
    }

    /// Processes of this job on this process's node (to judge oversubscription).
    pub fn ranks_on_this_node(&self) -> usize {
        self.inner.local_ranks
    }

    /// Cores that this job's processes on this node may run on between them: the union of
    /// their allowed CPUs (Linux), learned when the engine starts. A launcher that binds each
    /// process to its own core leaves every process one CPU and the node one per process;
    /// where a process cannot tell its CPUs, its own `available_parallelism`.
    pub fn cores_on_this_node(&self) -> usize {
        self.inner.local_cores
    }

    /// True when the engine runs on a progress thread (liveness is then proven between
    /// calls too).
    pub fn has_progress_thread(&self) -> bool {
        self.inner.has_thread()
    }

    /// Ends every rank of the job with `code` (`MPI_Abort`): for a failure after which the
    /// other ranks cannot go on (one of them stopped answering, say).
    pub fn abort(&self, code: i32) -> ! {
        match &self.inner.mode {
            Mode::Owned(commands) => {
                let _ = commands.send(Command::Abort(code));
                std::thread::sleep(Duration::from_secs(30));
            }
            Mode::Shared { .. } => {
                abort_job(code);
            }
        }
        std::process::exit(code)
    }
}

/// `MPI_Abort` on `MPI_COMM_WORLD`, whatever communicator hetlb works on: the launcher then
/// ends every process of the job, stopped ones too. (MPICH's `MPI_Abort` on a duplicate
/// communicator waits for its members, and never returns while one of them is stopped.)
///
/// What the process wrote last (the error line saying why the job ends) is flushed first and
/// given a moment to reach the launcher: the abort ends the launcher's forwarding of output
/// too, and the line was sometimes lost.
fn abort_job(code: i32) -> ! {
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    std::thread::sleep(Duration::from_millis(300));
    mpi::topology::SimpleCommunicator::world().abort(code)
}

impl<'u> Group for Mpi<'u> {
    type Endpoint<M: Message> = MpiEndpoint<'u, M>;

    fn rank(&self) -> usize {
        self.inner.rank
    }

    fn size(&self) -> usize {
        self.inner.size
    }

    fn backend(&self) -> &'static str {
        "mpi"
    }

    fn rank_graph(&self) -> Option<&crate::RankGraph> {
        self.rank_graph.as_ref()
    }

    fn open<M: Message>(&self) -> Result<MpiEndpoint<'u, M>, TransportError> {
        if self.inner.stopped.load(Ordering::SeqCst) {
            return Err(Inner::stopped_error());
        }
        let port = self.opened.get();
        self.opened.set(port + 1);
        let (tx, rx) = channel::unbounded();
        {
            let mut slots = lock(&self.inner.slots);
            let k = port as usize;
            if slots.len() <= k {
                slots.resize_with(k + 1, Slot::default);
            }
            let slot = &mut slots[k];
            for d in slot.parked.drain(..) {
                let _ = tx.send(d);
            }
            slot.tx = Some(tx);
        }
        Ok(MpiEndpoint {
            inner: Arc::clone(&self.inner),
            port,
            rx,
            read_closed: Mutex::new(vec![false; self.inner.size]),
            _messages: PhantomData,
            _universe: PhantomData,
        })
    }
}

impl Drop for Mpi<'_> {
    fn drop(&mut self) {
        match &self.inner.mode {
            Mode::Owned(commands) => {
                let _ = commands.send(Command::Shutdown);
            }
            Mode::Shared { engine, only, .. } => {
                let here = only.is_none_or(|t| t == std::thread::current().id());
                if let Some(e) = lock(engine).take() {
                    if here {
                        e.shutdown(&self.inner);
                    } else {
                        // Below MPI_THREAD_MULTIPLE only the adopting thread may call MPI:
                        // the duplicate is left to MPI_Finalize.
                        std::mem::forget(e);
                    }
                }
            }
        }
        if let Some(stop) = self.stop_keeper.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.inner.stopped.store(true, Ordering::SeqCst);
    }
}

fn progress_loop(mut engine: Engine, inner: &Inner, commands: &Receiver<Command>) {
    let mut last_active = Instant::now();
    let mut idle = 0u32;
    loop {
        let mut active = engine.pump(inner);
        loop {
            match commands.try_recv() {
                Ok(Command::Send(to, bytes)) => {
                    let _ = engine.post(to, bytes);
                    active = true;
                }
                Ok(Command::Abort(code)) => abort_job(code),
                Ok(Command::Shutdown) | Err(TryRecvError::Disconnected) => {
                    return engine.shutdown(inner);
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        if active {
            idle = 0;
            last_active = Instant::now();
            continue;
        }
        // Just after traffic a reply is likely soon: keep polling, yielding the core.
        if last_active.elapsed() < SPIN {
            std::thread::yield_now();
            continue;
        }
        idle = idle.saturating_add(1);
        // Sleep on the command channel so that a send wakes the thread at once.
        let nap = Duration::from_micros(10u64 << idle.min(5)).min(MAX_IDLE_SLEEP);
        match commands.recv_timeout(nap) {
            Ok(Command::Send(to, bytes)) => {
                let _ = engine.post(to, bytes);
                idle = 0;
                last_active = Instant::now();
            }
            Ok(Command::Abort(code)) => abort_job(code),
            Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => {
                return engine.shutdown(inner);
            }
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// One rank's end of an endpoint over MPI. Messages are serialised with postcard. It cannot
/// outlive the MPI universe it works in (`'u`).
pub struct MpiEndpoint<'u, M> {
    inner: Arc<Inner>,
    port: u32,
    rx: Receiver<Delivery>,
    /// Peers whose closing this end has read (every message they sent before it is read).
    read_closed: Mutex<Vec<bool>>,
    _messages: PhantomData<fn(M) -> M>,
    _universe: PhantomData<&'u mpi::environment::Universe>,
}

impl<M> std::fmt::Debug for MpiEndpoint<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiEndpoint")
            .field("rank", &self.inner.rank)
            .field("size", &self.inner.size)
            .field("port", &self.port)
            .finish()
    }
}

impl<M: Message> MpiEndpoint<'_, M> {
    fn open_delivery(&self, d: Delivery) -> Result<Option<Envelope<M>>, TransportError> {
        match d {
            Delivery::Msg(from, bytes, arrived) => {
                let msg = postcard::from_bytes(&bytes).map_err(|e| {
                    TransportError::Encoding(format!(
                        "a message from rank {from} cannot be decoded: {e}"
                    ))
                })?;
                let len = bytes.len() as u64;
                pool::give(bytes);
                Ok(Some(Envelope {
                    from,
                    msg,
                    arrived,
                    bytes: len,
                }))
            }
            Delivery::Closed(from) => {
                if let Some(r) = lock(&self.read_closed).get_mut(from) {
                    *r = true;
                }
                Ok(None)
            }
        }
    }

    /// Encodes `msg` (a message of this endpoint, or a view that serialises as one) and hands
    /// it to the engine; the bytes it takes on the wire.
    fn send_encoded<V: Serialize + ?Sized>(
        &self,
        to: usize,
        msg: &V,
    ) -> Result<u64, TransportError> {
        let bytes = encode(Some(msg), &Frame::Data { port: self.port })?;
        let n = bytes.len() as u64;
        self.inner.post(to, bytes)?;
        Ok(n)
    }

    /// Waits for a message by driving the shared engine: polling it, yielding the core, for
    /// `eager` at first and while this process has sends in flight, then sleeping in
    /// growing steps (at most [`MAX_NAP`]) so that a waiting rank leaves the cores to
    /// computing ones.
    fn drive(
        &self,
        deadline: Option<Instant>,
        eager: Duration,
    ) -> Result<Option<Envelope<M>>, TransportError> {
        let start = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            // one clock read per look: the engine's beat and this wait share it
            let now = Instant::now();
            let (delivered, sending) = self.try_delivery_sending(now)?;
            if let Some(d) = delivered {
                return self.open_delivery(d);
            }
            if deadline.is_some_and(|d| now >= d) {
                return Ok(None);
            }
            let waited = now.duration_since(start);
            // A reply from a peer on another core usually comes within microseconds: look
            // again at once rather than pay a system call to yield.
            if waited < SPIN_BEFORE_YIELDING && !self.inner.oversubscribed() {
                std::hint::spin_loop();
            // A send in flight (a large message's rendezvous) moves only while this process
            // calls MPI: keep driving it rather than sleep.
            } else if sending || waited < eager {
                std::thread::yield_now();
            } else {
                let left = deadline.map_or(nap, |d| d - now);
                std::thread::sleep(nap.min(left));
                nap = (nap * 2).min(MAX_NAP);
            }
        }
    }

    fn try_delivery(&self) -> Result<Option<Delivery>, TransportError> {
        self.try_delivery_sending(Instant::now()).map(|(d, _)| d)
    }

    /// As `try_delivery` at `now` (a time just read), and whether this process still has
    /// sends in flight (a shared engine's; `false` for an owned one, whose thread progresses
    /// them).
    fn try_delivery_sending(
        &self,
        now: Instant,
    ) -> Result<(Option<Delivery>, bool), TransportError> {
        let mut sending = false;
        if self.inner.shared() {
            sending = self.inner.with_engine(|e, inner| {
                e.pump_at(inner, now);
                !e.sends.is_empty()
            })?;
        }
        self.inner.failed()?;
        match self.rx.try_recv() {
            Ok(d) => Ok((Some(d), sending)),
            Err(TryRecvError::Empty) if self.inner.stopped.load(Ordering::SeqCst) => {
                Err(Inner::stopped_error())
            }
            Err(TryRecvError::Empty) => Ok((None, sending)),
            Err(TryRecvError::Disconnected) => Err(Inner::stopped_error()),
        }
    }
}

impl<M: Message> Transport<M> for MpiEndpoint<'_, M> {
    fn rank(&self) -> usize {
        self.inner.rank
    }

    fn size(&self) -> usize {
        self.inner.size
    }

    fn backend(&self) -> &'static str {
        "mpi"
    }

    fn send(&self, to: usize, msg: M) -> Result<u64, TransportError> {
        self.send_encoded(to, &msg)
    }

    /// Encodes `view` in place of the message, which is therefore never built.
    fn send_view<V: Serialize + ?Sized>(
        &self,
        to: usize,
        view: &V,
        _owned: impl FnOnce() -> M,
    ) -> Result<u64, TransportError> {
        self.send_encoded(to, view)
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError> {
        if self.inner.shared() {
            return self.drive(deadline, Duration::from_micros(500));
        }
        // A reply usually follows soon: poll before blocking, which costs a thread wake-up
        // (tens of microseconds on a virtual machine), yielding the core to the engine's
        // thread meanwhile.
        if let Some(d) = super::poll(SPIN_BEFORE_BLOCKING, Some(Duration::ZERO), || {
            self.try_delivery()
        })? {
            return self.open_delivery(d);
        }
        self.recv_sleeping(deadline)
    }

    fn recv_sleeping(
        &self,
        deadline: Option<Instant>,
    ) -> Result<Option<Envelope<M>>, TransportError> {
        if self.inner.shared() {
            let eager = if self.inner.oversubscribed() {
                SPIN_BEFORE_SLEEPING_OVERSUBSCRIBED
            } else {
                SPIN_BEFORE_SLEEPING
            };
            return self.drive(deadline, eager);
        }
        // Blocks in slices, so that an engine that stops is noticed.
        loop {
            let slice = Instant::now() + Duration::from_millis(100);
            let until = deadline.map_or(slice, |d| d.min(slice));
            match self.rx.recv_deadline(until) {
                Ok(d) => return self.open_delivery(d),
                Err(RecvTimeoutError::Timeout) => {
                    if deadline.is_some_and(|d| Instant::now() >= d) {
                        return Ok(None);
                    }
                    self.inner.failed()?;
                    if self.inner.stopped.load(Ordering::SeqCst) {
                        return Err(Inner::stopped_error());
                    }
                }
                Err(RecvTimeoutError::Disconnected) => return Err(Inner::stopped_error()),
            }
        }
    }

    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError> {
        loop {
            match self.try_delivery()? {
                None => return Ok(None),
                Some(d) => {
                    if let Some(e) = self.open_delivery(d)? {
                        return Ok(Some(e));
                    }
                }
            }
        }
    }

    /// A peer is [`Liveness::Closed`] once every message it sent before closing has been
    /// read here (its closing was read, or nothing is waiting).
    fn liveness(&self, peer: usize) -> Liveness {
        if let Some(panicked) = lock(&self.inner.closed).get(&(peer, self.port)) {
            let read = lock(&self.read_closed).get(peer).copied().unwrap_or(false);
            if read || self.rx.is_empty() {
                return Liveness::Closed {
                    panicked: panicked.clone(),
                };
            }
        }
        Liveness::Silent(self.inner.silence(peer))
    }

    fn proves_liveness_outside_calls(&self) -> bool {
        self.inner.has_thread()
    }

    fn keep_alive(&self) {
        if self.inner.shared() {
            let _ = self.inner.with_engine(|e, inner| e.pump(inner));
        }
    }

    #[cfg(feature = "fault-injection")]
    fn pause(&self, duration: Option<Duration>) {
        *lock(&self.inner.paused) = Some(duration.map(|d| Instant::now() + d));
        if let Some(d) = duration {
            std::thread::sleep(d);
            *lock(&self.inner.paused) = None;
        }
    }
}

impl<M> Drop for MpiEndpoint<'_, M> {
    fn drop(&mut self) {
        {
            let mut slots = lock(&self.inner.slots);
            if let Some(slot) = slots.get_mut(self.port as usize) {
                slot.tx = None;
                slot.gone = true;
                slot.parked.clear();
            }
        }
        let panicked = std::thread::panicking().then(|| "its thread panicked".to_string());
        let frame = Frame::Closed {
            port: self.port,
            panicked,
        };
        if let Ok(bytes) = encode::<()>(None, &frame) {
            for to in (0..self.inner.size).filter(|&r| r != self.inner.rank) {
                let _ = self.inner.post(to, bytes.clone());
            }
        }
    }
}

mod cpus;
mod pool;
mod raw;
mod topo;

pub use raw::{check, duplicate, duplicate_raw, recv_buffer, send_buffer};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_behind_their_payload() {
        let bytes = encode(Some(&(7u32, "seven")), &Frame::Data { port: 3 }).unwrap();
        let (frame, payload) = decode(bytes).unwrap();
        assert!(matches!(frame, Frame::Data { port: 3 }));
        let m: (u32, String) = postcard::from_bytes(&payload).unwrap();
        assert_eq!(m, (7, "seven".to_string()));
        let (frame, payload) = decode(encode::<()>(None, &Frame::Farewell).unwrap()).unwrap();
        assert!(matches!(frame, Frame::Farewell) && payload.is_empty());
        assert!(decode(vec![]).is_none());
        assert!(decode(vec![9]).is_none(), "a length beyond the message");
    }

    /// Messages that fit the stack and messages that do not are framed alike, behind the
    /// payload's own encoding.
    #[test]
    fn small_and_large_messages_carry_their_encoding() {
        let frame = || Frame::Closed {
            port: 300,
            panicked: Some("a long reason ".repeat(12)),
        };
        for len in [
            0,
            1,
            SMALL_MESSAGE - 3,
            SMALL_MESSAGE - 2,
            SMALL_MESSAGE,
            70_000,
        ] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let bytes = encode(Some(&payload), &frame()).unwrap();
            let (back, rest) = decode(bytes).unwrap();
            assert!(matches!(
                back,
                Frame::Closed {
                    port: 300,
                    panicked: Some(_)
                }
            ));
            assert_eq!(
                rest,
                postcard::to_allocvec(&payload).unwrap(),
                "{len} bytes"
            );
        }
    }
}
