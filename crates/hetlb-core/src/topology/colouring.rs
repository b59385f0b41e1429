//! Proper edge colourings: the schedule of a dimension exchange on an arbitrary graph.
//!
//! A proper edge colouring splits the edges into matchings; in round `r` of a generalised
//! dimension exchange (Xu & Lau 1992) the pairs of colour `r mod χ` exchange. On the
//! hypercube the colours are the dimensions; on rings, paths, meshes and tori of even sides
//! the natural 2- and 4-colourings are used (they are the schedules for which Xu & Lau's
//! optimal exchange parameters hold); on any other graph a greedy colouring.

use super::{Graph, Hypercube, Topology};

/// A proper edge colouring: for every colour, each node has at most one partner.
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, EdgeColouring, Topology};
/// let g = generators::complete(5).unwrap();
/// let c = EdgeColouring::greedy(&g);
/// assert!(c.colours() >= 5); // K5 needs 5 colours
/// assert!(c.is_proper_for(&g));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EdgeColouring {
    /// Colour `k` is dimension `k` of the hypercube: `u`'s partner is `u ^ 2^k`.
    Hypercube(Hypercube),
    /// An explicit table.
    Table {
        /// Number of colours `χ`.
        colours: usize,
        /// Number of nodes.
        nodes: usize,
        /// `partner[c·nodes + u]`: `u`'s partner in colour `c`, or `usize::MAX`.
        partner: Vec<usize>,
    },
}

const NONE: usize = usize::MAX;

impl EdgeColouring {
    /// The dimension colouring of a hypercube.
    pub fn hypercube(cube: Hypercube) -> Self {
        EdgeColouring::Hypercube(cube)
    }

    /// Greedy colouring: edges in increasing `(a, b)` order each take the smallest colour free
    /// at both ends. At most `2Δ − 1` colours.
    ///
    /// # Complexity
    /// `O(M·Δ/64)` for `M` edges of maximum degree `Δ`.
    pub fn greedy(graph: &Graph) -> Self {
        let n = graph.node_count();
        let mut used: Vec<Vec<u64>> = vec![Vec::new(); n];
        let mut assignment: Vec<(usize, usize, usize)> = Vec::with_capacity(graph.edge_count());
        let mut colours = 0;
        for (a, b) in graph.edges() {
            let c = first_free(&used[a], &used[b]);
            for u in [a, b] {
                let word = c / 64;
                if used[u].len() <= word {
                    used[u].resize(word + 1, 0);
                }
                used[u][word] |= 1 << (c % 64);
            }
            colours = colours.max(c + 1);
            assignment.push((a, b, c));
        }
        Self::from_assignment(n, colours, assignment)
            .unwrap_or_else(|| unreachable!("greedy colourings are proper"))
    }

    /// A colouring given by `colour(a, b)` for every edge `a < b`, if it is proper; `None`
    /// otherwise.
    pub fn from_fn<F: Fn(usize, usize) -> usize>(graph: &Graph, colour: F) -> Option<Self> {
        let assignment: Vec<(usize, usize, usize)> =
            graph.edges().map(|(a, b)| (a, b, colour(a, b))).collect();
        let colours = assignment.iter().map(|e| e.2 + 1).max().unwrap_or(0);
        Self::from_assignment(graph.node_count(), colours, assignment)
    }

    fn from_assignment(
        nodes: usize,
        colours: usize,
        assignment: Vec<(usize, usize, usize)>,
    ) -> Option<Self> {
        // Drop colours no edge uses, keeping the order of the others.
        let mut dense = vec![NONE; colours];
        for &(_, _, c) in &assignment {
            dense[c] = 0;
        }
        let mut next = 0;
        for d in dense.iter_mut().filter(|d| **d == 0) {
            *d = next;
            next += 1;
        }
        let colours = next;
        let mut partner = vec![NONE; colours * nodes];
        for (a, b, c) in assignment {
            let c = dense[c];
            for (u, v) in [(a, b), (b, a)] {
                let slot = &mut partner[c * nodes + u];
                if *slot != NONE {
                    return None;
                }
                *slot = v;
            }
        }
        Some(EdgeColouring::Table {
            colours,
            nodes,
            partner,
        })
    }

    /// Number of colours `χ` (rounds in one sweep).
    pub fn colours(&self) -> usize {
        match self {
            EdgeColouring::Hypercube(c) => c.dimensions() as usize,
            EdgeColouring::Table { colours, .. } => *colours,
        }
    }

    /// `node`'s partner in `colour`, if it has one.
    #[inline]
    pub fn partner(&self, colour: usize, node: usize) -> Option<usize> {
        match self {
            EdgeColouring::Hypercube(c) => Some(c.partner(node, colour as u32)),
            EdgeColouring::Table { nodes, partner, .. } => {
                let p = partner[colour * nodes + node];
                (p != NONE).then_some(p)
            }
        }
    }

    /// Number of edges of `colour`.
    pub fn edges_of(&self, colour: usize) -> usize {
        match self {
            EdgeColouring::Hypercube(c) => c.nodes() / 2,
            EdgeColouring::Table { nodes, partner, .. } => {
                partner[colour * nodes..(colour + 1) * nodes]
                    .iter()
                    .filter(|&&p| p != NONE)
                    .count()
                    / 2
            }
        }
    }

    /// True when every edge of `topology` has exactly one colour, every coloured pair is an
    /// edge, and no node has two edges of one colour.
    pub fn is_proper_for<T: Topology>(&self, topology: &T) -> bool {
        let n = topology.node_count();
        let mut seen = 0;
        for c in 0..self.colours() {
            for u in 0..n {
                if let Some(v) = self.partner(c, u) {
                    if v >= n || self.partner(c, v) != Some(u) || !topology.contains_edge(u, v) {
                        return false;
                    }
                    seen += 1;
                }
            }
        }
        seen == 2 * topology.edge_count()
    }
}

fn first_free(a: &[u64], b: &[u64]) -> usize {
    let words = a.len().max(b.len());
    for w in 0..=words {
        let taken = a.get(w).copied().unwrap_or(0) | b.get(w).copied().unwrap_or(0);
        if taken != u64::MAX {
            return w * 64 + (!taken).trailing_zeros() as usize;
        }
    }
    words * 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::generators;

    #[test]
    fn greedy_colourings_are_proper() {
        for g in [
            generators::ring(9).unwrap(),
            generators::mesh(5, 7).unwrap(),
            generators::complete(70).unwrap(),
            generators::star(100).unwrap(),
            generators::random_connected(60, 0.1, 4).unwrap(),
        ] {
            let c = EdgeColouring::greedy(&g);
            assert!(c.is_proper_for(&g));
            assert!(c.colours() < 2 * g.max_degree().max(1));
            let total: usize = (0..c.colours()).map(|k| c.edges_of(k)).sum();
            assert_eq!(total, g.edge_count());
        }
    }

    #[test]
    fn improper_assignments_are_refused() {
        let g = generators::path(3).unwrap();
        assert!(EdgeColouring::from_fn(&g, |_, _| 0).is_none());
        assert!(EdgeColouring::from_fn(&g, |a, _| a % 2).is_some());
    }

    #[test]
    fn hypercube_colouring_is_by_dimension() {
        let cube = Hypercube::new(4).unwrap();
        let c = EdgeColouring::hypercube(cube);
        assert!(c.is_proper_for(&cube));
        assert_eq!(c.partner(2, 3), Some(7));
        assert_eq!(c.edges_of(1), 8);
    }
}
