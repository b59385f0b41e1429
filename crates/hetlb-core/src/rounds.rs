//! The round engine: applies a [`NodeRule`] to every node in synchronous rounds.
//!
//! In a round every node decides on the loads at the start of the round, then all transfers
//! happen at once; a node sends out of what it held at the start of the round and never more
//! (the engine caps it), so the total is conserved and no load becomes negative whatever a
//! rule decides. A [`Plan`] records one phase per round (`dimension: None`), so the metrics,
//! the replay check and the plots work as for the hypercube algorithms.
//!
//! **Stopping rule.** A deterministic rule's decisions depend only on the loads (and, for
//! `gdem`, on the round modulo the number of colours `χ`): after
//! [`NodeRule::fixed_point_window`] consecutive rounds without a move the loads can never
//! change again, and the run stops. A randomised rule stops after a round without a move in
//! which no node could have sent in any outcome of its draws. Otherwise the run stops at
//! [`RoundOptions::max_rounds`] and reports that it did not converge.
//!
//! **Rounds to convergence** are counted up to the last round that moved a unit; the quiet
//! rounds that prove the fixed point are executed (and their load-information messages
//! counted) but not recorded as phases.
//!
//! For very large networks (the benchmarks) [`RoundEngine::step`] runs one round without
//! building a plan.
//!
//! **Kernels.** A rule may name a loop the engine runs itself instead of calling
//! [`NodeRule::decide_each`] node by node ([`NodeRule::kernel`]): `diffusion` with every
//! capacity 1 decides every edge from the two loads and the two degrees, which the engine
//! keeps in a vector of 32-bit integers, with the same units as the rule.
//!
//! **Threads.** A round is spread over rayon's threads by ranges of [`CHUNK_NODES`] nodes:
//! every node decides on the start-of-round vectors, which nobody writes during the round;
//! a sender debits itself and credits a receiver of its own range directly, one of another
//! range through that node's atomic counter (on a torus or a mesh most receivers are in the
//! sender's range, so few units go through the counters); a last pass adds the counters'
//! credits and computes the new levels. One thread decides all nodes as one range: every
//! credit goes straight to the next loads, and the counters and the last pass are left out
//! (but for the levels of a rule that reads them). Sums of integers do not depend on their
//! order, random draws are per (seed, round, node), and recorded transfers are concatenated
//! in node order, so a run is the same whatever the number of threads. Buffers are kept from round to round: a
//! round allocates nothing once every range has seen its largest decision.

use crate::model::{Capacities, ModelError, total_load};
use crate::plan::{LoadInfo, Plan, Transfer};
use crate::rules::diffusion::{Kernel, NodeRule, NodeView, Scratch, Sink, unit_edge};
use crate::summary::{PlanBuilder, PlanRecorder};
use crate::topology::Topology;
use rayon::prelude::*;
use serde::Serialize;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use thiserror::Error;

/// Nodes decided by one task of a round.
pub const CHUNK_NODES: usize = 1 << 12;

/// The default limit on rounds.
pub const DEFAULT_MAX_ROUNDS: u64 = 100_000;

/// Options of [`run_rounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RoundOptions {
    /// Stop after this many rounds even if not converged.
    pub max_rounds: u64,
    /// Seed of the random streams (one per node and round) of randomised rules.
    pub seed: u64,
    /// The most transfers the plan may record: a run that would record more stops with
    /// [`RoundError::TooManyTransfers`] instead of exhausting the memory (each transfer is 24
    /// bytes, and a long diffusion on a large network can make billions).
    pub max_transfers: u64,
}

impl Default for RoundOptions {
    fn default() -> Self {
        Self {
            max_rounds: DEFAULT_MAX_ROUNDS,
            seed: 0,
            max_transfers: u64::MAX,
        }
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "test", rename_all = "kebab-case")]
pub enum Convergence {
    /// `window` consecutive rounds moved nothing: a fixed point of a deterministic rule.
    FixedPoint {
        /// Quiet rounds needed (1, or `χ` for `gdem`).
        window: u64,
    },
    /// A round moved nothing and no node could send under any outcome of the draws.
    NoPossibleMove,
    /// A fixed schedule of phases (the hypercube algorithms: one phase per dimension).
    Schedule,
    /// The round limit was reached first.
    RoundLimit {
        /// The limit.
        max_rounds: u64,
    },
}

impl fmt::Display for Convergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Convergence::FixedPoint { window: 1 } => {
                f.write_str("fixed point: a round in which no node sends")
            }
            Convergence::FixedPoint { window } => write!(
                f,
                "fixed point: {window} consecutive rounds (one per colour) without a transfer"
            ),
            Convergence::NoPossibleMove => f.write_str(
                "fixed point: a round without a transfer in which no draw could make a node send",
            ),
            Convergence::Schedule => f.write_str("fixed schedule: one phase per dimension"),
            Convergence::RoundLimit { max_rounds } => {
                write!(
                    f,
                    "not converged: stopped at the limit of {max_rounds} rounds"
                )
            }
        }
    }
}

