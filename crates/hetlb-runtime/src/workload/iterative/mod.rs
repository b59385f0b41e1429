//! An iterative application balanced by peer rebalancing: ranks compute their items every
//! iteration, wait for each other (bulk-synchronous), and every `every` iterations call
//! [`Balancer::rebalance`].
//!
//! Items are cells of synthetic CPU work. Without drift every cell costs one unit; with a
//! [`Drift`] a hot spot of costlier cells moves over the items as the iterations pass, so the
//! load moves between ranks and must be followed. A rank with slowdown factor `s` repeats its
//! kernel `s` times (the balancer never reads `s`: it measures speeds from the units each rank
//! reports and the seconds they took).
//!
//! Because iterations are bulk-synchronous, an iteration lasts as long as its slowest rank:
//! this is what imbalance costs, and what [`IterativeRun::iteration_seconds`] records.

pub mod dump;
pub mod replay;

use crate::slowdown::Slowdown;
use crate::workload::synthetic::Synthetic;
use hetlb_peer::{Balancer, BalancerConfig, Item, PeerError, Report, SyncPoint};
use hetlb_transport::{Group, Transport, TransportError, threads};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use thiserror::Error;

/// One cell of the iterative workload: its id, its current cost in units, and a payload that
/// travels with it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cell {
    /// Unique among all ranks.
    pub id: u64,
    /// Units of work this iteration.
    pub cost: u64,
    /// Application data moved with the cell.
    pub payload: Vec<u8>,
    /// Where the cell lies in the unit square (cube), when the run gives positions. Always
    /// serialised: the cells cross MPI in postcard, which has no field names, so a field left
    /// out would shift every one after it.
    #[serde(default)]
    pub at: Option<[f64; 3]>,
}

impl Item for Cell {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.cost
    }
    fn position(&self) -> Option<[f64; 3]> {
        self.at
    }
}

/// Where cell `id` of `cells` lies with positions in `dims` dimensions: the cells fill a
/// grid of the unit square (cube) in id order, so that the equal blocks of ids the ranks start
/// with are slabs.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::iterative::cell_position;
/// assert_eq!(cell_position(0, 4, 2), [0.25, 0.25, 0.0]);
/// assert_eq!(cell_position(3, 4, 2), [0.75, 0.75, 0.0]);
/// ```
pub fn cell_position(id: u64, cells: u64, dims: usize) -> [f64; 3] {
    let dims = dims.clamp(1, 3);
    let side = ((cells.max(1) as f64).powf(1.0 / dims as f64).ceil() as u64).max(1);
    let mut at = [0.0; 3];
    let mut rest = id;
    for x in at.iter_mut().take(dims) {
        *x = ((rest % side) as f64 + 0.5) / side as f64;
        rest /= side;
    }
    at
}

/// How the cost of the cells changes over the iterations.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Drift {
    /// A window of `width` (a fraction of all cells) costs `factor` units per cell instead of
    /// one; it moves by `sweeps` passes over the cells during the run.
    HotSpot {
        /// Cost of a hot cell in units (≥ 1).
        factor: u64,
        /// Width of the hot window as a fraction of the cells, in (0, 1].
        width: f64,
        /// Passes of the window over all the cells during the run.
        sweeps: f64,
    },
}

impl Drift {
    /// The cost of cell `id` of `cells` at `iteration` of `iterations`.
    ///
    /// # Example
    /// ```
    /// use hetlb_runtime::workload::iterative::Drift;
    /// let d = Drift::HotSpot { factor: 5, width: 0.25, sweeps: 1.0 };
    /// assert_eq!(d.cost(0, 100, 0, 10), 5);   // the window starts at cell 0
    /// assert_eq!(d.cost(50, 100, 0, 10), 1);
    /// assert_eq!(d.cost(50, 100, 5, 10), 5);  // half-way through the run it is at 50
    /// ```
    pub fn cost(&self, id: u64, cells: u64, iteration: u64, iterations: u64) -> u64 {
        match *self {
            Drift::HotSpot {
                factor,
                width,
                sweeps,
            } => {
                let n = cells.max(1) as f64;
                let start = (sweeps * iteration as f64 / iterations.max(1) as f64).fract() * n;
                let offset = (id as f64 - start).rem_euclid(n);
                if offset < width * n { factor.max(1) } else { 1 }
            }
        }
    }

