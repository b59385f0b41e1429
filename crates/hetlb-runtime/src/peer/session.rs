//! One call's view of the network: messages of this call only, the peers it waits for, and
//! the failure detector.
//!
//! Every message carries the call's epoch. Messages of earlier calls (left over after a failed
//! call) are dropped; messages of later calls (a fast rank already in the next call) are kept
//! for it; messages of this call that the caller does not want yet (items that arrive while
//! the gather is still running) wait in the mailbox.
//!
//! **Failure detection.** While it waits, a rank looks at the peers it is waiting *for* and
//! only at those: a peer whose balancer was dropped, or that has been silent for longer than
//! the timeout although it takes part in the call, has failed. A peer that has not reached the
//! call yet is busy, not silent: it is judged by the entry timeout only, and only on a backend
//! that cannot prove liveness outside calls. On a failure the rank tells every other rank
//! ([`Msg::Abort`]) so that they stop waiting and roll back too.

use super::comm::{Comm, Liveness, Msg, Received};
use super::error::{PeerError, PeerFailure};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// How often a waiting rank checks its peers and sends its heartbeats, at most.
const TICK: Duration = Duration::from_millis(50);

impl<T> Msg<T> {
    /// The call the message belongs to (`None` for heartbeats of no call and departures).
    pub(crate) fn epoch(&self) -> Option<u64> {
        match self {
            Msg::Gather { epoch, .. }
            | Msg::Items { epoch, .. }
            | Msg::Ack { epoch, .. }
            | Msg::Done { epoch, .. }
            | Msg::Abort { epoch, .. }
            | Msg::Heartbeat { epoch } => Some(*epoch),
            Msg::Left { .. } => None,
        }
    }
}

/// What a balancer keeps between calls: messages for later calls, and the peers known to
/// have left.
pub(crate) struct Mailbox<T> {
    pub(crate) later: VecDeque<Received<T>>,
    pub(crate) departed: Vec<Option<PeerFailure>>,
    /// The latest call each peer was heard in: a peer heard in this call takes part in it.
    pub(crate) seen_in: Vec<u64>,
}

impl<T> Mailbox<T> {
    pub(crate) fn new(size: usize) -> Self {
        Self {
            later: VecDeque::new(),
            departed: vec![None; size],
            seen_in: vec![0; size],
        }
    }
}

/// Traffic counters of one call.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Traffic {
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    pub(crate) messages_sent: u64,
}

pub(crate) struct Session<'a, T, C> {
    pub(crate) comm: &'a mut C,
    epoch: u64,
    timeout: Duration,
    entry_timeout: Option<Duration>,
    /// Messages of this call not yet taken.
    pending: VecDeque<Received<T>>,
    /// Messages received while judging peers, not yet looked at.
    early: VecDeque<Received<T>>,
    /// Messages of later calls.
    later: &'a mut VecDeque<Received<T>>,
    seen_in: &'a mut Vec<u64>,
    departed: &'a mut Vec<Option<PeerFailure>>,
    last_tick: Instant,
    /// Whether a failure found while waiting is announced to every rank (the move), or only
    /// returned (the closing agreement, where each rank decides for itself).
    pub(crate) announce_failures: bool,
    pub(crate) traffic: Traffic,
}

impl<'a, T, C: Comm<T>> Session<'a, T, C> {
    pub(crate) fn new(
        comm: &'a mut C,
        mailbox: &'a mut Mailbox<T>,
        epoch: u64,
        timeout: Duration,
        entry_timeout: Option<Duration>,
    ) -> Self {
        let size = comm.size();
        mailbox.departed.resize(size, None);
        mailbox.seen_in.resize(size, 0);
        let mut pending = VecDeque::new();
        let mut kept = VecDeque::new();
        for r in mailbox.later.drain(..) {
            match r.msg.epoch() {
                Some(e) if e == epoch => pending.push_back(r),
                Some(e) if e > epoch => kept.push_back(r),
                _ => {}
            }
        }
        mailbox.later = kept;
        for r in &pending {
            mailbox.seen_in[r.from] = epoch;
        }
        Self {
            comm,
            epoch,
            timeout,
            entry_timeout,
            pending,
            early: VecDeque::new(),
            later: &mut mailbox.later,
            seen_in: &mut mailbox.seen_in,
            departed: &mut mailbox.departed,
            last_tick: Instant::now(),
            announce_failures: true,
            traffic: Traffic::default(),
        }
    }

    pub(crate) fn rank(&self) -> usize {
        self.comm.rank()
    }