/// The result of a round-based (or phased) run: its plan (`P = Plan`), or what a
/// [`PlanBuilder`] made of it (a [`crate::summary::PlanSummary`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct RoundRun<P = Plan> {
    /// The plan: one phase per round up to the last round that moved a unit.
    pub plan: P,
    /// Rounds to convergence: up to and including the last round that moved a unit.
    pub rounds: u64,
    /// Rounds executed, including the quiet rounds that detected the fixed point.
    pub executed_rounds: u64,
    /// True when the run stopped at a fixed point (or ran its fixed schedule).
    pub converged: bool,
    /// The convergence test that ended the run.
    pub convergence: Convergence,
}

impl<P> RoundRun<P> {
    /// The same run borrowing its plan.
    pub fn borrowed(&self) -> RoundRun<&P> {
        RoundRun {
            plan: &self.plan,
            rounds: self.rounds,
            executed_rounds: self.executed_rounds,
            converged: self.converged,
            convergence: self.convergence,
        }
    }

    /// The same run with `f` of its plan.
    pub fn map<Q>(self, f: impl FnOnce(P) -> Q) -> RoundRun<Q> {
        RoundRun {
            plan: f(self.plan),
            rounds: self.rounds,
            executed_rounds: self.executed_rounds,
            converged: self.converged,
            convergence: self.convergence,
        }
    }
}

impl RoundRun {
    /// The run of a rule with a fixed schedule (a hypercube rule): every phase is a round.
    pub fn of_schedule(plan: Plan) -> Self {
        let rounds = plan.phases.len() as u64;
        RoundRun {
            plan,
            rounds,
            executed_rounds: rounds,
            converged: true,
            convergence: Convergence::Schedule,
        }
    }

    /// The load vector after every round (`rounds` vectors; the initial one is `plan.initial`).
    ///
    /// # Complexity
    /// `O(rounds·N + T)`.
    pub fn loads_after_each_round(&self) -> Vec<Vec<u64>> {
        let mut loads = self.plan.initial.clone();
        self.plan
            .phases
            .iter()
            .map(|phase| {
                for t in &phase.transfers {
                    loads[t.from] -= t.units;
                    loads[t.to] += t.units;
                }
                loads.clone()
            })
            .collect()
    }
}

/// Why a run could not start.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum RoundError {
    /// Bad loads or capacities.
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The plan would record more transfers than [`RoundOptions::max_transfers`].
    #[error("the plan passed {limit} transfers in round {round}, the most it may record")]
    TooManyTransfers {
        /// The limit.
        limit: u64,
        /// The round in which it was passed (from 1).
        round: u64,
    },
    /// The load vector does not have one entry per node.
    #[error("{loads} loads given for a network of {nodes} nodes")]
    NodeCount {
        /// Loads given.
        loads: usize,
        /// Nodes of the network.
        nodes: usize,
    },
}

/// Units and transfers of one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct RoundStep {
    /// Units sent in the round (task-hops).
    pub units: u64,
    /// Number of transfers (task messages).
    pub transfers: u64,
}

/// A rule applied to a network, one round at a time.
///
/// # Example
/// ```
/// use hetlb_core::rounds::RoundEngine;
/// use hetlb_core::rules::diffusion::Dishet;
/// use hetlb_core::topology::generators;
/// let torus = generators::torus(16, 16).unwrap();
/// let loads: Vec<u64> = (0..256).map(|i| (i % 7) * 10).collect();
/// let mut engine = RoundEngine::new(&Dishet, &torus, &loads, None, 0).unwrap();
/// let step = engine.step(None);
/// assert!(step.units > 0);
/// assert_eq!(engine.loads().iter().sum::<u64>(), loads.iter().sum::<u64>());
/// ```
#[derive(Debug)]
pub struct RoundEngine<'a, T, R> {
    rule: &'a R,
    topology: &'a T,
    capacities: Vec<f64>,
    /// Every capacity is 1: a level is the load.
    unit_capacities: bool,
    loads: Vec<u64>,
    next: Vec<u64>,
    /// `loads[i] / capacities[i]`, up to date with `loads` when `keep_levels` (else computed
    /// when needed).
    levels: Vec<f64>,
    /// The rule reads the levels ([`NodeRule::reads_levels`]): every round updates them.
    keep_levels: bool,
    /// Units received in the current round, by node.
    received: Vec<AtomicU64>,
    /// The degrees, when the rule has a [`Kernel`] that reads them (empty otherwise).
    degrees: Vec<u32>,
    /// The rule's kernel on this network, if any.
    kernel: Option<Kernel>,
    /// Nodes per range: [`CHUNK_NODES`] (fewer in the tests, to cross ranges on small
    /// networks).
    chunk_nodes: usize,
    /// One per range of `chunk_nodes` nodes.
    chunks: Vec<Chunk>,
    /// Ranges of `chunk_nodes` on one thread too (the tests), instead of one range of all
    /// nodes.
    small_ranges: bool,
    scratch: Scratch,
    round: u64,
    seed: u64,
}

/// What one range of nodes keeps from round to round.
#[derive(Debug, Default)]
struct Chunk {
    scratch: Scratch,
    transfers: Vec<Transfer>,
    step: RoundStep,
}

/// The start-of-round state every node decides on.
struct RoundInput<'e, T, R> {
    rule: &'e R,
    topology: &'e T,
    loads: &'e [u64],
    capacities: &'e [f64],
    /// Empty when the rule does not read them.
    levels: &'e [f64],
    /// Every capacity is 1.
    unit_capacities: bool,
    /// The degrees, with a kernel that reads them.
    degrees: &'e [u32],
    /// The rule's kernel, if any.
    kernel: Option<Kernel>,
    /// Ranges are decided on several threads at once.
    parallel: bool,
    received: &'e [AtomicU64],
    round: u64,
    seed: u64,
    record: bool,
}

