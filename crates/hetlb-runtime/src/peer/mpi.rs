//! The MPI backend: ranks are MPI processes; the application initialises MPI and hands its
//! communicator over; hetlb works on duplicates of it, so its messages never mix with the
//! application's.
//!
//! **Threading.** Every MPI call of a rebalance is made on the thread that calls the balancer,
//! inside the call, so any threading level works (with `MPI_THREAD_FUNNELED`, call the balancer
//! from the main thread, as every MPI call must be). Nothing is sent outside calls — except
//! under `MPI_THREAD_MULTIPLE`, where a heartbeat thread proves the rank alive while it
//! computes, so that a rank stopped between calls (SIGSTOP) is found within the timeout while a
//! busy one never is. Below `MULTIPLE` a rank proves it is alive only while it waits in a call,
//! and a peer that has not reached the call is judged by the entry timeout (no limit by
//! default).
//!
//! **No deadlock, no hang.** Sends are non-blocking (`MPI_Isend`) with buffers the backend
//! owns, and receives probe (`MPI_Improbe`), so two ranks sending to each other never wait for
//! each other, and a wait can always give up at its deadline. A send still in flight when the
//! backend is dropped (its receiver died) has its request freed and its buffer leaked, as MPI
//! requires.

use super::comm::{Comm, Liveness, Msg, Received};
use super::error::PeerError;
use mpi::Threading;
use mpi::point_to_point::{MatchedReceiveVec, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The tag of the protocol's messages (on the duplicate, so any tag would do).
const TAG: i32 = 0x5045;
/// How often the heartbeat thread beats.
const BEAT: Duration = Duration::from_millis(100);
/// How long a dropped backend waits for its last sends to complete before leaking them.
const DRAIN: Duration = Duration::from_millis(500);

/// One rank's end of a peer group on MPI. Create it on every rank of `comm` at the same
/// point (it duplicates `comm`, a collective operation).
///
/// # Example
/// ```no_run
/// use hetlb_runtime::peer::{mpi::MpiComm, Balancer, BalancerConfig};
/// let universe = mpi::initialize().unwrap();
/// let world = mpi::topology::Communicator::duplicate(&universe.world());
/// let comm = MpiComm::<u64>::new(&world);
/// let mut items: Vec<u64> = Vec::new();
/// let mut balancer = Balancer::new(comm, BalancerConfig::new("dishet").unwrap()).unwrap();
/// let report = balancer.rebalance(&mut items).unwrap();
/// println!("{} items after", report.items_after);
/// ```
pub struct MpiComm<T> {
    comm: SimpleCommunicator,
    rank: usize,
    size: usize,
    sends: Vec<owned::PendingSend>,
    last_heard: Arc<Mutex<Vec<Instant>>>,
    beats: Option<Heartbeats>,
    last_keep_alive: Instant,
    _items: PhantomData<fn(T) -> T>,
}

impl<T> std::fmt::Debug for MpiComm<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MpiComm")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("heartbeat_thread", &self.beats.is_some())
            .finish()
    }
}

impl<T> MpiComm<T> {
    /// This rank's end over a duplicate of `comm`. Collective: every rank of `comm` must call
    /// it. Starts a heartbeat thread when MPI provides `MPI_THREAD_MULTIPLE`.
    pub fn new<C: Communicator>(comm: &C) -> Self {
        let data = comm.duplicate();
        // Always duplicated, so that every rank makes the same collective calls whatever
        // threading level it was given; used only under MPI_THREAD_MULTIPLE.
        let beat_comm = comm.duplicate();
        let rank = data.rank() as usize;
        let size = data.size() as usize;
        let last_heard = Arc::new(Mutex::new(vec![Instant::now(); size]));
        let beats = (mpi::environment::threading_support() == Threading::Multiple && size > 1)
            .then(|| Heartbeats::start(owned::SendComm(beat_comm), Arc::clone(&last_heard)));
        Self {
            comm: data,
            rank,
            size,
            sends: Vec::new(),
            last_heard,
            beats,
            last_keep_alive: Instant::now(),
            _items: PhantomData,
        }
    }

    /// True when a heartbeat thread runs (MPI provides `MPI_THREAD_MULTIPLE`).
    pub fn has_heartbeat_thread(&self) -> bool {
        self.beats.is_some()
    }

    fn heard(&self, from: usize) {
        let mut h = self
            .last_heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        h[from] = Instant::now();
    }

    fn progress_sends(&mut self) {
        self.sends.retain_mut(|s| !s.test());
    }

    fn post(&mut self, to: usize, bytes: Vec<u8>) -> Result<(), PeerError> {
        let s = owned::PendingSend::start(&self.comm, to as i32, TAG, bytes)
            .map_err(PeerError::Transport)?;
        self.sends.push(s);
        self.progress_sends();
        Ok(())
    }
}