    /// The cost of a cell at `at` (positions in `dims` dimensions) at `iteration` of
    /// `iterations`: the hot spot is a ball holding the fraction `width` of the unit square
    /// (cube), its centre crossing the domain along the first axis `sweeps` times during the
    /// run.
    ///
    /// # Example
    /// ```
    /// use hetlb_runtime::workload::iterative::Drift;
    /// let d = Drift::HotSpot { factor: 5, width: 0.1, sweeps: 1.0 };
    /// assert_eq!(d.cost_at(&[0.0, 0.5, 0.0], 2, 0, 10), 5);  // the centre starts at x = 0
    /// assert_eq!(d.cost_at(&[0.5, 0.5, 0.0], 2, 0, 10), 1);
    /// assert_eq!(d.cost_at(&[0.5, 0.5, 0.0], 2, 5, 10), 5);  // half-way it is at x = 0.5
    /// ```
    pub fn cost_at(&self, at: &[f64; 3], dims: usize, iteration: u64, iterations: u64) -> u64 {
        match *self {
            Drift::HotSpot {
                factor,
                width,
                sweeps,
            } => {
                let x = (sweeps * iteration as f64 / iterations.max(1) as f64).fract();
                let centre = [x, 0.5, 0.5];
                let d2: f64 = (0..dims.clamp(1, 3))
                    .map(|k| (at[k] - centre[k]).powi(2))
                    .sum();
                // The radius of a ball of volume `width`.
                let r = match dims {
                    1 => width / 2.0,
                    2 => (width / std::f64::consts::PI).sqrt(),
                    _ => (3.0 * width / (4.0 * std::f64::consts::PI)).cbrt(),
                };
                if d2 <= r * r { factor.max(1) } else { 1 }
            }
        }
    }

    /// Parses `hotspot[:FACTOR[:WIDTH[:SWEEPS]]]` (defaults 4, 0.125, 1).
    ///
    /// # Errors
    /// A message naming the part that is wrong.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut parts = spec.split(':');
        match parts.next() {
            Some("hotspot") => {}
            Some(other) => {
                return Err(format!(
                    "unknown drift '{other}' (expected hotspot[:FACTOR[:WIDTH[:SWEEPS]]])"
                ));
            }
            None => return Err("empty drift".into()),
        }
        let factor = match parts.next() {
            Some(f) => f
                .parse::<u64>()
                .ok()
                .filter(|&f| (1..=1_000_000).contains(&f))
                .ok_or_else(|| format!("factor '{f}' is not a whole number from 1 to 1000000"))?,
            None => 4,
        };
        let width = match parts.next() {
            Some(w) => w
                .parse::<f64>()
                .ok()
                .filter(|w| *w > 0.0 && *w <= 1.0)
                .ok_or_else(|| format!("width '{w}' is not a fraction in (0, 1]"))?,
            None => 0.125,
        };
        let sweeps = match parts.next() {
            Some(s) => s
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 1e6)
                .ok_or_else(|| format!("sweeps '{s}' is not a number from 0 to 1000000"))?,
            None => 1.0,
        };
        if parts.next().is_some() {
            return Err("too many fields (expected hotspot[:FACTOR[:WIDTH[:SWEEPS]]])".into());
        }
        Ok(Drift::HotSpot {
            factor,
            width,
            sweeps,
        })
    }
}

/// What a unit of work is.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub enum Work {
    /// `cost` rounds of a CPU kernel per unit; a rank's speed is measured in CPU time.
    #[default]
    Cpu,
    /// Sleeping `per_unit` per unit (times the rank's slowdown): the ranks' speeds, and so
    /// the predictions, do not depend on what else the machine runs, and ranks need no core
    /// of their own. A rank reports the time it meant to sleep as its busy time.
    Sleep {
        /// Seconds of sleep per unit of cost.
        per_unit: Duration,
    },
}

/// New slowdowns for every rank from an iteration on (a speed change in the middle of a
/// run, counted in iterations so that every balancer meets it at the same point).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpeedChange {
    /// The first iteration at the new speeds.
    pub at_iteration: u64,
    /// One factor per rank (≥ 1).
    pub slowdowns: Vec<u32>,
}

/// The settings of an iterative run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct IterativeConfig {
    /// Cells in all (spread over the ranks in equal blocks at the start).
    pub cells: u64,
    /// Iterations.
    pub iterations: u64,
    /// Rebalance every this many iterations (after iterations `every`, `2·every`, …).
    pub every: u64,
    /// Kernel rounds per unit of cost.
    pub cost: u64,
    /// Bytes of payload per cell.
    pub payload: usize,
    /// One slowdown per rank.
    pub slowdowns: Vec<Slowdown>,
    /// How the cells' costs change (`None`: one unit each, always).
    pub drift: Option<Drift>,
    /// What a unit of work is (default: CPU rounds).
    pub work: Work,
    /// A change of the ranks' slowdowns during the run.
    pub speed_change: Option<SpeedChange>,
    /// Cells with positions in this many dimensions (1 to 3; [`cell_position`]), the drift's
    /// hot spot then a ball moving in space; `None`: cells without positions.
    pub positions: Option<usize>,
}

