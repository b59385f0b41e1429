//! The account of one balance that every face writes: `hetlb balance --format json`, the
//! Python package's `balance(...)` result, the C API.

use crate::algorithm::Algorithm;
use crate::metrics::Metrics;
use crate::plan::{Phase, Plan, Transfer};
use crate::rounds::RoundRun;
use crate::summary::{PhaseDimensions, PlanSummary};
use crate::topology::{Network, Topology};
use crate::transmission::Transmission;
use serde::Serialize;

/// What a [`BalanceReport`] writes out in full. Without them a report carries the summary
/// and the final loads; the per-round detail of a large plan can be gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ReportDetail {
    /// Every transfer of every phase (`phases`).
    pub phases: bool,
    /// The load vector after every round (`loads_per_round`), written one round at a time.
    pub loads_per_round: bool,
}

impl ReportDetail {
    /// The detail to write: every transfer when asked, or when there are at most
    /// `shown_transfers` of them; the loads per round only when asked.
    #[must_use]
    pub fn for_plan(plan: &Plan, rounds_asked: bool, shown_transfers: usize) -> Self {
        let transfers: usize = plan.phases.iter().map(|p| p.transfers.len()).sum();
        Self {
            phases: rounds_asked || transfers <= shown_transfers,
            loads_per_round: rounds_asked,
        }
    }
}

/// One balance, as the faces write it (JSON field names and order are a public interface).
///
/// # Example
/// ```
/// use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
/// use hetlb_core::report::{BalanceReport, ReportDetail};
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_core::Metrics;
/// let network = "hypercube:3".parse::<TopologySpec>().unwrap().build().unwrap();
/// let loads = [4, 7, 0, 9, 2, 2, 8, 1];
/// let oem: Algorithm = "oem".parse().unwrap();
/// let run = balance_on(&network, oem, &loads, &BalanceOptions::default()).unwrap();
/// let metrics = Metrics::of(&run.plan, None);
/// let detail = ReportDetail::for_plan(&run.plan, false, 10_000);
/// let report = BalanceReport::new(oem, "hypercube:3", &network, &run, &metrics, None, Vec::new(), detail);
/// let json = serde_json::to_value(&report).unwrap();
/// assert_eq!(json["final"].as_array().unwrap().len(), 8);
/// assert_eq!(json["total"], 33);
/// ```
#[derive(Debug, Serialize)]
#[non_exhaustive]
pub struct BalanceReport<'a> {
    /// The rule.
    pub algorithm: Algorithm,
    /// The network, as a spec.
    pub topology: &'a str,
    /// Nodes.
    pub nodes: usize,
    /// Links.
    pub edges: usize,
    /// Σ of the loads.
    pub total: u64,
    /// The capacities the rule weighed (`None`: equal nodes).
    pub capacities: Option<&'a [f64]>,
    /// The loads before.
    pub initial: &'a [u64],
    /// The loads after.
    #[serde(rename = "final")]
    pub final_loads: &'a [u64],
    /// Every transfer, phase by phase (with [`ReportDetail::phases`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<PhaseList<'a>>,
    /// The hypercube dimension of each phase (`None` for a diffusion round).
    pub phase_dimensions: PhaseDimensions,
    /// Rounds to convergence.
    pub rounds: u64,
    /// Rounds executed.
    pub executed_rounds: u64,
    /// True when the rule reached its fixed point or ran its schedule.
    pub converged: bool,
    /// Why the rule stopped.
    pub convergence: String,
    /// The load vector after every round (with [`ReportDetail::loads_per_round`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loads_per_round: Option<LoadsPerRound<'a>>,
    /// What was left out of this document (`phases`, `loads_per_round`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub omitted: Vec<&'static str>,
    /// The plan's metrics.
    pub metrics: &'a Metrics,
    /// One entry per transmission schedule asked for, with every link's activity.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub transmission: Vec<Transmission>,
}

impl<'a> BalanceReport<'a> {
    /// The report of `run` (the rule `algorithm` on `network`, named `topology`).
    #[allow(clippy::too_many_arguments)]
    #[must_use]
    pub fn new(
        algorithm: Algorithm,
        topology: &'a str,
        network: &Network,
        run: &'a RoundRun,
        metrics: &'a Metrics,
        capacities: Option<&'a [f64]>,
        transmission: Vec<Transmission>,
        detail: ReportDetail,
    ) -> Self {
        let plan = &run.plan;
        let mut report = Self::common(
            algorithm,
            topology,
            network,
            run.borrowed()
                .map(|_| (&plan.initial[..], &plan.final_loads[..])),
            metrics,
            capacities,
            transmission,
            detail,
        );
        report.phases = detail.phases.then_some(PhaseList::Plan(&plan.phases));
        report.phase_dimensions = PhaseDimensions::of(&plan.phases);
        report.loads_per_round = detail.loads_per_round.then_some(LoadsPerRound(plan));
        report
    }

