//! What the application balances: its own items.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// One unit of the application's work that a rank can hand to another: a mesh cell, a particle
/// block, a task. The application keeps its items in a `Vec<T>`; [`Balancer::rebalance`]
/// moves some of them between ranks and leaves every item held by exactly one rank.
///
/// Items travel serialised with serde (postcard) between processes and as values between
/// threads; a sender keeps its own items until every rank has finished the move
/// (copy-then-release), which is why items are [`Clone`].
///
/// # Example
/// ```
/// use hetlb_peer::Item;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Clone, Serialize, Deserialize)]
/// struct Cell { id: u64, cost: u64, data: [f64; 4] }
///
/// impl Item for Cell {
///     fn id(&self) -> u64 { self.id }
///     fn load(&self) -> u64 { self.cost } // weighted; the default is 1 unit per item
/// }
/// let c = Cell { id: 7, cost: 3, data: [0.0; 4] };
/// assert_eq!((c.id(), c.load()), (7, 3));
/// ```
///
/// [`Balancer::rebalance`]: super::Balancer::rebalance
pub trait Item: Clone + Send + Serialize + DeserializeOwned + 'static {
    /// An identifier unique among all ranks' items (used by checks and reports, never for
    /// routing).
    fn id(&self) -> u64;

    /// The item's load in integer units (work it represents). The balancing rules move
    /// units; a transfer of `u` units is carried by items whose loads sum to about `u`.
    fn load(&self) -> u64 {
        1
    }

    /// Where the item lives, as up to three coordinates (those not used are 0), or `None`
    /// (the default) when the application does not say. When items give positions, every
    /// item of every rank must give one, finite: a call then keeps each rank's items a compact
    /// region — a transfer to rank `q` carries the items that lie furthest towards `q`'s
    /// items, and direct routing sends each rank's surplus to the nearest ranks that lack
    /// units — and the report gives the regions' spread (see
    /// [`Report::spread_after`](crate::Report::spread_after)).
    fn position(&self) -> Option<[f64; 3]> {
        None
    }
}

/// A plain item of one unit, handy for tests and examples: just an id.
impl Item for u64 {
    fn id(&self) -> u64 {
        *self
    }
}
