//! The MPI backend: ranks are MPI processes, launched with `mpiexec -n N`.
//!
//! One thread per process owns MPI. It initialises the library with `Threading::Funneled`
//! (only the initialising thread calls MPI), and is the only thread that ever does; the rank's
//! computing thread talks to it over two crossbeam channels, outgoing `(rank, bytes)` and
//! incoming `(rank, bytes, arrival)`. Messages are serialised with serde + postcard on the
//! computing thread, so encoding counts as the sender's communication time.
//!
//! The communication thread alternates between sending what is queued (blocking standard
//! sends) and probing for arrivals (`MPI_Improbe` + `MPI_Mrecv`). The master-worker protocol
//! never has two ranks sending to each other at the same time (each worker alternates
//! request and reply with the master), so a blocking send always meets a probing receiver and
//! cannot deadlock. When idle, the thread backs off from spinning to short sleeps (at most
//! [`MAX_IDLE_SLEEP`]) so that waiting ranks leave the CPU to computing ones; this bounds the
//! extra latency a message can see on an idle rank.
//!
//! A rank that stops answering is not detected here but by the silence of its heartbeats (the
//! processor's timeout, on every rank); a rank that gives up should then call [`Mpi::abort`],
//! which ends every rank (`MPI_Abort`) instead of leaving them waiting. What MPI cannot
//! survive is a process that dies: under its fail-stop model the launcher ends the job.

use super::{Envelope, Transport, TransportError};
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use mpi::Threading;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::topology::Communicator;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The tag of every message hetlb sends.
const TAG: i32 = 0x4845;

/// The longest the communication thread sleeps between two polls when idle.
pub const MAX_IDLE_SLEEP: Duration = Duration::from_micros(200);

/// How long the communication thread keeps polling (yielding the core between polls) after
/// the last message before it starts to sleep.
const SPIN: Duration = Duration::from_micros(300);

/// How long `recv` polls the incoming channel before blocking on it.
const SPIN_BEFORE_BLOCKING: Duration = Duration::from_micros(100);

/// The tag of the plain ping-pong of [`Mpi::ping_pong`].
const PING_TAG: i32 = 0x5049;

enum Command {
    Send(usize, Vec<u8>),
    PingPong(u64, Sender<Duration>),
    Abort(i32),
    Shutdown,
}

type Incoming = (usize, Vec<u8>, Instant);

/// This process's MPI: the communication thread and the channels to it. Create it once per
/// process with [`Mpi::init`]; take a typed [`MpiTransport`] for each run with
/// [`Mpi::transport`]. Dropping it shuts the communication thread down, which finalises MPI.
pub struct Mpi {
    rank: usize,
    size: usize,
    commands: Sender<Command>,
    incoming: Receiver<Incoming>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish()
    }
}

impl Mpi {
    /// Initialises MPI on a new communication thread.
    ///
    /// Call once per process. Under `mpiexec -n N` every process gets its rank in `0..N`; run
    /// directly, the process is a world of one.
    ///
    /// # Errors
    /// [`TransportError::Mpi`] when MPI cannot be initialised (already initialised, or the
    /// library does not offer `Threading::Funneled`).
    pub fn init() -> Result<Self, TransportError> {
        let (cmd_tx, cmd_rx) = channel::unbounded::<Command>();
        let (in_tx, in_rx) = channel::unbounded::<Incoming>();
        let (ready_tx, ready_rx) = channel::bounded::<Result<(usize, usize), String>>(1);
        let thread = std::thread::Builder::new()
            .name("hetlb-mpi".into())
            .spawn(move || communication_thread(cmd_rx, in_tx, ready_tx))
            .map_err(|e| TransportError::Mpi(format!("cannot start the MPI thread: {e}")))?;
        match ready_rx.recv() {
            Ok(Ok((rank, size))) => Ok(Self {
                rank,
                size,
                commands: cmd_tx,
                incoming: in_rx,
                thread: Some(thread),
            }),
            Ok(Err(e)) => {
                let _ = thread.join();
                Err(TransportError::Mpi(e))
            }
            Err(_) => {
                let _ = thread.join();
                Err(TransportError::Mpi(
                    "the MPI thread ended during initialisation".into(),
                ))
            }
        }
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// A transport for messages of type `M` over this process's MPI.
    pub fn transport<M>(&self) -> MpiTransport<'_, M> {
        MpiTransport {
            mpi: self,
            _messages: PhantomData,
        }
    }