    pub(crate) fn size(&self) -> usize {
        self.comm.size()
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Sends a message of this call.
    pub(crate) fn send(&mut self, to: usize, msg: Msg<T>) -> Result<(), PeerError> {
        let bytes = self.comm.send(to, msg)?;
        self.traffic.bytes_sent += bytes;
        self.traffic.messages_sent += 1;
        Ok(())
    }

    /// Ends the call with `error`: a failure found here is announced to every rank (unless it
    /// came from another rank's announcement, or was already announced).
    pub(crate) fn fail(&mut self, error: PeerError) -> PeerError {
        match error {
            PeerError::Aborted { .. } | PeerError::PeerFailed { .. } => error,
            other => self.abort(other),
        }
    }

    /// Tells every other rank that this call failed, and returns `error`.
    pub(crate) fn abort(&mut self, error: PeerError) -> PeerError {
        if !self.announce_failures {
            return error;
        }
        let me = self.rank();
        let reason = match &error {
            PeerError::PeerFailed { rank, failure } => format!("rank {rank} {failure}"),
            other => other.to_string(),
        };
        let culprit = error.culprit().map(|c| c as u32);
        for to in (0..self.size()).filter(|&r| r != me) {
            let _ = self.comm.send(
                to,
                Msg::Abort {
                    epoch: self.epoch,
                    culprit,
                    reason: reason.clone(),
                },
            );
        }
        error
    }

    /// The next message of this call that `wanted` accepts, waiting for the ranks `watch`
    /// says it waits for. Other messages of this call are kept for later.
    ///
    /// # Errors
    /// [`PeerError::Aborted`] when another rank stopped the call; [`PeerError::PeerFailed`]
    /// when a watched peer failed (the other ranks are told); transport errors.
    pub(crate) fn next(
        &mut self,
        wanted: impl Fn(usize, &Msg<T>) -> bool,
        watch: impl Fn(usize) -> bool,
    ) -> Result<Received<T>, PeerError> {
        if let Some(r) = self
            .pending
            .iter()
            .find(|r| matches!(r.msg, Msg::Abort { .. }))
        {
            if let Msg::Abort {
                culprit, reason, ..
            } = &r.msg
            {
                return Err(PeerError::Aborted {
                    by: r.from,
                    culprit: culprit.map(|c| c as usize),
                    reason: reason.clone(),
                });
            }
        }
        if let Some(i) = self.pending.iter().position(|r| wanted(r.from, &r.msg)) {
            let r = self.pending.remove(i).expect("index in range");
            return Ok(r);
        }
        loop {
            // Read what has already arrived before judging anyone: a peer that finished the
            // call and left sent its last messages first.
            let r = match self.receive(Instant::now())? {
                Some(r) => r,
                None => {
                    self.tick(&watch)?;
                    match self.receive(Instant::now() + TICK)? {
                        Some(r) => r,
                        None => continue,
                    }
                }
            };
            self.traffic.bytes_received += r.bytes;
            match r.msg.epoch() {
                None => {
                    if let Msg::Left { panicked } = &r.msg {
                        self.departed[r.from] = Some(match panicked {
                            Some(m) => PeerFailure::Panicked(m.clone()),
                            None => PeerFailure::Left,
                        });
                    }
                    continue;
                }
                Some(e) if e < self.epoch => continue,
                Some(e) if e > self.epoch => {
                    self.later.push_back(r);
                    continue;
                }
                Some(_) => {}
            }
            self.seen_in[r.from] = self.epoch;
            match &r.msg {
                Msg::Heartbeat { .. } => continue,
                Msg::Abort {
                    culprit, reason, ..
                } => {
                    return Err(PeerError::Aborted {
                        by: r.from,
                        culprit: culprit.map(|c| c as usize),
                        reason: reason.clone(),
                    });
                }
                _ => {}
            }
            if wanted(r.from, &r.msg) {
                return Ok(r);
            }
            self.pending.push_back(r);
        }
    }

    /// Sends heartbeats when due and judges the watched peers.
    fn tick(&mut self, watch: &impl Fn(usize) -> bool) -> Result<(), PeerError> {
        if self.last_tick.elapsed() >= TICK {
            self.comm.keep_alive(self.epoch);
            self.last_tick = Instant::now();
        }
        let me = self.rank();
        for peer in (0..self.size()).filter(|&p| p != me && watch(p)) {
            // Anything that arrived meanwhile is read before judging.
            if !self.comm_is_quiet()? {
                return Ok(());
            }
            if let Some(failure) = self.departed[peer].clone() {
                return Err(self.abort(PeerError::PeerFailed {
                    rank: peer,
                    failure,
                }));
            }
            let failure = match self.comm.liveness(peer) {
                Liveness::Alive => continue,
                Liveness::Aborted { culprit, reason } => {
                    // It gave up this call; its Abort message may still be on its way.
                    return Err(PeerError::Aborted {
                        by: peer,
                        culprit,
                        reason,
                    });
                }
                Liveness::Left => PeerFailure::Left,
                Liveness::Panicked(m) => PeerFailure::Panicked(m),
                Liveness::Silent(d) => {
                    let taking_part = self.seen_in[peer] == self.epoch;
                    let limit = if taking_part || self.comm.proves_liveness_outside_calls() {
                        Some(self.timeout)
                    } else {
                        self.entry_timeout
                    };
                    match limit {
                        Some(l) if d > l => PeerFailure::Silent {
                            seconds: d.as_secs_f64(),
                            timeout: l.as_secs_f64(),
                        },
                        _ => continue,
                    }
                }
            };
            return Err(self.abort(PeerError::PeerFailed {
                rank: peer,
                failure,
            }));
        }
        Ok(())
    }

    fn receive(&mut self, until: Instant) -> Result<Option<Received<T>>, PeerError> {
        match self.early.pop_front() {
            Some(r) => Ok(Some(r)),
            None => self.comm.recv(until),
        }
    }

    /// True when no message is waiting; a waiting message is kept for the caller's loop.
    fn comm_is_quiet(&mut self) -> Result<bool, PeerError> {
        match self.comm.recv(Instant::now())? {
            None => Ok(true),
            Some(r) => {
                self.early.push_back(r);
                Ok(false)
            }
        }
    }

    /// Ends this part of the call: unread messages of this call (items that arrived while the
    /// decision was still being made) stay for the move, which has the same epoch.
    pub(crate) fn finish(self) -> Traffic {
        for r in self.pending.into_iter().chain(self.early).rev() {
            self.later.push_front(r);
        }
        self.traffic
    }
}
