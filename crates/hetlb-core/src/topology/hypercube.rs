//! The implicit `n`-dimensional hypercube.

use super::Topology;
use crate::model::ModelError;

/// An `n`-dimensional binary hypercube of `N = 2^n` nodes.
///
/// Addressing follows all the hypercube papers: dimensions run `0..n`, least significant
/// first; node `u`'s partner in dimension `k` is `u ^ (1 << k)`; "bit `k` of `u`" is
/// `(u >> k) & 1`. In phase `k` of a dimension exchange the *low* node of a pair is the one
/// whose bit `k` is 0 (Rim, Jang & Kim 2003, §2: "processor k (bit i = 0) and k ⊕ 2^i").
///
/// # Example
/// ```
/// use hetlb_core::topology::Hypercube;
/// let cube = Hypercube::for_nodes(16).unwrap();
/// assert_eq!(cube.dimensions(), 4);
/// assert_eq!(cube.partner(6, 0), 7);
/// assert_eq!(Hypercube::low_of_pair(7, 0), 6);
/// assert!(Hypercube::for_nodes(12).is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hypercube {
    dimensions: u32,
}

impl Hypercube {
    /// The largest dimension accepted (2^40 nodes is far beyond any load vector in memory).
    pub const MAX_DIMENSIONS: u32 = 40;

    /// The `dimensions`-cube.
    ///
    /// # Errors
    /// [`ModelError::TooManyDimensions`] above [`Hypercube::MAX_DIMENSIONS`].
    pub fn new(dimensions: u32) -> Result<Self, ModelError> {
        if dimensions > Self::MAX_DIMENSIONS {
            return Err(ModelError::TooManyDimensions {
                dimensions,
                max: Self::MAX_DIMENSIONS,
            });
        }
        Ok(Self { dimensions })
    }

    /// The hypercube with exactly `nodes` nodes.
    ///
    /// # Errors
    /// [`ModelError::Empty`] for zero nodes, [`ModelError::NotPowerOfTwo`] otherwise when
    /// `nodes` is not a power of two.
    pub fn for_nodes(nodes: usize) -> Result<Self, ModelError> {
        if nodes == 0 {
            return Err(ModelError::Empty);
        }
        if !nodes.is_power_of_two() {
            return Err(ModelError::NotPowerOfTwo { count: nodes });
        }
        Self::new(nodes.trailing_zeros())
    }

    /// The dimension `n`.
    pub fn dimensions(&self) -> u32 {
        self.dimensions
    }

    /// `2^n`.
    pub fn nodes(&self) -> usize {
        1usize << self.dimensions
    }

    /// Node `u`'s neighbour in dimension `k`: `u ^ (1 << k)`.
    #[inline(always)]
    pub fn partner(&self, u: usize, k: u32) -> usize {
        u ^ (1usize << k)
    }

    /// The low node (bit `k` clear) of the dimension-`k` pair containing `u`.
    #[inline(always)]
    pub fn low_of_pair(u: usize, k: u32) -> usize {
        u & !(1usize << k)
    }

    /// The low nodes of all `2^(n-1)` pairs of dimension `k`, in increasing order.
    pub fn pairs(&self, k: u32) -> impl Iterator<Item = usize> + '_ {
        debug_assert!(k < self.dimensions);
        (0..self.nodes()).filter(move |u| (u >> k) & 1 == 0)
    }
}

impl Topology for Hypercube {
    fn node_count(&self) -> usize {
        self.nodes()
    }

    fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        (0..self.dimensions).map(move |k| node ^ (1usize << k))
    }

    fn degree(&self, _node: usize) -> usize {
        self.dimensions as usize
    }

    fn edge_count(&self) -> usize {
        (self.dimensions as usize) << self.dimensions.saturating_sub(1)
    }

    fn contains_edge(&self, a: usize, b: usize) -> bool {
        a < self.nodes() && b < self.nodes() && (a ^ b).count_ones() == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_errors() {
        assert_eq!(Hypercube::for_nodes(1).unwrap().dimensions(), 0);
        assert_eq!(Hypercube::for_nodes(0), Err(ModelError::Empty));
        assert_eq!(
            Hypercube::for_nodes(6),
            Err(ModelError::NotPowerOfTwo { count: 6 })
        );
        assert!(Hypercube::new(41).is_err());
        let cube = Hypercube::new(4).unwrap();
        assert_eq!(cube.edge_count(), 32);
        assert_eq!(cube.pairs(2).count(), 8);
        assert!(cube.pairs(2).all(|u| u & 4 == 0));
    }

    #[test]
    fn default_edge_count_agrees_with_closed_form() {
        struct Plain(Hypercube);
        impl Topology for Plain {
            fn node_count(&self) -> usize {
                self.0.node_count()
            }
            fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
                self.0.neighbors(node)
            }
        }
        for n in 0..6 {
            let cube = Hypercube::new(n).unwrap();
            assert_eq!(Plain(cube).edge_count(), cube.edge_count());
        }
    }
}
