//! How a [`Balancer`](super::Balancer) decides: its rule and its options (the table of
//! [`crate::options`]), resolved against the group's size.

use super::error::{ConfigError, PeerError};
use super::faults::Fault;
use super::options::{
    EntryTimeout, Options, Speeds, TOPOLOGY_FROM_GEOMETRY, TOPOLOGY_FROM_GROUP, TopologySource,
};
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::algorithm::{Algorithm, Family};
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

/// How many measured moves the learned cost model is fitted to
/// ([`BalancerConfig::learn_cost`]).
pub const LEARNED_SAMPLES: usize = 16;

/// The rule of a balancer: one of the core's, or `auto` (the best candidate at each call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rule {
    One(Algorithm),
    Auto,
}

/// Everything a [`Balancer`](super::Balancer) needs besides its communicator: the rule and
/// the [`Options`]. Every rank of the group must use the same configuration (the ranks check
/// that they agree).
///
/// Options are set by name from text ([`BalancerConfig::set`], as every face does) or by the
/// typed builder methods; either way their bounds are checked once, by the table of
/// [`crate::options`].
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
/// let same = BalancerConfig::new("dishet")
///     .unwrap()
///     .set_pairs("topology=ring:6; speeds=measured")
///     .unwrap();
/// assert_eq!(same.options(), cfg.options());
/// assert!(BalancerConfig::new("dem-superb").is_err());
/// ```
#[derive(Debug, Clone)]
#[must_use = "a configuration does nothing until a Balancer is built with it"]
pub struct BalancerConfig {
    rule: Rule,
    pub(crate) options: Options,
    /// The network of `options.topology` (read and built when it was set), or one given
    /// built ([`BalancerConfig::network`]), with its label.
    network: Option<(String, Network)>,
    pub(crate) fault: Fault,
}

impl BalancerConfig {
    /// A configuration for `rule`: any name `hetlb balance --algorithm` accepts (`dem`,
    /// `dem-fixed`, `dem-improved`, `dem-hetero`, `oem`, `cwa`, `hybrid`, `dishet`,
    /// `diffusion`, `random-biasing`, `dynamic-biasing`, `gdem`), or `auto`; every option at
    /// its default ([`Options::default`]).
    ///
    /// # Errors
    /// [`PeerError::Config`] for an unknown rule.
    pub fn new(rule: &str) -> Result<Self, PeerError> {
        if rule.trim() == AUTO {
            return Ok(Self::with_rule(Rule::Auto));
        }
        let algorithm =
            rule.trim()
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
        Self::with_rule(Rule::One(algorithm))
    }

    fn with_rule(rule: Rule) -> Self {
        Self {
            rule,
            options: Options::default(),
            network: None,
            fault: Fault::default(),
        }
    }

    /// Sets the option `name` from its text, as [`Options::set`] does; a `topology` is read
    /// and built at once.
    ///
    /// # Errors
    /// [`PeerError::Config`] naming the option ([`ConfigError::Option`],
    /// [`ConfigError::UnknownOption`], or a topology's own error).
    pub fn set(mut self, name: &str, value: &str) -> Result<Self, PeerError> {
        match crate::options::OptionInfo::find(name)?.name {
            "topology" => self.topology(value),
            "candidates" if !self.is_auto() => Err(option(
                "candidates",
                format!("only rule auto has candidates, not {}", self.rule_name()),
            )),
            _ => {
                self.options.set(name, value)?;
                Ok(self)
            }
        }
    }

    /// Sets options from `key=value` pairs separated by `;` (the C options string), in order.
    ///
    /// # Errors
    /// As [`BalancerConfig::set`], and [`ConfigError::Syntax`] for a string that is not
    /// pairs.
    pub fn set_pairs(mut self, text: &str) -> Result<Self, PeerError> {
        for (key, value) in crate::options::pairs(text)? {
            self = self.set(key, value)?;
        }
        Ok(self)
    }

    /// The options.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// The value of option `name` as text (`None` when unset or not an option).
    pub fn get(&self, name: &str) -> Option<String> {
        self.options.get(name)
    }

