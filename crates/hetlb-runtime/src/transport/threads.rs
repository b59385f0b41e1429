//! The threads backend: ranks are threads, messages move over crossbeam channels.
//!
//! Every rank owns one unbounded multi-producer inbox and a sender to every inbox, so a send
//! never blocks and never copies the message: moving a `Vec` of matrix rows costs a pointer.

use super::{Envelope, Transport, TransportError};
use crossbeam::channel::{self, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::time::Instant;

/// How long `recv` polls before it parks the thread.
const SPIN_BEFORE_PARKING: std::time::Duration = std::time::Duration::from_micros(50);
/// How long `recv` spins before it starts yielding the core between checks.
pub const YIELD_AFTER: std::time::Duration = std::time::Duration::from_micros(5);

/// One rank of an in-process network made by [`network`].
#[derive(Debug)]
pub struct ThreadTransport<M> {
    rank: usize,
    inbox: Receiver<Envelope<M>>,
    peers: Vec<Sender<Envelope<M>>>,
}

/// A fully connected network of `size` in-process ranks; element `i` is rank `i`'s end.
/// Hand each to its own thread.
///
/// # Complexity
/// `O(size²)` sender handles.
///
/// # Example
/// ```
/// use hetlb_runtime::transport::{Transport, threads::network};
/// let ranks = network::<u32>(3);
/// ranks[2].send(0, 7).unwrap();
/// assert_eq!(ranks[0].try_recv().unwrap().unwrap().msg, 7);
/// assert!(ranks[1].try_recv().unwrap().is_none());
/// ```
pub fn network<M>(size: usize) -> Vec<ThreadTransport<M>> {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..size).map(|_| channel::unbounded()).unzip();
    receivers
        .into_iter()
        .enumerate()
        .map(|(rank, inbox)| ThreadTransport {
            rank,
            inbox,
            peers: senders.clone(),
        })
        .collect()
}

impl<M> Transport<M> for ThreadTransport<M> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.peers.len()
    }

    fn backend(&self) -> &'static str {
        "threads"
    }

    fn send(&self, to: usize, msg: M) -> Result<(), TransportError> {
        self.send_at(to, msg, Instant::now())
    }

    /// Stamps the message with `now` as the instant it was sent (and so arrived).
    fn send_at(&self, to: usize, msg: M, now: Instant) -> Result<(), TransportError> {
        let peer = self.peers.get(to).ok_or(TransportError::NoSuchRank {
            rank: to,
            size: self.peers.len(),
        })?;
        peer.send(Envelope {
            from: self.rank,
            msg,
            arrived: now,
        })
        .map_err(|_| TransportError::Closed(to))
    }

    fn recv(&self, deadline: Option<Instant>) -> Result<Option<Envelope<M>>, TransportError> {
        // A reply usually follows within microseconds; waiting for it briefly before parking
        // saves two thread wake-ups per request (tens of microseconds on a virtual machine).
        // After a few microseconds the poll yields the core between checks: when the other
        // end waits for a turn on the same core (a loaded machine), spinning would only delay
        // it.
        if let Some(e) = super::poll(SPIN_BEFORE_PARKING, Some(YIELD_AFTER), || self.try_recv())? {
            return Ok(Some(e));
        }
        match deadline {
            None => self
                .inbox
                .recv()
                .map(Some)
                .map_err(|_| TransportError::Closed(self.rank)),
            Some(d) => match self.inbox.recv_deadline(d) {
                Ok(e) => Ok(Some(e)),
                Err(RecvTimeoutError::Timeout) => Ok(None),
                Err(RecvTimeoutError::Disconnected) => Err(TransportError::Closed(self.rank)),
            },
        }
    }

    fn try_recv(&self) -> Result<Option<Envelope<M>>, TransportError> {
        match self.inbox.try_recv() {
            Ok(e) => Ok(Some(e)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(TransportError::Closed(self.rank)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

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
}
