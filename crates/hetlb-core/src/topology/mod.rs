//! Interconnection networks.
//!
//! Every algorithm that balances over links asks a [`Topology`] who its neighbours are. The
//! hypercube ([`Hypercube`]) is implicit: node `u`'s partner in dimension `k` is `u ^ (1 << k)`,
//! so it costs no memory even at 2^24 nodes. Arbitrary graphs ([`Graph`], built by the
//! [`generators`] or parsed from an edge list or JSON) implement the same trait, and
//! [`Network`] holds either, as named by a [`TopologySpec`] (`ring:16`, `torus:8x8`, …).

mod colouring;
pub mod generators;
mod graph;
mod hypercube;
mod network;

pub use colouring::EdgeColouring;
pub use graph::{Graph, GraphError, Location, MAX_ARCS, MAX_NODES};
pub use hypercube::Hypercube;
pub use network::{
    BuildError, DefaultNetworkError, EitherIter, MAX_COMPLETE_DEFAULT, Network, Shape, SpecError,
    TopologySpec,
};

/// An undirected network of `node_count()` nodes numbered `0..node_count()`.
///
/// Algorithms that only need to visit neighbours are generic over this trait, in the manner
/// of petgraph's visitor traits, so the same rule runs on a hypercube and on any graph. A
/// topology is shared by the threads of a round ([`crate::rounds::RoundEngine`]), hence
/// `Sync`.
///
/// # Example
/// ```
/// use hetlb_core::topology::{Hypercube, Topology};
/// let cube = Hypercube::new(3).unwrap();
/// assert_eq!(cube.node_count(), 8);
/// assert_eq!(cube.neighbors(5).collect::<Vec<_>>(), vec![4, 7, 1]);
/// assert_eq!(cube.edge_count(), 12);
/// assert!(cube.contains_edge(0, 4));
/// ```
pub trait Topology: Sync {
    /// Number of nodes.
    fn node_count(&self) -> usize;

    /// The neighbours of `node`, each once, in a fixed order.
    ///
    /// `node` must be below `node_count()`.
    fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_;

    /// Number of neighbours of `node`.
    fn degree(&self, node: usize) -> usize {
        self.neighbors(node).count()
    }

    /// Number of undirected edges.
    fn edge_count(&self) -> usize {
        (0..self.node_count())
            .map(|u| self.degree(u))
            .sum::<usize>()
            / 2
    }

    /// True when `a` and `b` are joined by an edge.
    fn contains_edge(&self, a: usize, b: usize) -> bool {
        a < self.node_count() && self.neighbors(a).any(|v| v == b)
    }
}