    /// Rule `auto`'s candidates: at every call, plan each of `candidates` on the gathered
    /// loads, predict each at the measured speeds ([`hetlb_core::advice::Prediction`]) and
    /// follow the one with the best predicted net gain over the trigger's horizon (1
    /// iteration with [`Trigger::Always`]), less what that candidate's earlier moves fell
    /// short of their predictions (its learned shortfall, in the report's `alternatives`).
    /// An empty list means the default set for the network ([`default_candidates`]): `cwa`,
    /// `dem-hetero`, `oem` and `dishet` on a hypercube or the complete network, `dishet` and
    /// `gdem` elsewhere. Until every rank has a measured speed the first candidate runs
    /// alone. Only rule `auto` has candidates (a [`Balancer`](super::Balancer) of another
    /// rule refuses them), and it needs measured speeds ([`Speeds::Measured`]).
    pub fn candidates(mut self, candidates: Vec<Algorithm>) -> Self {
        self.options.candidates = Some(candidates);
        self
    }

    /// How the plan's units travel ([`Routing`]): hop by hop as the rule moves them (the
    /// papers' routing, the default), or each unit once, straight from the rank that holds
    /// it to the rank where the plan ends it — every rank reaches every other on threads and
    /// on MPI. Direct routing moves the fewest units the start and end vectors allow
    /// ([`hetlb_core::routing::direct`]) in one phase.
    pub fn routing(mut self, routing: Routing) -> Self {
        self.options.routing = routing;
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
        self.options.learn_cost = on;
        self
    }

    /// With the trigger `auto`: the share of the application's iteration time that checking
    /// may cost (default [`DEFAULT_CHECK_BUDGET`](crate::options::DEFAULT_CHECK_BUDGET), 1%;
    /// 0 checks at every call). A check is a collective call: its gather, the candidates'
    /// plans and the predictions. After a check that moved, the next call checks again; after
    /// one that did not, the interval doubles, up to `k = ⌈c ÷ (budget · t)⌉` calls when a
    /// check costs `c` seconds and an iteration `t` (at most the trigger's horizon). The
    /// calls between checks return at once, without a message
    /// ([`Report::checked`](super::Report::checked) false). Every rank computes the same `k`
    /// from the call's gather (the slowest rank's last check and last step), so the ranks
    /// check at the same calls. A check's cost is its gather and plans; the moves it makes
    /// are weighed by the trigger itself.
    pub fn check_budget(mut self, budget: f64) -> Self {
        self.options.check_budget = budget;
        self
    }

    /// True for rule `auto` (it chooses among candidates).
    pub(crate) fn is_auto(&self) -> bool {
        self.rule == Rule::Auto
    }