/// Why an iterative run failed.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum IterativeError {
    /// Inconsistent settings.
    #[error("{0}")]
    Config(String),
    /// A rebalance failed.
    #[error("rebalance at iteration {iteration} failed on rank {rank}: {error}")]
    Rebalance {
        /// The iteration after which it was called.
        iteration: u64,
        /// The rank that reports it.
        rank: usize,
        /// The error.
        error: PeerError,
    },
    /// A rank's thread ended abnormally.
    #[error("rank {0} panicked")]
    Panicked(usize),
    /// The barrier between iterations found a rank that failed (named in the error).
    #[error("rank {rank} stopped at iteration {iteration}: {error}")]
    Stopped {
        /// The rank that reports it.
        rank: usize,
        /// Iterations done.
        iteration: u64,
        /// What its barrier found.
        error: PeerError,
    },
    /// The ranks' logs could not be collected.
    #[error("collecting the ranks' logs: {0}")]
    Collect(String),
    /// The transport failed.
    #[error("transport: {0}")]
    Transport(#[from] TransportError),
    /// A balancer's run failed (in a comparison of several).
    #[error("{balancer}")]
    Run {
        /// The rule, or `none`.
        balancer: String,
        /// Why its run failed.
        #[source]
        source: Box<IterativeError>,
    },
    /// A run ended with items lost or held twice.
    #[error(
        "{balancer}: the ranks hold {items} items (id sum {id_sum}) at the end, expected \
         {expected_items} (id sum {expected_id_sum})"
    )]
    NotExactlyOnce {
        /// The rule, or `none`.
        balancer: String,
        /// Items the ranks hold.
        items: u64,
        /// Σ of their ids.
        id_sum: u128,
        /// Items there should be.
        expected_items: u64,
        /// Σ of their ids.
        expected_id_sum: u128,
    },
}

impl Default for IterativeConfig {
    /// The command line's defaults (`hetlb run iterative`): 4096 cells, 40 iterations, a
    /// rebalance every 5, 2000 units of work per cell, 64-byte payloads; no slowdowns (give
    /// one per rank), no drift, CPU work, no speed change.
    fn default() -> Self {
        Self {
            cells: 4096,
            iterations: 40,
            every: 5,
            cost: 2000,
            payload: 64,
            slowdowns: Vec::new(),
            drift: None,
            positions: None,
            work: Work::Cpu,
            speed_change: None,
        }
    }
}

impl IterativeConfig {
    /// Checks the settings for `ranks` ranks.
    ///
    /// # Errors
    /// [`IterativeError::Config`] naming the setting.
    pub fn validate(&self, ranks: usize) -> Result<(), IterativeError> {
        let bad = |m: String| Err(IterativeError::Config(m));
        if ranks == 0 {
            return bad("workers: at least one rank is needed".into());
        }
        if self.iterations == 0 {
            return bad("iterations: at least one is needed".into());
        }
        if self.every == 0 {
            return bad("every: must be at least 1".into());
        }
        if self.slowdowns.len() != ranks {
            return bad(format!(
                "slowdown: {} values given for {ranks} ranks",
                self.slowdowns.len()
            ));
        }
        if let Some(c) = &self.speed_change
            && (c.slowdowns.len() != ranks || c.slowdowns.contains(&0))
        {
            return bad(format!(
                "speed change: {} factors given for {ranks} ranks (each at least 1)",
                c.slowdowns.len()
            ));
        }
        if let Work::Sleep { per_unit } = self.work
            && (per_unit.is_zero() || per_unit > Duration::from_secs(1))
        {
            return bad("sleep per unit: must be above 0 and at most 1 s".into());
        }
        Ok(())
    }
}

/// One rebalance step, seen by the whole group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// Iterations done when it was called.
    pub iteration: u64,
    /// `max (load ÷ capacity) ÷ average` before.
    pub imbalance_before: f64,
    /// The same after.
    pub imbalance_after: f64,
    /// Items that crossed a link (Σ over ranks of items received).
    pub items_moved: u64,
    /// Units that crossed a link.
    pub units_moved: u64,
    /// Bytes of item messages (Σ over ranks of bytes sent).
    pub bytes: u64,
    /// Seconds of the call on the slowest rank (deciding and moving).
    pub seconds: f64,
    /// The model's prediction of the move (steps × measured time per unit), when known.
    pub predicted_move_seconds: Option<f64>,
    /// The measured move on the slowest rank.
    pub measured_move_seconds: f64,
    /// Rank 0's full report (the group's load vectors, capacities, speeds), for dumps.
    pub report: ReportRecord,
}

