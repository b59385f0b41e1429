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
/// The low and the high 32 bits of the loads are summed apart, in chunks of `2^31` loads, where
/// neither sum can overflow; only the chunks' totals are checked. The loop has no branch and
/// the compiler vectorises it (AVX-512, AVX2 or SSE4.2, chosen at run time).
///
/// # Errors
/// [`ModelError::TotalOverflow`] when the total does not fit in a `u64`.
///
/// # Complexity
/// `O(N)`, one pass.
///
/// # Example
/// ```
/// use hetlb_core::model::total_load;
/// assert_eq!(total_load(&[5, 0, 3]).unwrap(), 8);
/// assert_eq!(total_load(&[u64::MAX - 1, 1]).unwrap(), u64::MAX);
/// assert!(total_load(&[u64::MAX, 1]).is_err());
/// ```
pub fn total_load(loads: &[u64]) -> Result<u64, ModelError> {
    // Each half of a load is below 2^32, so 2^31 of them sum below 2^63.
    loads
        .chunks(CHUNK)
        .try_fold(0u64, |total, chunk| add_halves(total, halves(chunk)))
}

/// Loads per chunk of [`total_load`] and [`load_summary`]: the sums of their halves fit.
const CHUNK: usize = 1 << 31;

/// `total` plus the loads whose halves sum to `(low, high)`, or an overflow.
fn add_halves(total: u64, (low, high): (u64, u64)) -> Result<u64, ModelError> {
    let high = u32::try_from(high).map_err(|_| ModelError::TotalOverflow)?;
    (u64::from(high) << 32)
        .checked_add(low)
        .and_then(|sum| sum.checked_add(total))
        .ok_or(ModelError::TotalOverflow)
}

multiversioned! {
    /// The sums of the low and of the high 32 bits of at most [`CHUNK`] loads.
    fn halves(chunk: &[u64]) -> (u64, u64) {
        chunk.iter().fold((0, 0), |(l, h), &w| {
            (l + (w & u64::from(u32::MAX)), h + (w >> 32))
        })
    }
}

/// The smallest load, the largest and their total, as [`load_summary`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadSummary {
    /// The smallest load (0 for no loads).
    pub min: u64,
    /// The largest load (0 for no loads).
    pub max: u64,
    /// The total, as [`total_load`].
    pub total: u64,
}

/// The smallest and the largest load and the total of `loads`: the imbalance a balancer
/// leaves (`max - min`) and its makespan bound, in one pass of vector instructions where the
/// processor has them (the extremes of 64-bit loads need AVX2 or AVX-512 to vectorise).
///
/// # Errors
/// [`ModelError::TotalOverflow`] when the total does not fit in a `u64`.
///
/// # Complexity
/// `O(N)`, one pass.
///
/// # Example
/// ```
/// use hetlb_core::model::{LoadSummary, load_summary};
/// let s = load_summary(&[4, 9, 2]).unwrap();
/// assert_eq!(s, LoadSummary { min: 2, max: 9, total: 15 });
/// assert_eq!(load_summary(&[]).unwrap(), LoadSummary { min: 0, max: 0, total: 0 });
/// ```
pub fn load_summary(loads: &[u64]) -> Result<LoadSummary, ModelError> {
    let mut summary = LoadSummary {
        min: u64::MAX,
        max: 0,
        total: 0,
    };
    for chunk in loads.chunks(CHUNK) {
        let (low, high, min, max) = halves_and_extremes(chunk);
        summary.total = add_halves(summary.total, (low, high))?;
        summary.min = summary.min.min(min);
        summary.max = summary.max.max(max);
    }
    summary.min = summary.min.min(summary.max);
    Ok(summary)
}

multiversioned! {
    /// As [`halves`], with the smallest and the largest load (`u64::MAX` and 0 for none), in one
    /// pass.
    fn halves_and_extremes(chunk: &[u64]) -> (u64, u64, u64, u64) {
        chunk
            .iter()
            .fold((0, 0, u64::MAX, 0), |(l, h, lo, hi), &w| {
                (
                    l + (w & u64::from(u32::MAX)),
                    h + (w >> 32),
                    lo.min(w),
                    hi.max(w),
                )
            })
    }
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
    use proptest::prelude::*;

    /// Loads near the top of the range as well as small ones, so that totals overflow, just fit,
    /// or carry between the two halves.
    fn any_load() -> impl Strategy<Value = u64> {
        prop_oneof![
            0u64..1000,
            any::<u64>(),
            (0u64..4).prop_map(|d| u64::MAX - d),
            (0u64..4).prop_map(|d| (1 << 32) - 1 + d),
        ]
    }

    proptest! {
        #[test]
        fn total_load_is_the_exact_sum_or_an_overflow(
            loads in prop::collection::vec(any_load(), 0..40),
        ) {
            let exact: u128 = loads.iter().map(|&w| u128::from(w)).sum();
            match total_load(&loads) {
                Ok(t) => prop_assert_eq!(u128::from(t), exact),
                Err(e) => {
                    prop_assert_eq!(e, ModelError::TotalOverflow);
                    prop_assert!(exact > u128::from(u64::MAX));
                }
            }
        }

        #[test]
        fn load_summary_gives_the_extremes_and_the_total(
            loads in prop::collection::vec(any_load(), 0..40),
        ) {
            if let Ok(total) = total_load(&loads) {
                let s = load_summary(&loads).unwrap();
                prop_assert_eq!(s.total, total);
                prop_assert_eq!(s.min, loads.iter().copied().min().unwrap_or(0));
                prop_assert_eq!(s.max, loads.iter().copied().max().unwrap_or(0));
            } else {
                prop_assert!(load_summary(&loads).is_err());
            }
        }
    }

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
