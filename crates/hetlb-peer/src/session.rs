//! One call's view of the network: messages of this call only, the peers it waits for, the
//! failure detector, and how a rank gives the call up.
//!
//! Every message carries the call's epoch. Messages of earlier calls (left over after a failed
//! call) are dropped — but for the decision of a call whose outcome this rank does not know
//! yet; messages of later calls (a fast rank already in the next call) are kept for it;
//! messages of this call that the caller does not want yet (items that arrive while the
//! gather is still running) wait in the mailbox.
//!
//! **Failure detection.** While it waits, a rank looks at the peers it is waiting *for* and
//! only at those: a peer whose endpoint closed, or that has been silent for longer than the
//! timeout, has failed. A peer that has not reached the call yet is busy, not silent, where
//! the transport cannot prove liveness outside calls: it is judged by the entry timeout only.
//!
//! **Giving up.** A rank that gives a call up before it has voted makes the call abort
//! everywhere: it writes the abort into the group's ledger (shared memory) or tells every
//! rank (messages). A rank that has voted never gives up on its own: see `agreement.rs`.
//!
//! **Asks.** Where the ranks share no memory, a rank whose parent in the agreement's tree
//! failed asks the coordinator for the decision (`Msg::Ask`). The coordinator answers
//! wherever it reads its endpoint — in this call, in any later call, in `Balancer::check`,
//! and when its balancer is dropped — from the decisions it keeps ([`Mailbox::decided`]);
//! an ask for a call it has not decided yet is kept until it has.

use super::error::{PeerError, PeerFailure};
use super::wire::{Msg, WireOutcome};
use hetlb_transport::{Envelope, LedgerOutcome, Liveness, Transport, TransportError};
use serde::Serialize;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// The rank that decides calls where the ranks share no memory (the agreement's
/// coordinator, `agreement.rs`).
pub(crate) const COORDINATOR: usize = 0;

/// How often a waiting rank checks its peers and the ledger, at most.
pub(crate) const TICK: Duration = Duration::from_millis(50);

/// Decisions the coordinator keeps to answer asks (the latest calls').
const KEPT_DECISIONS: usize = 16;

/// What a balancer keeps between calls.
pub(crate) struct Mailbox<T> {
    /// Messages of later calls.
    pub(crate) later: VecDeque<Envelope<Msg<T>>>,
    /// The latest call each peer was heard in: a peer heard in this call takes part in it.
    pub(crate) seen_in: Vec<u64>,
    /// A call whose outcome this rank does not know yet, and its decision once it arrives.
    pub(crate) doubt: Option<(u64, Option<Envelope<Msg<T>>>)>,
    /// The coordinator's latest decisions (where the ranks share no memory), oldest first.
    pub(crate) decided: VecDeque<(u64, WireOutcome)>,
    /// Ranks that asked the coordinator for the decision of a call it has not decided yet.
    pub(crate) asked: Vec<(u64, usize)>,
    /// A give-up of an earlier call that named a rank failed, read after this rank had left
    /// that call (it ended without a move, or never learnt): the group lost that rank.
    pub(crate) lost_news: Option<PeerError>,
}

impl<T> Mailbox<T> {
    pub(crate) fn new(size: usize) -> Self {
        Self {
            later: VecDeque::new(),
            seen_in: vec![0; size],
            doubt: None,
            decided: VecDeque::new(),
            asked: Vec::new(),
            lost_news: None,
        }
    }

    /// Every rank has reached call `epoch` (its state is in the call's gather): from now on
    /// each takes part in it.
    pub(crate) fn all_arrived(&mut self, epoch: u64) {
        for seen in &mut self.seen_in {
            *seen = (*seen).max(epoch);
        }
    }
}

/// Answers `r` if it asks whether this rank, now in call `epoch`, has reached the call it
/// names (it has, if that call is not a later one). True when `r` was such a question, or an
/// answer (nothing more to do with it: its arrival counts the sender in the call).
pub(crate) fn answer_here<T, E: Transport<Msg<T>>>(
    ep: &E,
    epoch: u64,
    r: &Envelope<Msg<T>>,
) -> bool {
    match r.msg {
        Msg::Here { epoch: e, ask } => {
            if ask && e <= epoch {
                let _ = ep.send(
                    r.from,
                    Msg::Here {
                        epoch: e,
                        ask: false,
                    },
                );
            }
            true
        }
        _ => false,
    }
}