impl<T: Topology, R: NodeRule> RoundInput<'_, T, R> {
    /// Decides nodes `first..first + next.len()`: `next` ends with their loads minus what
    /// they send plus what the nodes of the range send them; receivers outside the range are
    /// credited through their counters.
    fn decide_range(&self, first: usize, next: &mut [u64], chunk: &mut Chunk) {
        let Chunk {
            scratch,
            transfers,
            step,
        } = chunk;
        *step = RoundStep::default();
        transfers.clear();
        if self.kernel == Some(Kernel::UnitDiffusion) {
            // without a branch on whether to record in the loop over the edges
            (step.units, step.transfers) = if self.record {
                self.unit_diffusion_range::<true>(first, next, scratch, transfers)
            } else {
                self.unit_diffusion_range::<false>(first, next, scratch, transfers)
            };
            return;
        }
        let end = first + next.len();
        next.copy_from_slice(&self.loads[first..end]);
        for i in 0..next.len() {
            let node = first + i;
            let held = self.loads[node];
            // the engine sends at most what a node holds: a node without load sends nothing
            // whatever its rule decides
            if held == 0 {
                continue;
            }
            let decided = self.decide_node(first, next, node, held, scratch, transfers);
            step.units += decided.units;
            step.transfers += decided.transfers;
        }
    }
}

impl<T: Topology, R: NodeRule> RoundInput<'_, T, R> {
    /// The rule's decision at `node` (holding `held > 0`) of the range starting at `first`:
    /// its sends capped, credited and recorded, and its own entry of `next` debited. Returns
    /// the node's units and transfers.
    #[inline(always)]
    fn decide_node(
        &self,
        first: usize,
        next: &mut [u64],
        node: usize,
        held: u64,
        scratch: &mut Scratch,
        transfers: &mut Vec<Transfer>,
    ) -> RoundStep {
        let view = NodeView {
            topology: self.topology,
            loads: self.loads,
            capacities: self.capacities,
            levels: self.levels,
            node,
            round: self.round,
            seed: self.seed,
        };
        let mut sink = NodeSink {
            input: self,
            first,
            next: &mut *next,
            node,
            budget: held,
            step: RoundStep::default(),
            transfers,
        };
        self.rule
            .decide_each(&view, self.unit_capacities, scratch, &mut sink);
        let (budget, step) = (sink.budget, sink.step);
        // the node's own entry holds its load plus its credits so far: never below what it
        // sends
        next[node - first] -= held - budget;
        step
    }

    /// [`RoundInput::decide_range`] with [`Kernel::UnitDiffusion`]: every edge's units from
    /// the two loads and the engine's degrees, the rule's `decide_each` for a load of 2^32 or
    /// more. Returns the units and the transfers.
    fn unit_diffusion_range<const RECORD: bool>(
        &self,
        first: usize,
        next: &mut [u64],
        scratch: &mut Scratch,
        transfers: &mut Vec<Transfer>,
    ) -> (u64, u64) {
        let end = first + next.len();
        let start = &self.loads[first..end];
        next.copy_from_slice(start);
        // the range's totals in plain counters (not a `RoundStep` in memory, which the loop
        // would read back as one wide word after writing its halves)
        let (mut units_sum, mut transfers_sum) = (0u64, 0u64);
        let range = start.iter().zip(&self.degrees[first..end]);
        for (i, (&held, &deg_i)) in range.enumerate() {
            if held == 0 {
                continue;
            }
            let node = first + i;
            let Ok(w_i) = u32::try_from(held) else {
                let decided = self.decide_node(first, next, node, held, scratch, transfers);
                units_sum += decided.units;
                transfers_sum += decided.transfers;
                continue;
            };
            let deg_i = deg_i as usize;
            let mut budget = held;
            for j in self.topology.neighbors(node) {
                let units = unit_edge(w_i, self.loads[j], deg_i, self.degrees[j] as usize);
                // as `NodeSink::send`
                let units = if j == node { 0 } else { units.min(budget) };
                budget -= units;
                let sent = units != 0;
                self.credit(first, next, j, units);
                units_sum += units;
                transfers_sum += u64::from(sent);
                if RECORD && sent {
                    transfers.push(Transfer {
                        from: node,
                        to: j,
                        units,
                    });
                }
            }
            next[i] -= held - budget;
        }
        (units_sum, transfers_sum)
    }

    /// Credits `units` to node `to`: in `next` (the entries of the range from `first`) when
    /// it is in the range, else through its counter. A credit of 0 in the range is added
    /// without a branch; out of it, nothing is done.
    #[inline(always)]
    fn credit(&self, first: usize, next: &mut [u64], to: usize, units: u64) {
        if let Some(entry) = next.get_mut(to.wrapping_sub(first)) {
            *entry += units;
        } else if units != 0 {
            self.credit_counter(to, units);
        }
    }

    /// Credits `units` to node `to` through its counter.
    #[inline(always)]
    fn credit_counter(&self, to: usize, units: u64) {
        let counter = &self.received[to];
        if self.parallel {
            counter.fetch_add(units, Ordering::Relaxed);
        } else {
            // one thread decides every range in turn: nothing to race with, so no locked
            // instruction
            counter.store(counter.load(Ordering::Relaxed) + units, Ordering::Relaxed);
        }
    }
}

