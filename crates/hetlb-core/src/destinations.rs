//! Per-item destinations: for each item a node holds, where a plan sends it.
//!
//! A plan says how many *units* go from node to node; an application that moves its own data
//! (Zoltan's export lists) needs, for each local item, the node it goes to. The units of a
//! node's sends are taken from its items **from the last one backwards**, each item whole:
//! with unit items every destination gets exactly its units; with weighted items an item
//! that does not fit what is left for a destination is passed over for a smaller one, and
//! when no item fits the last unit, the smallest that overshoots goes (at most one item over
//! per destination, as the runtime's transfers do).

use crate::plan::Transfer;
use crate::routing::{RoutingError, direct};

/// Where each of `item_loads` goes when its node sends `sends` (`(destination, units)`, in
/// order): `Some(destination)`, or `None` for an item that stays.
///
/// # Complexity
/// `O(n)` for unit items; `O(n · d)` in the worst case for `n` weighted items and `d`
/// destinations.
///
/// ```
/// use hetlb_core::destinations::assign;
/// // Five unit items; 2 units to node 3 and 1 to node 1: the last items go first.
/// let d = assign(&[1, 1, 1, 1, 1], &[(3, 2), (1, 1)]);
/// assert_eq!(d, vec![None, None, Some(1), Some(3), Some(3)]);
/// // Weighted: 5 units to node 2 from loads 4, 3, 2: the 2 and the 3 fit exactly.
/// assert_eq!(assign(&[4, 3, 2], &[(2, 5)]), vec![None, Some(2), Some(2)]);
/// ```
pub fn assign(item_loads: &[u64], sends: &[(usize, u64)]) -> Vec<Option<usize>> {
    let mut out = vec![None; item_loads.len()];
    for &(to, units) in sends {
        let mut left = units;
        // Whole items that fit, from the last backwards.
        for i in (0..item_loads.len()).rev() {
            if left == 0 {
                break;
            }
            if out[i].is_none() && item_loads[i] <= left && item_loads[i] > 0 {
                out[i] = Some(to);
                left -= item_loads[i];
            }
        }
        // Nothing fits the rest: the smallest item that overshoots (one item over).
        if left > 0 {
            let over = (0..item_loads.len())
                .rev()
                .filter(|&i| out[i].is_none() && item_loads[i] > 0)
                .min_by_key(|&i| item_loads[i]);
            if let Some(i) = over {
                out[i] = Some(to);
            }
        }
    }
    out
}

/// The destinations of node `node`'s items when the load moves straight from `start` to
/// `end` ([`direct`] routing): each item is sent at most once, to the node where the plan
/// ends it.
///
/// # Errors
/// [`RoutingError`] when the vectors differ in length or total.
///
/// # Complexity
/// `O(N)` for the routing, then as [`assign`].
///
/// ```
/// use hetlb_core::destinations::of_node;
/// // Node 0 holds 6 unit items of the 8 units; the plan ends with 2 on each node.
/// let d = of_node(&[6, 2, 0, 0], &[2, 2, 2, 2], 0, &[1; 6]).unwrap();
/// assert_eq!(d, vec![None, None, Some(3), Some(3), Some(2), Some(2)]);
/// ```
pub fn of_node(
    start: &[u64],
    end: &[u64],
    node: usize,
    item_loads: &[u64],
) -> Result<Vec<Option<usize>>, RoutingError> {
    let sends: Vec<(usize, u64)> = direct(start, end)?
        .into_iter()
        .filter(|t: &Transfer| t.from == node)
        .map(|t| (t.to, t.units))
        .collect();
    Ok(assign(item_loads, &sends))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Algorithm, BalanceOptions, balance};
    use proptest::prelude::*;

    proptest! {
        /// With unit items, applying every node's destinations at once ends exactly on the
        /// plan's final loads, and each item is sent at most once (by construction: one
        /// destination per item).
        #[test]
        fn unit_items_end_on_the_plan(
            loads in prop::collection::vec(0u64..40, 8),
            rule in 0usize..4,
        ) {
            let algorithm = [Algorithm::Cwa, Algorithm::Oem, Algorithm::Dem, Algorithm::Dishet][rule];
            let plan = balance(algorithm, &loads, &BalanceOptions::default()).unwrap();
            let mut after = vec![0u64; loads.len()];
            let mut sent = 0u64;
            for (node, &held) in loads.iter().enumerate() {
                let items = vec![1u64; held as usize];
                let d = of_node(&plan.initial, &plan.final_loads, node, &items).unwrap();
                prop_assert_eq!(d.len(), items.len());
                for dest in d {
                    match dest {
                        Some(to) => { after[to] += 1; sent += 1; prop_assert_ne!(to, node); }
                        None => after[node] += 1,
                    }
                }
            }
            prop_assert_eq!(&after, &plan.final_loads);
            prop_assert_eq!(u128::from(sent), crate::routing::minimum_units(&plan.initial, &plan.final_loads));
        }

        /// With weighted items, each destination gets its units or more, at most one item
        /// over (unless the items ran out), and only the items it was sent.
        #[test]
        fn weighted_items_overshoot_by_at_most_one_item(
            items in prop::collection::vec(1u64..20, 0..60),
            units in prop::collection::vec(1u64..50, 0..5),
        ) {
            let sends: Vec<(usize, u64)> = units.iter().enumerate().map(|(k, &u)| (k + 1, u)).collect();
            let d = assign(&items, &sends);
            prop_assert_eq!(d.len(), items.len());
            let all_sent = d.iter().all(Option::is_some);
            for &(to, asked) in &sends {
                let mine: Vec<u64> = items.iter().zip(&d).filter(|(_, x)| **x == Some(to)).map(|(w, _)| *w).collect();
                let got: u64 = mine.iter().sum();
                let largest = mine.iter().copied().max().unwrap_or(0);
                prop_assert!(got >= asked || all_sent, "{to}: {got} < {asked}");
                prop_assert!(got < asked + largest || got == asked, "{to}: {got} for {asked}: {mine:?}");
            }
        }
    }
}