/// Traffic counters of one call.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Traffic {
    pub(crate) bytes_sent: u64,
    pub(crate) bytes_received: u64,
    pub(crate) messages_sent: u64,
    pub(crate) messages_received: u64,
}

impl Traffic {
    /// The traffic of two sessions of one call.
    pub(crate) fn plus(self, other: Traffic) -> Traffic {
        Traffic {
            bytes_sent: self.bytes_sent + other.bytes_sent,
            bytes_received: self.bytes_received + other.bytes_received,
            messages_sent: self.messages_sent + other.messages_sent,
            messages_received: self.messages_received + other.messages_received,
        }
    }
}

/// Takes `r` if it is an ask (`Msg::Ask`): the coordinator answers it — sends the decision
/// to every rank named, if it has decided the call, or keeps the ranks until it has — and
/// any other rank ignores it. Returns the messages sent, or `None` when `r` is not an ask.
pub(crate) fn take_ask<T, E: Transport<Msg<T>>>(
    ep: &E,
    mailbox: &mut Mailbox<T>,
    r: &Envelope<Msg<T>>,
) -> Option<u64> {
    let Msg::Ask { epoch, ranks } = &r.msg else {
        return None;
    };
    if ep.rank() != COORDINATOR {
        return Some(0);
    }
    let size = ep.size();
    let ranks = ranks.iter().map(|&q| q as usize).filter(|&q| q < size);
    let decided = mailbox.decided.iter().find(|(e, _)| e == epoch);
    let mut sent = 0;
    match decided {
        Some((_, outcome)) => {
            for to in ranks {
                let msg = Msg::Decision {
                    epoch: *epoch,
                    outcome: outcome.clone(),
                };
                if ep.send(to, msg).is_ok() {
                    sent += 1;
                }
            }
        }
        None => {
            for q in ranks {
                if !mailbox.asked.contains(&(*epoch, q)) {
                    mailbox.asked.push((*epoch, q));
                }
            }
        }
    }
    Some(sent)
}

pub(crate) struct Session<'a, T, E> {
    pub(crate) ep: &'a E,
    epoch: u64,
    timeout: Duration,
    entry_timeout: Option<Duration>,
    count_bytes: bool,
    /// Messages of this call not yet taken.
    pending: VecDeque<Envelope<Msg<T>>>,
    /// Messages received while judging peers, not yet looked at.
    early: VecDeque<Envelope<Msg<T>>>,
    mailbox: &'a mut Mailbox<T>,
    /// When this rank last proved itself alive in a wait (at first, the call's start).
    last_tick: Instant,
    /// When the call started, and when each peer not heard in it was asked whether it
    /// had reached it.
    started: Instant,
    asked: Vec<Option<Instant>>,
    /// When each peer was first found silent past its limit in this session (it is then
    /// asked, and named only if its silence lasts the confirmation window longer).
    suspected: Vec<Option<Instant>>,
    pub(crate) traffic: Traffic,
}

/// How a session is set up.
pub(crate) struct SessionSettings {
    pub(crate) epoch: u64,
    pub(crate) timeout: Duration,
    pub(crate) entry_timeout: Option<Duration>,
    /// When the call started (the entry timeout counts from it).
    pub(crate) started: Instant,
    pub(crate) count_bytes: bool,
}

impl<'a, T: Serialize, E: Transport<Msg<T>>> Session<'a, T, E> {
    pub(crate) fn new(ep: &'a E, mailbox: &'a mut Mailbox<T>, s: SessionSettings) -> Self {
        let mut pending = VecDeque::new();
        let mut kept = VecDeque::new();
        for r in mailbox.later.drain(..) {
            let e = r.msg.epoch();
            if e == s.epoch {
                mailbox.seen_in[r.from] = s.epoch;
                if !answer_here(ep, s.epoch, &r) {
                    pending.push_back(r);
                }
            } else if e > s.epoch {
                kept.push_back(r);
            }
        }
        mailbox.later = kept;
        Self {
            ep,
            epoch: s.epoch,
            timeout: s.timeout,
            entry_timeout: s.entry_timeout,
            count_bytes: s.count_bytes,
            pending,
            early: VecDeque::new(),
            mailbox,
            // The call's start, read when it began: the first tick of a session may come
            // early, which only proves this rank alive sooner.
            last_tick: s.started,
            started: s.started,
            // Built when first needed: most calls suspect no one.
            asked: Vec::new(),
            suspected: Vec::new(),
            traffic: Traffic::default(),
        }
    }