/// The group-wide part of a [`Report`], serialisable both ways (for dumps and MPI gathers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRecord {
    /// The rule.
    pub algorithm: String,
    /// The topology spec.
    pub topology: String,
    /// Capacities the rule used (`None`: equal).
    pub capacities: Option<Vec<f64>>,
    /// Measured speeds.
    pub measured_speeds: Option<Vec<f64>>,
    /// Units per rank as the rule saw them.
    pub loads_before: Vec<u64>,
    /// The rule's final loads.
    pub planned_after: Vec<u64>,
    /// What each rank holds after the move.
    pub loads_after: Vec<u64>,
    /// Phases of the plan.
    pub phases: usize,
    /// The model's steps.
    pub predicted_steps: Option<u64>,
    /// True when the trigger held the move back.
    #[serde(default)]
    pub held_back: bool,
    /// The predicted gain and cost (`hetlb_core::advice`), when every speed was measured.
    #[serde(default)]
    pub prediction: Option<hetlb_core::advice::Prediction>,
    /// How the previous move's prediction turned out, measured at this call.
    #[serde(default)]
    pub outcome: Option<hetlb_peer::Outcome>,
    /// With positions: the spread of the ranks' regions before the call
    /// ([`Report::spread_before`]).
    #[serde(default)]
    pub spread_before: Option<f64>,
    /// With positions: the spread after it.
    #[serde(default)]
    pub spread_after: Option<f64>,
}

impl From<&Report> for ReportRecord {
    fn from(r: &Report) -> Self {
        Self {
            algorithm: r.algorithm.clone(),
            topology: r.topology.clone(),
            capacities: r.capacities.clone(),
            measured_speeds: r.measured_speeds.clone(),
            loads_before: r.loads_before.clone(),
            planned_after: r.planned_after.clone(),
            loads_after: r.loads_after.clone(),
            phases: r.phases,
            predicted_steps: r.predicted_steps,
            held_back: r.held_back,
            prediction: r.prediction,
            outcome: r.outcome,
            spread_before: r.spread_before,
            spread_after: r.spread_after,
        }
    }
}

/// What one rank did over the run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RankLog {
    /// The rank.
    pub rank: usize,
    /// Items held at the end.
    pub items: u64,
    /// Units held at the end.
    pub units: u64,
    /// CPU seconds computing, over the run (the thread's CPU time: what the rank's speed is
    /// measured in).
    pub busy_seconds: f64,
    /// Wall-clock seconds computing, over the run (more than `busy_seconds` when ranks share
    /// cores).
    pub wall_busy_seconds: f64,
    /// Units processed over the run.
    pub units_processed: u64,
    /// Σ of the ids of the items held at the end (with `items`, a checksum of exactly-once).
    pub id_sum: u128,
    /// Per rebalance: items received, units received, bytes sent, seconds of the call.
    pub calls: Vec<CallLog>,
    /// Rank 0 only: seconds of every iteration, barrier to barrier.
    pub iteration_seconds: Vec<f64>,
    /// Rank 0 only: the group-wide records of every call, and imbalances.
    pub records: Vec<(f64, f64, ReportRecord, Option<f64>)>,
    /// With sleep-based work: the busy seconds of every iteration (the time the rank meant
    /// to sleep), for [`IterativeRun::accounted_seconds`]. Empty with CPU work.
    #[serde(default)]
    pub step_busy: Vec<f64>,
}

/// One rank's part of one rebalance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CallLog {
    /// Iterations done.
    pub iteration: u64,
    /// Items this rank received.
    pub items_received: u64,
    /// Units this rank received.
    pub units_received: u64,
    /// Bytes this rank sent.
    pub bytes_sent: u64,
    /// Seconds of the call on this rank.
    pub seconds: f64,
    /// This rank's move, to its last transfer.
    pub move_seconds: f64,
}