/// The engine's [`Sink`] for one node of a range: caps, credits and counts its transfers.
struct NodeSink<'s, 'e, T, R> {
    input: &'s RoundInput<'e, T, R>,
    /// The range's first node.
    first: usize,
    /// The range's entries of the next loads.
    next: &'s mut [u64],
    /// The sender.
    node: usize,
    /// What the sender has left to send.
    budget: u64,
    /// The sender's units and transfers so far.
    step: RoundStep,
    transfers: &'s mut Vec<Transfer>,
}

impl<T: Topology, R: NodeRule> Sink for NodeSink<'_, '_, T, R> {
    #[inline(always)]
    fn send(&mut self, to: usize, units: u64) {
        // at most what is left, nothing to itself; a pair of zero units changes nothing below
        // (an in-range credit of 0 is added without a branch)
        let units = if to == self.node {
            0
        } else {
            units.min(self.budget)
        };
        self.budget -= units;
        let sent = units != 0;
        debug_assert!(!sent || self.input.topology.contains_edge(self.node, to));
        self.input.credit(self.first, self.next, to, units);
        self.step.units += units;
        self.step.transfers += u64::from(sent);
        if self.input.record && sent {
            self.transfers.push(Transfer {
                from: self.node,
                to,
                units,
            });
        }
    }
}

/// `load / capacity`; with `unit` (every capacity is 1) the load itself, the same value
/// without the division.
#[inline(always)]
fn level(load: u64, capacity: f64, unit: bool) -> f64 {
    if unit {
        load as f64
    } else {
        load as f64 / capacity
    }
}

/// Adds the counters' credits to `next` (clearing the counters that hold one) and writes
/// the new levels.
fn credit_range(
    next: &mut [u64],
    levels: &mut [f64],
    received: &[AtomicU64],
    capacities: &[f64],
    unit: bool,
) {
    for (((n, x), r), &c) in next.iter_mut().zip(levels).zip(received).zip(capacities) {
        let credited = r.load(Ordering::Relaxed);
        if credited != 0 {
            *n += credited;
            r.store(0, Ordering::Relaxed);
        }
        *x = level(*n, c, unit);
    }
}

/// Adds the counters' credits to `next`, clearing the counters that hold one: what
/// [`credit_range`] does when nobody reads the levels.
fn credit_counters(next: &mut [u64], received: &[AtomicU64]) {
    for (n, r) in next.iter_mut().zip(received) {
        let credited = r.load(Ordering::Relaxed);
        if credited != 0 {
            *n += credited;
            r.store(0, Ordering::Relaxed);
        }
    }
}

/// `levels[i] = loads[i] / capacities[i]`.
fn compute_levels(levels: &mut [f64], loads: &[u64], capacities: &[f64], unit: bool) {
    for ((x, &w), &c) in levels.iter_mut().zip(loads).zip(capacities) {
        *x = level(w, c, unit);
    }
}

impl<'a, T: Topology, R: NodeRule> RoundEngine<'a, T, R> {
    /// An engine at round 0.
    ///
    /// # Errors
    /// [`RoundError`] for a load vector of the wrong length or whose total overflows, or
    /// capacities of the wrong length.
    pub fn new(
        rule: &'a R,
        topology: &'a T,
        loads: &[u64],
        capacities: Option<&Capacities>,
        seed: u64,
    ) -> Result<Self, RoundError> {
        let nodes = topology.node_count();
        if loads.len() != nodes {
            return Err(RoundError::NodeCount {
                loads: loads.len(),
                nodes,
            });
        }
        total_load(loads)?;
        let capacities = match capacities {
            Some(c) if c.len() != nodes => {
                return Err(ModelError::CapacityCount {
                    capacities: c.len(),
                    nodes,
                }
                .into());
            }
            Some(c) => c.as_slice().to_vec(),
            None => vec![1.0; nodes],
        };
        let unit_capacities = capacities.iter().all(|&c| c == 1.0);
        let keep_levels = rule.reads_levels(unit_capacities);
        // the kernel keeps the degrees in 32 bits: without it if one does not fit
        let degrees: Option<Vec<u32>> = match rule.kernel(unit_capacities) {
            Some(Kernel::UnitDiffusion) => (0..nodes)
                .map(|i| u32::try_from(topology.degree(i)).ok())
                .collect(),
            _ => None,
        };
        let kernel = degrees
            .is_some()
            .then(|| rule.kernel(unit_capacities))
            .flatten();
        let mut levels = vec![0.0; nodes];
        if keep_levels {
            compute_levels(&mut levels, loads, &capacities, unit_capacities);
        }
        Ok(Self {
            rule,
            topology,
            capacities,
            unit_capacities,
            loads: loads.to_vec(),
            next: loads.to_vec(),
            levels,
            keep_levels,
            received: (0..nodes).map(|_| AtomicU64::new(0)).collect(),
            degrees: degrees.unwrap_or_default(),
            kernel,
            chunk_nodes: CHUNK_NODES,
            chunks: (0..nodes.div_ceil(CHUNK_NODES))
                .map(|_| Chunk::default())
                .collect(),
            small_ranges: false,
            scratch: Scratch::default(),
            round: 0,
            seed,
        })
    }

