//! The generalised dimension exchange (Xu & Lau 1992) on any graph.

use super::{NodeRule, NodeView, Scratch};
use crate::plan::LoadInfo;
use crate::topology::{EdgeColouring, Topology};

/// `gdem` — generalised dimension exchange (C.-Z. Xu & F. C. M. Lau 1992) on any graph.
///
/// The edges are properly coloured (see [`EdgeColouring`]; [`crate::topology::Network`]
/// computes the natural colouring of the classic networks). In round `r` the pairs joined by
/// an edge of colour `r mod χ` exchange: with equal capacities the heavier node sends
/// `⌊λ·(w_i − w_j)⌋` units, so that `w_i' ≈ (1 − λ)w_i + λw_j`. With capacities the node with
/// the higher level `w/c` sends `⌊2λ·e⌋`, where `e = (w_i c_j − w_j c_i)/(c_i + c_j)` is its
/// excess over the pair's proportional split (capped at its load); `λ = 1/2` then splits the
/// pair in proportion to capacities, the heavier node keeping the odd unit, exactly as `dem`
/// does with equal capacities.
///
/// `λ` must lie in `(0, 1)`; [`crate::topology::Network::gdem_lambda`] gives Xu & Lau's
/// optimum for hypercubes, rings, paths, meshes and tori and `1/2` otherwise.
///
/// # Equivalence
/// On a hypercube coloured by dimension, with `λ = 1/2` and equal capacities, the first `n`
/// rounds are exactly `dem` (a test checks every transfer).
///
/// # Stopping rule and bound
/// The run stops after `χ` consecutive rounds without a move (a whole sweep of colours: the
/// loads can no longer change). Every exchange that moves `0 < t < 2e` units strictly lowers
/// `Φ = Σ w²/c`; with equal capacities at most `χ·(Σ w_i² − ⌈W²/N⌉ + 1)` rounds are run.
///
/// # Complexity
/// `O(1)` per node and round; one sweep is `O(χ·N)`.
///
/// # Example
/// ```
/// use hetlb_core::rounds::{run_rounds, RoundOptions};
/// use hetlb_core::rules::diffusion::Gdem;
/// use hetlb_core::topology::{Network, TopologySpec, Topology};
/// let ring: Network = "ring:8".parse::<TopologySpec>().unwrap().build().unwrap();
/// let colouring = ring.edge_colouring();
/// let rule = Gdem::new(&colouring, ring.gdem_lambda()).unwrap();
/// let run = run_rounds(&rule, &ring, &[64, 0, 0, 0, 0, 0, 0, 0], None, &RoundOptions::default()).unwrap();
/// assert!(run.converged);
/// assert_eq!(run.plan.final_loads.iter().sum::<u64>(), 64);
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Gdem<'c> {
    colouring: &'c EdgeColouring,
    lambda: f64,
}

/// An exchange parameter outside `(0, 1)`.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("exchange parameter λ = {0} must lie strictly between 0 and 1")]
#[non_exhaustive]
pub struct LambdaError(pub f64);

impl<'c> Gdem<'c> {
    /// The rule for this colouring and exchange parameter.
    ///
    /// # Errors
    /// [`LambdaError`] unless `0 < λ < 1`.
    pub fn new(colouring: &'c EdgeColouring, lambda: f64) -> Result<Self, LambdaError> {
        if !(lambda > 0.0 && lambda < 1.0) {
            return Err(LambdaError(lambda));
        }
        Ok(Self { colouring, lambda })
    }

    /// The exchange parameter.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }
}

impl NodeRule for Gdem<'_> {
    fn name(&self) -> &'static str {
        "gdem"
    }

    fn decide<T: Topology>(
        &self,
        view: &NodeView<'_, T>,
        _scratch: &mut Scratch,
        out: &mut Vec<(usize, u64)>,
    ) {
        let colours = self.colouring.colours() as u64;
        if colours == 0 {
            return;
        }
        let i = view.node;
        let Some(j) = self.colouring.partner((view.round % colours) as usize, i) else {
            return;
        };
        if !view.heavier(i, j) {
            return;
        }
        let (w_i, w_j) = (view.loads[i] as f64, view.loads[j] as f64);
        let (c_i, c_j) = (view.capacities[i], view.capacities[j]);
        let excess = (w_i * c_j - w_j * c_i) / (c_i + c_j);
        let units = ((2.0 * self.lambda * excess).max(0.0) as u64).min(view.loads[i]); // a floor
        if units > 0 {
            out.push((j, units));
        }
    }

    fn fixed_point_window(&self) -> u64 {
        (self.colouring.colours() as u64).max(1)
    }

    /// Only the matched pairs of the round's colour exchange loads: two messages per edge.
    fn load_info<T: Topology>(&self, _topology: &T, round: u64) -> LoadInfo {
        let colours = self.colouring.colours() as u64;
        if colours == 0 {
            return LoadInfo::default();
        }
        let m = 2 * self.colouring.edges_of((round % colours) as usize) as u64;
        LoadInfo {
            messages: m,
            words: m,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange;
    use crate::rounds::{RoundOptions, run_rounds};
    use crate::rules::dimension_exchange::Dem;
    use crate::topology::Hypercube;

    #[test]
    fn lambda_must_be_inside_the_unit_interval() {
        let c = EdgeColouring::hypercube(Hypercube::new(2).unwrap());
        for bad in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert!(Gdem::new(&c, bad).is_err());
        }
        assert!(Gdem::new(&c, 0.75).is_ok());
    }

    #[test]
    fn one_sweep_on_a_hypercube_with_one_half_is_dem() {
        let mut x = 12345u64;
        for n in 0..7u32 {
            let cube = Hypercube::new(n).unwrap();
            let colouring = EdgeColouring::hypercube(cube);
            let rule = Gdem::new(&colouring, 0.5).unwrap();
            for _ in 0..20 {
                let loads: Vec<u64> = (0..1usize << n)
                    .map(|_| {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                        (x >> 33) % 100
                    })
                    .collect();
                let dem = exchange::plan(&Dem, &loads).unwrap();
                let options = RoundOptions {
                    max_rounds: u64::from(n),
                    ..RoundOptions::default()
                };
                let run = run_rounds(&rule, &cube, &loads, None, &options).unwrap();
                assert_eq!(run.plan.final_loads, dem.final_loads);
                assert_eq!(run.plan.load_info, dem.load_info);
                for (k, phase) in dem.phases.iter().enumerate() {
                    let mut want = phase.transfers.clone();
                    want.sort_by_key(|t| t.from);
                    let got = run.plan.phases.get(k).map_or(&[][..], |p| &p.transfers);
                    assert_eq!(got, want.as_slice(), "n = {n}, phase {k}");
                }
            }
        }
    }
}
