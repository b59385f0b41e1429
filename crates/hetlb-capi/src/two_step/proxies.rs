//! The plan without the items: proxies built only when something moves, or none at all when
//! the migration itself says which items go where (see the module above).
#![allow(unsafe_code)]

use super::{Positions, word};
use crate::error::CapiError;
use hetlb_peer::{Bytes, Deferred, Migration, PeerError, PlannedTransfer, Position, Records};
use std::ffi::c_int;

/// Bytes of one proxy: local index, owner rank, load (then the item's coordinates, if any).
pub(super) const PROXY: usize = 24;

/// A rank's items stood for by proxies, built only when the plan moves some: a call the
/// trigger skips, or whose rule moves nothing on any rank, costs its gather and no memory
/// proportional to the items.
pub(super) struct Proxies<'a> {
    me: usize,
    n: usize,
    loads: Option<&'a [u64]>,
    coords: Option<Positions<'a>>,
    /// Bytes of one proxy.
    pub(super) size: usize,
    pub(super) buffer: Vec<u8>,
    /// True once the proxies are built (the plan moves items).
    pub(super) built: bool,
    /// The plan read straight from a direct migration of unit items ([`direct_plan`]).
    pub(super) direct: Option<DirectPlan>,
}

/// This rank's part of a migration in which every item goes straight to its destination:
/// `(destination, local index)` of the exports, sorted, and the imports per rank.
#[derive(Debug, Default)]
pub(super) struct DirectPlan {
    pub(super) exports: Vec<(c_int, usize)>,
    pub(super) import_counts: Vec<usize>,
}

/// The plan of rank `me`, read from a migration's `transfers` without proxies when the
/// migration is direct — no rank both sends and receives, so no item is forwarded and every
/// transfer's receiver is its items' destination — and no rank sends more units than it has
/// items (`items_before`; unit items), `None` otherwise. Every rank answers alike: the
/// answer depends only on what every rank holds of the migration. The items leave from the
/// end of the array, the first transfer (in plan order) taking the last ones: the choice the
/// peer protocol makes for unit items without positions, so the two-step form moves the same
/// items as `hetlb_rebalance`.
///
/// # Complexity
/// `O(P + T + E log E)` for `P` ranks, `T` transfers and `E` exports; no memory per item kept.
fn direct_plan(
    transfers: &[PlannedTransfer],
    items_before: &[u64],
    me: usize,
) -> Option<DirectPlan> {
    let ranks = items_before.len();
    let (mut sends, mut sent) = (vec![false; ranks], vec![0u64; ranks]);
    for t in transfers {
        *sends.get_mut(t.from)? = true;
        sent[t.from] = sent[t.from].checked_add(t.units)?;
    }
    let forwards = transfers.iter().any(|t| t.to >= ranks || sends[t.to]);
    if forwards || sent.iter().zip(items_before).any(|(s, n)| s > n) {
        return None;
    }
    let mut plan = DirectPlan {
        exports: Vec::new(),
        import_counts: vec![0; ranks],
    };
    let mut kept = usize::try_from(*items_before.get(me)?).ok()?;
    for t in transfers {
        let units = usize::try_from(t.units).ok()?;
        if t.from == me {
            let first = kept.checked_sub(units)?;
            let to = c_int::try_from(t.to).ok()?;
            plan.exports.extend((first..kept).map(|i| (to, i)));
            kept = first;
        } else if t.to == me {
            plan.import_counts[t.from] += units;
        }
    }
    plan.exports.sort_unstable();
    Some(plan)
}

impl<'a> Proxies<'a> {
    pub(super) fn new(
        me: usize,
        n: usize,
        loads: Option<&'a [u64]>,
        coords: Option<Positions<'a>>,
    ) -> Self {
        let dim = coords.map_or(0, |c| c.1);
        Self {
            me,
            n,
            loads,
            coords,
            size: PROXY + 8 * dim,
            buffer: Vec::new(),
            built: false,
            direct: None,
        }
    }

    fn positions(&self) -> Option<(usize, usize)> {
        self.coords.map(|(_, dim)| (PROXY, dim))
    }

    /// The proxies, one after the other: local index, owner rank, load, then coordinates.
    fn build(&mut self) -> Result<(), CapiError> {
        let bytes = self
            .n
            .checked_mul(self.size)
            .filter(|&b| isize::try_from(b).is_ok())
            .ok_or_else(|| CapiError::Invalid(format!("n: {} items overflow", self.n)))?;
        let mut proxies: Vec<u8> = Vec::new();
        proxies
            .try_reserve(bytes)
            .map_err(|e| CapiError::NoMem(format!("proxies of {} items: {e}", self.n)))?;
        for i in 0..self.n {
            let load = self.loads.map_or(1, |l| l[i]);
            for w in [i as u64, self.me as u64, load] {
                proxies.extend_from_slice(&w.to_ne_bytes());
            }
            if let Some((c, dim)) = self.coords {
                for x in &c[i * dim..(i + 1) * dim] {
                    proxies.extend_from_slice(&x.to_ne_bytes());
                }
            }
        }
        self.buffer = proxies;
        self.built = true;
        Ok(())
    }