    /// The same engine deciding ranges of `size` nodes.
    #[cfg(test)]
    fn with_chunk_nodes(mut self, size: usize) -> Self {
        self.chunk_nodes = size;
        self.small_ranges = true;
        self.chunks = (0..self.loads.len().div_ceil(size))
            .map(|_| Chunk::default())
            .collect();
        self
    }

    /// The current loads.
    pub fn loads(&self) -> &[u64] {
        &self.loads
    }

    /// Rounds run so far.
    pub fn round(&self) -> u64 {
        self.round
    }

    /// Runs one round; when `record` is given, appends the round's transfers to it (in
    /// sender order).
    ///
    /// Ranges of [`CHUNK_NODES`] nodes are spread over rayon's threads; the result does not
    /// depend on their number.
    ///
    /// # Complexity
    /// `O(N + Σ decide)`: `O(M)` for the first-order rules, `O(M log Δ)` for `dishet`;
    /// divided among the threads.
    pub fn step(&mut self, record: Option<&mut Vec<Transfer>>) -> RoundStep {
        let parallel = self.chunks.len() > 1 && rayon::current_num_threads() > 1;
        // one thread decides all nodes as one range: every credit goes straight to `next`,
        // and no counter is read or written (the tests keep their small ranges)
        let single = !parallel && !self.small_ranges;
        let size = if single {
            self.loads.len().max(1)
        } else {
            self.chunk_nodes
        };
        let input = RoundInput {
            rule: self.rule,
            topology: self.topology,
            loads: &self.loads,
            capacities: &self.capacities,
            levels: if self.keep_levels { &self.levels } else { &[] },
            unit_capacities: self.unit_capacities,
            degrees: &self.degrees,
            kernel: self.kernel,
            parallel,
            received: &self.received,
            round: self.round,
            seed: self.seed,
            record: record.is_some(),
        };
        let decide = |(i, (next, chunk)): (usize, (&mut [u64], &mut Chunk))| {
            input.decide_range(i * size, next, chunk)
        };
        // the decisions are all taken: the counters' credits, then the new levels (the
        // counters are read and cleared without a locked instruction, as nobody else touches
        // them in this pass; most are zero and are not written)
        let (unit, keep_levels) = (self.unit_capacities, self.keep_levels);
        let credit = |((next, levels), (received, capacities))| {
            if keep_levels {
                credit_range(next, levels, received, capacities, unit)
            } else {
                credit_counters(next, received)
            }
        };
        if parallel {
            self.next
                .par_chunks_mut(size)
                .zip(self.chunks.par_iter_mut())
                .enumerate()
                .for_each(decide);
            self.next
                .par_chunks_mut(size)
                .zip(self.levels.par_chunks_mut(size))
                .zip(
                    self.received
                        .par_chunks(size)
                        .zip(self.capacities.par_chunks(size)),
                )
                .for_each(credit);
        } else {
            self.next
                .chunks_mut(size)
                .zip(self.chunks.iter_mut())
                .enumerate()
                .for_each(decide);
            if single && !keep_levels {
                // no counter holds a credit (every receiver is in the range), and no level
                // is kept
            } else {
                self.next
                    .chunks_mut(size)
                    .zip(self.levels.chunks_mut(size))
                    .zip(self.received.chunks(size).zip(self.capacities.chunks(size)))
                    .for_each(credit);
            }
        }
        let mut step = RoundStep::default();
        let mut record = record;
        for chunk in &mut self.chunks {
            // taken: a range left out of the next round (one range on one thread) adds nothing
            let RoundStep { units, transfers } = std::mem::take(&mut chunk.step);
            step.units += units;
            step.transfers += transfers;
            if let Some(r) = record.as_deref_mut() {
                r.append(&mut chunk.transfers);
            }
        }
        std::mem::swap(&mut self.loads, &mut self.next);
        self.round += 1;
        step
    }

    /// True when some node could send in the next round under some outcome of the draws.
    pub fn could_any_send(&mut self) -> bool {
        if !self.keep_levels {
            // the rounds left them behind: `could_send` may read them
            let unit = self.unit_capacities;
            compute_levels(&mut self.levels, &self.loads, &self.capacities, unit);
        }
        (0..self.loads.len()).any(|node| {
            let view = NodeView {
                topology: self.topology,
                loads: &self.loads,
                capacities: &self.capacities,
                levels: &self.levels,
                node,
                round: self.round,
                seed: self.seed,
            };
            self.rule.could_send(&view, &mut self.scratch)
        })
    }
}

