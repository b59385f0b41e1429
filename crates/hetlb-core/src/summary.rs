//! A plan summarised while it is computed: what a summary of the plan shows (its metrics,
//! the first and the last phases, the transfers of a small plan) gathered phase by phase, in
//! memory that grows with the nodes, not with the transfers.
//!
//! A diffusion on a large network can make hundreds of millions of transfers; a summary
//! needs none of them once they are counted. The round engine hands every phase to a
//! [`PlanBuilder`] ([`crate::rounds::run_rounds_with`]): a [`PlanRecorder`] keeps them all
//! (a [`Plan`]), a [`PlanSummary`] keeps
//!
//! * the loads before and after, and the load-information traffic, as a plan does;
//! * the totals the metrics need: transfers, units sent, `Σ Tmax`, phases;
//! * every phase's dimension, run-length encoded ([`PhaseDimensions`]);
//! * a [`PhaseRow`] of the first [`SummaryOptions::head_phases`] and of the last
//!   [`SummaryOptions::tail_phases`] phases, with the first
//!   [`SummaryOptions::shown_loads`] loads after each;
//! * the transfers themselves while there are at most [`SummaryOptions::keep_transfers`].
//!
//! [`crate::Metrics::of_summary`] gives the same metrics from it as [`crate::Metrics::of`]
//! from the plan.
//!
//! ```
//! use hetlb_core::rounds::{run_rounds, run_rounds_with, RoundOptions};
//! use hetlb_core::rules::diffusion::Dishet;
//! use hetlb_core::summary::{PlanSummary, SummaryOptions};
//! use hetlb_core::topology::generators;
//! use hetlb_core::Metrics;
//! let ring = generators::ring(64).unwrap();
//! let mut loads = vec![0u64; 64];
//! loads[0] = 1_000_000;
//! let o = RoundOptions::default();
//! let full = run_rounds(&Dishet, &ring, &loads, None, &o).unwrap();
//! let summary = PlanSummary::new(&loads, SummaryOptions::default().keep_transfers(10));
//! let run = run_rounds_with(&Dishet, &ring, &loads, None, &o, summary).unwrap();
//! assert_eq!(run.rounds, full.rounds);
//! assert_eq!(run.plan.final_loads, full.plan.final_loads);
//! assert_eq!(Metrics::of_summary(&run.plan, None), Metrics::of(&full.plan, None));
//! assert!(run.plan.kept_phases().is_none()); // more than 10 transfers: not kept
//! assert_eq!(run.plan, PlanSummary::of(&full.plan, SummaryOptions::default().keep_transfers(10)));
//! ```

use crate::plan::{LoadInfo, Phase, Plan, Transfer};
use serde::Serialize;
use std::collections::VecDeque;

/// What receives a plan as it is computed, phase by phase, and what it makes of it.
pub trait PlanBuilder {
    /// What [`PlanBuilder::finish`] returns: a [`Plan`], a [`PlanSummary`].
    type Output;

    /// One phase: its hypercube dimension (`None` for a round), its transfers (the builder
    /// may take them; the caller clears what is left) and the loads after it.
    fn phase(&mut self, dimension: Option<u32>, transfers: &mut Vec<Transfer>, loads_after: &[u64]);

    /// `count` rounds without a transfer (dimension `None`) before the next phase: the loads
    /// stay what they were after the last phase.
    fn quiet_phases(&mut self, count: u64);

    /// The result, given the loads after the last phase and the load-information traffic.
    fn finish(self, final_loads: Vec<u64>, load_info: LoadInfo) -> Self::Output;

    /// The result of a plan computed whole (a hypercube rule's).
    fn whole(self, plan: Plan) -> Self::Output;
}

/// Keeps every phase: a [`Plan`].
#[derive(Debug, Clone, Default)]
pub struct PlanRecorder {
    initial: Vec<u64>,
    phases: Vec<Phase>,
}

impl PlanRecorder {
    /// A recorder of a plan from `initial`.
    pub fn new(initial: &[u64]) -> Self {
        Self {
            initial: initial.to_vec(),
            phases: Vec::new(),
        }
    }
}