    /// A plain MPI ping-pong of `round_trips` 8-byte messages between ranks 0 and 1, run on
    /// the communication thread with blocking sends and receives: the floor that dispatch
    /// over this transport is measured against (the `dispatch_mpi` example). Collective:
    /// ranks 0 and 1 must both call it, with nothing else in flight; other ranks return at
    /// once. Returns the time rank 0 (and rank 1) spent in the loop.
    ///
    /// # Errors
    /// [`TransportError::Mpi`] when the communication thread has stopped.
    pub fn ping_pong(&self, round_trips: u64) -> Result<Duration, TransportError> {
        let (tx, rx) = channel::bounded(1);
        let stopped = || TransportError::Mpi("the MPI thread has stopped".into());
        self.commands
            .send(Command::PingPong(round_trips, tx))
            .map_err(|_| stopped())?;
        rx.recv().map_err(|_| stopped())
    }

    /// Ends every rank of the job with `code` (`MPI_Abort`). Use it after a failure that
    /// leaves other ranks waiting, such as a rank that stopped answering.
    pub fn abort(&self, code: i32) -> ! {
        let _ = self.commands.send(Command::Abort(code));
        // MPI_Abort does not return; if the thread is gone, end this process at least.
        std::thread::sleep(Duration::from_secs(30));
        std::process::exit(code)
    }
}

impl Drop for Mpi {
    fn drop(&mut self) {
        let _ = self.commands.send(Command::Shutdown);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A typed view of [`Mpi`]: one process's end of the network for messages of type `M`.
pub struct MpiTransport<'a, M> {
    mpi: &'a Mpi,
    _messages: PhantomData<fn(M) -> M>,
}

impl<M> std::fmt::Debug for MpiTransport<'_, M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.mpi.fmt(f)
    }
}

impl<M: DeserializeOwned> MpiTransport<'_, M> {
    fn decode(&self, (from, bytes, arrived): Incoming) -> Result<Envelope<M>, TransportError> {
        let msg =
            postcard::from_bytes(&bytes).map_err(|e| TransportError::Encoding(e.to_string()))?;
        Ok(Envelope { from, msg, arrived })
    }
}

impl<M: Serialize + DeserializeOwned> Transport<M> for MpiTransport<'_, M> {
    fn rank(&self) -> usize {
        self.mpi.rank
    }

    fn size(&self) -> usize {
        self.mpi.size
    }

    fn backend(&self) -> &'static str {
        "mpi"
    }

    fn send(&self, to: usize, msg: M) -> Result<(), TransportError> {
        if to >= self.mpi.size {
            return Err(TransportError::NoSuchRank {
                rank: to,
                size: self.mpi.size,
            });
        }
        let bytes =
            postcard::to_allocvec(&msg).map_err(|e| TransportError::Encoding(e.to_string()))?;
        self.mpi
            .commands
            .send(Command::Send(to, bytes))
            .map_err(|_| TransportError::Mpi("the MPI thread has stopped".into()))
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError> {
        // A reply usually follows soon: poll before blocking, which costs a thread wake-up
        // (tens of microseconds on a virtual machine), yielding the core to the
        // communication threads meanwhile.
        if let Some(e) = super::poll(SPIN_BEFORE_BLOCKING, Some(Duration::ZERO), || {
            self.try_recv()
        })? {
            return Ok(Some(e));
        }
        let incoming = &self.mpi.incoming;
        let got = match deadline {
            None => incoming.recv().map_err(|_| ()),
            Some(d) => match incoming.recv_deadline(d) {
                Ok(x) => Ok(x),
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => Err(()),
            },
        };
        match got {
            Ok(x) => self.decode(x).map(Some),
            Err(()) => Err(TransportError::Mpi("the MPI thread has stopped".into())),
        }
    }

    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError> {
        match self.mpi.incoming.try_recv() {
            Ok(x) => self.decode(x).map(Some),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => {
                Err(TransportError::Mpi("the MPI thread has stopped".into()))
            }
        }
    }
}