/// The outcome of one balancer (or of none) on the iterative workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IterativeRun {
    /// The rule's name, or `none`.
    pub balancer: String,
    /// Seconds from the first iteration to the last, on rank 0.
    pub total_seconds: f64,
    /// Every iteration's time: the slowest rank's, barrier to barrier (rebalances included).
    pub iteration_seconds: Vec<f64>,
    /// Every rebalance.
    pub steps: Vec<Step>,
    /// Every rank at the end.
    pub ranks: Vec<RankLog>,
    /// Units of work processed over the run, all ranks.
    pub work_units: u64,
    /// `work ÷ Σ speed × max(1, P ÷ C)`: the time a perfectly balanced run would take without
    /// balancing costs. Each rank's speed is measured over this run in units per CPU second of
    /// its kernel; when the `P` ranks share `C < P` cores, each gets `C/P` of a core.
    pub ideal_seconds: f64,
    /// Ranks per core when there are more ranks than cores (1 otherwise): the factor above.
    pub oversubscription: f64,
    /// With sleep-based work: `Σ_iterations max_rank busy + Σ_calls min_rank call seconds`,
    /// the run's time as its work and its rebalances make it, without the operating system's
    /// wake-up and scheduling delays (which a loaded machine adds to the wall time at
    /// random). A call counts as long as the last rank to reach it spends in it: the others
    /// wait there for its work, which is already counted. `None` with CPU work.
    pub accounted_seconds: Option<f64>,
}

impl IterativeRun {
    /// Assembles the run from every rank's log; `oversubscription` is ranks per core on the
    /// machine, when above 1 (see [`IterativeRun::ideal_seconds`]).
    pub fn assemble(
        balancer: &str,
        total_seconds: f64,
        mut logs: Vec<RankLog>,
        oversubscription: f64,
    ) -> Self {
        let oversubscription = oversubscription.max(1.0);
        logs.sort_by_key(|l| l.rank);
        let first = logs.first();
        let iteration_seconds = first
            .map(|l| l.iteration_seconds.clone())
            .unwrap_or_default();
        let records = first.map(|l| l.records.clone()).unwrap_or_default();
        let steps = records
            .into_iter()
            .enumerate()
            .map(|(k, (before, after, report, predicted))| {
                let calls: Vec<&CallLog> = logs.iter().filter_map(|l| l.calls.get(k)).collect();
                Step {
                    iteration: calls.first().map_or(0, |c| c.iteration),
                    imbalance_before: before,
                    imbalance_after: after,
                    items_moved: calls.iter().map(|c| c.items_received).sum(),
                    units_moved: calls.iter().map(|c| c.units_received).sum(),
                    bytes: calls.iter().map(|c| c.bytes_sent).sum(),
                    seconds: calls.iter().map(|c| c.seconds).fold(0.0, f64::max),
                    predicted_move_seconds: predicted,
                    measured_move_seconds: calls.iter().map(|c| c.move_seconds).fold(0.0, f64::max),
                    report,
                }
            })
            .collect();
        let work_units: u64 = logs.iter().map(|l| l.units_processed).sum();
        let speed: f64 = logs
            .iter()
            .filter(|l| l.busy_seconds > 0.0)
            .map(|l| l.units_processed as f64 / l.busy_seconds)
            .sum();
        let ideal_seconds = if speed > 0.0 {
            work_units as f64 / speed * oversubscription
        } else {
            0.0
        };
        let accounted_seconds = accounted(&logs);
        for l in &mut logs {
            l.iteration_seconds.clear();
            l.records.clear();
            l.step_busy.clear();
        }
        Self {
            balancer: balancer.to_string(),
            total_seconds,
            iteration_seconds,
            steps,
            ranks: logs,
            work_units,
            ideal_seconds,
            oversubscription,
            accounted_seconds,
        }
    }
}

/// `Σ_iterations max_rank busy + Σ_calls min_rank seconds`, when every rank logged its busy
/// time per iteration ([`RankLog::step_busy`]).
fn accounted(logs: &[RankLog]) -> Option<f64> {
    let iterations = logs.first()?.step_busy.len();
    if iterations == 0 || logs.iter().any(|l| l.step_busy.len() != iterations) {
        return None;
    }
    let work: f64 = (0..iterations)
        .map(|i| logs.iter().map(|l| l.step_busy[i]).fold(0.0, f64::max))
        .sum();
    let calls = logs.iter().map(|l| l.calls.len()).max().unwrap_or(0);
    // A rank that reaches a call early waits in it for the others' work: the time a call
    // adds is the shortest of the ranks' (the last rank to arrive waits for nobody).
    let balancing: f64 = (0..calls)
        .map(|k| {
            logs.iter()
                .filter_map(|l| l.calls.get(k))
                .map(|c| c.seconds)
                .fold(f64::INFINITY, f64::min)
        })
        .filter(|s| s.is_finite())
        .sum();
    Some(work + balancing)
}

