//! Moving the units: how long a hypercube plan takes to transmit (Rim, Jang & Kim 2003, §§5.2, 6).
//!
//! Time runs in steps of `T_comm`, the time to move one unit over one link. In each step every
//! link carries at most one unit in each direction, and a node can only send units it holds at
//! the start of the step (a unit received during a step can be forwarded in the next). Three
//! schedules move the same plan:
//!
//! * [`Schedule::Phased`] — dimension by dimension, as the algorithms are written: each phase
//!   lasts as long as its busiest link, so the time is `Σ_i Tmax_i` (§5.2).
//! * [`Schedule::Overlap`] — Rim's overlapping algorithm (§6.1): every node knows all its
//!   transfers in advance; in each round it sends, at once, the transfers of the longest prefix
//!   of dimensions `0..=i` that its current holdings cover, and a round lasts as long as its
//!   busiest link.
//! * [`Schedule::Pipeline`] — overlapping plus pipelining (§6.2): in every step a node sends
//!   one unit on each link that still has units to carry, as long as it holds units, and
//!   forwards a unit in the step after it arrives; when it holds fewer units than it has links
//!   waiting, it serves them in turn, starting after the link it served last (the paper's
//!   interleaving).
//!
//! **One unit per link, not per processor.** The paper's pseudo-code for §6.2, read
//! literally, lets a processor send *one* unit per step in all ("find `m` … `Current(P_k) =
//! Current(P_k) − 1`"). Only one unit per *link* per step gives the 7 T_comm of its own
//! Fig. 19 (DEM on 15, 1, 1, 1, 1, 1, 1, 1): there processor 000 must send 12 units, so one
//! unit per processor per step cannot finish before step 12. [`Schedule::Pipeline`] therefore
//! sends per link; [`Schedule::PipelinePerProcessor`] is the literal reading, kept to measure
//! the difference (12 T_comm on Figs. 18–19, no faster than the phased schedule there).
//!
//! All of them deliver exactly the plan's transfers (aggregated per directed link when a plan
//! uses a dimension twice), never send a unit a node does not hold, and never put two units on
//! one link direction in one step; [`Transmission::check`] verifies all three on any result.

mod overlap;
mod per_processor;
mod phased;
mod pipeline;
mod steps;
#[cfg(test)]
mod stepwise;

use crate::plan::Plan;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;
use thiserror::Error;

/// How the units of a plan are put on the links.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Schedule {
    /// Dimension by dimension; time `Σ_i Tmax_i`.
    Phased,
    /// Rim et al.'s overlapping (§6.1).
    Overlap,
    /// Overlapping and pipelining with interleaving (Rim, Jang & Kim 2003 §6.2), one unit per link per step.
    Pipeline,
    /// §6.2's pseudo-code read literally: one unit per *processor* per step (see the module
    /// documentation); not among [`Schedule::ALL`].
    PipelinePerProcessor,
}

impl Schedule {
    /// The three schedules, slowest first.
    pub const ALL: [Schedule; 3] = [Schedule::Phased, Schedule::Overlap, Schedule::Pipeline];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Schedule::Phased => "phased",
            Schedule::Overlap => "overlap",
            Schedule::Pipeline => "pipeline",
            Schedule::PipelinePerProcessor => "pipeline-per-processor",
        }
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A schedule name that is not one of the four.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error(
    "unknown schedule '{0}' (expected one of: phased, overlap, pipeline, pipeline-per-processor)"
)]
pub struct UnknownSchedule(pub String);

impl FromStr for Schedule {
    type Err = UnknownSchedule;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Schedule::ALL
            .into_iter()
            .chain([Schedule::PipelinePerProcessor])
            .find(|x| x.name() == s)
            .ok_or_else(|| UnknownSchedule(s.to_string()))
    }
}

/// A link busy without a break: `len` units sent from `from` to `to` in steps
/// `start..start + len` (step 0 is the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Burst {
    /// Sending node.
    pub from: usize,
    /// Receiving node.
    pub to: usize,
    /// First step.
    pub start: u64,
    /// Number of consecutive steps (one unit each).
    pub len: u64,
}