fn communication_thread(
    commands: Receiver<Command>,
    incoming: Sender<Incoming>,
    ready: Sender<Result<(usize, usize), String>>,
) {
    let Some((universe, threading)) = mpi::initialize_with_threading(Threading::Funneled) else {
        let _ = ready.send(Err("MPI is already initialised in this process".into()));
        return;
    };
    if threading < Threading::Funneled {
        let _ = ready.send(Err(format!(
            "the MPI library offers only {threading:?}, Funneled is needed"
        )));
        return;
    }
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    if ready.send(Ok((rank, size))).is_err() {
        return;
    }
    let mut last_active = Instant::now();
    let mut idle = 0u32;
    loop {
        let mut active = false;
        loop {
            match commands.try_recv() {
                Ok(Command::Send(to, bytes)) => {
                    world
                        .process_at_rank(to as i32)
                        .send_with_tag(&bytes[..], TAG);
                    active = true;
                }
                Ok(Command::PingPong(n, reply)) => {
                    let _ = reply.send(ping_pong(&world, n));
                    active = true;
                }
                Ok(Command::Abort(code)) => world.abort(code),
                Ok(Command::Shutdown) | Err(TryRecvError::Disconnected) => {
                    return drain(&world);
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        while let Some(probed) = world.any_process().immediate_matched_probe_with_tag(TAG) {
            let from = probed.1.source_rank() as usize;
            let (bytes, _) = probed.matched_receive_vec::<u8>();
            if incoming.send((from, bytes, Instant::now())).is_err() {
                return;
            }
            active = true;
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
                world
                    .process_at_rank(to as i32)
                    .send_with_tag(&bytes[..], TAG);
                idle = 0;
                last_active = Instant::now();
            }
            Ok(Command::PingPong(n, reply)) => {
                let _ = reply.send(ping_pong(&world, n));
                idle = 0;
                last_active = Instant::now();
            }
            Ok(Command::Abort(code)) => world.abort(code),
            Ok(Command::Shutdown) | Err(RecvTimeoutError::Disconnected) => return drain(&world),
            Err(RecvTimeoutError::Timeout) => {}
        }
    }
}

/// How long a shutting-down rank keeps receiving (and dropping) late messages, such as the
/// last heartbeats of ranks that finish a moment later.
const DRAIN: Duration = Duration::from_millis(30);

/// Receives and drops what is still arriving, so that MPI finalises with no unmatched message.
fn drain(world: &mpi::topology::SimpleCommunicator) {
    let until = Instant::now() + DRAIN;
    while Instant::now() < until {
        while let Some(probed) = world.any_process().immediate_matched_probe_with_tag(TAG) {
            let _ = probed.matched_receive_vec::<u8>();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// `round_trips` blocking 8-byte exchanges between ranks 0 and 1.
fn ping_pong(world: &mpi::topology::SimpleCommunicator, round_trips: u64) -> Duration {
    let start = Instant::now();
    match world.rank() {
        0 if world.size() > 1 => {
            let peer = world.process_at_rank(1);
            for i in 0..round_trips {
                peer.send_with_tag(&i, PING_TAG);
                let _ = peer.receive_with_tag::<u64>(PING_TAG);
            }
        }
        1 => {
            let peer = world.process_at_rank(0);
            for _ in 0..round_trips {
                let (i, _) = peer.receive_with_tag::<u64>(PING_TAG);
                peer.send_with_tag(&i, PING_TAG);
            }
        }
        _ => {}
    }
    start.elapsed()
}
