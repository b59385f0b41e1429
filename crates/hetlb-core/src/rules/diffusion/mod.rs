//! Diffusion on arbitrary networks: every node decides, in synchronous rounds, what to send to
//! its neighbours from its own and its neighbours' loads and capacities only.
//!
//! | rule | what a node sends | source |
//! |---|---|---|
//! | [`Dishet`] | its excess over the capacity-weighted average of itself and its deficient neighbours, poured into the lightest of them level by level, while that excess is above one unit | Neelakantan 2012, §4, eqs. 1–5, procedure Balance |
//! | [`DishetTight`] `dishet-tight` | the same from an excess of one unit (not the paper's threshold; every edge ends within one unit) | a variant of Neelakantan 2012 kept for comparison |
//! | [`FirstOrder`] `diffusion` | `α_ij·(w_i/c_i − w_j/c_j)` per edge, `α_ij = min(c_i,c_j)/(max(deg_i,deg_j)+1)`, rounded to the nearest unit when safe | Cybenko 1989; Elsässer, Monien & Preis 2002 |
//! | [`FirstOrder`] `random-biasing` | the same flows, each fractional part sent as one unit with probability equal to it | baseline of Neelakantan 2012 §5 (reading documented on [`Rounding::Random`]) |
//! | [`FirstOrder`] `dynamic-biasing` | the same flows rounded down, the pooled fractions sent to the neighbour with the largest capacity-weighted deficit | baseline of Neelakantan 2012 §5 (reading documented on [`Rounding::Biased`]) |
//! | [`Gdem`] | in round `r`, along its edge of colour `r mod χ`, `⌊2λ·e⌋` where `e` is its excess over the pair's proportional split | Xu & Lau 1992 |
//!
//! A rule is a [`NodeRule`]; the round engine ([`crate::rounds`]) applies it to every node on
//! the loads at the start of the round, moves the units, and stops at a fixed point.
//!
//! # Why every rule terminates
//! Write `x_i = w_i/c_i` for the level of node `i` and `Φ = Σ_i w_i²/c_i`.
//! * The first-order rules send `f ≥ 0` units from `i` to `j` only when `x_i > x_j`, and only
//!   when `f·(deg_i/c_i + deg_j/c_j) < 2(x_i − x_j)` (the *safety* condition). By
//!   Cauchy–Schwarz the change of `Φ` in a round is at most
//!   `Σ_edges f·[f·(deg_i/c_i + deg_j/c_j) − 2(x_i − x_j)]`, so `Φ` strictly decreases in every
//!   round that moves a unit, whatever the other edges do. The flow `⌊α_ij(x_i − x_j)⌋` is
//!   always safe; a rounded-up unit is sent only when it is. With equal capacities `Φ` is an
//!   integer, so there are at most `Σw_i² − ⌈W²/N⌉` rounds that move a unit.
//! * `gdem` exchanges over a matching; each exchange that moves `0 < t < 2e` units strictly
//!   decreases `Φ` (the same bound holds).
//! * `dishet` never lets a receiver end above its sender (Lemma 4 of Neelakantan 2012), so the vector of
//!   levels sorted in ascending order increases lexicographically in every round that moves a
//!   unit (the argument of Lemma 1 and Theorem 1, which carries over to synchronous rounds);
//!   there are finitely many load vectors, so it stops.
//!
//! # Example
//! ```
//! use hetlb_core::rounds::{run_rounds, RoundOptions};
//! use hetlb_core::rules::diffusion::Dishet;
//! use hetlb_core::topology::generators;
//! let ring = generators::ring(8).unwrap();
//! let run = run_rounds(&Dishet, &ring, &[80, 0, 0, 0, 0, 0, 0, 0], None, &RoundOptions::default()).unwrap();
//! assert!(run.converged);
//! assert_eq!(run.plan.final_loads.iter().sum::<u64>(), 80);
//! ```

mod dishet;
mod first_order;
mod gdem;

pub use dishet::{Dishet, DishetTight};
pub(crate) use first_order::unit_edge;
pub use first_order::{FirstOrder, Rounding};
pub use gdem::{Gdem, LambdaError};

use crate::plan::LoadInfo;
use crate::topology::Topology;

/// What a node sees in a round: its own and (by convention, only) its neighbours' entries of
/// the load, capacity and level vectors, as they were at the start of the round.
#[derive(Debug)]
pub struct NodeView<'a, T> {
    /// The network.
    pub topology: &'a T,
    /// Loads at the start of the round.
    pub loads: &'a [u64],
    /// Capacities (positive, finite).
    pub capacities: &'a [f64],
    /// `loads[i] / capacities[i]`.
    pub levels: &'a [f64],
    /// The deciding node.
    pub node: usize,
    /// The round, from 0.
    pub round: u64,
    /// The run's seed, for randomised rules.
    pub seed: u64,
}

impl<T> NodeView<'_, T> {
    /// True when node `a` is strictly more loaded per capacity than node `b`:
    /// `w_a/c_a > w_b/c_b`, compared on the levels. Rounding is monotonic, so equal ratios give
    /// equal levels and distinct ones keep their order whenever they differ by more than a
    /// unit in the last place (always, for integer capacities up to 100 and loads below 2^36).
    #[inline]
    pub fn heavier(&self, a: usize, b: usize) -> bool {
        self.levels[a] > self.levels[b]
    }
}