    pub(crate) fn rank(&self) -> usize {
        self.ep.rank()
    }

    pub(crate) fn size(&self) -> usize {
        self.ep.size()
    }

    pub(crate) fn epoch(&self) -> u64 {
        self.epoch
    }

    /// Sends a message of this call.
    pub(crate) fn send(&mut self, to: usize, msg: Msg<T>) -> Result<(), PeerError> {
        let counted = self.counted(&msg);
        let sent = self.ep.send(to, msg);
        self.account(sent, counted)
    }

    /// Sends the message `owned` makes, given also as `view`, which serialises to exactly
    /// its bytes (an item message whose items are a range of the application's vector): see
    /// [`Transport::send_view`].
    pub(crate) fn send_view<V: Serialize>(
        &mut self,
        to: usize,
        view: &Msg<V>,
        owned: impl FnOnce() -> Msg<T>,
    ) -> Result<(), PeerError> {
        let counted = self.counted(view);
        let sent = self.ep.send_view(to, view, owned);
        self.account(sent, counted)
    }

    /// Where nothing is serialised (threads), items are counted at the size they would take
    /// on the wire.
    fn counted<V: Serialize>(&self, msg: &Msg<V>) -> Option<u64> {
        if !(self.count_bytes && matches!(msg, Msg::Items { .. })) {
            return None;
        }
        postcard::serialize_with_flavor::<_, postcard::ser_flavors::Size, usize>(
            msg,
            postcard::ser_flavors::Size::default(),
        )
        .ok()
        .map(|n| n as u64)
    }

    fn account(
        &mut self,
        sent: Result<u64, TransportError>,
        counted: Option<u64>,
    ) -> Result<(), PeerError> {
        let wire = match sent {
            Ok(n) => n,
            // A receiver that has gone away is judged by its liveness where it matters
            // (while this rank waits for it), not here.
            Err(TransportError::Closed(_)) => 0,
            Err(e) => return Err(e.into()),
        };
        self.traffic.bytes_sent += if wire > 0 { wire } else { counted.unwrap_or(0) };
        self.traffic.messages_sent += 1;
        Ok(())
    }

    /// Gives the call up because of `error`, before this rank has voted: the call aborts on
    /// every rank. Returns the error to report.
    ///
    /// The give-up names a culprit: the peer this rank found failed, or this rank itself when
    /// the error is its own (its arguments, its storage, an injected give-up) — it then
    /// *refused* the call, and the group goes on. A call given up by another rank is passed
    /// on, by messages, to every rank but that one, culprit and all: a rank that waits for
    /// this one then reads why this rank left the call before it can see it gone (messages
    /// between two ranks keep their order), and blames the rank that failed, not this one.
    pub(crate) fn give_up(&mut self, error: PeerError) -> PeerError {
        let error = self.blame_the_stopped(error);
        let me = self.rank();
        let (by, culprit, refused, reason) = match &error {
            PeerError::Aborted {
                by,
                culprit,
                reason,
            } => (*by, *culprit, false, reason.clone()),
            PeerError::Refused { rank, reason } if *rank != me => {
                (*rank, Some(*rank), true, reason.clone())
            }
            PeerError::PeerFailed { rank, failure } => {
                (me, Some(*rank), false, format!("rank {rank} {failure}"))
            }
            PeerError::Refused { reason, .. } => (me, Some(me), true, reason.clone()),
            other => (me, Some(me), true, other.to_string()),
        };
        let epoch = self.epoch;
        if by != me {
            // Another rank gave the call up: pass it on, where there is no ledger to say so.
            if self.ep.ledger().is_none() {
                for to in (0..self.size()).filter(|&r| r != me && r != by) {
                    let _ = self.send(to, give_up_msg(epoch, culprit, &reason, refused));
                }
            }
            return error;
        }
        if let Some(ledger) = self.ep.ledger() {
            ledger.abort(epoch, me, culprit, &reason);
            self.wake_all();
        } else {
            for to in (0..self.size()).filter(|&r| r != me) {
                let _ = self.send(to, give_up_msg(epoch, culprit, &reason, refused));
            }
            if me == COORDINATOR {
                // The coordinator giving a call up decides it: ranks that ask learn so.
                self.record_decision(WireOutcome::Abort {
                    by: me as u32,
                    culprit: culprit.map(|c| c as u32),
                    reason,
                });
            }
        }
        error
    }