/// The cells rank `rank` of `ranks` starts with: an equal block of ids.
pub fn initial_cells(cfg: &IterativeConfig, rank: usize, ranks: usize) -> Vec<Cell> {
    let lo = cfg.cells * rank as u64 / ranks as u64;
    let hi = cfg.cells * (rank as u64 + 1) / ranks as u64;
    (lo..hi)
        .map(|id| {
            let at = cfg.positions.map(|d| cell_position(id, cfg.cells, d));
            let mut cell = Cell {
                id,
                cost: 1,
                payload: vec![(id % 251) as u8; cfg.payload],
                at,
            };
            cell.cost = cost_of(cfg, &cell, 0);
            cell
        })
        .collect()
}

/// A cell's cost at `iteration`: by its id, or by its position when the run gives positions.
fn cost_of(cfg: &IterativeConfig, cell: &Cell, iteration: u64) -> u64 {
    match (cfg.drift, cell.at, cfg.positions) {
        (None, ..) => 1,
        (Some(d), Some(at), Some(dims)) => d.cost_at(&at, dims, iteration, cfg.iterations),
        (Some(d), ..) => d.cost(cell.id, cfg.cells, iteration, cfg.iterations),
    }
}

/// The name of a balancer in a run's report: its rule's, or `none`.
pub fn balancer_name(balancer: Option<&BalancerConfig>) -> &'static str {
    balancer.map_or("none", |c| c.rule_name())
}

/// Called by rank 0 after every iteration with the number of iterations done.
pub type IterationProgress = Arc<dyn Fn(u64) + Send + Sync>;

/// Runs one rank of the workload on `group`, balanced by `balancer` (`None`: not
/// balanced). Between iterations the ranks wait for each other at a timed barrier
/// ([`SyncPoint`]), which reports a rank that stopped within `timeout`.
///
/// # Errors
/// [`IterativeError::Rebalance`] when a call fails; [`IterativeError::Stopped`] when the
/// barrier finds that a rank failed; [`IterativeError::Config`] for a balancer the group
/// cannot run.
pub fn run_rank<G: Group>(
    cfg: &IterativeConfig,
    group: &G,
    balancer: Option<BalancerConfig>,
    timeout: Duration,
    progress: Option<&IterationProgress>,
) -> Result<RankLog, IterativeError> {
    let (rank, ranks) = (group.rank(), group.size());
    let mut sync = SyncPoint::new(group, timeout)
        .map_err(|e| IterativeError::Config(format!("barrier: {e}")))?;
    let mut balancer = match balancer {
        Some(b) => Some(
            Balancer::<Cell, G>::new(group, b)
                .map_err(|e| IterativeError::Config(format!("balancer: {e}")))?,
        ),
        None => None,
    };
    let mut barrier = |iteration: u64| {
        sync.wait().map_err(|error| IterativeError::Stopped {
            rank,
            iteration,
            error,
        })
    };
    let mut cells = initial_cells(cfg, rank, ranks);
    let slowdown = cfg.slowdowns.get(rank).copied().unwrap_or_default();
    let mut log = RankLog {
        rank,
        ..RankLog::default()
    };
    barrier(0)?;
    let start = Instant::now();
    let mut last = Instant::now();
    let mut sink = 0u64;
    for iteration in 0..cfg.iterations {
        if cfg.drift.is_some() {
            for c in &mut cells {
                c.cost = cost_of(cfg, c, iteration);
            }
        }
        let factor = match &cfg.speed_change {
            Some(c) if iteration >= c.at_iteration => u64::from(c.slowdowns[rank]),
            _ => u64::from(slowdown.factor_at(start.elapsed())),
        };
        let (units, busy) = compute(cfg, &cells, factor, &mut log, &mut sink);
        if let Some(b) = balancer.as_mut() {
            b.record(units, busy);
        }
        let done = iteration + 1;
        if done % cfg.every == 0
            && done < cfg.iterations
            && let Some(b) = balancer.as_mut()
        {
            rebalance(b, &mut cells, done, &mut log)?;
        }
        barrier(done)?;
        if rank == 0 {
            log.iteration_seconds.push(last.elapsed().as_secs_f64());
            last = Instant::now();
            if let Some(p) = progress {
                p(done);
            }
        }
    }
    std::hint::black_box(sink);
    log.items = cells.len() as u64;
    log.units = cells.iter().map(|c| c.cost).sum();
    log.id_sum = cells.iter().map(|c| u128::from(c.id)).sum();
    Ok(log)
}

