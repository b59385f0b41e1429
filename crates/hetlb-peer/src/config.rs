//! How a [`Balancer`](super::Balancer) decides: the rule, the ranks' topology, their speeds,
//! the transmission schedule and the timeouts.

use super::error::{ConfigError, PeerError};
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use hetlb_core::topology::{MAX_COMPLETE_DEFAULT, Network, Topology, TopologySpec};
use hetlb_core::transmission::Schedule;
use std::time::Duration;

/// The largest topology file a balancer reads (64 MiB: a graph of millions of links).
pub const MAX_TOPOLOGY_FILE_BYTES: u64 = 64 << 20;

/// The name of the rule that picks, at every call, the candidate with the best prediction
/// ([`BalancerConfig::candidates`]).
pub const AUTO: &str = "auto";

/// Rule `auto`'s candidates when none are named: `cwa`, `dem-hetero`, `oem` and `dishet` on
/// a hypercube or a complete network (where the hypercube rules run embedded,
/// [`hetlb_core::embedding`]), `dishet` and `gdem` elsewhere.
///
/// ```
/// use hetlb_core::topology::TopologySpec;
/// use hetlb_peer::default_candidates;
/// let ring = "ring:6".parse::<TopologySpec>().unwrap().build().unwrap();
/// assert_eq!(default_candidates(&ring).len(), 2);
/// ```
pub fn default_candidates(network: &Network) -> Vec<Algorithm> {
    if network.runs_hypercube_rules() {
        vec![
            Algorithm::Cwa,
            Algorithm::DemHetero,
            Algorithm::Oem,
            Algorithm::Dishet,
        ]
    } else {
        vec![Algorithm::Dishet, Algorithm::Gdem]
    }
}

/// The share of the iteration time that the trigger `auto`'s checks may cost by default
/// ([`BalancerConfig::check_budget`]).
pub const DEFAULT_CHECK_BUDGET: f64 = 0.01;

/// How many measured moves the learned cost model is fitted to
/// ([`BalancerConfig::learn_cost`]).
pub const LEARNED_SAMPLES: usize = 16;

/// The default silence after which a peer is judged to have stopped answering.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where the capacities that the rule weighs come from.
#[derive(Debug, Clone, PartialEq)]
pub enum Speeds {
    /// Every rank counts the same (the rules' uniform case).
    Equal,
    /// Given capacities, one per rank, positive and finite.
    Fixed(Vec<f64>),
    /// Measured: the application reports, with [`Balancer::record`], the units it processed
    /// and the seconds they took; a rank's speed is the median rate of its last `window`
    /// reports, and its capacity that speed in units of the slowest rank's (equal speeds until
    /// every rank has reported once).
    ///
    /// [`Balancer::record`]: super::Balancer::record
    Measured {
        /// Reports the median is taken over.
        window: usize,
    },
}

/// Faults to inject into one rank's rebalance, to show and test what the others do. The
/// `…AfterSends` faults strike after this rank has sent `k` item messages in the call (never,
/// when it sends fewer); the `…AfterVote` faults strike right after this rank has voted in
/// the closing agreement (when the call moves anything).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Fault {
    /// No fault.
    #[default]
    None,
    /// Panic after sending `k` item messages (a crash in the middle of a move: the rank's
    /// items die with it).
    PanicAfterSends(u32),
    /// Stop answering after sending `k` item messages, for the given time, then carry on (as
    /// a process stopped with SIGSTOP and continued).
    FreezeAfterSends(u32, Duration),
    /// Give the call up after sending `k` item messages, as a rank that hits an error of its
    /// own would: the call aborts on every rank.
    LeaveAfterSends(u32),
    /// Panic right after voting (a crash in the uncertain part of the call).
    PanicAfterVote,
    /// Stop answering right after voting, for the given time, then carry on.
    FreezeAfterVote(Duration),
    /// Stop waiting for the outcome right after voting. The rank does not roll back on its
    /// own: see [`PeerError::InDoubt`](super::PeerError::InDoubt).
    LeaveAfterVote,
}