    /// The error to give the call up with, when `error` names a peer that left the group: a
    /// peer that leaves in the middle of a call has usually given up because it found
    /// another one stopped — at a barrier, or in a call on another endpoint, whose news does
    /// not come here — and every rank should name the stopped one. So while some other peer
    /// has been silent for more than a quarter of the timeout, this rank waits: for that
    /// peer to be judged failed (it is then named instead), to speak again, or for another
    /// rank's give-up naming a culprit (taken over). The departed peer is named when no peer
    /// is that silent, or the timeout and its confirmation window later.
    fn blame_the_stopped(&mut self, error: PeerError) -> PeerError {
        let PeerError::PeerFailed {
            rank: left,
            failure: PeerFailure::Left,
        } = error
        else {
            return error;
        };
        let me = self.rank();
        let until = self.ep.now() + self.timeout + self.confirm_window();
        let mut read = Vec::new();
        let verdict = 'wait: loop {
            let mut stalled = false;
            for peer in (0..self.size()).filter(|&p| p != me && p != left) {
                if !matches!(self.ep.liveness(peer), Liveness::Silent(d) if d > self.timeout / 4) {
                    continue;
                }
                match self.judge(peer) {
                    Ok(Some(failure)) => {
                        break 'wait Some(PeerError::PeerFailed {
                            rank: peer,
                            failure,
                        });
                    }
                    Ok(None) => stalled = true,
                    Err(_) => {}
                }
            }
            if !stalled || self.ep.now() >= until {
                break None;
            }
            match self.ep.recv_sleeping(Some(self.ep.now() + TICK)) {
                Ok(Some(r)) => {
                    if let Some(
                        news @ PeerError::Aborted {
                            culprit: Some(c), ..
                        },
                    ) = stop_of(&r)
                        && c != left
                    {
                        break Some(news);
                    }
                    read.extend(self.admit(r));
                }
                Ok(None) => {}
                Err(_) => break None,
            }
        };
        self.early.extend(read);
        verdict.unwrap_or(error)
    }

    /// The coordinator keeps its decision of this call, and sends it to the ranks that asked
    /// for it before it was taken.
    pub(crate) fn record_decision(&mut self, outcome: WireOutcome) {
        let epoch = self.epoch;
        let mailbox = &mut *self.mailbox;
        mailbox.decided.retain(|(e, _)| *e != epoch);
        mailbox.decided.push_back((epoch, outcome.clone()));
        while mailbox.decided.len() > KEPT_DECISIONS {
            mailbox.decided.pop_front();
        }
        let waiting: Vec<usize> = mailbox
            .asked
            .iter()
            .filter(|(e, _)| *e == epoch)
            .map(|&(_, q)| q)
            .collect();
        let oldest = mailbox.decided.front().map_or(epoch, |(e, _)| *e);
        mailbox.asked.retain(|(e, _)| *e != epoch && *e >= oldest);
        for to in waiting {
            let msg = Msg::Decision {
                epoch,
                outcome: outcome.clone(),
            };
            let _ = self.send(to, msg);
        }
    }

    /// True when the coordinator has kept a decision of this call.
    pub(crate) fn has_decided(&self) -> bool {
        self.mailbox.decided.iter().any(|(e, _)| *e == self.epoch)
    }

    /// Reads every message already waiting (answering asks), keeping this call's for later.
    pub(crate) fn drain(&mut self) -> Result<(), PeerError> {
        while let Some(r) = self.receive_now()? {
            self.traffic.messages_received += 1;
            self.traffic.bytes_received += r.bytes;
            if let Some(r) = self.admit(r) {
                self.pending.push_back(r);
            }
        }
        Ok(())
    }

    /// Tells every other rank that the ledger decided this call: this rank is the root of a
    /// binomial tree down which the news travels.
    pub(crate) fn wake_all(&mut self) {
        let me = self.rank();
        self.wake_children(me);
    }

    /// Sends `Decided` to this rank's children in the binomial tree rooted at `root`: with
    /// ranks numbered relative to the root, rank `r` tells `r + 2^k` for every `2^k > r`.
    fn wake_children(&mut self, root: usize) {
        let (me, size, epoch) = (self.rank(), self.size(), self.epoch);
        let relative = (me + size - root) % size;
        let mut step = 1usize;
        while step < size {
            if step > relative && relative + step < size {
                let to = (root + relative + step) % size;
                let _ = self.send(
                    to,
                    Msg::Decided {
                        epoch,
                        root: root as u32,
                    },
                );
            }
            step <<= 1;
        }
    }

    /// A `Decided` of this call, when the ledger holds its outcome.
    fn decided_in_ledger(&self) -> Option<Envelope<Msg<T>>> {
        let decided = self.ep.ledger()?.outcome(self.epoch).is_some();
        decided.then(|| Envelope {
            from: self.rank(),
            msg: Msg::Decided {
                epoch: self.epoch,
                root: self.rank() as u32,
            },
            arrived: self.ep.now(),
            bytes: 0,
        })
    }

    /// The error that stops this call, if another rank gave it up.
    pub(crate) fn stopped(&self) -> Option<PeerError> {
        if let Some(ledger) = self.ep.ledger()
            && let Some(LedgerOutcome::Abort {
                by,
                culprit,
                reason,
            }) = ledger.outcome(self.epoch)
        {
            return Some(aborted(by, culprit, reason));
        }
        self.pending.iter().find_map(|r| stop_of(r))
    }

    /// The next message of this call that `wanted` accepts, waiting for the ranks `watch`
    /// says it waits for. Other messages of this call are kept for later.
    ///
    /// # Errors
    /// [`PeerError::Aborted`] when another rank gave the call up (unless `wanted` takes its
    /// message); [`PeerError::PeerFailed`] when a watched peer failed (nobody is told:
    /// the caller decides); transport errors.
    pub(crate) fn next(
        &mut self,
        wanted: impl Fn(usize, &Msg<T>) -> bool,
        watch: impl Fn(usize) -> bool,
    ) -> Result<Envelope<Msg<T>>, PeerError> {
        // News of the ledger kept from before this call started: pass it on down its tree.
        let roots: Vec<usize> = self
            .pending
            .iter()
            .filter_map(|r| match r.msg {
                Msg::Decided { root, .. } => Some(root as usize),
                _ => None,
            })
            .collect();
        if !roots.is_empty() {
            for root in roots {
                self.wake_children(root);
            }
            let (decided, rest): (VecDeque<_>, VecDeque<_>) = self
                .pending
                .drain(..)
                .partition(|r| matches!(r.msg, Msg::Decided { .. }));
            self.pending = rest;
            if let Some(r) = decided.into_iter().find(|r| wanted(r.from, &r.msg)) {
                return Ok(r);
            }
        }
        if let Some(i) = self.pending.iter().position(|r| wanted(r.from, &r.msg))
            && let Some(r) = self.pending.remove(i)
        {
            return Ok(r);
        }
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        loop {
            if let Some(news) = self.mailbox.lost_news.take() {
                return Err(news);
            }
            // Read what has already arrived before judging anyone: a peer that finished the
            // call and left sent its last messages first.
            let r = match self.receive_now()? {
                Some(r) => r,
                None => {
                    self.tick(&watch)?;
                    // The ledger decided but the news has not come down the tree (a rank on
                    // the way died, or left first): the ledger itself is the news.
                    if let Some(r) = self.decided_in_ledger()
                        && wanted(r.from, &r.msg)
                    {
                        return Ok(r);
                    }
                    match self.receive_until(self.ep.now() + TICK)? {
                        Some(r) => r,
                        None => continue,
                    }
                }
            };
            self.traffic.bytes_received += r.bytes;
            self.traffic.messages_received += 1;
            let Some(r) = self.admit(r) else { continue };
            if let Msg::Decided { root, .. } = r.msg {
                self.wake_children(root as usize);
            }
            if wanted(r.from, &r.msg) {
                return Ok(r);
            }
            if let Some(e) = stop_of(&r) {
                return Err(e);
            }
            if let Msg::Decided { .. } = r.msg {
                if let Some(e) = self.stopped() {
                    return Err(e);
                }
                continue;
            }
            self.pending.push_back(r);
        }
    }

    /// Sorts a message by its call: this call's is returned; a later call's is kept; an
    /// earlier call's is dropped, but for the decision of a call in doubt. An ask of any call
    /// is answered at once (see [`take_ask`]).
    fn admit(&mut self, r: Envelope<Msg<T>>) -> Option<Envelope<Msg<T>>> {
        if let Some(sent) = take_ask(self.ep, self.mailbox, &r) {
            self.traffic.messages_sent += sent;
            return None;
        }
        let e = r.msg.epoch();
        if e <= self.epoch && answer_here(self.ep, self.epoch, &r) {
            if e == self.epoch {
                self.mailbox.seen_in[r.from] = self.epoch;
            }
            return None;
        }
        if e == self.epoch {
            self.mailbox.seen_in[r.from] = self.epoch;
            return Some(r);
        }
        if e > self.epoch {
            self.mailbox.later.push_back(r);
            return None;
        }
        if let Some((doubtful, slot)) = &mut self.mailbox.doubt {
            let settles = matches!(r.msg, Msg::Decision { .. } | Msg::GiveUp { .. });
            if *doubtful == e && settles && slot.is_none() {
                *slot = Some(r);
                return None;
            }
        }
        note_lost(self.mailbox, &r);
        None
    }

    /// Judges the watched peers (and proves this rank alive where that takes messages).
    fn tick(&mut self, watch: &impl Fn(usize) -> bool) -> Result<(), PeerError> {
        if self.ep.now().saturating_duration_since(self.last_tick) >= TICK {
            self.ep.keep_alive();
            self.last_tick = self.ep.now();
        }
        if let Some(e) = self.stopped() {
            return Err(e);
        }
        let me = self.rank();
        for peer in (0..self.size()).filter(|&p| p != me && watch(p)) {
            // Anything that arrived meanwhile is read before judging.
            if !self.quiet()? {
                return Ok(());
            }
            if let Some(failure) = self.judge(peer)? {
                return Err(PeerError::PeerFailed {
                    rank: peer,
                    failure,
                });
            }
        }
        self.check_arrivals(watch)
    }

    /// How long a suspicion is confirmed before it is reported: a peer silent past its limit,
    /// or not heard in the call past the entry timeout, is asked (`Here`) and named only if it
    /// stays silent that much longer. A quarter of the timeout, at least a second (at most the
    /// timeout): enough for a healthy rank that a loaded machine starved to be scheduled.
    fn confirm_window(&self) -> Duration {
        self.timeout
            .min(Duration::from_secs(1).max(self.timeout / 4))
    }

    /// The entry timeout: once the call has waited that long for a watched peer not heard in
    /// it, the peer is asked whether it reached the call; one that neither answers nor sends
    /// anything within the timeout more has not, and is named. A peer that answers (it is in
    /// the call, waiting for another) is left to the ranks that wait for the missing one.
    fn check_arrivals(&mut self, watch: &impl Fn(usize) -> bool) -> Result<(), PeerError> {
        let Some(limit) = self.entry_timeout else {
            return Ok(());
        };
        let now = self.ep.now();
        if now.saturating_duration_since(self.started) < limit {
            return Ok(());
        }
        let (me, epoch, size) = (self.rank(), self.epoch, self.size());
        for peer in (0..size).filter(|&p| p != me && watch(p)) {
            if self.mailbox.seen_in[peer] >= epoch {
                continue;
            }
            let asked = *per_peer(&mut self.asked, size, peer);
            match asked {
                None => {
                    *per_peer(&mut self.asked, size, peer) = Some(now);
                    self.send(peer, Msg::Here { epoch, ask: true })?;
                }
                Some(asked) if now.saturating_duration_since(asked) > self.confirm_window() => {
                    return Err(PeerError::PeerFailed {
                        rank: peer,
                        failure: PeerFailure::NotArrived {
                            epoch,
                            timeout: limit.as_secs_f64(),
                        },
                    });
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    /// How `peer` failed, if it did. A peer silent past its limit is suspected first: it is
    /// asked (`Here`), and named only if its silence lasts the confirmation window longer.
    fn judge(&mut self, peer: usize) -> Result<Option<PeerFailure>, PeerError> {
        let d = match self.ep.liveness(peer) {
            Liveness::Alive => return Ok(None),
            Liveness::Closed { panicked: Some(m) } => return Ok(Some(PeerFailure::Panicked(m))),
            Liveness::Closed { panicked: None } => return Ok(Some(PeerFailure::Left)),
            Liveness::Silent(d) => d,
        };
        let taking_part = self.mailbox.seen_in[peer] == self.epoch;
        let limit = if taking_part || self.ep.proves_liveness_outside_calls() {
            Some(self.timeout)
        } else {
            self.entry_timeout
        };
        let Some(limit) = limit.filter(|&l| d > l) else {
            return Ok(None);
        };
        let size = self.size();
        if per_peer(&mut self.suspected, size, peer).is_none() {
            *per_peer(&mut self.suspected, size, peer) = Some(self.ep.now());
            let epoch = self.epoch;
            self.send(peer, Msg::Here { epoch, ask: true })?;
        }
        if d <= limit + self.confirm_window() {
            return Ok(None);
        }
        Ok(Some(PeerFailure::Silent {
            seconds: d.as_secs_f64(),
            timeout: limit.as_secs_f64(),
        }))
    }

    fn receive_now(&mut self) -> Result<Option<Envelope<Msg<T>>>, PeerError> {
        match self.early.pop_front() {
            Some(r) => Ok(Some(r)),
            None => Ok(self.ep.try_recv()?),
        }
    }

    fn receive_until(&mut self, until: Instant) -> Result<Option<Envelope<Msg<T>>>, PeerError> {
        match self.early.pop_front() {
            Some(r) => Ok(Some(r)),
            None => Ok(self.ep.recv_sleeping(Some(until))?),
        }
    }

    /// True when no message is waiting; a waiting message is kept for the caller's loop.
    fn quiet(&mut self) -> Result<bool, PeerError> {
        match self.ep.try_recv()? {
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
            self.mailbox.later.push_front(r);
        }
        self.traffic
    }
}

/// `peer`'s entry of `times`, a vector of one entry per rank of `size` made at its first use.
fn per_peer(times: &mut Vec<Option<Instant>>, size: usize, peer: usize) -> &mut Option<Instant> {
    if times.len() < size {
        times.resize(size, None);
    }
    &mut times[peer]
}

/// Keeps the news in `r`, a message of an earlier call, if it is a give-up naming a failed
/// rank: this rank left that call before it could read it, and the group has lost that rank.
pub(crate) fn note_lost<T>(mailbox: &mut Mailbox<T>, r: &Envelope<Msg<T>>) {
    if mailbox.lost_news.is_some() {
        return;
    }
    if let Some(
        e @ PeerError::Aborted {
            culprit: Some(_), ..
        },
    ) = stop_of(r)
    {
        mailbox.lost_news = Some(e);
    }
}

/// The message that gives call `epoch` up.
fn give_up_msg<T>(epoch: u64, culprit: Option<usize>, reason: &str, refused: bool) -> Msg<T> {
    Msg::GiveUp {
        epoch,
        culprit: culprit.map(|c| c as u32),
        reason: reason.to_string(),
        refused,
    }
}

/// The error of a call given up by rank `by` because of `culprit`: a refusal when `by` names
/// itself (a rank never finds itself failed), an abort otherwise.
fn aborted(by: usize, culprit: Option<usize>, reason: String) -> PeerError {
    if culprit == Some(by) {
        PeerError::Refused { rank: by, reason }
    } else {
        PeerError::Aborted {
            by,
            culprit,
            reason,
        }
    }
}

/// The error a message means for this call, when it stops it.
fn stop_of<T>(r: &Envelope<Msg<T>>) -> Option<PeerError> {
    match &r.msg {
        Msg::GiveUp {
            culprit,
            reason,
            refused,
            ..
        } => Some(match culprit.map(|c| c as usize) {
            Some(c) if *refused => PeerError::Refused {
                rank: c,
                reason: reason.clone(),
            },
            culprit => PeerError::Aborted {
                by: r.from,
                culprit,
                reason: reason.clone(),
            },
        }),
        Msg::Decision {
            outcome:
                WireOutcome::Abort {
                    by,
                    culprit,
                    reason,
                },
            ..
        } => Some(aborted(
            *by as usize,
            culprit.map(|c| c as usize),
            reason.clone(),
        )),
        _ => None,
    }
}