/// Reusable buffers for [`NodeRule::decide`], so that a round allocates nothing.
#[derive(Debug, Default, Clone)]
pub struct Scratch {
    pub(crate) pending: Vec<first_order::Pending>,
    pub(crate) deficient: Vec<dishet::Deficient>,
    pub(crate) order: Vec<(f64, usize)>,
    /// What [`NodeRule::decide`] pushes, for the default [`NodeRule::decide_each`].
    pub(crate) out: Vec<(usize, u64)>,
}

/// Where [`NodeRule::decide_each`] hands a node's transfers, one `(neighbour, units)` pair at
/// a time. Closures `FnMut(usize, u64)` are sinks; the round engine has its own, whose
/// `send` is inlined into the rule's loop over the neighbours.
pub trait Sink {
    /// Takes `units` for neighbour `to`.
    fn send(&mut self, to: usize, units: u64);
}

impl<F: FnMut(usize, u64)> Sink for F {
    #[inline(always)]
    fn send(&mut self, to: usize, units: u64) {
        self(to, units);
    }
}

/// A decision loop the round engine runs itself ([`NodeRule::kernel`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Kernel {
    /// `diffusion` ([`FirstOrder`] with [`Rounding::Nearest`]) with every capacity 1: the
    /// units of every edge from the two loads and degrees alone, in integers while the
    /// sender's load is below 2^32 (the rule's `decide_each` otherwise). The engine keeps the
    /// degrees in a vector of its own.
    UnitDiffusion,
}

/// A local balancing rule: what one node sends to its neighbours in one synchronous round.
///
/// Implementations push `(neighbour, units)` pairs into `out`; the engine sends them out of
/// the load the node held at the start of the round (never more), so conservation and
/// non-negativity hold by construction.
pub trait NodeRule: Sync {
    /// The command-line name.
    fn name(&self) -> &'static str;

    /// Decides the transfers of `view.node` in round `view.round`.
    fn decide<T: Topology>(
        &self,
        view: &NodeView<'_, T>,
        scratch: &mut Scratch,
        out: &mut Vec<(usize, u64)>,
    );

    /// Decides as [`NodeRule::decide`], handing every `(neighbour, units)` pair to `sink`
    /// instead of collecting them: the round engine calls this, so a rule can decide without
    /// a buffer. `unit_capacities` is true when every capacity of the network is 1 (each
    /// level is then its load), so a rule may decide in integers.
    ///
    /// The engine treats the pairs as it treats those `decide` pushes: it caps each at what
    /// the node has left of its start-of-round load and drops those of zero units (and any to
    /// the node itself). An implementation must give the same transfers as `decide` after
    /// that treatment; it may also hand pairs of zero units, or units beyond the node's load,
    /// where `decide` leaves them out or caps them.
    ///
    /// The default runs `decide` into a buffer of `scratch` and hands over its pairs.
    fn decide_each<T: Topology>(
        &self,
        view: &NodeView<'_, T>,
        unit_capacities: bool,
        scratch: &mut Scratch,
        sink: &mut impl Sink,
    ) {
        let _ = unit_capacities;
        let mut out = std::mem::take(&mut scratch.out);
        out.clear();
        self.decide(view, scratch, &mut out);
        for &(to, units) in &out {
            sink.send(to, units);
        }
        scratch.out = out;
    }

    /// A loop of the round engine's own that decides like [`NodeRule::decide_each`] on a
    /// network whose capacities are all 1 (`unit_capacities`) or not, if there is one; the
    /// engine then runs it instead of calling `decide_each` node by node. The default is
    /// `None`.
    fn kernel(&self, unit_capacities: bool) -> Option<Kernel> {
        let _ = unit_capacities;
        None
    }

    /// Whether [`NodeRule::decide_each`] reads [`NodeView::levels`] on a network whose
    /// capacities are all 1 (`unit_capacities`) or not. When it does not, the round engine
    /// does not keep the levels and hands it views whose `levels` slice is empty. The default
    /// is true.
    fn reads_levels(&self, unit_capacities: bool) -> bool {
        let _ = unit_capacities;
        true
    }

    /// True when the decisions depend on random draws.
    fn randomised(&self) -> bool {
        false
    }

    /// For randomised rules: true when some outcome of the draws makes the node send. The
    /// default runs [`NodeRule::decide`], which is exact for deterministic rules.
    fn could_send<T: Topology>(&self, view: &NodeView<'_, T>, scratch: &mut Scratch) -> bool {
        let mut out = Vec::new();
        self.decide(view, scratch, &mut out);
        out.iter().any(|&(_, u)| u > 0)
    }

    /// Number of consecutive rounds without a move after which a deterministic rule is at a
    /// fixed point (its decisions depend on the loads and on `round mod window` only).
    fn fixed_point_window(&self) -> u64 {
        1
    }

    /// Load-information messages of round `round`. By default every node sends its load to
    /// every neighbour: `2|E|` messages of one word.
    fn load_info<T: Topology>(&self, topology: &T, _round: u64) -> LoadInfo {
        let m = 2 * topology.edge_count() as u64;
        LoadInfo {
            messages: m,
            words: m,
        }
    }
}
