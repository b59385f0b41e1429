//! [`Balancer::rebalance_deferred`]: a rebalance whose items are built only when something
//! moves. The C two-step form stands for each item by a proxy record; building a million of
//! them for a call that moves nothing cost more than the call itself.

use super::{Balancer, Local};
use crate::decide::Migration;
use crate::error::PeerError;
use crate::locality::{Position, moments_of};
use crate::report::Report;
use crate::store::{ItemKind, Storage};
use hetlb_transport::Group;

/// Items that can be described before they exist: what a call's gather needs (how many,
/// their units, the store's shape, their positions), and the items themselves, built when a
/// move needs them ([`Balancer::rebalance_deferred`]).
///
/// The description must agree with the built items: `len`, `units`, `shape` and `position`
/// give what [`Storage`]'s methods of the same names would give on [`Deferred::items`].
///
/// # Example
/// ```
/// use hetlb_peer::{Balancer, BalancerConfig, Bytes, Deferred, PeerError, Records};
/// use hetlb_transport::threads;
///
/// /// `count` 8-byte records (their ids, from `first`), built on demand.
/// struct Numbered { first: u64, count: usize, buffer: Vec<u8> }
///
/// impl Deferred<Bytes> for Numbered {
///     type Items<'a> = Records<'a, Vec<u8>>;
///     fn len(&self) -> usize { self.count }
///     fn units(&self) -> Option<u64> { Some(self.count as u64) }
///     fn shape(&self) -> u64 { Records::<Vec<u8>>::shape_of(8, None) }
///     fn items(&mut self) -> Result<Records<'_, Vec<u8>>, PeerError> {
///         let ids = self.first..self.first + self.count as u64;
///         self.buffer = ids.flat_map(u64::to_ne_bytes).collect();
///         Records::new(&mut self.buffer, 8, 0).map_err(|e| PeerError::Storage(e.to_string()))
///     }
/// }
///
/// let handles: Vec<_> = threads::group(2).into_iter().enumerate().map(|(rank, m)| {
///     std::thread::spawn(move || {
///         let mut b = Balancer::new(&m, BalancerConfig::new("dem").unwrap()).unwrap();
///         // Balanced: the records are never built.
///         let mut even = Numbered { first: 10 * rank as u64, count: 5, buffer: Vec::new() };
///         b.rebalance_deferred(&mut even).unwrap();
///         assert!(even.buffer.is_empty());
///         // Rank 0 holds all six: its records are built, and three go to rank 1.
///         let count = if rank == 0 { 6 } else { 0 };
///         let mut odd = Numbered { first: 0, count, buffer: Vec::new() };
///         let report = b.rebalance_deferred(&mut odd).unwrap();
///         assert_eq!(report.items_after, 3);
///         assert_eq!(odd.buffer.len(), 3 * 8);
///     })
/// }).collect();
/// for h in handles { h.join().unwrap(); }
/// ```
pub trait Deferred<K: ItemKind> {
    /// The items once built (often a store borrowing a buffer of the implementor).
    type Items<'a>: Storage<K>
    where
        Self: 'a;

    /// How many items there are.
    fn len(&self) -> usize;

    /// True when there is no item.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Σ of their loads, `None` on overflow.
    fn units(&self) -> Option<u64>;

    /// The digest of the built store's shape, which every rank's must match: for records,
    /// [`Records::shape_of`](crate::Records::shape_of) of their size and positions; 0 for
    /// typed items.
    fn shape(&self) -> u64 {
        0
    }

    /// True when each item has one unit (what [`Migration::unit_items`] gathers; the
    /// default says nothing of them).
    fn unit_items(&self) -> bool {
        false
    }

    /// Where item `i` lives, as the built store would say (`None`: no positions).
    fn position(&self, i: usize) -> Option<Position> {
        let _ = i;
        None
    }

    /// Builds the items (called at most once per call, and only when the call moves some).
    ///
    /// # Errors
    /// Whatever keeps them from being built (e.g. [`PeerError::Storage`] for memory).
    fn items(&mut self) -> Result<Self::Items<'_>, PeerError>;

    /// Takes a migration that moves items over, when the implementor moves them itself
    /// (the C two-step form, whose application moves its items with `hetlb_migrate`): it
    /// returns true, and the balancer neither builds the items nor moves anything. Every
    /// rank of the call must answer alike (decide from the migration, which every rank
    /// shares, and from what every rank's description agrees on). The default keeps the
    /// migration to the balancer.
    fn take_over(&mut self, migration: &Migration) -> bool {
        let _ = migration;
        false
    }
}

impl Local {
    fn of_deferred<K: ItemKind, D: Deferred<K>>(d: &D) -> Self {
        Self {
            items: d.len(),
            units: d.units(),
            shape: d.shape(),
            moments: moments_of(d.len(), |i| d.position(i)),
            unit_items: d.unit_items(),
        }
    }
}

impl<K: ItemKind, G: Group> Balancer<K, G> {
    /// [`Balancer::rebalance`] of items that are built only when the call moves some
    /// ([`Deferred::items`]): a call the trigger skips, or whose rule moves nothing on any
    /// rank, costs its gather and never builds them. Every rank's call is the same
    /// collective as `rebalance` (ranks may mix the two forms), with the same guarantees.
    ///
    /// When an earlier call is in doubt the items are built first, and resolved as
    /// [`Balancer::rebalance`] does.
    ///
    /// # Errors
    /// As [`Balancer::rebalance`]; the error of [`Deferred::items`] when this rank's items
    /// are needed and cannot be built (the other ranks then find this rank silent within
    /// their timeout, and nothing moves).
    ///
    /// # Complexity
    /// As `rebalance`, plus what [`Deferred::units`] and [`Deferred::position`] cost over
    /// the items; the items are built only in calls that move some.
    ///
    /// A migration [`Deferred::take_over`] takes is not carried out: the report is that of
    /// a call in which the balancer moved nothing, and no move time is learned from it.
    pub fn rebalance_deferred<D: Deferred<K>>(&mut self, d: &mut D) -> Result<Report, PeerError> {
        if self.in_doubt() {
            let mut items = d.items()?;
            return self.rebalance(&mut items);
        }
        if let Some(skipped) = self.skipped(d.len(), || d.units()) {
            return Ok(skipped);
        }
        let local = Local::of_deferred(d);
        // A migration that moves nothing is reported without `carry` (`decide_then_move`).
        self.decide_then_move(local, |b: &mut Self, migration: &Migration| {
            if d.take_over(migration) {
                b.unchanged(migration.clone())
            } else {
                let mut items = d.items()?;
                b.migrate(&mut items, migration)
            }
        })
    }
}