/// The transmission of a plan under one schedule.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Transmission {
    /// The schedule used.
    pub schedule: Schedule,
    /// Total transmission time, in steps of `T_comm`; saturates at `u64::MAX` (a plan that
    /// long cannot be transmitted step by step anyway: the schedules that simulate steps
    /// refuse it with [`TransmissionError::TooLarge`]).
    pub steps: u64,
    /// Unit-hops transmitted (the plan's task-hops, when no dimension is used twice);
    /// saturates at `u64::MAX`, as `steps` does (the plan's exact figure is
    /// [`crate::Metrics::task_hops`]).
    pub units: u64,
    /// Directed links that carry at least one unit.
    pub links_used: usize,
    /// `units ÷ (steps × links_used)`: how busy the used links are (1.0 when `steps` is 0).
    pub utilisation: f64,
    /// Rounds: phases for `phased`, overlapping rounds for `overlap`, steps for the pipelined
    /// schedules.
    pub rounds: u64,
    /// Every link's activity over time, as maximal busy runs, sorted by start, then link.
    pub bursts: Vec<Burst>,
}

/// A plan that cannot be transmitted on a hypercube, or a transmission that breaks the model.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum TransmissionError {
    /// The plan's node count is not a power of two.
    #[error("a plan of {0} nodes is not a hypercube plan")]
    NotHypercube(usize),
    /// A transfer between nodes that are not hypercube neighbours.
    #[error("transfer {from} -> {to} is not over a hypercube link")]
    NotALink {
        /// Sender.
        from: usize,
        /// Receiver.
        to: usize,
    },
    /// No node can send although units remain: the schedule is stuck.
    #[error("the {schedule} schedule stalled at step {step} with {pending} units still to send")]
    Stalled {
        /// The schedule.
        schedule: Schedule,
        /// The step.
        step: u64,
        /// Units not yet sent.
        pending: u128,
    },
    /// Too many unit-hops to simulate step by step.
    #[error(
        "{units} unit-hops are more than the {limit} the pipeline schedule simulates step by step"
    )]
    TooLarge {
        /// Unit-hops of the plan.
        units: u128,
        /// The limit.
        limit: u64,
    },
    /// A check failed: see the message.
    #[error("invalid transmission: {0}")]
    Invalid(String),
}

/// The pipeline schedule simulates every step; beyond this many unit-hops it refuses.
pub const MAX_PIPELINED_UNITS: u64 = 1 << 32;

/// Units each node must send over each of its links: `togo[u * n + k]` for node `u` and
/// dimension `k`.
pub(crate) struct Togo {
    pub(crate) n: u32,
    pub(crate) units: Vec<u64>,
}

impl Togo {
    fn of(plan: &Plan) -> Result<Self, TransmissionError> {
        let nodes = plan.nodes();
        if !nodes.is_power_of_two() {
            return Err(TransmissionError::NotHypercube(nodes));
        }
        let n = nodes.trailing_zeros();
        let mut units = vec![0u64; nodes * n as usize];
        for t in plan.transfers() {
            let x = t.from ^ t.to;
            if t.from >= nodes || t.to >= nodes || x.count_ones() != 1 {
                return Err(TransmissionError::NotALink {
                    from: t.from,
                    to: t.to,
                });
            }
            let slot = &mut units[t.from * n as usize + x.trailing_zeros() as usize];
            *slot = slot.saturating_add(t.units);
        }
        Ok(Self { n, units })
    }

    /// Unit-hops still to send (a u128: a plan can move more than `u64::MAX` in all).
    pub(crate) fn total(&self) -> u128 {
        self.units.iter().map(|&u| u128::from(u)).sum()
    }

    /// Per node, a bit mask of the dimensions it has units to send over.
    pub(crate) fn masks(&self) -> Vec<u64> {
        let n = self.n as usize;
        (0..1usize << n)
            .map(|k| {
                self.units[k * n..(k + 1) * n]
                    .iter()
                    .enumerate()
                    .filter(|&(_, &u)| u > 0)
                    .fold(0u64, |mask, (m, _)| mask | (1 << m))
            })
            .collect()
    }
}