    /// The rule's name as configured: `auto`, or the algorithm's name.
    pub fn rule_name(&self) -> &'static str {
        match self.rule {
            Rule::Auto => AUTO,
            Rule::One(a) => a.name(),
        }
    }

    /// The routing.
    pub fn routing_kind(&self) -> Routing {
        self.options.routing
    }

    /// The rules this configuration may run on `network`: the rule, or `auto`'s candidates.
    fn rules_on(&self, network: &Network) -> Vec<Algorithm> {
        self.candidate_list(network)
            .unwrap_or_else(|| vec![self.algorithm()])
    }

    /// The rules named so far (`auto` without candidates names none).
    fn named_rules(&self) -> Vec<Algorithm> {
        match self.rule {
            Rule::One(a) => vec![a],
            Rule::Auto => self.options.candidates.clone().unwrap_or_default(),
        }
    }

    /// True when the rule (or a candidate named for `auto`) runs on a hypercube only.
    fn needs_hypercube(&self) -> bool {
        self.named_rules().iter().any(|a| a.needs_hypercube())
    }

    /// Whether the rule runs on a rank graph that follows the items' geometry when they give
    /// positions: `topology=geometric`, or a diffusion rule with no topology named.
    pub(crate) fn follows_geometry(&self) -> bool {
        let diffusion = !self.is_auto() && self.algorithm().family() == Family::Diffusion;
        match self.options.topology_source {
            TopologySource::Geometry => diffusion,
            TopologySource::Named => {
                diffusion && self.options.topology.is_none() && self.network.is_none()
            }
            _ => false,
        }
    }

    /// Rule `auto` with its default candidates.
    fn default_auto(&self) -> bool {
        self.is_auto() && self.options.candidates.as_ref().is_none_or(Vec::is_empty)
    }

    /// The first rule that needs a hypercube, for messages.
    fn hypercube_rule_name(&self) -> &'static str {
        self.named_rules()
            .iter()
            .find(|a| a.needs_hypercube())
            .map_or(self.rule_name(), |a| a.name())
    }

    /// The candidates of rule `auto` on `network` (`None` for a single rule).
    pub(crate) fn candidate_list(&self, network: &Network) -> Option<Vec<Algorithm>> {
        if !self.is_auto() {
            return None;
        }
        match &self.options.candidates {
            Some(list) if !list.is_empty() => Some(list.clone()),
            _ => Some(default_candidates(network)),
        }
    }

    /// The ranks' topology as a spec (`ring:8`, `torus:2x4`, `hypercube:3`, `random:8:0.5:1`,
    /// `file:PATH` …), with as many nodes as there are ranks; read and built at once. Without
    /// it: a hypercube when the rank count is a power of two; otherwise the complete network
    /// for the hypercube rules and `auto` (they run embedded in a cube,
    /// [`hetlb_core::embedding`]) and a ring for the diffusion rules.
    ///
    /// # Errors
    /// [`PeerError::Config`] for a spec that cannot be parsed or built, or a file that cannot
    /// be read.
    pub fn topology(mut self, spec: &str) -> Result<Self, PeerError> {
        if [TOPOLOGY_FROM_GROUP, TOPOLOGY_FROM_GEOMETRY].contains(&spec.trim()) {
            self.network = None;
            self.options.set("topology", spec)?;
            return Ok(self);
        }
        self.options.topology_source = TopologySource::Named;
        let parsed: TopologySpec = spec.trim().parse().map_err(ConfigError::TopologySpec)?;
        let network = parsed
            .build_reading(None, None, MAX_TOPOLOGY_FILE_BYTES)
            .map_err(ConfigError::from)?;
        self.network = Some((parsed.to_string(), network));
        self.options.topology = Some(parsed);
        Ok(self)
    }

    /// The ranks' topology as a built network, named `label` in reports and dumps.
    pub fn network(mut self, label: impl Into<String>, network: Network) -> Self {
        self.network = Some((label.into(), network));
        self.options.topology = None;
        self.options.topology_source = TopologySource::Named;
        self
    }

    /// The configuration with `topology=mpi` resolved against `group`: the network is the
    /// neighbourhood the application declared on the group's communicator. Unchanged when
    /// the topology is not `mpi`.
    ///
    /// # Errors
    /// [`PeerError::Config`] naming `topology` when the group's communicator has no topology
    /// (threads never have one), or its graph is not connected.
    pub(crate) fn on_group<G: hetlb_transport::Group>(self, group: &G) -> Result<Self, PeerError> {
        if self.options.topology_source != TopologySource::Communicator {
            return Ok(self);
        }
        let Some(graph) = group.rank_graph() else {
            return Err(option(
                "topology",
                format!(
                    "mpi: the {} group's communicator carries no topology; build it with \
                     MPI_Cart_create, MPI_Graph_create or MPI_Dist_graph_create_adjacent, or \
                     name the network (grid:AxB, ring:N, ...)",
                    group.backend()
                ),
            ));
        };
        let (label, network) = crate::rank_graph::network_of(graph)
            .map_err(|e| option("topology", format!("mpi: {e}")))?;
        let mut config = self.network(label, network);
        config.options.topology_source = TopologySource::Communicator;
        Ok(config)
    }

    /// Where the capacities come from.
    pub fn speeds(mut self, speeds: Speeds) -> Self {
        if let Speeds::Measured { window } = speeds {
            self.options.window = window;
        }
        self.options.speeds = speeds;
        self
    }

    /// How items are put on the links: phased, overlapped or pipelined (Rim, Jang & Kim
    /// 2003, §6). [`Schedule::PipelinePerProcessor`] is a model of the paper's pseudo-code,
    /// not a way to move items: [`crate::Balancer::new`] refuses it.
    pub fn schedule(mut self, schedule: Schedule) -> Self {
        self.options.schedule = schedule;
        self
    }

    /// Silence after which a peer that takes part in the call is judged to have stopped
    /// answering (default 10 s). A peer proves it is alive while it waits in the call; a
    /// peer that has not reached the call yet is busy, not silent (see
    /// [`BalancerConfig::entry_timeout`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.options.timeout = timeout;
        self
    }

    /// How long a rank that has reached a call waits for a peer that has not, before it names
    /// it ([`EntryTimeout`]; `Some(d)` or a `Duration`: after `d`; `None`: no limit).
    /// Default: as long as the call's timeout. Every rank that reached the call then returns
    /// [`PeerFailure::NotArrived`](crate::PeerFailure::NotArrived) naming the peer, and the
    /// peer, when it arrives, finds the call given up; the group has lost it
    /// ([`PeerError::GroupLost`](crate::PeerError::GroupLost)). A peer only slow to arrive is
    /// named too: raise the limit where ranks reach a call far apart.
    pub fn entry_timeout(mut self, timeout: impl Into<EntryTimeout>) -> Self {
        self.options.entry_timeout = timeout.into();
        self
    }

    /// `P` of `hybrid` (OEM within groups of `P` ranks, then CWA).
    pub fn procs_per_group(mut self, p: Option<usize>) -> Self {
        self.options.procs_per_group = p;
        self
    }

    /// Round limit of the diffusion rules (default 100,000, as `hetlb balance`).
    pub fn max_rounds(mut self, rounds: Option<u64>) -> Self {
        self.options.max_rounds = rounds;
        self
    }

    /// Seed of `random-biasing`'s draws.
    pub fn seed(mut self, seed: u64) -> Self {
        self.options.seed = seed;
        self
    }

    /// `λ` of `gdem` (default: the network's optimal or 1/2).
    pub fn lambda(mut self, lambda: Option<f64>) -> Self {
        self.options.lambda = lambda;
        self
    }

    /// A fault to inject into this rank's calls (the fault harness and demonstrations; only
    /// with the feature `fault-injection`).
    #[cfg(feature = "fault-injection")]
    pub fn fault(mut self, fault: Fault) -> Self {
        self.fault = fault;
        self
    }

    /// Where nothing is serialised (threads), whether to count the bytes the items sent would
    /// take on the wire, for reports (on by default; it costs one serialisation pass over the
    /// items sent, without copying).
    pub fn count_bytes(mut self, on: bool) -> Self {
        self.options.count_bytes = on;
        self
    }

    /// Writes a trace of every call to `path` in the Trace Event format (the option `trace`;
    /// docs/observe.md). The file is created when the balancer is built — a path that cannot
    /// be written is refused then — and written when the last balancer sharing it is dropped.
    ///
    /// # Example
    /// ```
    /// use hetlb_peer::{Balancer, BalancerConfig};
    /// use hetlb_transport::threads;
    /// let path = std::env::temp_dir().join(format!("hetlb-config-trace-{}.json", std::process::id()));
    /// let member = threads::group(1).pop().unwrap();
    /// let b = Balancer::<u64, _>::new(&member, BalancerConfig::new("dem").unwrap().trace(&path)).unwrap();
    /// drop(b); // the trace is written
    /// assert!(std::fs::read_to_string(&path).unwrap().contains("\"traceEvents\""));
    /// std::fs::remove_file(&path).unwrap();
    /// ```
    pub fn trace(mut self, path: impl Into<std::path::PathBuf>) -> Self {
        self.options.trace = Some(path.into());
        self
    }

    /// When a call moves ([`Trigger`]): `Always` (the default, every call carries out its
    /// plan) or `Auto { horizon, margin }`: the call moves only when the gain predicted over
    /// `horizon` iterations exceeds `margin` times the move's predicted cost
    /// ([`hetlb_core::advice`]); otherwise every rank keeps its items and the report says
    /// `held_back`. `Auto` needs measured speeds ([`Speeds::Measured`]): the gain is in
    /// seconds. Until every rank has a measured speed the call moves as with `Always`.
    pub fn trigger(mut self, trigger: Trigger) -> Self {
        self.options.trigger = trigger;
        self
    }

    /// The cost of moving that the trigger weighs: seconds per message, and per *unit* of
    /// load in the field `seconds_per_byte` (Hockney's α and β with units in place of bytes:
    /// the balancer predicts with one byte per unit), the same on every rank. Default: free
    /// ([`CostModel::FREE`]), so `Auto` moves whenever the predicted gain is positive.
    pub fn cost_model(mut self, model: CostModel) -> Self {
        self.options.move_cost = model;
        self
    }

    /// The trigger.
    pub fn trigger_kind(&self) -> Trigger {
        self.options.trigger
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
        self.options.timeout
    }

    /// The rule (for `auto`: the first candidate named, which runs until every speed is
    /// measured, or `cwa`).
    pub fn algorithm(&self) -> Algorithm {
        match self.rule {
            Rule::One(a) => a,
            Rule::Auto => self
                .options
                .candidates
                .as_ref()
                .and_then(|c| c.first().copied())
                .unwrap_or(Algorithm::Cwa),
        }
    }

    /// The schedule.
    pub fn schedule_kind(&self) -> Schedule {
        self.options.schedule
    }

    /// The speeds.
    pub fn speeds_kind(&self) -> &Speeds {
        &self.options.speeds
    }

    /// Checks the configuration against `ranks` ranks and returns the topology's label and
    /// network. Nothing has moved when this fails.
    pub(crate) fn resolve(&self, ranks: usize) -> Result<(String, Network), PeerError> {
        self.options.validate()?;
        self.check_rule_options()?;
        if ranks == 0 {
            return Err(PeerError::invalid("a group needs at least one rank"));
        }
        if let Speeds::Fixed(c) = &self.options.speeds
            && c.len() != ranks
        {
            return Err(option(
                "speeds",
                format!("{} capacities given for {ranks} ranks", c.len()),
            ));
        }
        let (label, network) = self.network_for(ranks)?;
        if network.node_count() != ranks {
            return Err(option(
                "topology",
                format!(
                    "{label} has {} nodes but there are {ranks} ranks",
                    network.node_count()
                ),
            ));
        }
        if self.needs_hypercube() && !network.runs_hypercube_rules() {
            return Err(option(
                "rule",
                format!(
                    "{} runs on a hypercube or a complete network only, not on {label} (use \
                     gdem, dishet or diffusion on other networks)",
                    self.hypercube_rule_name()
                ),
            ));
        }
        self.check_rule_parameters(&self.rules_on(&network))?;
        Ok((label, network))
    }

    /// What the rule asks of the other options, whatever the group.
    fn check_rule_options(&self) -> Result<(), PeerError> {
        let measured = matches!(self.options.speeds, Speeds::Measured { .. });
        if matches!(self.options.trigger, Trigger::Auto { .. }) && !measured {
            return Err(option(
                "trigger",
                "auto weighs seconds: it needs measured speeds",
            ));
        }
        if self.options.candidates.is_some() && !self.is_auto() {
            return Err(option(
                "candidates",
                format!("only rule auto has candidates, not {}", self.rule_name()),
            ));
        }
        if self.is_auto() && !measured {
            return Err(option(
                "rule",
                "auto compares predicted seconds: it needs measured speeds",
            ));
        }
        if matches!(self.options.speeds, Speeds::Fixed(_) | Speeds::Own(_))
            && !self.is_auto()
            && !self.algorithm().uses_capacities()
        {
            return Err(option(
                "speeds",
                format!(
                    "{} is capacity-blind: it balances equal shares and would ignore the \
                     capacities; use cwa, dem-hetero, hybrid, dishet or a diffusion rule, or \
                     speeds=equal",
                    self.rule_name()
                ),
            ));
        }
        if self.options.topology_source == TopologySource::Geometry
            && (self.is_auto() || self.algorithm().family() != Family::Diffusion)
        {
            return Err(option(
                "topology",
                format!(
                    "geometric: only the diffusion rules (dishet, diffusion, gdem, \
                     random-biasing, dynamic-biasing) run on a graph that follows the \
                     geometry, not {}; the hypercube rules follow it with routing=direct",
                    self.rule_name()
                ),
            ));
        }
        Ok(())
    }

    /// The network named, or the default for `ranks` ranks.
    fn network_for(&self, ranks: usize) -> Result<(String, Network), PeerError> {
        if let Some((label, network)) = &self.network {
            return Ok((label.clone(), network.clone()));
        }
        let spec = match &self.options.topology {
            Some(spec) => spec.clone(),
            None if ranks.is_power_of_two() => TopologySpec::Hypercube(ranks.trailing_zeros()),
            None if self.needs_hypercube() && ranks > MAX_COMPLETE_DEFAULT => {
                return Err(option(
                    "rule",
                    format!(
                        "{} on {ranks} ranks: off a power of two the hypercube rules run on \
                         complete:N, built for at most {MAX_COMPLETE_DEFAULT} ranks (its edges \
                         grow as N²); use a power of two, or a diffusion rule",
                        self.hypercube_rule_name()
                    ),
                ));
            }
            // Every rank reaches every other: the hypercube rules run embedded in a cube
            // (auto's default candidates too, where the complete network is not too large).
            None if self.needs_hypercube()
                || (self.default_auto() && ranks <= MAX_COMPLETE_DEFAULT) =>
            {
                TopologySpec::Complete(ranks)
            }
            // Not a power of two, so at least 3 ranks: a ring exists.
            None => TopologySpec::Ring(ranks),
        };
        let network = spec
            .build_reading(None, None, MAX_TOPOLOGY_FILE_BYTES)
            .map_err(ConfigError::from)?;
        Ok((spec.to_string(), network))
    }

    /// The options that belong to one rule only, against the rules that may run.
    fn check_rule_parameters(&self, rules: &[Algorithm]) -> Result<(), PeerError> {
        let o = &self.options;
        if o.procs_per_group.is_some() && !rules.contains(&Algorithm::Hybrid) {
            return Err(option(
                "procs_per_group",
                format!("only hybrid has groups, not {}", self.rule_name()),
            ));
        }
        if o.lambda.is_some() && !rules.contains(&Algorithm::Gdem) {
            return Err(option(
                "lambda",
                format!("only gdem has one, not {}", self.rule_name()),
            ));
        }
        if o.max_rounds.is_some() && rules.iter().all(|a| a.needs_hypercube()) {
            return Err(option(
                "max_rounds",
                format!(
                    "{} runs one phase per dimension and has no round limit",
                    self.rule_name()
                ),
            ));
        }
        Ok(())
    }
}