impl PlanBuilder for PlanRecorder {
    type Output = Plan;

    fn phase(&mut self, dimension: Option<u32>, transfers: &mut Vec<Transfer>, _: &[u64]) {
        self.phases.push(Phase {
            dimension,
            transfers: std::mem::take(transfers),
        });
    }

    fn quiet_phases(&mut self, count: u64) {
        for _ in 0..count {
            self.phases.push(Phase {
                dimension: None,
                transfers: Vec::new(),
            });
        }
    }

    fn finish(self, final_loads: Vec<u64>, load_info: LoadInfo) -> Plan {
        Plan {
            initial: self.initial,
            phases: self.phases,
            final_loads,
            load_info,
        }
    }

    fn whole(self, plan: Plan) -> Plan {
        plan
    }
}

/// What a [`PlanSummary`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SummaryOptions {
    /// The transfers are kept while the plan has at most this many (a small plan is written
    /// in full).
    pub keep_transfers: usize,
    /// Rows kept of the first phases.
    pub head_phases: usize,
    /// Rows kept of the last phases.
    pub tail_phases: usize,
    /// Loads kept in a row: the first ones of the vector.
    pub shown_loads: usize,
}

impl Default for SummaryOptions {
    /// 10,000 transfers, 40 phases at the head, 10 at the tail, 16 loads a row (what `hetlb
    /// balance` shows).
    fn default() -> Self {
        Self {
            keep_transfers: 10_000,
            head_phases: 40,
            tail_phases: 10,
            shown_loads: 16,
        }
    }
}

impl SummaryOptions {
    /// Sets [`SummaryOptions::keep_transfers`].
    #[must_use]
    pub fn keep_transfers(mut self, keep_transfers: usize) -> Self {
        self.keep_transfers = keep_transfers;
        self
    }

    /// Sets [`SummaryOptions::head_phases`] and [`SummaryOptions::tail_phases`].
    #[must_use]
    pub fn phases(mut self, head_phases: usize, tail_phases: usize) -> Self {
        (self.head_phases, self.tail_phases) = (head_phases, tail_phases);
        self
    }

    /// Sets [`SummaryOptions::shown_loads`].
    #[must_use]
    pub fn shown_loads(mut self, shown_loads: usize) -> Self {
        self.shown_loads = shown_loads;
        self
    }
}

/// One phase in a summary.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct PhaseRow {
    /// Its index in the plan, from 0.
    pub index: u64,
    /// Its hypercube dimension (`None` for a round).
    pub dimension: Option<u32>,
    /// Its transfers.
    pub transfers: u64,
    /// The units they carry.
    pub units: u128,
    /// The most units of one transfer (0 for none).
    pub tmax: u64,
    /// The first [`SummaryOptions::shown_loads`] loads after it.
    pub loads_after: Vec<u64>,
}

/// Every phase's dimension, in runs of equal ones: a diffusion's million rounds are one run.
/// Serialised as the sequence of dimensions (`[0, 1, 2]`, `[null, null, …]`).
///
/// # Example
/// ```
/// use hetlb_core::summary::PhaseDimensions;
/// let mut d = PhaseDimensions::default();
/// d.push(Some(0), 1);
/// d.push(None, 3);
/// d.push(None, 2);
/// assert_eq!(d.len(), 6);
/// assert_eq!(d.runs(), [(Some(0), 1), (None, 5)]);
/// assert_eq!(serde_json::to_string(&d).unwrap(), "[0,null,null,null,null,null]");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PhaseDimensions {
    runs: Vec<(Option<u32>, u64)>,
}

impl PhaseDimensions {
    /// The dimensions of `phases`.
    pub fn of(phases: &[Phase]) -> Self {
        let mut d = Self::default();
        for p in phases {
            d.push(p.dimension, 1);
        }
        d
    }

    /// Appends `count` phases of `dimension`.
    pub fn push(&mut self, dimension: Option<u32>, count: u64) {
        if count == 0 {
            return;
        }
        match self.runs.last_mut() {
            Some((d, n)) if *d == dimension => *n += count,
            _ => self.runs.push((dimension, count)),
        }
    }