    fn records(&mut self) -> Result<Records<'_, Vec<u8>>, CapiError> {
        let internal = |e: hetlb_peer::RecordError| CapiError::Internal(e.to_string());
        let weighted = self.loads.is_some();
        let positions = self.positions();
        let records = Records::new(&mut self.buffer, self.size, 0).map_err(internal)?;
        let records = match positions {
            Some((offset, dim)) => records.with_positions(offset, dim).map_err(internal)?,
            None => records,
        };
        Ok(if weighted {
            records.with_loads(&proxy_load)
        } else {
            records
        })
    }
}

/// A proxy's load (its third word).
fn proxy_load(r: &[u8]) -> u64 {
    word(r, 2)
}

impl Deferred<Bytes> for Proxies<'_> {
    type Items<'b>
        = Records<'b, Vec<u8>>
    where
        Self: 'b;

    fn len(&self) -> usize {
        self.n
    }

    fn units(&self) -> Option<u64> {
        match self.loads {
            Some(l) => l.iter().try_fold(0u64, |s, &w| s.checked_add(w)),
            None => Some(self.n as u64),
        }
    }

    fn shape(&self) -> u64 {
        Records::<Vec<u8>>::shape_of(self.size, self.positions())
    }

    fn unit_items(&self) -> bool {
        self.loads.is_none_or(|l| l.iter().all(|&w| w == 1))
    }

    fn position(&self, i: usize) -> Option<Position> {
        let (c, dim) = self.coords?;
        let mut p = [0.0; 3];
        p[..dim].copy_from_slice(&c[i * dim..(i + 1) * dim]);
        Some(p)
    }

    fn items(&mut self) -> Result<Records<'_, Vec<u8>>, PeerError> {
        let to_peer = |e: CapiError| PeerError::Storage(e.to_string());
        self.build().map_err(to_peer)?;
        self.records().map_err(to_peer)
    }

    /// Unit items on every rank (gathered), without positions (every rank alike: the
    /// gather checked the shapes, which say where positions are) and a direct migration:
    /// the plan is read from it, every rank alike.
    fn take_over(&mut self, migration: &Migration) -> bool {
        if !migration.unit_items || self.coords.is_some() {
            return false;
        }
        debug_assert_eq!(migration.items_before.get(self.me), Some(&(self.n as u64)));
        self.direct = direct_plan(&migration.transfers, &migration.items_before, self.me);
        self.direct.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(transfers: &[(usize, usize, u64)]) -> Vec<PlannedTransfer> {
        transfers
            .iter()
            .enumerate()
            .map(|(id, &(from, to, units))| PlannedTransfer {
                id: id as u32,
                phase: 0,
                from,
                to,
                units,
            })
            .collect()
    }

    #[test]
    fn a_direct_plan_sends_the_last_items_the_first_transfer_the_very_last() {
        // rank 0 sends 2 to rank 3, then 3 to rank 1; rank 2 sends 1 to rank 1
        let t = plan(&[(0, 3, 2), (0, 1, 3), (2, 1, 1)]);
        let items = [10, 4, 1, 0];
        let zero = direct_plan(&t, &items, 0).unwrap();
        assert_eq!(zero.exports, [(1, 5), (1, 6), (1, 7), (3, 8), (3, 9)]);
        assert_eq!(zero.import_counts, [0, 0, 0, 0]);
        let one = direct_plan(&t, &items, 1).unwrap();
        assert!(one.exports.is_empty());
        assert_eq!(one.import_counts, [3, 0, 1, 0]);
        let two = direct_plan(&t, &items, 2).unwrap();
        assert_eq!(two.exports, [(1, 0)]);
    }

    #[test]
    fn forwarding_plans_and_sends_beyond_the_items_are_left_to_the_proxies() {
        // rank 1 receives from 0 and sends to 2: an item may be forwarded (every rank says so)
        let forwarding = plan(&[(0, 1, 2), (1, 2, 1)]);
        for me in 0..3 {
            assert!(direct_plan(&forwarding, &[5, 0, 0], me).is_none());
        }
        // rank 0 would send 6 of its 5 items: refused by every rank, not only by rank 0
        for me in 0..2 {
            assert!(direct_plan(&plan(&[(0, 1, 6)]), &[5, 0], me).is_none());
        }
        // a rank outside the group
        assert!(direct_plan(&plan(&[(0, 7, 1)]), &[5, 0], 0).is_none());
        assert!(direct_plan(&[], &[5, 5], 0).unwrap().exports.is_empty());
    }
}