/// One iteration's work on `cells`, the kernel repeated `factor` times, folded into `sink`
/// and counted in `log`: the units and the busy seconds (CPU time with CPU work, so that a
/// rank's speed does not depend on how the ranks share the cores).
fn compute(
    cfg: &IterativeConfig,
    cells: &[Cell],
    factor: u64,
    log: &mut RankLog,
    sink: &mut u64,
) -> (u64, f64) {
    let t0 = Instant::now();
    let units: u64 = cells.iter().map(|c| c.cost).sum();
    let busy = match cfg.work {
        Work::Cpu => {
            let cpu0 = cpu_time::ThreadTime::try_now().ok();
            for c in cells {
                *sink ^=
                    Synthetic::expected(c.id, std::hint::black_box(c.cost * cfg.cost * factor));
            }
            cpu0.and_then(|c| c.try_elapsed().ok())
                .map(|d| d.as_secs_f64())
        }
        Work::Sleep { per_unit } => {
            let nominal = per_unit.as_secs_f64() * (units * factor) as f64;
            std::thread::sleep(Duration::from_secs_f64(nominal));
            log.step_busy.push(nominal);
            Some(nominal)
        }
    };
    let wall = t0.elapsed().as_secs_f64();
    let busy = busy.unwrap_or(wall);
    log.busy_seconds += busy;
    log.wall_busy_seconds += wall;
    log.units_processed += units;
    (units, busy)
}

/// The rebalance after iteration `done`, logged in `log` when it was one (a call the trigger
/// skipped without a message is not); rank 0 also keeps the group-wide record.
fn rebalance<G: Group>(
    b: &mut Balancer<Cell, G>,
    cells: &mut Vec<Cell>,
    done: u64,
    log: &mut RankLog,
) -> Result<(), IterativeError> {
    let rank = log.rank;
    let t = Instant::now();
    let report = b
        .rebalance(cells)
        .map_err(|error| IterativeError::Rebalance {
            iteration: done,
            rank,
            error,
        })?;
    if !report.checked {
        return Ok(());
    }
    log.calls.push(CallLog {
        iteration: done,
        items_received: report.items_received,
        units_received: report.units_received,
        bytes_sent: report.bytes_sent,
        seconds: t.elapsed().as_secs_f64(),
        move_seconds: report.slowest_move_seconds,
    });
    if rank == 0 {
        log.records.push((
            report.imbalance_before,
            report.imbalance_after,
            ReportRecord::from(&report),
            report.predicted_move_seconds,
        ));
    }
    Ok(())
}

