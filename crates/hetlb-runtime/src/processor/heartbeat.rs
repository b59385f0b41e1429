//! Liveness: every rank proves it is alive while it computes, and judges the others by
//! silence only.
//!
//! Each rank runs a heartbeat thread beside its computing thread. The thread does not wait for
//! tasks: every `period` (a quarter of the timeout, at most [`MAX_PERIOD`]) it sends
//! [`Msg::Alive`] — to every other rank while this rank leads (rank 0 during the launch, the
//! master during the run), otherwise to its coordinator only. A worker whose one task takes
//! longer than the timeout therefore keeps being heard, and a rank that really stops (a
//! stopped process, an injected hang) falls silent within one period.
//!
//! The same thread notices when this process itself was not running: if a tick comes much
//! later than planned (the process was stopped with `SIGSTOP`, or starved), it records the
//! moment it resumed. Silence is then counted from that moment at the earliest
//! ([`Heartbeat::silent_for`]), so a rank that wakes from a long pause first reads what
//! arrived meanwhile before it blames anyone.

use crate::message::Msg;
use crate::transport::Transport;
use crossbeam::channel::{Receiver, RecvTimeoutError, Sender, bounded};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The longest interval between two heartbeats.
pub(crate) const MAX_PERIOD: Duration = Duration::from_secs(2);

/// No coordinator known.
const NOBODY: usize = usize::MAX;

/// The state a rank's heartbeat thread shares with its computing thread.
#[derive(Debug)]
pub(crate) struct Heartbeat {
    period: Duration,
    base: Instant,
    /// True while this rank leads (beats to everyone).
    leading: AtomicBool,
    /// The rank to beat to when not leading.
    coordinator: AtomicUsize,
    /// True after an injected hang: the rank says nothing any more.
    muted: AtomicBool,
    /// Wakes the heartbeat thread to end it.
    stop: Sender<()>,
    stopped: Receiver<()>,
    /// Nanoseconds after `base` when this process last resumed from a pause.
    resumed: AtomicU64,
}

impl Heartbeat {
    /// The heartbeat of a rank whose peers give up after `timeout` of silence.
    pub(crate) fn new(timeout: Duration) -> Self {
        let (stop, stopped) = bounded(1);
        Self {
            period: (timeout / 4).clamp(Duration::from_millis(1), MAX_PERIOD),
            base: Instant::now(),
            leading: AtomicBool::new(false),
            coordinator: AtomicUsize::new(NOBODY),
            muted: AtomicBool::new(false),
            stop,
            stopped,
            resumed: AtomicU64::new(0),
        }
    }

    /// Beats to every other rank from now on.
    pub(crate) fn lead(&self) {
        self.leading.store(true, Ordering::Relaxed);
    }

    /// Beats only to `coordinator` from now on.
    pub(crate) fn follow(&self, coordinator: usize) {
        self.coordinator.store(coordinator, Ordering::Relaxed);
        self.leading.store(false, Ordering::Relaxed);
    }

    /// Stops beating for good (an injected hang).
    pub(crate) fn mute(&self) {
        self.muted.store(true, Ordering::Relaxed);
    }

    /// Ends the heartbeat thread at once.
    pub(crate) fn finish(&self) {
        let _ = self.stop.try_send(());
    }

    /// The instant this process last resumed from a pause (or started).
    fn resumed_at(&self) -> Instant {
        self.base + Duration::from_nanos(self.resumed.load(Ordering::Relaxed))
    }

    /// How long a peer last heard at `heard` has been silent, counted from when this process
    /// last resumed at the earliest.
    pub(crate) fn silent_for(&self, heard: Instant) -> Duration {
        heard.max(self.resumed_at()).elapsed()
    }

    /// How long a peer last heard at `heard` has been silent at `now` (a reading of the
    /// clock), counted as in [`Heartbeat::silent_for`].
    pub(crate) fn silent_at(&self, heard: Instant, now: Instant) -> Duration {
        now.saturating_duration_since(heard.max(self.resumed_at()))
    }

    /// When a peer last heard at `heard` becomes silent for `timeout`.
    pub(crate) fn deadline(&self, heard: Instant, timeout: Duration) -> Instant {
        heard.max(self.resumed_at()) + timeout
    }

    /// The heartbeat thread's loop: runs until [`Heartbeat::finish`].
    ///
    /// Heartbeats are a few bytes, so on MPI they go out as eager sends that complete
    /// without the receiver: they cannot block against the request-reply protocol.
    pub(crate) fn beat<T, O, Tr>(&self, tr: &Tr)
    where
        Tr: Transport<Msg<T, O>>,
    {
        let me = tr.rank();
        let mut last = Instant::now();
        loop {
            match self.stopped.recv_timeout(self.period) {
                Err(RecvTimeoutError::Timeout) => {}
                Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
            }
            let now = Instant::now();
            // A tick far later than planned: this process was not running.
            if now.duration_since(last) > 2 * self.period + Duration::from_millis(20) {
                let nanos = now.duration_since(self.base).as_nanos();
                self.resumed
                    .store(u64::try_from(nanos).unwrap_or(u64::MAX), Ordering::Relaxed);
            }
            last = now;
            if self.muted.load(Ordering::Relaxed) {
                continue;
            }
            let leading = self.leading.load(Ordering::Relaxed);
            if leading {
                for r in (0..tr.size()).filter(|&r| r != me) {
                    let _ = tr.send(r, Msg::Alive { leading });
                }
            } else {
                let to = self.coordinator.load(Ordering::Relaxed);
                if to != NOBODY && to != me {
                    let _ = tr.send(to, Msg::Alive { leading });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::threads::network;

    #[test]
    fn a_leader_beats_to_everyone_and_a_follower_to_its_coordinator() {
        let ranks = network::<Msg<u64, u64>>(3);
        let hb = Heartbeat::new(Duration::from_millis(40));
        hb.lead();
        std::thread::scope(|s| {
            s.spawn(|| hb.beat(&ranks[0]));
            std::thread::sleep(Duration::from_millis(60));
            hb.follow(2);
            while ranks[1].try_recv().unwrap().is_some() {}
            std::thread::sleep(Duration::from_millis(60));
            hb.finish();
        });
        assert!(matches!(
            ranks[2].try_recv().unwrap().unwrap().msg,
            Msg::Alive { leading: true }
        ));
        // After following rank 2, rank 1 hears nothing more (one beat may have been in
        // flight when it switched).
        let late = std::iter::from_fn(|| ranks[1].try_recv().unwrap()).count();
        assert!(late <= 1, "{late}");
    }

    #[test]
    fn silence_counts_from_the_last_resume() {
        std::thread::sleep(Duration::from_millis(50));
        let long_ago = Instant::now();
        let hb = Heartbeat::new(Duration::from_secs(1));
        std::thread::sleep(Duration::from_millis(30));
        assert!(hb.silent_for(long_ago) >= Duration::from_millis(30));
        hb.resumed.store(
            u64::try_from(hb.base.elapsed().as_nanos()).unwrap(),
            Ordering::Relaxed,
        );
        assert!(hb.silent_for(long_ago) < Duration::from_millis(30));
    }
}
