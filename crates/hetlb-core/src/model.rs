//! The model every rule works on: integer loads and positive node capacities.
//!
//! Loads are whole units of work (`u64`), as in all five source papers: Chau & Fu count
//! *tasks*, Rim et al. count *quanta*. A load vector is valid when its total fits in a `u64`;
//! since every rule conserves the total, every intermediate sum (a pair's `w_u + w_v`, a
//! subcube's total) then fits as well.
//!
//! Capacities are the relative speeds of the nodes: Chau & Fu's `p_u` (processors in cluster
//! `u` times their speed `s_u`, Chau & Fu 2003 §4). They must be positive and finite.

use thiserror::Error;

/// What is wrong with a load vector, a capacity list or a size.
///
/// Each message names the offending value so that a command-line front end can print it after
/// the name of the option it came from.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum ModelError {
    /// No loads at all.
    #[error("no loads given")]
    Empty,
    /// A hypercube needs `2^n` nodes.
    #[error("{count} loads given, but a hypercube needs a power of two (1, 2, 4, 8, ...)")]
    NotPowerOfTwo {
        /// How many loads were given.
        count: usize,
    },
    /// A hypercube dimension beyond what the machine can address.
    #[error("hypercube dimension {dimensions} is too large (at most {max})")]
    TooManyDimensions {
        /// The requested dimension.
        dimensions: u32,
        /// The largest supported dimension.
        max: u32,
    },
    /// The loads add up to more than `u64::MAX`.
    #[error("the loads add up to more than {max} units", max = u64::MAX)]
    TotalOverflow,
    /// A capacity that is zero, negative, NaN or infinite.
    #[error("capacity of node {node} is {value}: capacities must be positive and finite")]
    InvalidCapacity {
        /// Index of the node.
        node: usize,
        /// The value given.
        value: f64,
    },
    /// The capacity list does not have one entry per node.
    #[error("{capacities} capacities given for {nodes} nodes")]
    CapacityCount {
        /// Number of capacities given.
        capacities: usize,
        /// Number of nodes (loads).
        nodes: usize,
    },
    /// The capacities add up to infinity.
    #[error("the capacities add up to more than the largest finite number")]
    CapacityOverflow,
    /// A group size that is not a power of two dividing the number of nodes.
    #[error("group size {group} must be a power of two between 1 and the {nodes} nodes")]
    GroupSize {
        /// The group size given.
        group: usize,
        /// Number of nodes.
        nodes: usize,
    },
}

/// Sums a load vector without overflow.
///
/// # Errors
/// [`ModelError::TotalOverflow`] when the total does not fit in a `u64`.
///
/// # Example
/// ```
/// use hetlb_core::model::total_load;
/// assert_eq!(total_load(&[5, 0, 3]).unwrap(), 8);
/// assert!(total_load(&[u64::MAX, 1]).is_err());
/// ```
pub fn total_load(loads: &[u64]) -> Result<u64, ModelError> {
    loads
        .iter()
        .try_fold(0u64, |sum, &w| sum.checked_add(w))
        .ok_or(ModelError::TotalOverflow)
}

/// Node capacities: positive, finite relative speeds, one per node.
///
/// A node of capacity 2 should end with twice the load of a node of capacity 1. Capacities
/// are relative: multiplying all of them by the same factor changes nothing.
///
/// # Example
/// ```
/// use hetlb_core::model::Capacities;
/// let caps = Capacities::new(vec![64.0, 32.0]).unwrap();
/// assert_eq!(caps.len(), 2);
/// assert_eq!(caps.total(), 96.0);
/// assert!(Capacities::new(vec![1.0, 0.0]).is_err());
/// assert!(Capacities::uniform(4).is_uniform());
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(transparent)]
pub struct Capacities {
    values: Vec<f64>,
}

impl Capacities {
    /// Validates a capacity list.
    ///
    /// # Errors
    /// [`ModelError::Empty`] for an empty list, [`ModelError::InvalidCapacity`] for a value
    /// that is not positive and finite, [`ModelError::CapacityOverflow`] when the sum is not
    /// finite.
    pub fn new(values: Vec<f64>) -> Result<Self, ModelError> {
        if values.is_empty() {
            return Err(ModelError::Empty);
        }
        if let Some((node, &value)) = values
            .iter()
            .enumerate()
            .find(|(_, c)| !(c.is_finite() && **c > 0.0))
        {
            return Err(ModelError::InvalidCapacity { node, value });
        }
        if !values.iter().sum::<f64>().is_finite() {
            return Err(ModelError::CapacityOverflow);
        }
        Ok(Self { values })
    }

    /// `n` nodes of capacity 1: the homogeneous case.
    pub fn uniform(n: usize) -> Self {
        Self {
            values: vec![1.0; n],
        }
    }

    /// Validates the list and checks that it has one entry per node.
    ///
    /// # Errors
    /// As [`Capacities::new`], plus [`ModelError::CapacityCount`].
    pub fn for_nodes(values: Vec<f64>, nodes: usize) -> Result<Self, ModelError> {
        if values.len() != nodes {
            return Err(ModelError::CapacityCount {
                capacities: values.len(),
                nodes,
            });
        }
        Self::new(values)
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Always false: a valid capacity list is never empty.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Capacity of `node`.
    ///
    /// # Panics
    /// If `node` is out of range.
    pub fn get(&self, node: usize) -> f64 {
        self.values[node]
    }

    /// All capacities, in node order.
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }

    /// Sum of all capacities (finite by construction).
    pub fn total(&self) -> f64 {
        self.values.iter().sum()
    }

    /// True when all nodes have the same capacity.
    pub fn is_uniform(&self) -> bool {
        self.values.windows(2).all(|w| w[0] == w[1])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_every_kind_of_bad_capacity() {
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            let err = Capacities::new(vec![1.0, bad]).unwrap_err();
            assert!(
                matches!(err, ModelError::InvalidCapacity { node: 1, .. }),
                "{bad}"
            );
        }
        assert_eq!(Capacities::new(vec![]), Err(ModelError::Empty));
        assert_eq!(
            Capacities::new(vec![f64::MAX, f64::MAX]),
            Err(ModelError::CapacityOverflow)
        );
        assert_eq!(
            Capacities::for_nodes(vec![1.0], 2),
            Err(ModelError::CapacityCount {
                capacities: 1,
                nodes: 2
            })
        );
    }

    #[test]
    fn total_detects_overflow() {
        assert_eq!(total_load(&[]), Ok(0));
        assert_eq!(total_load(&[u64::MAX]), Ok(u64::MAX));
        assert_eq!(total_load(&[u64::MAX, 1]), Err(ModelError::TotalOverflow));
    }
}