/// Everything a [`Balancer`](super::Balancer) needs besides its communicator. Every rank of
/// the group must use the same configuration (the ranks check that they agree).
///
/// # Example
/// ```
/// use hetlb_peer::{BalancerConfig, Speeds};
/// use hetlb_core::transmission::Schedule;
/// let cfg = BalancerConfig::new("dishet")
///     .unwrap()
///     .topology("ring:6")
///     .unwrap()
///     .speeds(Speeds::Measured { window: 5 })
///     .schedule(Schedule::Phased);
/// assert_eq!(cfg.algorithm().name(), "dishet");
/// assert!(BalancerConfig::new("dem-superb").is_err());
/// ```
#[derive(Debug, Clone)]
#[must_use = "a configuration does nothing until a Balancer is built with it"]
pub struct BalancerConfig {
    pub(crate) algorithm: Algorithm,
    pub(crate) topology: Option<(String, Network)>,
    pub(crate) speeds: Speeds,
    pub(crate) schedule: Schedule,
    pub(crate) timeout: Duration,
    pub(crate) entry_timeout: Option<Duration>,
    pub(crate) procs_per_group: Option<usize>,
    pub(crate) max_rounds: Option<u64>,
    pub(crate) seed: u64,
    pub(crate) lambda: Option<f64>,
    pub(crate) fault: Fault,
    pub(crate) count_bytes: bool,
    pub(crate) trigger: Trigger,
    pub(crate) cost_model: CostModel,
    pub(crate) candidates: Option<Vec<Algorithm>>,
    pub(crate) routing: Routing,
    pub(crate) learn_cost: bool,
    pub(crate) check_budget: f64,
}