impl<T: Serialize + DeserializeOwned> Comm<T> for MpiComm<T> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn backend(&self) -> &'static str {
        "mpi"
    }

    fn send(&mut self, to: usize, msg: Msg<T>) -> Result<u64, PeerError> {
        if to >= self.size {
            return Err(PeerError::Transport(format!(
                "rank {to} does not exist ({} ranks)",
                self.size
            )));
        }
        let bytes = postcard::to_allocvec(&msg).map_err(|e| PeerError::Transport(e.to_string()))?;
        let n = bytes.len() as u64;
        self.post(to, bytes)?;
        Ok(if matches!(msg, Msg::Items { .. }) {
            n
        } else {
            0
        })
    }

    fn recv(&mut self, until: Instant) -> Result<Option<Received<T>>, PeerError> {
        let start = Instant::now();
        let mut nap = Duration::from_micros(20);
        loop {
            self.progress_sends();
            if let Some(probed) = self
                .comm
                .any_process()
                .immediate_matched_probe_with_tag(TAG)
            {
                let from = probed.1.source_rank() as usize;
                let (bytes, _) = probed.matched_receive_vec::<u8>();
                self.heard(from);
                let msg = postcard::from_bytes(&bytes).map_err(|e| {
                    PeerError::Transport(format!(
                        "a message from rank {from} cannot be decoded: {e}"
                    ))
                })?;
                return Ok(Some(Received {
                    from,
                    msg,
                    bytes: bytes.len() as u64,
                }));
            }
            let now = Instant::now();
            if now >= until {
                return Ok(None);
            }
            // Poll hard just after a call starts waiting, then back off so that waiting ranks
            // leave the cores to computing ones.
            if now.duration_since(start) < Duration::from_micros(500) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(nap.min(until - now));
                nap = (nap * 2).min(Duration::from_micros(500));
            }
        }
    }

    fn liveness(&mut self, peer: usize) -> Liveness {
        let h = self
            .last_heard
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Liveness::Silent(h[peer].elapsed())
    }

    fn keep_alive(&mut self, epoch: u64) {
        if self.beats.is_some() || self.last_keep_alive.elapsed() < BEAT {
            return;
        }
        self.last_keep_alive = Instant::now();
        let me = self.rank;
        for to in (0..self.size).filter(|&r| r != me) {
            if let Ok(bytes) = postcard::to_allocvec(&Msg::<T>::Heartbeat { epoch }) {
                let _ = self.post(to, bytes);
            }
        }
    }

    fn proves_liveness_outside_calls(&self) -> bool {
        self.beats.is_some()
    }

    fn freeze(&mut self, duration: Duration) {
        if let Some(b) = &self.beats {
            b.paused.store(true, Ordering::SeqCst);
        }
        std::thread::sleep(duration);
        if let Some(b) = &self.beats {
            b.paused.store(false, Ordering::SeqCst);
        }
    }
}

impl<T> Drop for MpiComm<T> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // Tell the others, so that a rank waiting in a call does not wait for the timeout.
            let left: Msg<()> = Msg::Left {
                panicked: Some("its thread panicked".into()),
            };
            if let Ok(bytes) = postcard::to_allocvec(&left) {
                let me = self.rank;
                for to in (0..self.size).filter(|&r| r != me) {
                    let _ = self.post(to, bytes.clone());
                }
            }
        }
        if let Some(b) = self.beats.take() {
            b.stop();
        }
        if !std::thread::panicking() {
            quiesce(&self.comm, &mut self.sends);
        }
        let until = Instant::now() + DRAIN;
        while !self.sends.is_empty() && Instant::now() < until {
            self.progress_sends();
            std::thread::yield_now();
        }
        // What is left is freed and leaked by PendingSend's Drop.
    }
}

/// Waits (at most [`DRAIN`]) until every rank has stopped sending on `comm` — a non-blocking
/// barrier — while reading and dropping what still arrives (heartbeats of ranks that waited
/// longer), so that no message is left unmatched when MPI is finalised.
fn quiesce(comm: &SimpleCommunicator, sends: &mut Vec<owned::PendingSend>) {
    use mpi::collective::CommunicatorCollectives;
    let mut barrier = Some(comm.immediate_barrier());
    let until = Instant::now() + DRAIN;
    let drain = |sends: &mut Vec<owned::PendingSend>| {
        sends.retain_mut(|s| !s.test());
        while let Some(probed) = comm.any_process().immediate_matched_probe_with_tag(TAG) {
            let _ = probed.matched_receive_vec::<u8>();
        }
    };
    while let Some(b) = barrier.take() {
        drain(sends);
        match b.test() {
            Ok(_) => {}
            Err(pending) if Instant::now() < until => {
                barrier = Some(pending);
                std::thread::yield_now();
            }
            // A rank that never comes (it failed): give up; the request is left to MPI.
            Err(pending) => std::mem::forget(pending),
        }
    }
    let settle = Instant::now() + Duration::from_millis(20);
    while Instant::now() < settle {
        drain(sends);
        std::thread::yield_now();
    }
}

