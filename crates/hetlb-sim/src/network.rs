//! The simulated network: an undirected graph stored as compressed adjacency (CSR).
//!
//! Every directed link `u → v` has an index (its position in the adjacency array), so link
//! state — parameters, the time the link is free, its random stream — lives in flat vectors.
//! The graph implements [`hetlb_core::topology::Topology`], so the core's graph algorithms
//! run on it unchanged.

use hetlb_core::topology::Topology;
use thiserror::Error;

/// What is wrong with an edge list.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum NetworkError {
    /// An edge names a node outside `0..nodes`.
    #[error("edge {index} ({a}, {b}) names a node outside 0..{nodes}")]
    UnknownNode {
        /// Position of the edge in the list.
        index: usize,
        /// First end.
        a: usize,
        /// Second end.
        b: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// An edge from a node to itself.
    #[error("edge {index} joins node {node} to itself")]
    SelfLoop {
        /// Position of the edge in the list.
        index: usize,
        /// The node.
        node: usize,
    },
    /// A hypercube over a node count that is not a power of two.
    #[error("a hypercube needs a power-of-two node count, not {0}")]
    NotPowerOfTwo(usize),
}

/// An undirected graph in CSR form. Duplicate edges are merged.
///
/// # Example
/// ```
/// use hetlb_sim::network::Network;
/// use hetlb_core::topology::Topology;
/// // The ring 0-1-2-3-4-0 with node 5 hanging on node 4 (the paper's nodes 1..6).
/// let net = Network::from_edges(6, &[(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (4, 5)]).unwrap();
/// assert_eq!(net.neighbors(0).collect::<Vec<_>>(), vec![1, 4]);
/// assert_eq!(net.neighbors(5).collect::<Vec<_>>(), vec![4]);
/// assert_eq!(net.edge_count(), 6);
/// assert!(net.link(4, 5).is_some() && net.link(0, 2).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    offsets: Vec<usize>,
    targets: Vec<usize>,
}

impl Network {
    /// A graph of `nodes` nodes with the given undirected edges.
    ///
    /// # Errors
    /// [`NetworkError`] for an edge that names an unknown node or joins a node to itself.
    ///
    /// # Complexity
    /// `O(N + E log E)`.
    pub fn from_edges(nodes: usize, edges: &[(usize, usize)]) -> Result<Self, NetworkError> {
        let mut lists = vec![Vec::new(); nodes];
        for (index, &(a, b)) in edges.iter().enumerate() {
            if a >= nodes || b >= nodes {
                return Err(NetworkError::UnknownNode { index, a, b, nodes });
            }
            if a == b {
                return Err(NetworkError::SelfLoop { index, node: a });
            }
            lists[a].push(b);
            lists[b].push(a);
        }
        Ok(Self::from_lists(lists))
    }

    fn from_lists(mut lists: Vec<Vec<usize>>) -> Self {
        let mut offsets = Vec::with_capacity(lists.len() + 1);
        let mut targets = Vec::new();
        offsets.push(0);
        for list in &mut lists {
            list.sort_unstable();
            list.dedup();
            targets.extend_from_slice(list);
            offsets.push(targets.len());
        }
        Self { offsets, targets }
    }

    /// The ring `0 - 1 - … - (n−1) - 0` (a path for `n = 2`, no edge for `n = 1`).
    pub fn ring(nodes: usize) -> Self {
        let edges: Vec<(usize, usize)> = match nodes {
            0 | 1 => Vec::new(),
            2 => vec![(0, 1)],
            n => (0..n).map(|i| (i, (i + 1) % n)).collect(),
        };
        Self::from_edges(nodes, &edges).expect("ring edges are valid")
    }

    /// Every pair of nodes joined.
    pub fn complete(nodes: usize) -> Self {
        Self::from_lists(
            (0..nodes)
                .map(|u| (0..nodes).filter(|&v| v != u).collect())
                .collect(),
        )
    }

    /// The hypercube: `u` and `u ^ 2^k` joined for every dimension `k`.
    ///
    /// # Errors
    /// [`NetworkError::NotPowerOfTwo`].
    pub fn hypercube(nodes: usize) -> Result<Self, NetworkError> {
        if !nodes.is_power_of_two() {
            return Err(NetworkError::NotPowerOfTwo(nodes));
        }
        let dims = nodes.trailing_zeros();
        Ok(Self::from_lists(
            (0..nodes)
                .map(|u| (0..dims).map(|k| u ^ (1 << k)).collect())
                .collect(),
        ))
    }

    /// A `rows × cols` torus (wrap-around grid); small sides give merged edges.
    pub fn torus(rows: usize, cols: usize) -> Self {
        let id = |r: usize, c: usize| r * cols + c;
        let mut edges = Vec::new();
        for r in 0..rows {
            for c in 0..cols {
                if cols > 1 {
                    edges.push((id(r, c), id(r, (c + 1) % cols)));
                }
                if rows > 1 {
                    edges.push((id(r, c), id((r + 1) % rows, c)));
                }
            }
        }
        Self::from_edges(rows * cols, &edges).expect("torus edges are valid")
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
}

impl Topology for Network {
    fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        self.neighbor_slice(node).iter().copied()
    }

    fn degree(&self, node: usize) -> usize {
        self.offsets[node + 1] - self.offsets[node]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generators_have_the_expected_degrees() {
        let cube = Network::hypercube(16).unwrap();
        assert!((0..16).all(|u| cube.degree(u) == 4));
        assert_eq!(cube.edge_count(), 32);
        assert_eq!(Network::ring(5).edge_count(), 5);
        assert_eq!(Network::complete(5).edge_count(), 10);
        let torus = Network::torus(4, 5);
        assert!((0..20).all(|u| torus.degree(u) == 4));
        assert_eq!(Network::hypercube(6), Err(NetworkError::NotPowerOfTwo(6)));
    }

    #[test]
    fn links_are_indexed_both_ways() {
        let net = Network::ring(4);
        for l in 0..net.link_count() {
            let from = net.link_source(l);
            let to = net.targets[l];
            assert_eq!(net.link(from, to), Some(l));
            assert!(net.link(to, from).is_some());
        }
        assert!(Network::from_edges(3, &[(0, 3)]).is_err());
        assert!(Network::from_edges(3, &[(1, 1)]).is_err());
    }
}
