//! The links of a simulated network, numbered.
//!
//! The network itself is the core's [`Network`] — the same
//! graph type and the same `ring:16`, `torus:8x8`, … specs ([`TopologySpec`]) serve
//! `balance`, `simulate` and the runtime. The simulator only adds a number to every
//! *directed* link `u → v` (its position in a compressed adjacency array), so that link
//! state — parameters, the time the link is free, its random stream — lives in flat vectors.
//!
//! [`TopologySpec`]: hetlb_core::topology::TopologySpec

use crate::prefetch::{HugePages, huge_page_vec};
use hetlb_core::topology::{Network, Topology};

/// The directed links of a network, numbered `0..link_count()`: the links out of node `u`
/// are `offsets[u]..offsets[u + 1]`, to its neighbours in increasing order.
///
/// # Example
/// ```
/// use hetlb_core::topology::{Graph, Network, Topology};
/// use hetlb_sim::network::LinkTable;
/// // The ring 0-1-2-3-4-0 with node 5 hanging on node 4 (the paper's nodes 1..6).
/// let graph = Graph::from_edges(6, [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (4, 5)]).unwrap();
/// let links = LinkTable::new(&Network::from_graph(graph));
/// assert_eq!(links.neighbor_slice(0), &[1, 4]);
/// assert_eq!(links.neighbor_slice(5), &[4]);
/// assert_eq!(links.link_count(), 12);
/// assert!(links.link(4, 5).is_some() && links.link(0, 2).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkTable {
    offsets: HugePages<usize>,
    targets: Vec<usize>,
}

impl LinkTable {
    /// Numbers the links of `network`.
    ///
    /// # Complexity
    /// `O(N + E log Δ)`.
    pub fn new<T: Topology>(network: &T) -> Self {
        let n = network.node_count();
        let mut offsets = huge_page_vec(n + 1);
        let mut targets = Vec::with_capacity(2 * network.edge_count());
        offsets.push(0);
        for u in 0..n {
            let start = targets.len();
            targets.extend(network.neighbors(u));
            targets[start..].sort_unstable();
            offsets.push(targets.len());
        }
        Self {
            offsets: HugePages::from_vec(offsets),
            targets,
        }
    }

    /// The neighbours of `node` as a sorted slice.
    pub fn neighbor_slice(&self, node: usize) -> &[usize] {
        &self.targets[self.offsets[node]..self.offsets[node + 1]]
    }

    /// Index of the directed link `from → to`, or `None` when they are not adjacent.
    ///
    /// # Complexity
    /// `O(log degree)`.
    pub fn link(&self, from: usize, to: usize) -> Option<usize> {
        if from >= self.node_count() {
            return None;
        }
        let start = self.offsets[from];
        self.neighbor_slice(from)
            .binary_search(&to)
            .ok()
            .map(|i| start + i)
    }

    /// Number of directed links (twice the number of edges).
    pub fn link_count(&self) -> usize {
        self.targets.len()
    }

    /// The source node of directed link `link`.
    pub fn link_source(&self, link: usize) -> usize {
        self.offsets.partition_point(|&o| o <= link) - 1
    }

    /// The target node of directed link `link`.
    pub fn link_target(&self, link: usize) -> usize {
        self.targets[link]
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }
}

/// The topology of a scenario written the old way (`kind = "ring"` and the node count), as a
/// core [`Network`]: a ring of one or two nodes is the path it always was, `hypercube` the
/// implicit cube.
///
/// # Errors
/// The core's [`GraphError`](hetlb_core::topology::GraphError) (as text) for a count the
/// shape does not allow.
pub(crate) fn legacy_network(
    kind: LegacyKind,
    nodes: usize,
) -> Result<Network, hetlb_core::topology::GraphError> {
    use hetlb_core::topology::{Hypercube, TopologySpec};
    let spec = match kind {
        LegacyKind::Ring if nodes < 3 => TopologySpec::Path(nodes),
        LegacyKind::Ring => TopologySpec::Ring(nodes),
        LegacyKind::Complete => TopologySpec::Complete(nodes),
        LegacyKind::Hypercube => {
            return Hypercube::for_nodes(nodes)
                .map(Network::Hypercube)
                .map_err(|e| hetlb_core::topology::GraphError::Syntax(e.to_string()));
        }
    };
    spec.build()
}

/// The generated kinds of the old form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LegacyKind {
    Ring,
    Complete,
    Hypercube,
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::topology::TopologySpec;

    #[test]
    fn links_are_indexed_both_ways() {
        for spec in ["ring:5", "hypercube:3", "torus:3x4", "star:6"] {
            let net = spec.parse::<TopologySpec>().unwrap().build().unwrap();
            let table = LinkTable::new(&net);
            assert_eq!(table.link_count(), 2 * net.edge_count(), "{spec}");
            for l in 0..table.link_count() {
                let (from, to) = (table.link_source(l), table.link_target(l));
                assert_eq!(table.link(from, to), Some(l), "{spec}");
                assert!(table.link(to, from).is_some(), "{spec}");
                assert!(net.contains_edge(from, to), "{spec}");
            }
        }
    }

    #[test]
    fn the_old_kinds_keep_their_meaning() {
        let two = legacy_network(LegacyKind::Ring, 2).unwrap();
        assert_eq!(two.edge_count(), 1);
        assert_eq!(legacy_network(LegacyKind::Ring, 1).unwrap().edge_count(), 0);
        assert_eq!(legacy_network(LegacyKind::Ring, 5).unwrap().edge_count(), 5);
        assert_eq!(
            legacy_network(LegacyKind::Complete, 5)
                .unwrap()
                .edge_count(),
            10
        );
        assert!(matches!(
            legacy_network(LegacyKind::Hypercube, 8).unwrap(),
            Network::Hypercube(_)
        ));
        assert!(legacy_network(LegacyKind::Hypercube, 6).is_err());
    }
}