impl BalancerConfig {
    /// A configuration for `rule`: any name `hetlb balance --algorithm` accepts (`dem`,
    /// `dem-fixed`, `dem-improved`, `dem-hetero`, `oem`, `cwa`, `hybrid`, `dishet`,
    /// `diffusion`, `random-biasing`, `dynamic-biasing`, `gdem`). Equal speeds, the phased
    /// schedule, a 10 s timeout, the default topology (see [`BalancerConfig::topology`]).
    ///
    /// # Errors
    /// [`PeerError::Config`] for an unknown rule.
    pub fn new(rule: &str) -> Result<Self, PeerError> {
        if rule == AUTO {
            return Ok(Self::for_algorithm(Algorithm::Cwa).candidates(Vec::new()));
        }
        let algorithm = rule
            .parse::<Algorithm>()
            .map_err(|source| ConfigError::UnknownRule {
                source,
                known: Algorithm::all()
                    .map(|a| a.name())
                    .chain(std::iter::once(AUTO))
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        Ok(Self::for_algorithm(algorithm))
    }

    /// A configuration for an already parsed rule.
    pub fn for_algorithm(algorithm: Algorithm) -> Self {
        Self {
            algorithm,
            topology: None,
            speeds: Speeds::Equal,
            schedule: Schedule::Phased,
            timeout: DEFAULT_TIMEOUT,
            entry_timeout: None,
            procs_per_group: None,
            max_rounds: None,
            seed: 0,
            lambda: None,
            fault: Fault::None,
            count_bytes: true,
            trigger: Trigger::Always,
            cost_model: CostModel::FREE,
            candidates: None,
            routing: Routing::Paper,
            learn_cost: false,
            check_budget: DEFAULT_CHECK_BUDGET,
        }
    }

    /// Rule `auto`: at every call, plan each of `candidates` on the gathered loads, predict
    /// each at the measured speeds ([`hetlb_core::advice::Prediction`]) and follow the one
    /// with the best predicted net gain over the trigger's horizon (1 iteration with
    /// [`Trigger::Always`]), less what that candidate's earlier moves fell short of their
    /// predictions (its learned shortfall, in the report's `alternatives`). An empty list
    /// means the default set for the network ([`default_candidates`]): `cwa`, `dem-hetero`,
    /// `oem` and `dishet` on a hypercube or the complete network, `dishet` and `gdem`
    /// elsewhere.
    /// Until every rank has a measured speed the first candidate runs alone. Needs measured
    /// speeds ([`Speeds::Measured`]).
    pub fn candidates(mut self, candidates: Vec<Algorithm>) -> Self {
        if let Some(&first) = candidates.first() {
            self.algorithm = first;
        }
        self.candidates = Some(candidates);
        self
    }

    /// How the plan's units travel ([`Routing`]): hop by hop as the rule moves them (the
    /// papers' routing, the default), or each unit once, straight from the rank that holds
    /// it to the rank where the plan ends it — every rank reaches every other on threads and
    /// on MPI. Direct routing moves the fewest units the start and end vectors allow
    /// ([`hetlb_core::routing::direct`]) in one phase.
    pub fn routing(mut self, routing: Routing) -> Self {
        self.routing = routing;
        self
    }

    /// Learns the cost model on line: after every committed move, the seconds per message
    /// and per unit are refitted ([`CostModel::learn`], least squares) to the last
    /// [`LEARNED_SAMPLES`] moves — the busiest rank's messages and units, as
    /// [`CostModel::predict`] counts them, against the slowest rank's measured move. The
    /// configured [`BalancerConfig::cost_model`] is the prior, replaced at the first call
    /// that decides by a short probe: two timed dissemination exchanges, of empty and of
    /// [`PROBE_BYTES`](super::PROBE_BYTES)-byte messages, before anything moves. Every rank
    /// uses rank 0's model, which reaches it in the call's gather, so the ranks decide alike.
    pub fn learn_cost(mut self, on: bool) -> Self {
        self.learn_cost = on;
        self
    }

    /// With the trigger `auto`: the share of the application's iteration time that checking
    /// may cost (default [`DEFAULT_CHECK_BUDGET`], 1%; 0 checks at every call). A check is a
    /// collective call: its gather, the candidates' plans and the predictions. After a
    /// check that moved, the next call checks again; after one that did not, the interval
    /// doubles, up to `k = ⌈c ÷ (budget · t)⌉` calls when a check costs `c` seconds and an
    /// iteration `t` (at most the trigger's horizon). The calls between checks return at
    /// once, without a message ([`Report::checked`](super::Report::checked) false).
    /// Every rank computes the same `k` from the call's gather (the slowest rank's last check
    /// and last step), so the ranks check at the same calls. A check's cost is its gather
    /// and plans; the moves it makes are weighed by the trigger itself.
    pub fn check_budget(mut self, budget: f64) -> Self {
        self.check_budget = budget;
        self
    }

    /// True for rule `auto` (it chooses among candidates).
    pub(crate) fn is_auto(&self) -> bool {
        self.candidates.is_some()
    }

    /// The rule's name as configured: `auto`, or the algorithm's name.
    pub fn rule_name(&self) -> &'static str {
        if self.candidates.is_some() {
            AUTO
        } else {
            self.algorithm.name()
        }
    }

    /// The routing.
    pub fn routing_kind(&self) -> Routing {
        self.routing
    }

    /// True when the rule (or a candidate named for `auto`) runs on a hypercube only.
    fn needs_hypercube(&self) -> bool {
        match &self.candidates {
            None => self.algorithm.needs_hypercube(),
            Some(list) => list.iter().any(|a| a.needs_hypercube()),
        }
    }

    /// Rule `auto` with its default candidates.
    fn default_auto(&self) -> bool {
        self.candidates.as_ref().is_some_and(Vec::is_empty)
    }

    /// The first rule that needs a hypercube, for messages.
    fn hypercube_rule_name(&self) -> &'static str {
        match &self.candidates {
            Some(list) => list
                .iter()
                .find(|a| a.needs_hypercube())
                .map_or(AUTO, |a| a.name()),
            None => self.algorithm.name(),
        }
    }

    /// The candidates of rule `auto` on `network` (`None` for a single rule).
    pub(crate) fn candidate_list(&self, network: &Network) -> Option<Vec<Algorithm>> {
        let list = self.candidates.as_ref()?;
        if !list.is_empty() {
            return Some(list.clone());
        }
        Some(default_candidates(network))
    }