/// Runs the workload on `ranks` threads, balanced by `balancer` (`None`: not balanced).
/// `timeout` is the silence after which a rank is reported as stopped (the balancer's by
/// default).
///
/// # Errors
/// [`IterativeError`] for bad settings, a failed call or a panicking rank.
///
/// # Example
/// ```
/// use hetlb_runtime::workload::iterative::{run_threads, IterativeConfig};
/// use hetlb_peer::{BalancerConfig, Speeds};
/// use hetlb_runtime::Slowdown;
/// let mut cfg = IterativeConfig::default();
/// (cfg.cells, cfg.iterations, cfg.every, cfg.cost, cfg.payload) = (64, 6, 2, 10, 8);
/// cfg.slowdowns = vec![Slowdown::constant(1), Slowdown::constant(3)];
/// let balancer = BalancerConfig::new("cwa").unwrap().speeds(Speeds::Measured { window: 3 });
/// let run = run_threads(&cfg, 2, Some(balancer), None, None).unwrap();
/// assert_eq!(run.ranks.iter().map(|r| r.items).sum::<u64>(), 64);
/// assert_eq!(run.steps.len(), 2);
/// ```
pub fn run_threads(
    cfg: &IterativeConfig,
    ranks: usize,
    balancer: Option<BalancerConfig>,
    timeout: Option<Duration>,
    progress: Option<IterationProgress>,
) -> Result<IterativeRun, IterativeError> {
    cfg.validate(ranks)?;
    let name = balancer
        .as_ref()
        .map_or("none", |b| b.rule_name())
        .to_string();
    if let Some(b) = &balancer {
        // Refused here, before any thread starts, with the balancer's own message.
        b.check(ranks)
            .map_err(|e| IterativeError::Config(format!("balancer: {e}")))?;
    }
    let timeout = timeout.unwrap_or_else(|| {
        balancer
            .as_ref()
            .map_or(hetlb_peer::DEFAULT_TIMEOUT, BalancerConfig::timeout_value)
    });
    let start = Instant::now();
    let handles: Vec<_> = threads::group(ranks)
        .into_iter()
        .enumerate()
        .map(|(rank, member)| {
            let cfg = cfg.clone();
            let balancer = balancer.clone();
            let progress = progress.clone();
            std::thread::Builder::new()
                .name(format!("hetlb-rank{rank}"))
                .spawn(move || run_rank(&cfg, &member, balancer, timeout, progress.as_ref()))
        })
        .collect();
    let mut logs = Vec::with_capacity(ranks);
    let mut first_error = None;
    for (rank, h) in handles.into_iter().enumerate() {
        let h = h.map_err(|e| IterativeError::Config(format!("cannot start a thread: {e}")))?;
        match h.join() {
            Ok(Ok(log)) => logs.push(log),
            // A rank that stopped because another failed: the other's error is the news.
            Ok(Err(e @ IterativeError::Stopped { .. })) => {
                if first_error.is_none() {
                    first_error = Some(e);
                }
            }
            Ok(Err(e)) => {
                if matches!(first_error, None | Some(IterativeError::Stopped { .. })) {
                    first_error = Some(e);
                }
            }
            Err(_) => {
                if matches!(first_error, None | Some(IterativeError::Stopped { .. })) {
                    first_error = Some(IterativeError::Panicked(rank));
                }
            }
        }
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    let total = start.elapsed().as_secs_f64();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    Ok(IterativeRun::assemble(
        &name,
        total,
        logs,
        ranks as f64 / cores as f64,
    ))
}

/// Runs the workload once per entry of `balancers` (`None`: not balanced) on the ranks of
/// `group` — every rank calls it — and collects the ranks' logs at rank 0, which gets one
/// [`IterativeRun`] per balancer; the other ranks get an empty list. `oversubscription` is
/// ranks per core on rank 0's node (for the ideal).
///
/// # Errors
/// [`IterativeError`] for bad settings, a failed call, a rank that stopped, or logs that
/// cannot be collected.
pub fn run_group<G: Group>(
    cfg: &IterativeConfig,
    group: &G,
    balancers: &[Option<BalancerConfig>],
    timeout: Duration,
    oversubscription: f64,
) -> Result<Vec<IterativeRun>, IterativeError> {
    cfg.validate(group.size())?;
    let logs_ep = group.open::<RankLog>()?;
    let mut runs = Vec::new();
    for b in balancers {
        let name = balancer_name(b.as_ref());
        let start = Instant::now();
        let log = run_rank(cfg, group, b.clone(), timeout, None)?;
        let total = start.elapsed().as_secs_f64();
        if let Some(logs) = collect_at_root(&logs_ep, log, timeout)? {
            runs.push(IterativeRun::assemble(name, total, logs, oversubscription));
        }
    }
    Ok(runs)
}

/// Sends `log` to rank 0; rank 0 returns every rank's log (in rank order), waiting for each
/// as long as its sender is not silent for `timeout`.
fn collect_at_root<E: Transport<RankLog>>(
    ep: &E,
    log: RankLog,
    timeout: Duration,
) -> Result<Option<Vec<RankLog>>, IterativeError> {
    if ep.rank() != 0 {
        ep.send(0, log)?;
        return Ok(None);
    }
    let size = ep.size();
    let mut logs: Vec<Option<RankLog>> = (0..size).map(|_| None).collect();
    logs[0] = Some(log);
    while let Some(missing) = logs.iter().position(Option::is_none) {
        match ep.recv(Some(Instant::now() + Duration::from_millis(50)))? {
            Some(env) if env.from < size => logs[env.from] = Some(env.msg),
            Some(_) => {}
            None => {
                let silence = ep.liveness(missing).silence();
                if silence > timeout {
                    return Err(IterativeError::Collect(format!(
                        "rank {missing} sent no log and has been silent for {:.1} s",
                        silence.as_secs_f64().min(1e9)
                    )));
                }
            }
        }
    }
    Ok(Some(logs.into_iter().flatten().collect()))
}

#[cfg(test)]
mod wire_tests {
    use super::*;

    /// Cells cross MPI in postcard, which has no field names: every field must be written,
    /// whatever its value (a position skipped when `None` made the receiver read the next
    /// bytes as its discriminant: `run iterative --backend mpi` failed at its first move).
    #[test]
    fn cells_cross_postcard_whole() {
        for at in [None, Some([0.25, 0.5, 0.0])] {
            let cell = Cell {
                id: 7,
                cost: 3,
                payload: vec![1, 2, 3],
                at,
            };
            let bytes = postcard::to_allocvec(&cell).unwrap();
            assert_eq!(postcard::from_bytes::<Cell>(&bytes).unwrap(), cell);
        }
    }
}