/// Runs `rule` on `topology` from `loads` until a fixed point or `options.max_rounds`.
///
/// # Arguments
/// * `rule` — the local rule ([`crate::rules::diffusion`]).
/// * `topology` — any [`Topology`].
/// * `loads` — one per node.
/// * `capacities` — one per node; `None` for equal nodes.
/// * `options` — round limit and seed.
///
/// # Returns
/// The plan (one phase per round up to the last move), the rounds, and the convergence test
/// that ended the run.
///
/// # Errors
/// [`RoundError`] for a load or capacity vector of the wrong length or an overflowing total.
///
/// # Complexity
/// `O(R·(N + M log Δ) + T)` for `R` rounds and `T` transfers.
///
/// # Example
/// ```
/// use hetlb_core::rounds::{run_rounds, RoundOptions, Convergence};
/// use hetlb_core::rules::diffusion::{FirstOrder, Rounding};
/// use hetlb_core::topology::generators;
/// let ring = generators::ring(6).unwrap();
/// let rule = FirstOrder::new(Rounding::Nearest);
/// let run = run_rounds(&rule, &ring, &[60, 0, 0, 0, 0, 0], None, &RoundOptions::default()).unwrap();
/// assert_eq!(run.convergence, Convergence::FixedPoint { window: 1 });
/// assert_eq!(run.plan.phases.len() as u64, run.rounds);
/// assert_eq!(run.plan.replay().unwrap(), run.plan.final_loads);
/// ```
pub fn run_rounds<T: Topology, R: NodeRule>(
    rule: &R,
    topology: &T,
    loads: &[u64],
    capacities: Option<&Capacities>,
    options: &RoundOptions,
) -> Result<RoundRun, RoundError> {
    let recorder = PlanRecorder::new(loads);
    run_rounds_with(rule, topology, loads, capacities, options, recorder)
}

