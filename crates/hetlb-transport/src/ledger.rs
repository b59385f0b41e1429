//! A write-once outcome per key, shared by the ranks of a group that share memory: an
//! atomic commitment register.
//!
//! Each rank either *votes* for a key (it has done its part; the payload is what it reports)
//! or *aborts* it. The first of two things to happen decides the key, for good: the last of
//! the `size` votes (the outcome is [`LedgerOutcome::Commit`] with every payload), or an
//! abort (the outcome is [`LedgerOutcome::Abort`]). Every rank reads the same outcome,
//! whatever fails around it — a rank that panics, stops for a while or gives up — because
//! deciding is one operation under one lock, and the outcome outlives the rank that wrote it.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How a key was decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LedgerOutcome {
    /// Every rank voted; one payload per rank, in rank order.
    Commit(Vec<Vec<u8>>),
    /// A rank aborted before every rank had voted.
    Abort {
        /// The rank that aborted.
        by: usize,
        /// The rank it held responsible, when it named one.
        culprit: Option<usize>,
        /// Why.
        reason: String,
    },
}

#[derive(Debug)]
struct Entry {
    votes: Vec<Option<Vec<u8>>>,
    voted: usize,
    outcome: Option<LedgerOutcome>,
}

#[derive(Debug)]
struct Book {
    entries: BTreeMap<u64, Entry>,
    /// The lowest key each rank may still read.
    needs_from: Vec<u64>,
}

/// A group's register of outcomes (see the module documentation).
///
/// # Example
/// ```
/// use hetlb_transport::{Ledger, LedgerOutcome};
/// let ledger = Ledger::new(2);
/// assert_eq!(ledger.vote(1, 0, b"a".to_vec()), None);
/// assert_eq!(
///     ledger.vote(1, 1, b"b".to_vec()),
///     Some(LedgerOutcome::Commit(vec![b"a".to_vec(), b"b".to_vec()]))
/// );
/// // Too late to abort key 1; key 2 is aborted before everyone voted.
/// assert!(matches!(ledger.abort(1, 0, None, "late"), LedgerOutcome::Commit(_)));
/// assert!(matches!(ledger.abort(2, 1, Some(0), "rank 0 is silent"), LedgerOutcome::Abort { .. }));
/// assert!(matches!(ledger.vote(2, 0, vec![]), Some(LedgerOutcome::Abort { .. })));
/// ```
#[derive(Debug)]
pub struct Ledger {
    size: usize,
    book: Mutex<Book>,
}

impl Ledger {
    /// An empty ledger for `size` ranks.
    pub fn new(size: usize) -> Self {
        Self {
            size,
            book: Mutex::new(Book {
                entries: BTreeMap::new(),
                needs_from: vec![0; size],
            }),
        }
    }

    fn book(&self) -> MutexGuard<'_, Book> {
        self.book.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn entry(book: &mut Book, key: u64, size: usize) -> &mut Entry {
        book.entries.entry(key).or_insert_with(|| Entry {
            votes: vec![None; size],
            voted: 0,
            outcome: None,
        })
    }

    /// Records `rank`'s vote for `key`; returns the outcome when the key is decided (by this
    /// vote, the last one, or by an earlier abort).
    pub fn vote(&self, key: u64, rank: usize, payload: Vec<u8>) -> Option<LedgerOutcome> {
        let size = self.size;
        let mut book = self.book();
        let e = Self::entry(&mut book, key, size);
        if e.outcome.is_none() && rank < size && e.votes[rank].is_none() {
            e.votes[rank] = Some(payload);
            e.voted += 1;
            if e.voted == size {
                let payloads = e.votes.iter_mut().map(|v| v.take().unwrap_or_default());
                e.outcome = Some(LedgerOutcome::Commit(payloads.collect()));
            }
        }
        e.outcome.clone()
    }

    /// Aborts `key` unless it is already decided; returns the outcome either way.
    pub fn abort(
        &self,
        key: u64,
        by: usize,
        culprit: Option<usize>,
        reason: &str,
    ) -> LedgerOutcome {
        let size = self.size;
        let mut book = self.book();
        let e = Self::entry(&mut book, key, size);
        e.outcome
            .get_or_insert_with(|| LedgerOutcome::Abort {
                by,
                culprit,
                reason: reason.to_string(),
            })
            .clone()
    }

    /// The outcome of `key`, once decided.
    pub fn outcome(&self, key: u64) -> Option<LedgerOutcome> {
        self.book()
            .entries
            .get(&key)
            .and_then(|e| e.outcome.clone())
    }

    /// True when `rank` has voted for `key` (or the key is decided).
    pub fn has_voted(&self, key: u64, rank: usize) -> bool {
        self.book()
            .entries
            .get(&key)
            .is_some_and(|e| e.outcome.is_some() || e.votes.get(rank).is_some_and(Option::is_some))
    }

    /// `rank` will never read keys below `key` again: entries no rank needs are dropped, so
    /// the ledger holds only the keys of calls still in progress somewhere.
    pub fn release(&self, rank: usize, key: u64) {
        let mut book = self.book();
        if let Some(n) = book.needs_from.get_mut(rank) {
            *n = (*n).max(key);
        }
        let low = book.needs_from.iter().copied().min().unwrap_or(0);
        book.entries = book.entries.split_off(&low);
    }

    /// The number of keys held (for tests of the bound).
    pub fn len(&self) -> usize {
        self.book().entries.len()
    }

    /// True when no key is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_decision_stands() {
        let l = Ledger::new(3);
        assert_eq!(l.vote(7, 0, vec![0]), None);
        assert_eq!(l.vote(7, 0, vec![9]), None, "a second vote changes nothing");
        assert!(l.has_voted(7, 0) && !l.has_voted(7, 1));
        let a = l.abort(7, 2, Some(1), "rank 1 is silent");
        assert!(matches!(
            a,
            LedgerOutcome::Abort {
                by: 2,
                culprit: Some(1),
                ..
            }
        ));
        assert_eq!(l.vote(7, 1, vec![1]), Some(a.clone()));
        assert_eq!(l.outcome(7), Some(a));
    }

    #[test]
    fn the_last_vote_commits_with_every_payload() {
        let l = Ledger::new(2);
        l.vote(1, 1, vec![1]);
        assert_eq!(
            l.vote(1, 0, vec![0]),
            Some(LedgerOutcome::Commit(vec![vec![0], vec![1]]))
        );
        assert!(matches!(l.abort(1, 0, None, "x"), LedgerOutcome::Commit(_)));
    }

    #[test]
    fn keys_every_rank_has_released_are_dropped() {
        let l = Ledger::new(2);
        for k in 1..=5 {
            l.vote(k, 0, vec![]);
        }
        l.release(0, 5);
        assert_eq!(l.len(), 5, "rank 1 may still read them");
        l.release(1, 4);
        assert_eq!(l.len(), 2);
        assert!(l.outcome(3).is_none() && l.has_voted(5, 0));
    }
}