    /// The ranks' topology as a spec (`ring:8`, `torus:2x4`, `hypercube:3`, `random:8:0.5:1`,
    /// `file:PATH` …), with as many nodes as there are ranks. Without it: a hypercube when the
    /// rank count is a power of two; otherwise the complete network for the hypercube rules
    /// and `auto` (they run embedded in a cube, [`hetlb_core::embedding`]) and a ring for the
    /// diffusion rules.
    ///
    /// # Errors
    /// [`PeerError::Config`] for a spec that cannot be parsed or built, or a file that cannot
    /// be read.
    pub fn topology(mut self, spec: &str) -> Result<Self, PeerError> {
        let parsed: TopologySpec = spec.parse().map_err(ConfigError::TopologySpec)?;
        let network = parsed
            .build_reading(None, None, MAX_TOPOLOGY_FILE_BYTES)
            .map_err(ConfigError::from)?;
        self.topology = Some((parsed.to_string(), network));
        Ok(self)
    }

    /// The ranks' topology as a built network, named `label` in reports and dumps.
    pub fn network(mut self, label: impl Into<String>, network: Network) -> Self {
        self.topology = Some((label.into(), network));
        self
    }

    /// Where the capacities come from.
    pub fn speeds(mut self, speeds: Speeds) -> Self {
        self.speeds = speeds;
        self
    }