/// A [`ConfigError::Option`] as a [`PeerError`].
fn option(name: &'static str, reason: impl Into<String>) -> PeerError {
    ConfigError::option(name, reason).into()
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
        let cwa = BalancerConfig::new("cwa").unwrap();
        assert!(
            e(cwa.clone().speeds(Speeds::Fixed(vec![1.0; 3])), 4)
                .contains("speeds: 3 capacities given for 4 ranks")
        );
        assert!(
            e(
                cwa.clone().speeds(Speeds::Fixed(vec![1.0, 0.0, 1.0, 1.0])),
                4
            )
            .contains("capacity 2")
        );
        // A capacity-blind rule refuses capacities rather than ignoring them.
        for speeds in [Speeds::Fixed(vec![1.0; 4]), Speeds::Own(2.5)] {
            let text = e(oem.clone().speeds(speeds), 4);
            assert!(text.contains("capacity-blind"), "{text}");
        }
        assert!(e(cwa.speeds(Speeds::Own(-1.0)), 4).contains("positive"));
        assert!(e(oem.clone().topology("ring:4").unwrap(), 4).contains("complete network only"));
        assert!(e(oem.clone().topology("ring:5").unwrap(), 4).contains("5 nodes"));
        assert!(e(oem.clone().procs_per_group(Some(2)), 4).contains("only hybrid"));
        assert!(e(oem.timeout(Duration::ZERO), 4).contains("timeout"));
        let unknown = BalancerConfig::new("nope").unwrap_err().to_string();
        assert_eq!(unknown.matches("dishet,").count(), 1, "{unknown}");
        assert!(unknown.starts_with("unknown rule 'nope'") && unknown.contains("auto"));
        assert!(
            BalancerConfig::new("oem")
                .unwrap()
                .topology("ring")
                .is_err()
        );
    }

    #[test]
    fn errors_between_options_name_the_option() {
        let name = |c: BalancerConfig| match c.resolve(4).unwrap_err() {
            PeerError::Config(e) => e.option_name(),
            other => panic!("{other}"),
        };
        let dem = BalancerConfig::new("dem").unwrap();
        let auto_trigger = Trigger::Auto {
            horizon: 1,
            margin: 1.0,
        };
        assert_eq!(
            name(dem.clone().candidates(vec![Algorithm::Cwa])),
            Some("candidates")
        );
        assert_eq!(name(dem.clone().trigger(auto_trigger)), Some("trigger"));
        assert_eq!(name(BalancerConfig::new("auto").unwrap()), Some("rule"));
        assert_eq!(name(dem.clone().lambda(Some(0.5))), Some("lambda"));
        assert_eq!(name(dem.clone().max_rounds(Some(5))), Some("max_rounds"));
        assert_eq!(name(dem.clone().topology("ring:4").unwrap()), Some("rule"));
        assert_eq!(
            name(dem.clone().speeds(Speeds::Fixed(vec![1.0; 3]))),
            Some("speeds")
        );
        // Set by name, the same checks.
        let e = dem.clone().set("timeout", "0").unwrap_err();
        assert!(matches!(
            e,
            PeerError::Config(ConfigError::Option {
                name: "timeout",
                ..
            })
        ));
        let e = dem.clone().set("topology", "ring").unwrap_err();
        assert!(matches!(&e, PeerError::Config(c) if c.option_name() == Some("topology")));
        let c = dem.set_pairs("topology=ring:4;speeds=measured").unwrap();
        assert_eq!(c.get("topology").as_deref(), Some("ring:4"));
        assert!(c.check(4).is_err(), "dem needs a hypercube");
    }
}