    /// The runs: `(dimension, phases)`.
    pub fn runs(&self) -> &[(Option<u32>, u64)] {
        &self.runs
    }

    /// The phases.
    pub fn len(&self) -> u64 {
        self.runs.iter().map(|r| r.1).sum()
    }

    /// True for no phase.
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }
}

impl Serialize for PhaseDimensions {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let len = usize::try_from(self.len()).ok();
        let mut seq = serializer.serialize_seq(len)?;
        for &(d, n) in &self.runs {
            for _ in 0..n {
                seq.serialize_element(&d)?;
            }
        }
        seq.end()
    }
}

/// A plan without its transfers: see the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PlanSummary {
    /// Loads before balancing.
    pub initial: Vec<u64>,
    /// Loads after balancing.
    pub final_loads: Vec<u64>,
    /// Load-information messages used to compute the plan.
    pub load_info: LoadInfo,
    /// Phases.
    pub phases: u64,
    /// Every phase's dimension.
    pub dimensions: PhaseDimensions,
    /// Transfers of all phases.
    pub transfers: u64,
    /// Units sent over links, summed over the transfers.
    pub task_hops: u128,
    /// Per phase, the most units of one transfer, summed.
    pub sum_tmax: u128,
    /// The first [`SummaryOptions::head_phases`] phases.
    pub head: Vec<PhaseRow>,
    /// The last [`SummaryOptions::tail_phases`] phases.
    pub tail: VecDeque<PhaseRow>,
    /// The phases that have transfers, with their index, while the plan has at most
    /// [`SummaryOptions::keep_transfers`].
    kept: Option<Vec<(u64, Phase)>>,
    options: SummaryOptions,
    /// The first loads after the last phase.
    shown: Vec<u64>,
}

impl PlanSummary {
    /// An empty summary of a plan from `initial`.
    pub fn new(initial: &[u64], options: SummaryOptions) -> Self {
        Self {
            initial: initial.to_vec(),
            final_loads: initial.to_vec(),
            load_info: LoadInfo::default(),
            phases: 0,
            dimensions: PhaseDimensions::default(),
            transfers: 0,
            task_hops: 0,
            sum_tmax: 0,
            head: Vec::new(),
            tail: VecDeque::new(),
            kept: Some(Vec::new()),
            shown: initial[..initial.len().min(options.shown_loads)].to_vec(),
            options,
        }
    }

    /// The summary of `plan`, phase by phase as it would have been gathered.
    ///
    /// # Complexity
    /// `O(N + T)`.
    pub fn of(plan: &Plan, options: SummaryOptions) -> Self {
        let mut summary = Self::new(&plan.initial, options);
        let mut loads = plan.initial.clone();
        let mut transfers = Vec::new();
        for phase in &plan.phases {
            for t in &phase.transfers {
                loads[t.from] -= t.units;
                loads[t.to] += t.units;
            }
            transfers.extend_from_slice(&phase.transfers);
            summary.phase(phase.dimension, &mut transfers, &loads);
            transfers.clear();
        }
        summary.final_loads = plan.final_loads.clone();
        summary.load_info = plan.load_info;
        summary
    }

    /// Number of nodes.
    pub fn nodes(&self) -> usize {
        self.initial.len()
    }

    /// The phases that have transfers, with their index, when the plan has at most
    /// [`SummaryOptions::keep_transfers`] transfers.
    pub fn kept_phases(&self) -> Option<&[(u64, Phase)]> {
        self.kept.as_deref()
    }

    /// What the summary keeps.
    pub fn options(&self) -> SummaryOptions {
        self.options
    }

    /// Records the row of phase `self.phases`, then counts it.
    fn add_row(&mut self, row: PhaseRow) {
        if self.head.len() < self.options.head_phases {
            self.head.push(row.clone());
        }
        if self.options.tail_phases > 0 {
            if self.tail.len() == self.options.tail_phases {
                self.tail.pop_front();
            }
            self.tail.push_back(row);
        }
    }

