//! Where items live: the positions items may give, what a rank's positions sum to (its
//! [`Moments`]: count, centroid, spread), and the measure of compactness the report gives.
//!
//! A rank's items form a region; keeping each rank's region compact keeps a particle, mesh or
//! stencil code's halos small. With positions, a call gathers every rank's moments (one more
//! field of the gather, no message of its own), routes a direct plan nearest first
//! ([`hetlb_core::routing::direct_nearest`] between centroids), and a transfer to rank `q`
//! carries the items that lie furthest towards `q`'s centroid (`holdings.rs`): the boundary
//! of a region moves, its inside stays.
//!
//! **Spread** (the report's `spread_before`, `spread_after`): the RMS distance of each rank's
//! items from that rank's centroid, divided by the RMS distance of all items from the global
//! centroid — 1.0 for a random assignment, lower for compact regions. From the moments:
//! `Σ_r (q_r − |s_r|²/n_r) ÷ (Σ q_r − |Σ s_r|²/N)`, square-rooted, where `s_r` is rank `r`'s
//! sum of positions and `q_r` its sum of squared norms.

use serde::{Deserialize, Serialize};

/// A position of up to three coordinates (those not used are 0).
pub type Position = [f64; 3];

/// What a rank's item positions sum to.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub(crate) struct Moments {
    /// Items counted.
    pub(crate) n: u64,
    /// Σ positions.
    pub(crate) sum: Position,
    /// Σ squared norms.
    pub(crate) squares: f64,
}

impl Moments {
    /// Adds (`sign` 1) or removes (`sign` −1) an item at `p`.
    pub(crate) fn add(&mut self, p: &Position, sign: f64) {
        if sign > 0.0 {
            self.n += 1;
        } else {
            self.n = self.n.saturating_sub(1);
        }
        for (s, x) in self.sum.iter_mut().zip(p) {
            *s += sign * x;
        }
        self.squares += sign * norm2(p);
    }

    /// The centroid (`None` without items).
    pub(crate) fn centroid(&self) -> Option<Position> {
        (self.n > 0).then(|| self.sum.map(|s| s / self.n as f64))
    }

    /// Σ squared distances of the items from their centroid.
    fn within(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        (self.squares - norm2(&self.sum) / self.n as f64).max(0.0)
    }
}

/// The moments of the positions of `len` items, checked: every position finite. The first
/// item decides whether items give positions (`None`: they do not, and no other is looked
/// at, so that a call without positions costs nothing more).
///
/// # Errors
/// The first item whose position is not finite, or an item without one among items with one.
pub(crate) fn moments_of(
    len: usize,
    position: impl Fn(usize) -> Option<Position>,
) -> Result<Option<Moments>, String> {
    if len == 0 || position(0).is_none() {
        return Ok(None);
    }
    let mut m = Moments::default();
    for i in 0..len {
        let Some(p) = position(i) else {
            return Err(format!("item {i} has no position, item 0 has one"));
        };
        if let Some(k) = p.iter().position(|x| !x.is_finite()) {
            return Err(format!(
                "item {i}'s coordinate {k} ({}) is not finite",
                p[k]
            ));
        }
        m.add(&p, 1.0);
    }
    Ok(Some(m))
}

/// The spread of the ranks' regions (see the module documentation), from every rank's
/// moments; `None` when no rank gave positions, or every item sits at one point.
pub(crate) fn spread(moments: &[Option<Moments>]) -> Option<f64> {
    let mut all = Moments::default();
    let mut within = 0.0;
    let mut any = false;
    for m in moments.iter().flatten() {
        any = true;
        within += m.within();
        all.n += m.n;
        for (s, x) in all.sum.iter_mut().zip(&m.sum) {
            *s += x;
        }
        all.squares += m.squares;
    }
    let total = all.within();
    (any && total > 0.0).then(|| (within / total).sqrt())
}

/// How far `p` lies from `from` towards `to`: its projection on the direction, the larger the
/// closer to `to`'s side.
pub(crate) fn towards(p: &Position, from: &Position, to: &Position) -> f64 {
    (0..3).map(|k| (p[k] - from[k]) * (to[k] - from[k])).sum()
}

/// The distance between two centroids (a rank without items is far from every other).
pub(crate) fn distance(a: Option<Position>, b: Option<Position>) -> f64 {
    match (a, b) {
        (Some(a), Some(b)) => norm2(&[a[0] - b[0], a[1] - b[1], a[2] - b[2]]).sqrt(),
        _ => f64::MAX / 4.0,
    }
}

fn norm2(p: &Position) -> f64 {
    p.iter().map(|x| x * x).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_is_one_for_shuffled_and_low_for_compact_regions() {
        // 1,000 points on a line, two ranks.
        let p = |i: usize| [i as f64, 0.0, 0.0];
        let halves = [
            moments_of(500, |i| Some(p(i))).unwrap(),
            moments_of(500, |i| Some(p(500 + i))).unwrap(),
        ];
        let s = spread(&halves).unwrap();
        assert!((s - 0.5).abs() < 0.01, "{s}");
        let shuffled = [
            moments_of(500, |i| Some(p(2 * i))).unwrap(),
            moments_of(500, |i| Some(p(2 * i + 1))).unwrap(),
        ];
        assert!((spread(&shuffled).unwrap() - 1.0).abs() < 0.01);
        assert_eq!(spread(&[None, None]), None);
    }

    #[test]
    fn positions_are_checked_and_moments_follow_moves() {
        assert!(moments_of(2, |i| Some([i as f64, f64::NAN, 0.0])).is_err());
        assert!(moments_of(2, |i| (i == 0).then_some([0.0; 3])).is_err());
        assert_eq!(moments_of(2, |i| (i == 1).then_some([0.0; 3])), Ok(None));
        assert_eq!(moments_of(3, |_| None).unwrap(), None);
        let mut m = moments_of(2, |i| Some([i as f64, 1.0, 0.0]))
            .unwrap()
            .unwrap();
        assert_eq!(m.centroid(), Some([0.5, 1.0, 0.0]));
        m.add(&[1.0, 1.0, 0.0], -1.0);
        assert_eq!(m.centroid(), Some([0.0, 1.0, 0.0]));
        assert!(towards(&[2.0, 0.0, 0.0], &[0.0; 3], &[1.0, 0.0, 0.0]) > 0.0);
        assert_eq!(distance(Some([0.0; 3]), Some([3.0, 4.0, 0.0])), 5.0);
    }
}