    /// How items are put on the links: phased, overlapped or pipelined (Rim, Jang & Kim 2003, §6).
    /// [`Schedule::PipelinePerProcessor`] is a model of the paper's pseudo-code, not a way to
    /// move items: [`crate::Balancer::new`] refuses it.
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.schedule = schedule;
        self
    }

    /// Silence after which a peer that takes part in the call is judged to have stopped
    /// answering (default 10 s). A peer proves it is alive while it waits in the call; a
    /// peer that has not reached the call yet is busy, not silent (see
    /// [`BalancerConfig::entry_timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long to wait for a peer that has not reached the call and cannot prove it is
    /// alive meanwhile (on MPI below `MPI_THREAD_MULTIPLE`, where no thread can answer for a
    /// busy rank). Default: no limit, since a busy peer must never be declared dead.
    pub fn entry_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.entry_timeout = timeout;
        self
    }

    /// `P` of `hybrid` (OEM within groups of `P` ranks, then CWA).
    pub fn procs_per_group(mut self, p: Option<usize>) -> Self {
        self.procs_per_group = p;
        self
    }

    /// Round limit of the diffusion rules (default 100,000, as `hetlb balance`).
    pub fn max_rounds(mut self, rounds: Option<u64>) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// Seed of `random-biasing`'s draws.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// `λ` of `gdem` (default: the network's optimal or 1/2).
    pub fn lambda(mut self, lambda: Option<f64>) -> Self {
        self.lambda = lambda;
        self
    }

    /// A fault to inject into this rank's calls (tests and demonstrations).
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }

    /// Where nothing is serialised (threads), whether to count the bytes the items sent would
    /// take on the wire, for reports (on by default; it costs one serialisation pass over the
    /// items sent, without copying).
    pub fn count_bytes(mut self, on: bool) -> Self {
        self.count_bytes = on;
        self
    }

    /// When a call moves ([`Trigger`]): `Always` (the default, every call carries out its
    /// plan) or `Auto { horizon, margin }`: the call moves only when the gain predicted over
    /// `horizon` iterations exceeds `margin` times the move's predicted cost
    /// ([`hetlb_core::advice`]); otherwise every rank keeps its items and the report says
    /// `held_back`. `Auto` needs measured speeds ([`Speeds::Measured`]): the gain is in
    /// seconds. Until every rank has a measured speed the call moves as with `Always`.
    pub fn trigger(mut self, trigger: Trigger) -> Self {
        self.trigger = trigger;
        self
    }

    /// The cost of moving that the trigger weighs: seconds per message and per *unit* of
    /// load (Hockney's α and β, with units in place of bytes), the same on every rank.
    /// Default: free ([`CostModel::FREE`]), so `Auto` moves whenever the predicted gain is
    /// positive.
    pub fn cost_model(mut self, model: CostModel) -> Self {
        self.cost_model = model;
        self
    }

    /// The trigger.
    pub fn trigger_kind(&self) -> Trigger {
        self.trigger
    }

    /// Checks the configuration against a group of `ranks` ranks, as
    /// [`Balancer::new`](super::Balancer::new) does.
    ///
    /// # Errors
    /// As [`Balancer::new`](super::Balancer::new).
    pub fn check(&self, ranks: usize) -> Result<(), PeerError> {
        self.resolve(ranks).map(|_| ())
    }

    /// The silence after which a peer is judged to have stopped.
    pub fn timeout_value(&self) -> Duration {
        self.timeout
    }

    /// The rule.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// The schedule.
    pub fn schedule_kind(&self) -> Schedule {
        self.schedule
    }

    /// The speeds.
    pub fn speeds_kind(&self) -> &Speeds {
        &self.speeds
    }

    /// Checks the configuration against `ranks` ranks and returns the topology's label and
    /// network. Nothing has moved when this fails.
    pub(crate) fn resolve(&self, ranks: usize) -> Result<(String, Network), PeerError> {
        let bad = |m: String| Err(PeerError::invalid(m));
        if matches!(self.trigger, Trigger::Auto { .. })
            && !matches!(self.speeds, Speeds::Measured { .. })
        {
            return bad(
                "trigger auto weighs seconds: it needs measured speeds (Speeds::Measured)"
                    .to_string(),
            );
        }
        if self.candidates.is_some() && !matches!(self.speeds, Speeds::Measured { .. }) {
            return bad(
                "rule auto compares predicted seconds: it needs measured speeds \
                 (Speeds::Measured)"
                    .to_string(),
            );
        }
        if !(self.check_budget.is_finite() && (0.0..=1.0).contains(&self.check_budget)) {
            return bad(format!(
                "check_budget: {} is not a share from 0 to 1",
                self.check_budget
            ));
        }
        if let Err(e) = self.cost_model.validate() {
            return Err(ConfigError::CostModel(e).into());
        }
        if self.schedule == Schedule::PipelinePerProcessor {
            return bad(
                "schedule pipeline-per-processor models the literal reading of Rim et al.'s \
                 pseudo-code for transmission times only; move items with phased, overlap or \
                 pipeline"
                    .into(),
            );
        }
        if ranks == 0 {
            return bad("a group needs at least one rank".into());
        }
        if self.timeout.is_zero() {
            return bad("timeout: must be positive".into());
        }
        match &self.speeds {
            Speeds::Fixed(c) => {
                if c.len() != ranks {
                    return bad(format!(
                        "capacities: {} values given for {ranks} ranks",
                        c.len()
                    ));
                }
                if let Some(i) = c.iter().position(|x| !(x.is_finite() && *x > 0.0)) {
                    return bad(format!(
                        "capacities: value {} ({}) must be positive and finite",
                        i + 1,
                        c[i]
                    ));
                }
            }
            Speeds::Measured { window: 0 } => {
                return bad("speeds: the measuring window must hold at least one report".into());
            }
            _ => {}
        }
        let (label, network) = match &self.topology {
            Some((label, network)) => (label.clone(), network.clone()),
            None if ranks.is_power_of_two() => {
                let d = ranks.trailing_zeros();
                let spec = TopologySpec::Hypercube(d);
                (spec.to_string(), spec.build().map_err(ConfigError::from)?)
            }
            None if self.needs_hypercube() && ranks > MAX_COMPLETE_DEFAULT => {
                return bad(format!(
                    "{} on {ranks} ranks: off a power of two the hypercube rules run on \
                     complete:N, built for at most {MAX_COMPLETE_DEFAULT} ranks (its edges grow \
                     as N²); use a power of two, or a diffusion rule",
                    self.hypercube_rule_name()
                ));
            }
            // Every rank reaches every other: the hypercube rules run embedded in a cube
            // (auto's default candidates too, where the complete network is not too large).
            None if self.needs_hypercube()
                || (self.default_auto() && ranks <= MAX_COMPLETE_DEFAULT) =>
            {
                let spec = TopologySpec::Complete(ranks);
                (spec.to_string(), spec.build().map_err(ConfigError::from)?)
            }
            None => {
                // Not a power of two, so at least 3 ranks: a ring exists.
                let spec = TopologySpec::Ring(ranks);
                (spec.to_string(), spec.build().map_err(ConfigError::from)?)
            }
        };
        if network.node_count() != ranks {
            return bad(format!(
                "topology: {label} has {} nodes but there are {ranks} ranks",
                network.node_count()
            ));
        }
        if self.needs_hypercube() && !network.runs_hypercube_rules() {
            return bad(format!(
                "{} runs on a hypercube or a complete network only, not on {label} (use gdem, \
                 dishet or diffusion on other networks)",
                self.hypercube_rule_name()
            ));
        }
        let rules = self
            .candidate_list(&network)
            .unwrap_or_else(|| vec![self.algorithm]);
        if self.procs_per_group.is_some() && !rules.contains(&Algorithm::Hybrid) {
            return bad(format!(
                "procs_per_group: only hybrid has groups, not {}",
                self.rule_name()
            ));
        }
        if let Some(l) = self.lambda {
            if !rules.contains(&Algorithm::Gdem) {
                return bad(format!(
                    "lambda: only gdem has one, not {}",
                    self.rule_name()
                ));
            }
            if !(l.is_finite() && l > 0.0 && l < 1.0) {
                return bad(format!("lambda: {l} is not in (0, 1)"));
            }
        }
        if self.max_rounds.is_some() && rules.iter().all(|a| a.needs_hypercube()) {
            return bad(format!(
                "max_rounds: {} runs one phase per dimension and has no round limit",
                self.rule_name()
            ));
        }
        Ok((label, network))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_fit_the_rank_count() {
        let cfg = BalancerConfig::new("oem").unwrap();
        assert_eq!(cfg.resolve(8).unwrap().0, "hypercube:3");
        assert_eq!(cfg.resolve(6).unwrap().0, "complete:6");
        let auto = BalancerConfig::new("auto")
            .unwrap()
            .speeds(Speeds::Measured { window: 1 });
        assert_eq!(auto.resolve(6).unwrap().0, "complete:6");
        assert_eq!(auto.resolve(3000).unwrap().0, "ring:3000");
        let e = cfg.resolve(3000).unwrap_err().to_string();
        assert!(e.contains("at most 2048"), "{e}");
        let cfg = BalancerConfig::new("dishet").unwrap();
        assert_eq!(cfg.resolve(6).unwrap().0, "ring:6");
        assert_eq!(cfg.resolve(2).unwrap().0, "hypercube:1");
        assert_eq!(cfg.resolve(1).unwrap().1.node_count(), 1);
    }

    #[test]
    fn bad_arguments_are_named() {
        let e = |c: BalancerConfig, n| c.resolve(n).unwrap_err().to_string();
        let oem = BalancerConfig::new("oem").unwrap();
        assert!(e(oem.clone().speeds(Speeds::Fixed(vec![1.0; 3])), 4).contains("capacities: 3"));
        assert!(
            e(
                oem.clone().speeds(Speeds::Fixed(vec![1.0, 0.0, 1.0, 1.0])),
                4
            )
            .contains("value 2")
        );
        assert!(e(oem.clone().topology("ring:4").unwrap(), 4).contains("complete network only"));
        assert!(e(oem.clone().topology("ring:5").unwrap(), 4).contains("5 nodes"));
        assert!(e(oem.clone().procs_per_group(Some(2)), 4).contains("only hybrid"));
        assert!(e(oem.timeout(Duration::ZERO), 4).contains("timeout"));
        assert!(BalancerConfig::new("nope").is_err());
        assert!(
            BalancerConfig::new("oem")
                .unwrap()
                .topology("ring")
                .is_err()
        );
    }
}