/// The heartbeat thread of a rank under `MPI_THREAD_MULTIPLE`: beats to every peer every
/// [`BEAT`] and records the beats it hears, on its own duplicate communicator.
struct Heartbeats {
    stop: Arc<AtomicBool>,
    paused: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Heartbeats {
    fn start(comm: owned::SendComm, last_heard: Arc<Mutex<Vec<Instant>>>) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let paused = Arc::new(AtomicBool::new(false));
        let (s, p) = (Arc::clone(&stop), Arc::clone(&paused));
        let thread = std::thread::Builder::new()
            .name("hetlb-heartbeat".into())
            .spawn(move || beat(comm, last_heard, s, p))
            .ok();
        Self {
            stop,
            paused,
            thread,
        }
    }

    fn stop(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn beat(
    comm: owned::SendComm,
    last_heard: Arc<Mutex<Vec<Instant>>>,
    stop: Arc<AtomicBool>,
    paused: Arc<AtomicBool>,
) {
    let comm = comm.0;
    let (rank, size) = (comm.rank() as usize, comm.size() as usize);
    let mut sends: Vec<owned::PendingSend> = Vec::new();
    let mut last = Instant::now() - BEAT;
    while !stop.load(Ordering::SeqCst) {
        if paused.load(Ordering::SeqCst) {
            std::thread::sleep(Duration::from_millis(5));
            continue;
        }
        if last.elapsed() >= BEAT {
            last = Instant::now();
            for to in (0..size).filter(|&r| r != rank) {
                if let Ok(s) = owned::PendingSend::start(&comm, to as i32, TAG, vec![1]) {
                    sends.push(s);
                }
            }
        }
        sends.retain_mut(|s| !s.test());
        while let Some(probed) = comm.any_process().immediate_matched_probe_with_tag(TAG) {
            let from = probed.1.source_rank() as usize;
            let _ = probed.matched_receive_vec::<u8>();
            let mut h = last_heard.lock().unwrap_or_else(PoisonError::into_inner);
            if let Some(t) = h.get_mut(from) {
                *t = Instant::now();
            }
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    quiesce(&comm, &mut sends);
}

/// Non-blocking sends whose buffers the backend owns. rsmpi ties a request's buffer to a
/// lexical scope, which cannot outlive a failed call; here the buffer lives with the request,
/// and a request abandoned before completion (its receiver died) is freed and its buffer
/// leaked, which is what MPI requires (`MPI_Request_free` lets the send finish in the
/// background, reading the buffer).
#[allow(unsafe_code)]
mod owned {
    use mpi::ffi;
    use mpi::raw::AsRaw;
    use mpi::topology::SimpleCommunicator;

    /// A communicator moved to the heartbeat thread.
    pub(super) struct SendComm(pub(super) SimpleCommunicator);

    // SAFETY: MPI handles are process-wide values; the heartbeat thread is only started under
    // MPI_THREAD_MULTIPLE, where any thread may call MPI on any communicator, and the main
    // thread never uses this duplicate.
    unsafe impl Send for SendComm {}

    pub(super) struct PendingSend {
        request: ffi::MPI_Request,
        buffer: Vec<u8>,
        done: bool,
    }

    impl PendingSend {
        /// Starts `MPI_Isend` of `buffer` to `to` with `tag` on `comm`.
        pub(super) fn start(
            comm: &SimpleCommunicator,
            to: i32,
            tag: i32,
            buffer: Vec<u8>,
        ) -> Result<Self, String> {
            let count = i32::try_from(buffer.len())
                .map_err(|_| format!("a message of {} bytes is too large for MPI", buffer.len()))?;
            // SAFETY: RSMPI_REQUEST_NULL is a constant initialised by the MPI library.
            let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
            // SAFETY: `buffer` is heap memory owned by the returned value, which keeps it alive
            // (or leaks it) until the request completes; `count` bytes of it are readable; the
            // communicator is live for this call.
            let rc = unsafe {
                ffi::MPI_Isend(
                    buffer.as_ptr().cast(),
                    count,
                    ffi::RSMPI_UINT8_T,
                    to,
                    tag,
                    comm.as_raw(),
                    &mut request,
                )
            };
            if rc != ffi::MPI_SUCCESS as i32 {
                return Err(format!("MPI_Isend failed with error code {rc}"));
            }
            Ok(Self {
                request,
                buffer,
                done: false,
            })
        }

        /// True once the send has completed (its buffer may then be dropped).
        pub(super) fn test(&mut self) -> bool {
            if self.done {
                return true;
            }
            let mut flag = 0;
            // SAFETY: `request` is the live request of this send; the status is ignored.
            let rc =
                unsafe { ffi::MPI_Test(&mut self.request, &mut flag, ffi::RSMPI_STATUS_IGNORE) };
            self.done = rc != ffi::MPI_SUCCESS as i32 || flag != 0;
            self.done
        }
    }

    impl Drop for PendingSend {
        fn drop(&mut self) {
            if !self.done && !self.test() {
                // SAFETY: the request is live; freeing it lets the send complete in the
                // background, so the buffer must outlive it: it is leaked on purpose.
                unsafe {
                    ffi::MPI_Request_free(&mut self.request);
                }
                std::mem::forget(std::mem::take(&mut self.buffer));
            }
        }
    }
}