    /// The report of `run` summarised while it ran ([`crate::balance_summarised`]): the
    /// same document as [`BalanceReport::new`] without `--rounds` (`phases` when the summary
    /// kept the transfers, no `loads_per_round`).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on, balance_summarised};
    /// use hetlb_core::report::{BalanceReport, ReportDetail};
    /// use hetlb_core::summary::SummaryOptions;
    /// use hetlb_core::topology::TopologySpec;
    /// use hetlb_core::Metrics;
    /// let ring = "ring:8".parse::<TopologySpec>().unwrap().build().unwrap();
    /// let (loads, o, a) = ([80, 0, 0, 0, 0, 0, 0, 0], BalanceOptions::default(), Algorithm::Dishet);
    /// let full = balance_on(&ring, a, &loads, &o).unwrap();
    /// let metrics = Metrics::of(&full.plan, None);
    /// let detail = ReportDetail::for_plan(&full.plan, false, 10_000);
    /// let old = BalanceReport::new(a, "ring:8", &ring, &full, &metrics, None, Vec::new(), detail);
    /// let s = balance_summarised(&ring, a, &loads, &o, 0, SummaryOptions::default()).unwrap();
    /// let new = BalanceReport::summarised(a, "ring:8", &ring, &s, &metrics, None, Vec::new());
    /// assert_eq!(serde_json::to_string(&old).unwrap(), serde_json::to_string(&new).unwrap());
    /// ```
    #[allow(clippy::too_many_arguments)]
    #[must_use]
    pub fn summarised(
        algorithm: Algorithm,
        topology: &'a str,
        network: &Network,
        run: &'a RoundRun<PlanSummary>,
        metrics: &'a Metrics,
        capacities: Option<&'a [f64]>,
        transmission: Vec<Transmission>,
    ) -> Self {
        let summary = &run.plan;
        let kept = summary.kept_phases();
        let detail = ReportDetail {
            phases: kept.is_some(),
            loads_per_round: false,
        };
        let mut report = Self::common(
            algorithm,
            topology,
            network,
            run.borrowed()
                .map(|_| (&summary.initial[..], &summary.final_loads[..])),
            metrics,
            capacities,
            transmission,
            detail,
        );
        report.phases = kept.map(|kept| PhaseList::Kept {
            phases: summary.phases,
            kept,
        });
        report.phase_dimensions = summary.dimensions.clone();
        report
    }

    /// Everything but the phases, their dimensions and the loads per round.
    #[allow(clippy::too_many_arguments)]
    fn common(
        algorithm: Algorithm,
        topology: &'a str,
        network: &Network,
        run: RoundRun<(&'a [u64], &'a [u64])>,
        metrics: &'a Metrics,
        capacities: Option<&'a [f64]>,
        transmission: Vec<Transmission>,
        detail: ReportDetail,
    ) -> Self {
        let (initial, final_loads) = run.plan;
        let mut omitted = Vec::new();
        if !detail.phases {
            omitted.push("phases");
        }
        if !detail.loads_per_round {
            omitted.push("loads_per_round");
        }
        Self {
            algorithm,
            topology,
            nodes: initial.len(),
            edges: network.edge_count(),
            total: initial.iter().sum(),
            capacities,
            initial,
            final_loads,
            phases: None,
            phase_dimensions: PhaseDimensions::default(),
            rounds: run.rounds,
            executed_rounds: run.executed_rounds,
            converged: run.converged,
            convergence: run.convergence.to_string(),
            loads_per_round: None,
            omitted,
            metrics,
            transmission,
        }
    }
}

/// Every transfer, phase by phase: a plan's phases, or the phases a summary kept (the others
/// have no transfer). Serialised as an array per phase of its transfers.
#[derive(Debug, Clone, Copy)]
pub enum PhaseList<'a> {
    /// A plan's phases.
    Plan(&'a [Phase]),
    /// `phases` phases, of which those in `kept` (with their index, in order) have
    /// transfers.
    Kept {
        /// Phases in all.
        phases: u64,
        /// The phases with transfers.
        kept: &'a [(u64, Phase)],
    },
}

impl Serialize for PhaseList<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        match *self {
            PhaseList::Plan(phases) => {
                let mut seq = serializer.serialize_seq(Some(phases.len()))?;
                for p in phases {
                    seq.serialize_element(&p.transfers)?;
                }
                seq.end()
            }
            PhaseList::Kept { phases, kept } => {
                let mut seq = serializer.serialize_seq(usize::try_from(phases).ok())?;
                let mut next = kept.iter().peekable();
                let none: &[Transfer] = &[];
                for i in 0..phases {
                    match next.next_if(|(k, _)| *k == i) {
                        Some((_, p)) => seq.serialize_element(&p.transfers)?,
                        None => seq.serialize_element(none)?,
                    }
                }
                seq.end()
            }
        }
    }
}

/// The load vector after every round, written out one round at a time (a diffusion on 2^16
/// nodes may run thousands of rounds: the whole table would not fit in memory).
#[derive(Debug)]
pub struct LoadsPerRound<'a>(pub &'a Plan);

impl Serialize for LoadsPerRound<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = serializer.serialize_seq(Some(self.0.phases.len()))?;
        let mut loads = self.0.initial.clone();
        for phase in &self.0.phases {
            for t in &phase.transfers {
                loads[t.from] -= t.units;
                loads[t.to] += t.units;
            }
            seq.serialize_element(&loads)?;
        }
        seq.end()
    }
}