    fn quiet_row(&self, index: u64) -> PhaseRow {
        PhaseRow {
            index,
            dimension: None,
            transfers: 0,
            units: 0,
            tmax: 0,
            loads_after: self.shown.clone(),
        }
    }
}

impl PlanBuilder for PlanSummary {
    type Output = PlanSummary;

    fn phase(
        &mut self,
        dimension: Option<u32>,
        transfers: &mut Vec<Transfer>,
        loads_after: &[u64],
    ) {
        let units: u128 = transfers.iter().map(|t| u128::from(t.units)).sum();
        let tmax = transfers.iter().map(|t| t.units).max().unwrap_or(0);
        let count = transfers.len() as u64;
        self.transfers = self.transfers.saturating_add(count);
        self.task_hops += units;
        self.sum_tmax += u128::from(tmax);
        let keep = self.transfers <= self.options.keep_transfers as u64;
        match &mut self.kept {
            Some(kept) if keep => {
                if !transfers.is_empty() {
                    let phase = Phase {
                        dimension,
                        transfers: transfers.clone(),
                    };
                    kept.push((self.phases, phase));
                }
            }
            _ => self.kept = None,
        }
        self.shown.clear();
        self.shown
            .extend_from_slice(&loads_after[..loads_after.len().min(self.options.shown_loads)]);
        let row = PhaseRow {
            index: self.phases,
            dimension,
            transfers: count,
            units,
            tmax,
            loads_after: self.shown.clone(),
        };
        self.add_row(row);
        self.dimensions.push(dimension, 1);
        self.phases += 1;
    }

    fn quiet_phases(&mut self, count: u64) {
        let (first, end) = (self.phases, self.phases.saturating_add(count));
        // Rows only for the phases that can be shown: the head's, and the tail's last ones.
        let head_end = end.min(self.options.head_phases as u64).max(first);
        let tail_start = end
            .saturating_sub(self.options.tail_phases as u64)
            .max(head_end);
        for index in (first..head_end).chain(tail_start..end) {
            let row = self.quiet_row(index);
            self.add_row(row);
        }
        // The tail's rows between head_end and tail_start were skipped: only their number
        // matters, and the tail holds the last ones.
        self.dimensions.push(None, count);
        self.phases = end;
    }

    fn finish(mut self, final_loads: Vec<u64>, load_info: LoadInfo) -> PlanSummary {
        self.final_loads = final_loads;
        self.load_info = load_info;
        self
    }

    fn whole(self, plan: Plan) -> PlanSummary {
        PlanSummary::of(&plan, self.options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(from: usize, to: usize, units: u64) -> Transfer {
        Transfer { from, to, units }
    }

    /// Quiet rounds in bulk give the rows, the dimensions and the totals that one quiet
    /// phase at a time gives, for every position against the head and the tail.
    #[test]
    fn quiet_phases_in_bulk_are_the_same_as_one_by_one() {
        let options = SummaryOptions {
            keep_transfers: 3,
            head_phases: 4,
            tail_phases: 3,
            shown_loads: 2,
        };
        for before in 0..7 {
            for quiet in 0..9 {
                let mut bulk = PlanSummary::new(&[5, 0, 0], options);
                let mut one = PlanSummary::new(&[5, 0, 0], options);
                for s in [&mut bulk, &mut one] {
                    for _ in 0..before {
                        s.phase(None, &mut vec![t(0, 1, 1), t(1, 0, 1)], &[5, 0, 0]);
                    }
                }
                bulk.quiet_phases(quiet);
                for _ in 0..quiet {
                    one.phase(None, &mut Vec::new(), &[5, 0, 0]);
                }
                for s in [&mut bulk, &mut one] {
                    s.phase(None, &mut vec![t(0, 2, 5)], &[0, 0, 5]);
                }
                assert_eq!(bulk, one, "{before} phases, {quiet} quiet");
                assert_eq!(bulk.phases, before + quiet + 1);
                assert_eq!(bulk.tail.back().unwrap().loads_after, [0, 0]);
                assert_eq!(bulk.kept_phases().is_some(), 2 * before < 3);
            }
        }
    }
}