/// Transmits `plan` with `schedule`.
///
/// # Errors
/// [`TransmissionError`] when the plan is not over hypercube links.
///
/// # Complexity
/// `phased`: `O(N log N + T)`; `overlap`: `O(R · N log N)` for `R ≤ log N + 1` rounds;
/// `pipeline` and `pipeline-per-processor`: `O(S · A log N)` for `S` steps and `A` nodes still
/// sending.
///
/// # Example
/// ```
/// use hetlb_core::transmission::{transmit, Schedule};
/// use hetlb_core::{balance, Algorithm, BalanceOptions};
/// // Rim et al., Figs. 18–19: one processor holds 15 units, the seven others 1 each.
/// let plan = balance(Algorithm::Dem, &[15, 1, 1, 1, 1, 1, 1, 1], &BalanceOptions::default()).unwrap();
/// assert_eq!(transmit(&plan, Schedule::Phased).unwrap().steps, 12);
/// assert_eq!(transmit(&plan, Schedule::Overlap).unwrap().steps, 10);
/// assert_eq!(transmit(&plan, Schedule::Pipeline).unwrap().steps, 7);
/// // The pseudo-code of §6.2 read literally: one unit per processor per step.
/// assert_eq!(transmit(&plan, Schedule::PipelinePerProcessor).unwrap().steps, 12);
/// ```
pub fn transmit(plan: &Plan, schedule: Schedule) -> Result<Transmission, TransmissionError> {
    let togo = Togo::of(plan)?;
    let stepwise = matches!(
        schedule,
        Schedule::Pipeline | Schedule::PipelinePerProcessor
    );
    if stepwise && togo.total() > u128::from(MAX_PIPELINED_UNITS) {
        return Err(TransmissionError::TooLarge {
            units: togo.total(),
            limit: MAX_PIPELINED_UNITS,
        });
    }
    let (steps, rounds, mut bursts) = match schedule {
        Schedule::Phased => phased::run(plan),
        Schedule::Overlap => overlap::run(&plan.initial, togo)?,
        Schedule::Pipeline => pipeline::run(&plan.initial, togo)?,
        Schedule::PipelinePerProcessor => per_processor::run(&plan.initial, togo)?,
    };
    // a link carries one burst at a time, so (start, link) is unique and an unstable sort
    // gives the one order
    bursts.sort_unstable_by_key(|b| (b.start, b.from, b.to));
    let units: u64 = bursts.iter().fold(0u64, |a, b| a.saturating_add(b.len));
    // the links used, as a mask of dimensions per sender
    let mut used = vec![0u64; plan.nodes()];
    for b in &bursts {
        used[b.from] |= (b.from ^ b.to) as u64;
    }
    let links_used: usize = used.iter().map(|m| m.count_ones() as usize).sum();
    let utilisation = if steps == 0 {
        1.0
    } else {
        units as f64 / (steps as f64 * links_used as f64)
    };
    Ok(Transmission {
        schedule,
        steps,
        units,
        links_used,
        utilisation,
        rounds,
        bursts,
    })
}

impl Transmission {
    /// Verifies the model against `plan`: every directed link delivers exactly the plan's units,
    /// no link direction carries two units in one step, and no node ever sends a unit it does
    /// not hold at the start of the step.
    ///
    /// # Errors
    /// [`TransmissionError::Invalid`] describing the first violation.
    ///
    /// # Complexity
    /// `O(U log U)` for `U` unit-hops.
    pub fn check(&self, plan: &Plan) -> Result<(), TransmissionError> {
        let invalid = |m: String| Err(TransmissionError::Invalid(m));
        let togo = Togo::of(plan)?;
        let n = togo.n as usize;
        let mut delivered = vec![0u64; togo.units.len()];
        let mut per_link: Vec<(usize, usize, u64, u64)> = Vec::new();
        for b in &self.bursts {
            let x = b.from ^ b.to;
            if x.count_ones() != 1 || b.from >= plan.nodes() || b.to >= plan.nodes() {
                return invalid(format!("burst {b:?} is not over a link"));
            }
            if b.start + b.len > self.steps {
                return invalid(format!("burst {b:?} ends after step {}", self.steps));
            }
            delivered[b.from * n + x.trailing_zeros() as usize] += b.len;
            per_link.push((b.from, b.to, b.start, b.len));
        }
        if delivered != togo.units {
            return invalid("the units delivered per link differ from the plan's".to_string());
        }
        per_link.sort_unstable();
        for w in per_link.windows(2) {
            if (w[0].0, w[0].1) == (w[1].0, w[1].1) && w[0].2 + w[0].3 > w[1].2 {
                return invalid(format!(
                    "link {} -> {} carries two units in one step",
                    w[0].0, w[0].1
                ));
            }
        }
        // Replay step by step: sends leave at the start of a step, arrivals land at its end.
        let mut events: Vec<(u64, usize, usize)> = Vec::new();
        for b in &self.bursts {
            events.extend((b.start..b.start + b.len).map(|s| (s, b.from, b.to)));
        }
        events.sort_unstable();
        let mut held = plan.initial.clone();
        for step in events.chunk_by(|a, b| a.0 == b.0) {
            for &(s, from, _) in step {
                if held[from] == 0 {
                    return invalid(format!(
                        "node {from} sends at step {s} a unit it does not hold"
                    ));
                }
                held[from] -= 1;
            }
            for &(_, _, to) in step {
                held[to] += 1;
            }
        }
        if held != plan.final_loads {
            return invalid("the loads after transmission differ from the plan's".to_string());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