/// [`run_rounds`], handing every phase to `builder` as it is decided: a [`PlanRecorder`]
/// keeps them (the plan), a [`crate::summary::PlanSummary`] only what a summary shows, in
/// `O(N)` memory however many transfers the run makes. The quiet rounds after the last move
/// are not phases; those between two moves are handed over as
/// [`PlanBuilder::quiet_phases`]. [`RoundOptions::max_transfers`] bounds the transfers
/// handed over.
///
/// # Errors
/// As [`run_rounds`].
///
/// # Complexity
/// `O(R·(N + M log Δ) + T)` time; the engine's `O(N + M)` memory and the builder's.
pub fn run_rounds_with<T: Topology, R: NodeRule, B: PlanBuilder>(
    rule: &R,
    topology: &T,
    loads: &[u64],
    capacities: Option<&Capacities>,
    options: &RoundOptions,
    mut builder: B,
) -> Result<RoundRun<B::Output>, RoundError> {
    let mut engine = RoundEngine::new(rule, topology, loads, capacities, options.seed)?;
    let window = rule.fixed_point_window();
    let mut load_info = LoadInfo::default();
    let mut rounds = 0u64;
    let mut quiet = 0u64;
    let mut recorded = 0u64;
    let mut transfers = Vec::new();
    let mut convergence = Convergence::RoundLimit {
        max_rounds: options.max_rounds,
    };
    while engine.round() < options.max_rounds {
        let round = engine.round();
        let info = rule.load_info(topology, round);
        load_info.messages += info.messages;
        load_info.words += info.words;
        transfers.clear();
        let step = engine.step(Some(&mut transfers));
        recorded = recorded.saturating_add(transfers.len() as u64);
        if recorded > options.max_transfers {
            return Err(RoundError::TooManyTransfers {
                limit: options.max_transfers,
                round: engine.round(),
            });
        }
        if step.units > 0 {
            // the quiet rounds since the last move are phases: a move follows them
            builder.quiet_phases(quiet);
            builder.phase(None, &mut transfers, engine.loads());
            rounds = engine.round();
            quiet = 0;
            continue;
        }
        quiet += 1;
        if rule.randomised() {
            if !engine.could_any_send() {
                convergence = Convergence::NoPossibleMove;
                break;
            }
        } else if quiet >= window {
            convergence = Convergence::FixedPoint { window };
            break;
        }
    }
    let converged = !matches!(convergence, Convergence::RoundLimit { .. });
    Ok(RoundRun {
        plan: builder.finish(engine.loads().to_vec(), load_info),
        rounds,
        executed_rounds: engine.round(),
        converged,
        convergence,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::diffusion::Dishet;
    use crate::topology::generators;

    #[test]
    fn bad_inputs_are_refused() {
        let g = generators::path(3).unwrap();
        let o = RoundOptions::default();
        assert_eq!(
            run_rounds(&Dishet, &g, &[1, 2], None, &o),
            Err(RoundError::NodeCount { loads: 2, nodes: 3 })
        );
        let caps = Capacities::uniform(2);
        assert!(matches!(
            run_rounds(&Dishet, &g, &[1, 2, 3], Some(&caps), &o),
            Err(RoundError::Model(ModelError::CapacityCount { .. }))
        ));
        assert!(matches!(
            run_rounds(&Dishet, &g, &[u64::MAX, 1, 0], None, &o),
            Err(RoundError::Model(ModelError::TotalOverflow))
        ));
    }

    #[test]
    fn a_round_limit_is_reported() {
        let g = generators::path(16).unwrap();
        let mut loads = vec![0u64; 16];
        loads[0] = 1000;
        let options = RoundOptions {
            max_rounds: 3,
            ..RoundOptions::default()
        };
        let run = run_rounds(&Dishet, &g, &loads, None, &options).unwrap();
        assert!(!run.converged);
        assert_eq!(run.convergence, Convergence::RoundLimit { max_rounds: 3 });
        assert_eq!(run.rounds, 3);
        let history = run.loads_after_each_round();
        assert_eq!(history.len(), 3);
        assert_eq!(history[2], run.plan.final_loads);
    }

    #[test]
    fn rounds_do_not_depend_on_the_number_of_threads() {
        use crate::rules::diffusion::{FirstOrder, Rounding};
        let g = generators::torus(90, 80).unwrap();
        let loads: Vec<u64> = (0..7200u64).map(|i| (i * 7919) % 301).collect();
        let run = |threads: usize, randomised: bool| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let options = RoundOptions {
                max_rounds: 6,
                seed: 3,
                ..RoundOptions::default()
            };
            pool.install(|| {
                if randomised {
                    let rule = FirstOrder::new(Rounding::Random);
                    run_rounds(&rule, &g, &loads, None, &options).unwrap()
                } else {
                    run_rounds(&Dishet, &g, &loads, None, &options).unwrap()
                }
            })
        };
        for randomised in [false, true] {
            let one = run(1, randomised);
            assert!(one.plan.phases.iter().all(|p| !p.transfers.is_empty()));
            assert_eq!(one, run(3, randomised));
        }
    }

    /// An engine stepped on one thread, then two, then one again (one range of all nodes,
    /// then ranges, then one range) gives the rounds of an engine on one thread.
    #[test]
    fn rounds_on_one_and_two_threads_alternately_are_the_same() {
        use crate::rules::diffusion::{FirstOrder, Rounding};
        let g = generators::torus(90, 80).unwrap();
        let loads: Vec<u64> = (0..7200u64).map(|i| (i * 7919) % 301).collect();
        let pools = [1, 2].map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        });
        let rule = FirstOrder::new(Rounding::Nearest);
        let mut alternating = RoundEngine::new(&rule, &g, &loads, None, 0).unwrap();
        let mut single = RoundEngine::new(&rule, &g, &loads, None, 0).unwrap();
        for round in 0..6 {
            let (mut got, mut expected) = (Vec::new(), Vec::new());
            let step = pools[round % 2].install(|| alternating.step(Some(&mut got)));
            let reference = pools[0].install(|| single.step(Some(&mut expected)));
            assert!(!expected.is_empty());
            assert_eq!((step, got), (reference, expected), "round {round}");
            assert_eq!(alternating.loads(), single.loads(), "round {round}");
        }
    }

    #[test]
    fn a_plan_larger_than_its_limit_stops_with_an_error() {
        let g = generators::path(64).unwrap();
        let mut loads = vec![0u64; 64];
        loads[0] = 1_000_000;
        let limited = RoundOptions {
            max_transfers: 100,
            ..RoundOptions::default()
        };
        match run_rounds(&Dishet, &g, &loads, None, &limited) {
            Err(RoundError::TooManyTransfers { limit: 100, round }) => assert!(round > 1),
            other => panic!("{other:?}"),
        }
        let run = run_rounds(&Dishet, &g, &loads, None, &RoundOptions::default()).unwrap();
        assert!(run.plan.transfers().count() > 100);
    }

    /// A round as the engine's contract states it, one node after the other: every node
    /// decides on the start-of-round loads and levels (`load / capacity`, divided even when
    /// the capacity is 1), sends at most what it holds, and all moves happen at the end.
    fn reference_step<T: Topology, R: NodeRule>(
        rule: &R,
        topology: &T,
        loads: &mut [u64],
        capacities: &[f64],
        round: u64,
        seed: u64,
    ) -> Vec<Transfer> {
        let start = loads.to_vec();
        let levels: Vec<f64> = start
            .iter()
            .zip(capacities)
            .map(|(&w, &c)| w as f64 / c)
            .collect();
        let mut scratch = Scratch::default();
        let mut transfers = Vec::new();
        for node in 0..start.len() {
            let view = NodeView {
                topology,
                loads: &start,
                capacities,
                levels: &levels,
                node,
                round,
                seed,
            };
            let mut out = Vec::new();
            rule.decide(&view, &mut scratch, &mut out);
            let mut budget = start[node];
            for (to, units) in out {
                let units = units.min(budget);
                if units > 0 && to != node {
                    budget -= units;
                    transfers.push(Transfer {
                        from: node,
                        to,
                        units,
                    });
                }
            }
        }
        for t in &transfers {
            loads[t.from] -= t.units;
            loads[t.to] += t.units;
        }
        transfers
    }

    /// Runs `rounds` rounds of the engine (ranges of `chunk` nodes, on `threads` threads; 0
    /// for the engine's own ranges: one of all nodes on one thread) and of the reference, and
    /// compares the transfers, the totals and the loads.
    fn same_as_reference<R: NodeRule>(
        rule: &R,
        graph: &crate::topology::Graph,
        loads: &[u64],
        capacities: Option<&Capacities>,
        chunk: usize,
        threads: usize,
    ) -> Result<(), String> {
        let caps: Vec<f64> =
            capacities.map_or_else(|| vec![1.0; loads.len()], |c| c.as_slice().to_vec());
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut engine = RoundEngine::new(rule, graph, loads, capacities, 5).unwrap();
            if chunk > 0 {
                engine = engine.with_chunk_nodes(chunk);
            }
            let mut expected_loads = loads.to_vec();
            for round in 0..4 {
                let expected = reference_step(rule, graph, &mut expected_loads, &caps, round, 5);
                let mut got = Vec::new();
                let step = engine.step(Some(&mut got));
                if got != expected {
                    return Err(format!("round {round}: transfers differ"));
                }
                let units: u64 = expected.iter().map(|t| t.units).sum();
                if (step.units, step.transfers) != (units, expected.len() as u64) {
                    return Err(format!("round {round}: totals differ"));
                }
                if engine.loads() != expected_loads.as_slice() {
                    return Err(format!("round {round}: loads differ"));
                }
            }
            Ok(())
        })
    }

    mod reference {
        use super::*;
        use crate::rules::diffusion::{DishetTight, FirstOrder, Gdem, Rounding};
        use crate::topology::{EdgeColouring, Graph};
        use proptest::prelude::*;

        fn graph() -> impl Strategy<Value = Graph> {
            prop_oneof![
                (3usize..12, 3usize..12).prop_map(|(r, c)| generators::torus(r, c).unwrap()),
                (2usize..60, 0.05f64..0.5, any::<u64>())
                    .prop_map(|(n, p, s)| generators::random_connected(n, p, s).unwrap()),
                (2usize..40).prop_map(|n| generators::star(n).unwrap()),
            ]
        }

        fn case() -> impl Strategy<Value = (Graph, Vec<u64>, Option<Vec<f64>>, usize, usize)> {
            graph().prop_flat_map(|g| {
                let n = g.node_count();
                let caps = prop_oneof![
                    Just(None),
                    prop::collection::vec(1u32..=4, n)
                        .prop_map(|c| Some(c.into_iter().map(f64::from).collect())),
                    prop::collection::vec(0.5f64..3.0, n).prop_map(Some),
                ];
                (
                    Just(g),
                    prop::collection::vec(prop_oneof![0u64..4, 0u64..300, Just(0)], n),
                    caps,
                    0usize..20,
                    1usize..=3,
                )
            })
        }

        /// Loads about 2^32 and 2^53 too, where `diffusion`'s integer path with unit
        /// capacities hands over to floating point; capacities none, all 1 given, or mixed.
        fn large_case() -> impl Strategy<Value = (Graph, Vec<u64>, Option<Vec<f64>>, usize, usize)>
        {
            graph().prop_flat_map(|g| {
                let n = g.node_count();
                let caps = prop_oneof![
                    Just(None),
                    Just(Some(vec![1.0; n])),
                    prop::collection::vec(prop_oneof![Just(1.0), Just(2.0), Just(0.5)], n)
                        .prop_map(Some),
                ];
                let load = prop_oneof![
                    0u64..300,
                    0u64..1 << 34,
                    (1u64 << 32) - 300..(1 << 32) + 300,
                    (1u64 << 53) - (1 << 12)..(1 << 53) + (1 << 12),
                ];
                (
                    Just(g),
                    prop::collection::vec(load, n),
                    caps,
                    0usize..20,
                    1usize..=3,
                )
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(120))]

            /// The first-order rules and DISHET match the reference with large loads: the
            /// integer path of `diffusion` with unit capacities, its floating-point fallback,
            /// and the general path give the same rounds.
            #[test]
            fn large_loads_match_the_reference((g, loads, caps, chunk, threads) in large_case()) {
                let caps = caps.map(|c| Capacities::new(c).unwrap());
                let caps = caps.as_ref();
                let check = |r: Result<(), String>| r.map_err(TestCaseError::fail);
                for rounding in [Rounding::Nearest, Rounding::Random, Rounding::Biased] {
                    let rule = FirstOrder::new(rounding);
                    check(same_as_reference(&rule, &g, &loads, caps, chunk, threads))?;
                }
                check(same_as_reference(&Dishet, &g, &loads, caps, chunk, threads))?;
            }

            /// The engine (ranges, direct credits inside a range, counters across ranges,
            /// levels computed with the credits) gives exactly the transfers and loads of the
            /// one-node-after-the-other reference, for every rule.
            #[test]
            fn every_rule_matches_the_reference((g, loads, caps, chunk, threads) in case()) {
                let caps = caps.map(|c| Capacities::new(c).unwrap());
                let caps = caps.as_ref();
                let check = |r: Result<(), String>| r.map_err(TestCaseError::fail);
                check(same_as_reference(&Dishet, &g, &loads, caps, chunk, threads))?;
                check(same_as_reference(&DishetTight, &g, &loads, caps, chunk, threads))?;
                for rounding in [Rounding::Nearest, Rounding::Random, Rounding::Biased] {
                    let rule = FirstOrder::new(rounding);
                    check(same_as_reference(&rule, &g, &loads, caps, chunk, threads))?;
                }
                let colouring = EdgeColouring::greedy(&g);
                let gdem = Gdem::new(&colouring, 0.5).unwrap();
                check(same_as_reference(&gdem, &g, &loads, caps, chunk, threads))?;
            }
        }
    }

    #[test]
    fn balanced_loads_take_no_round() {
        let g = generators::ring(5).unwrap();
        let run = run_rounds(&Dishet, &g, &[3; 5], None, &RoundOptions::default()).unwrap();
        assert!(run.converged);
        assert_eq!((run.rounds, run.executed_rounds), (0, 1));
        assert!(run.plan.phases.is_empty());
        assert_eq!(run.plan.load_info.messages, 10);
    }
}
