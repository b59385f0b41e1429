//! The embeddable collective: [`Balancer::rebalance`], or [`Balancer::plan`] and
//! [`Balancer::migrate`] separately; [`Balancer::barrier`] and [`Balancer::check`] between
//! calls.

use super::agreement::COORDINATOR;
use super::config::{BalancerConfig, LEARNED_SAMPLES};
use super::decide::{Migration, RuleInputs, advise, decide, imbalance, max_step};
use super::error::{PeerError, PeerFailure, PlanError};
use super::gather::{all_gather, barrier};
use super::holdings::Aside;
use super::item::Item;
use super::learning::{CostLearner, PendingOutcome, Shortfalls};
use super::migrate::{Failed, carry_out};
use super::options::Speeds;
use super::probe::probe;
use super::report::Report;
use super::session::{Mailbox, Session, SessionSettings, TICK, Traffic, take_ask};
use super::speed::SpeedMeter;
use super::store::{Bytes, ItemKind, RecordBuffer, Records, Store};
use super::wire::{Msg, RankState, WireOutcome};
use hetlb_core::advice::{Advice, CostModel, Trigger};
use hetlb_core::topology::Network;
use hetlb_transport::{Envelope, Group, Liveness, Transport};
use std::time::Instant;

/// What a deciding call gathered: every rank's state and what the rule needs from it.
struct Gathered {
    states: Vec<RankState>,
    capacities: Option<Vec<f64>>,
    measured_speeds: Option<Vec<f64>>,
    cost_model: CostModel,
    shortfalls: Shortfalls,
}

/// A call whose outcome this rank does not know yet, and the items it keeps aside meanwhile.
struct Doubt<C> {
    epoch: u64,
    coordinator: usize,
    aside: Aside<C>,
}

/// One rank's balancer: built once, called at the same point of every rank's loop.
///
/// Every rank of the group builds a balancer with the same [`BalancerConfig`] from its
/// membership in the group ([`hetlb_transport::threads::group`], or
/// `hetlb_transport::mpi::Mpi` over the application's MPI communicator) and calls
/// [`Balancer::rebalance`] collectively. Each balancer opens its own endpoint of the group's
/// transport: build them in the same order on every rank.
///
/// `K` is what it moves ([`ItemKind`]): the application's [`Item`] type, kept in a `Vec`
/// ([`Balancer::rebalance`]), or [`Bytes`], fixed-size byte records kept in one buffer
/// ([`Balancer::rebalance_records`]). Both run the same protocol with the same guarantees.
///
/// # Example
/// Four threads, one holding every item, balanced with the odd–even method:
/// ```
/// use hetlb_peer::{Balancer, BalancerConfig};
/// use hetlb_transport::threads;
/// let handles: Vec<_> = threads::group(4)
///     .into_iter()
///     .map(|member| {
///         std::thread::spawn(move || {
///             let first = member.rank() == 0;
///             let mut items: Vec<u64> = if first { (0..30).collect() } else { Vec::new() };
///             let mut b = Balancer::new(&member, BalancerConfig::new("oem").unwrap()).unwrap();
///             let report = b.rebalance(&mut items).unwrap();
///             assert_eq!(report.loads_after, report.planned_after);
///             items
///         })
///     })
///     .collect();
/// let mut all: Vec<u64> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
/// all.sort_unstable();
/// assert_eq!(all, (0..30).collect::<Vec<u64>>()); // every item exactly once
/// ```
pub struct Balancer<K: ItemKind, G: Group> {
    ep: G::Endpoint<Msg<K::Chunk>>,
    rank: usize,
    size: usize,
    backend: &'static str,
    config: BalancerConfig,
    label: String,
    network: Network,
    fingerprint: u64,
    epoch: u64,
    mailbox: Mailbox<K::Chunk>,
    meter: SpeedMeter,
    doubt: Option<Doubt<K::Chunk>>,
    learner: CostLearner,
    pending: PendingOutcome,
    /// Rule `auto`: the group's shortfalls per candidate (rank 0's, adopted at every call).
    shortfalls: Shortfalls,
    last_step_seconds: Option<f64>,
    /// Seconds of this rank's last check (gather and plans; the move is not a check's cost).
    last_check_seconds: Option<f64>,
    /// Calls the trigger `auto` skips before it checks again.
    skip_left: u64,
    /// The interval between the last two checks, and the most the budget allows.
    interval: u64,
    check_cap: u64,
    /// The call and the messages of its all-gather and probe (counted in the call's report).
    gather_traffic: (u64, Traffic),
    /// True once this rank has run the cost probe ([`super::probe`]).
    probed: bool,
}

impl<K: ItemKind, G: Group> std::fmt::Debug for Balancer<K, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Balancer")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("algorithm", &self.config.algorithm().name())
            .field("topology", &self.label)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl<K: ItemKind, G: Group> Balancer<K, G> {
    /// A balancer for this rank of `group`. Checks the configuration against the group's
    /// size and opens the balancer's endpoint; nothing is sent.
    ///
    /// # Errors
    /// [`PeerError::Config`]: a hypercube rule on a rank count that is not a power of two, a
    /// topology of another size, capacities of the wrong length or not positive, an option
    /// the rule does not have. [`PeerError::Transport`] when the endpoint cannot be opened.
    pub fn new(group: &G, config: BalancerConfig) -> Result<Self, PeerError> {
        let size = group.size();
        let (label, network) = config.resolve(size)?;
        let window = match config.options.speeds {
            Speeds::Measured { window } => window,
            _ => 1,
        };
        let fingerprint = fingerprint(&config, &label, &network, size);
        let ep = group.open::<Msg<K::Chunk>>()?;
        Ok(Self {
            ep,
            rank: group.rank(),
            size,
            backend: group.backend(),
            config,
            label,
            network,
            fingerprint,
            epoch: 0,
            mailbox: Mailbox::new(size),
            meter: SpeedMeter::new(window),
            doubt: None,
            learner: CostLearner::new(LEARNED_SAMPLES),
            pending: PendingOutcome::default(),
            shortfalls: Shortfalls::default(),
            last_step_seconds: None,
            last_check_seconds: None,
            skip_left: 0,
            interval: 1,
            check_cap: 1,
            gather_traffic: (0, Traffic::default()),
            probed: false,
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The topology's spec (`hypercube:3`, `ring:6`, …).
    pub fn topology(&self) -> &str {
        &self.label
    }

    /// The configuration.
    pub fn config(&self) -> &BalancerConfig {
        &self.config
    }

    /// Reports that this rank processed `units` units of work in `seconds` (measured speeds;
    /// ignored otherwise). Call it once per step of the application's loop.
    pub fn record(&mut self, units: u64, seconds: f64) {
        self.meter.record(units, seconds);
        if seconds.is_finite() && seconds >= 0.0 {
            self.last_step_seconds = Some(seconds);
        }
    }

    /// This rank's measured speed (units per second), once it has one.
    pub fn speed(&self) -> Option<f64> {
        self.meter.speed()
    }

    fn session(&mut self) -> Session<'_, K::Chunk, G::Endpoint<Msg<K::Chunk>>> {
        Session::new(
            &self.ep,
            &mut self.mailbox,
            SessionSettings {
                epoch: self.epoch,
                timeout: self.config.options.timeout,
                entry_timeout: self.config.options.entry_timeout,
                count_bytes: self.config.options.count_bytes,
            },
        )
    }

    /// Starts a new call: the next epoch; the ledger forgets what this rank no longer needs.
    fn begin(&mut self) -> Result<(), PeerError> {
        if let Some(d) = &self.doubt {
            return Err(PeerError::Unresolved {
                epoch: d.epoch,
                items_aside: d.aside.len() as u64,
            });
        }
        self.epoch += 1;
        if let Some(ledger) = self.ep.ledger() {
            ledger.release(self.rank, self.epoch);
        }
        Ok(())
    }

    fn decide_now(
        &mut self,
        items: usize,
        units: Option<u64>,
        shape: u64,
    ) -> Result<Migration, PeerError> {
        let start = Instant::now();
        let g = self.gather_inputs(items, units, shape)?;
        let (states, inputs) = self.rule_inputs(g);
        let mut migration = decide(self.epoch, &states, inputs)?;
        migration.decide_seconds = start.elapsed().as_secs_f64();
        Ok(migration)
    }

    /// Advice for a store: [`Balancer::advise`] for any kind of items.
    fn advise_now(
        &mut self,
        items: usize,
        units: Option<u64>,
        shape: u64,
    ) -> Result<Advice, PeerError> {
        self.begin()?;
        let g = self.gather_inputs(items, units, shape)?;
        let (states, inputs) = self.rule_inputs(g);
        advise(&states, inputs)
    }

    /// The rule's inputs from a call's gathered parts (moved, not copied), and the states.
    fn rule_inputs(&self, g: Gathered) -> (Vec<RankState>, RuleInputs<'_>) {
        let inputs = RuleInputs {
            algorithm: self.config.algorithm(),
            candidates: self.config.candidate_list(&self.network),
            routing: self.config.options.routing,
            network: &self.network,
            label: &self.label,
            capacities: g.capacities,
            measured_speeds: g.measured_speeds,
            procs_per_group: self.config.options.procs_per_group,
            max_rounds: self.config.options.max_rounds,
            seed: self.config.options.seed,
            lambda: self.config.options.lambda,
            schedule: self.config.options.schedule,
            trigger: self.config.options.trigger,
            cost_model: g.cost_model,
            shortfalls: g.shortfalls,
        };
        (g.states, inputs)
    }

    /// The start of every deciding call: the probe (once), the all-gather of every rank's
    /// state, the check that the ranks are configured alike, and what the rule needs.
    fn gather_inputs(
        &mut self,
        items: usize,
        units: Option<u64>,
        shape: u64,
    ) -> Result<Gathered, PeerError> {
        let me = self.rank;
        let mut probed = Traffic::default();
        if self.config.options.learn_cost && !self.probed {
            // Every rank probes at its first deciding call, whatever comes of it.
            self.probed = true;
            let mut session = self.session();
            match probe(&mut session) {
                Ok(samples) => {
                    probed = session.finish();
                    if let Some(samples) = samples {
                        self.learner.observe_probe(samples);
                    }
                }
                Err(e) => return Err(session.give_up(e)),
            }
        }
        let Some(units) = units else {
            // The others wait for this rank's load: tell them.
            let mut session = self.session();
            return Err(session.give_up(PlanError::UnitsOverflow { rank: me }.into()));
        };
        // The store's shape (the record size) joins the digest: ranks holding records of
        // different sizes disagree before anything moves.
        let fingerprint = self.fingerprint ^ shape.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mine = RankState {
            rank: me as u32,
            units,
            items: items as u64,
            speed: match self.config.options.speeds {
                Speeds::Measured { .. } => self.meter.speed(),
                _ => None,
            },
            fingerprint,
            model: self
                .learner
                .model()
                .filter(|_| self.config.options.learn_cost),
            step_seconds: self.last_step_seconds,
            call_seconds: self.last_check_seconds,
            shortfalls: (me == 0 && self.config.is_auto()).then_some(self.shortfalls),
        };
        let mut session = self.session();
        let states = match all_gather(&mut session, mine) {
            Ok(s) => s,
            Err(e) => return Err(session.give_up(e)),
        };
        let gathered = session.finish();
        self.gather_traffic = (self.epoch, gathered.plus(probed));
        if let Some(s) = states.iter().find(|s| s.fingerprint != fingerprint) {
            return Err(PeerError::Mismatch(format!(
                "rank {} is configured differently from rank {} (rule, topology, speeds, \
                 schedule, options or record size)",
                s.rank, me
            )));
        }
        let (capacities, measured_speeds) = match &self.config.options.speeds {
            Speeds::Equal => (None, None),
            Speeds::Fixed(c) => (Some(c.clone()), None),
            Speeds::Measured { .. } => {
                let speeds: Option<Vec<f64>> = states.iter().map(|s| s.speed).collect();
                // In units of the slowest rank: proportional shares do not depend on the
                // scale, but dem-hetero's last-dimension test (a gap of more than one task per
                // unit of capacity, Chau & Fu Fig. 5) does, and reads capacities as processor
                // counts.
                let capacities = speeds.as_ref().map(|v| {
                    let slowest = v.iter().copied().fold(f64::INFINITY, f64::min);
                    v.iter().map(|x| x / slowest).collect()
                });
                (capacities, speeds)
            }
        };
        self.check_cap = self.check_cap(&states);
        // Rank 0's learned model is the group's, so that every rank predicts alike.
        let cost_model = match states.first().and_then(|s| s.model) {
            Some(learned) if self.config.options.learn_cost => learned,
            _ => self.config.options.move_cost,
        };
        // Rank 0's shortfalls are the group's; every rank measures the last move alike.
        let mut shortfalls = states
            .first()
            .and_then(|s| s.shortfalls)
            .unwrap_or_default();
        shortfalls.settle(max_step(&states));
        self.shortfalls = shortfalls;
        Ok(Gathered {
            states,
            capacities,
            measured_speeds,
            cost_model,
            shortfalls,
        })
    }

    /// Decides for a store: [`Balancer::plan`] for any kind of items.
    fn plan_store<S: Store<Chunk = K::Chunk>>(
        &mut self,
        items: &S,
    ) -> Result<Migration, PeerError> {
        self.begin()?;
        self.decide_now(items.len(), items.units(), items.shape())
    }

    /// Carries out `migration` on a store: [`Balancer::migrate`] for any kind of items.
    fn migrate_store<S: Store<Chunk = K::Chunk>>(
        &mut self,
        items: &mut S,
        migration: &Migration,
    ) -> Result<Report, PeerError> {
        let me = self.rank;
        if migration.epoch != self.epoch || migration.loads_before.len() != self.size {
            return Err(PeerError::Mismatch(format!(
                "the migration belongs to call {}, but this balancer's last plan was call {}",
                migration.epoch, self.epoch
            )));
        }
        let backend = self.backend;
        let outcome = self.pending.measure(migration.step_seconds);
        if migration.is_empty() {
            let mut report = Report::unchanged(migration, me, backend);
            report.outcome = outcome;
            return Ok(report);
        }
        let units_before = migration.loads_before[me];
        let items_before = items.len() as u64;
        let start = Instant::now();
        let fault = self.config.fault;
        let epoch = self.epoch;
        let mut session = self.session();
        let result = carry_out(&mut session, items, migration, fault);
        let traffic = session.finish();
        let gathered = match self.gather_traffic {
            (e, t) if e == epoch => t,
            _ => Traffic::default(),
        };
        let stats = match result {
            Ok(stats) => stats,
            Err(Failed { error, aside }) => {
                if let Some(aside) = aside {
                    self.mailbox.doubt = Some((epoch, None));
                    self.doubt = Some(Doubt {
                        epoch,
                        coordinator: error.culprit().unwrap_or(0),
                        aside,
                    });
                }
                return Err(error);
            }
        };
        let move_seconds = start.elapsed().as_secs_f64();
        let dones = &stats.dones;
        let loads_after: Vec<u64> = dones.iter().map(|d| d.units).collect();
        let items_after_all: Vec<u64> = dones.iter().map(|d| d.items).collect();
        let link_seconds: f64 = dones.iter().map(|d| d.link_seconds).sum();
        let link_units: u64 = dones.iter().map(|d| d.link_units).sum();
        let seconds_per_unit = (link_units > 0).then(|| link_seconds / link_units as f64);
        let weights = migration.weights();
        let slowest_move_seconds = dones.iter().map(|d| d.move_seconds).fold(0.0, f64::max);
        self.learner.observe(migration, slowest_move_seconds);
        self.pending.moved(migration, slowest_move_seconds);
        if let Some(list) = self.config.candidate_list(&self.network) {
            let position = list.iter().position(|&a| a == migration.algorithm);
            let after = migration.prediction.map(|p| p.iteration_seconds_after);
            self.shortfalls.moved(position, after);
        }
        Ok(Report {
            epoch: migration.epoch,
            rank: me,
            backend,
            algorithm: migration.algorithm.name().to_string(),
            topology: migration.topology.clone(),
            schedule: migration.schedule,
            items_before,
            items_after: items.len() as u64,
            units_before,
            units_after: items.units().unwrap_or(u64::MAX),
            items_sent: stats.items_sent,
            items_received: stats.items_received,
            units_sent: stats.units_sent,
            units_received: stats.units_received,
            bytes_sent: traffic.bytes_sent,
            bytes_received: traffic.bytes_received,
            messages_sent: traffic.messages_sent + gathered.messages_sent,
            messages_received: traffic.messages_received + gathered.messages_received,
            phases: migration.phases,
            imbalance_before: imbalance(&migration.loads_before, &weights),
            imbalance_after: imbalance(&loads_after, &weights),
            planned_imbalance_after: imbalance(&migration.planned_after, &weights),
            balanced: true,
            converged: migration.converged,
            residual: stats.residual,
            decide_seconds: migration.decide_seconds,
            move_seconds,
            slowest_move_seconds,
            predicted_steps: migration.predicted_steps,
            seconds_per_unit,
            predicted_move_seconds: migration
                .predicted_steps
                .zip(seconds_per_unit)
                .map(|(s, t)| s as f64 * t),
            capacities: migration.capacities.clone(),
            measured_speeds: migration.measured_speeds.clone(),
            loads_before: migration.loads_before.clone(),
            planned_after: migration.planned_after.clone(),
            loads_after,
            items_after_all,
            implausible_speeds: migration.implausible_speeds(),
            prediction: migration.prediction,
            held_back: false,
            alternatives: migration.alternatives.clone(),
            routing: migration.routing,
            cost_model: migration.cost_model,
            outcome,
            checked: true,
        })
    }

    fn rebalance_store<S: Store<Chunk = K::Chunk>>(
        &mut self,
        items: &mut S,
    ) -> Result<Report, PeerError> {
        self.resolve_store(items)?;
        if self.skip_left > 0 {
            self.skip_left -= 1;
            return Ok(Report::skipped(
                self.epoch,
                self.rank,
                self.backend,
                (self.config.rule_name(), &self.label),
                self.config.options.schedule,
                items.len() as u64,
                items.units().unwrap_or(u64::MAX),
            ));
        }
        let result = self.plan_store(items).and_then(|migration| {
            self.last_check_seconds = Some(migration.decide_seconds);
            self.migrate_store(items, &migration)
                .map(|report| (report, !migration.is_empty()))
        });
        match result {
            Ok((report, moved)) => {
                // After a move, look again at the next call (imbalance that drifts comes
                // back); after a check that found nothing to move, twice as long, up to what
                // the budget allows. The same on every rank: the outcome is the group's.
                self.interval = if moved {
                    1
                } else {
                    (self.interval * 2).min(self.check_cap)
                };
                self.skip_left = self.interval - 1;
                Ok(report)
            }
            Err(e) => {
                // The ranks check again at the next call (a failed call ends alike everywhere).
                (self.skip_left, self.interval) = (0, 1);
                Err(e)
            }
        }
    }

    /// The most calls between two checks of the trigger `auto`
    /// ([`BalancerConfig::check_budget`]), from the gathered states: the same on every rank.
    fn check_cap(&self, states: &[RankState]) -> u64 {
        let Trigger::Auto { horizon, .. } = self.config.options.trigger else {
            return 1;
        };
        let budget = self.config.options.check_budget;
        let calls: Option<Vec<f64>> = states.iter().map(|s| s.call_seconds).collect();
        let (Some(calls), Some(step)) = (calls, max_step(states)) else {
            return 1;
        };
        let call = calls.into_iter().fold(0.0, f64::max);
        if budget <= 0.0 || step <= 0.0 || !call.is_finite() {
            return 1;
        }
        let k = (call / (budget * step)).ceil();
        if k.is_finite() && k >= 1.0 {
            (k as u64).clamp(1, horizon.max(1))
        } else {
            1
        }
    }

    /// True while a call's outcome is in doubt on this rank ([`PeerError::InDoubt`]): the
    /// items it involves are kept aside until [`Balancer::resolve`] (or
    /// [`Balancer::resolve_records`]) settles it.
    pub fn in_doubt(&self) -> bool {
        self.doubt.is_some()
    }

    /// Items kept aside by a call in doubt (0 when none is).
    pub fn items_aside(&self) -> u64 {
        self.doubt.as_ref().map_or(0, |d| d.aside.len() as u64)
    }

    fn resolve_store<S: Store<Chunk = K::Chunk>>(
        &mut self,
        items: &mut S,
    ) -> Result<(), PeerError> {
        let Some(doubt) = self.doubt.take() else {
            return Ok(());
        };
        let deadline = Instant::now() + self.config.options.timeout;
        loop {
            if let Some((e, Some(env))) = &self.mailbox.doubt {
                debug_assert_eq!(*e, doubt.epoch);
                let committed = matches!(
                    env.msg,
                    Msg::Decision {
                        outcome: WireOutcome::Commit(_),
                        ..
                    }
                );
                return match doubt.aside.settle(items, committed) {
                    Ok(()) => {
                        self.mailbox.doubt = None;
                        Ok(())
                    }
                    Err((aside, e)) => {
                        // The decision stays in the mailbox: a later resolve settles it.
                        let items_aside = aside.len() as u64;
                        self.doubt = Some(Doubt { aside, ..doubt });
                        Err(PeerError::InDoubt {
                            epoch: self.doubt.as_ref().map_or(0, |d| d.epoch),
                            coordinator: self.doubt.as_ref().map_or(0, |d| d.coordinator),
                            reason: format!(
                                "the outcome is known but the items cannot be put back: {e}"
                            ),
                            items_aside,
                        })
                    }
                };
            }
            // What is waiting is read before the coordinator is judged: the decision may be
            // among it (from the coordinator, or from this rank's parent in the tree).
            let mut read = false;
            while let Some(r) = self.ep.try_recv()? {
                self.file_while_in_doubt(r, doubt.epoch);
                read = true;
            }
            if read {
                continue;
            }
            let now = Instant::now();
            let silence = self.ep.liveness(doubt.coordinator).silence();
            let gone = matches!(self.ep.liveness(doubt.coordinator), Liveness::Closed { .. });
            if now >= deadline || gone {
                let reason = match self.ep.liveness(doubt.coordinator) {
                    Liveness::Closed { .. } => {
                        format!(
                            "rank {} (which decides the outcome) left",
                            doubt.coordinator
                        )
                    }
                    _ => format!(
                        "rank {} (which decides the outcome) {}",
                        doubt.coordinator,
                        PeerFailure::Silent {
                            seconds: silence.as_secs_f64().min(1e9),
                            timeout: self.config.options.timeout.as_secs_f64(),
                        }
                    ),
                };
                let err = PeerError::InDoubt {
                    epoch: doubt.epoch,
                    coordinator: doubt.coordinator,
                    reason,
                    items_aside: doubt.aside.len() as u64,
                };
                self.doubt = Some(doubt);
                return Err(err);
            }
            self.ep.keep_alive();
            if let Some(r) = self.ep.recv(Some((now + TICK).min(deadline)))? {
                self.file_while_in_doubt(r, doubt.epoch);
            }
        }
    }

    /// Files a message read while call `doubtful` is in doubt: its decision is kept for
    /// [`Balancer::resolve`], a later call's message for that call.
    fn file_while_in_doubt(&mut self, r: Envelope<Msg<K::Chunk>>, doubtful: u64) {
        if take_ask(&self.ep, &mut self.mailbox, &r).is_some() {
            return;
        }
        let e = r.msg.epoch();
        let settles = matches!(r.msg, Msg::Decision { .. } | Msg::GiveUp { .. });
        if e == doubtful && settles {
            if let Some((_, slot @ None)) = &mut self.mailbox.doubt {
                *slot = Some(r);
            }
        } else if e > self.epoch {
            self.mailbox.later.push_back(r);
        }
    }

    /// Settles a call in doubt with an outcome learned by other means: puts back into
    /// `items` what that outcome gives this rank (`committed`: the move stands). For tests
    /// that know the outcome from the coordinator's own result, where the decision can no
    /// longer arrive; an application calls [`Balancer::resolve`], which waits for the
    /// decision. Does nothing when no call is in doubt.
    fn settle_store<S: Store<Chunk = K::Chunk>>(
        &mut self,
        items: &mut S,
        committed: bool,
    ) -> Result<(), PeerError> {
        let Some(doubt) = self.doubt.take() else {
            return Ok(());
        };
        match doubt.aside.settle(items, committed) {
            Ok(()) => {
                self.mailbox.doubt = None;
                Ok(())
            }
            Err((aside, e)) => {
                let err = PeerError::Storage(e.to_string());
                self.doubt = Some(Doubt { aside, ..doubt });
                Err(err)
            }
        }
    }

    /// A timed barrier: returns when every rank has called it, or reports the rank that
    /// stopped. Use it between calls (where an application would call `MPI_Barrier`), so
    /// that a rank stopped outside a rebalance is found: every other rank returns an error
    /// naming it ([`PeerError::culprit`]) within about the timeout. A rank that is only busy
    /// is never reported where the transport proves liveness outside calls (threads, MPI
    /// with a progress thread); elsewhere a rank that has not arrived is judged by the entry
    /// timeout.
    ///
    /// # Errors
    /// [`PeerError::PeerFailed`] (this rank found the failure) or [`PeerError::Aborted`]
    /// (another rank did, and names it as the culprit).
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` rounds of one message each way.
    pub fn barrier(&mut self) -> Result<(), PeerError> {
        self.begin()?;
        let mut session = self.session();
        let result = barrier(&mut session).map_err(|e| session.give_up(e));
        session.finish();
        result
    }

    /// Checks every peer's liveness now, without waiting or sending anything: an error names
    /// the first peer whose balancer is gone, or that has been silent for longer than the
    /// timeout where the transport proves liveness outside calls.
    ///
    /// # Errors
    /// [`PeerError::PeerFailed`] naming the peer.
    pub fn check(&mut self) -> Result<(), PeerError> {
        // What is waiting is read first (kept for the calls it belongs to): a peer that left
        // sent its last messages before it did.
        while let Some(r) = self.ep.try_recv()? {
            if take_ask(&self.ep, &mut self.mailbox, &r).is_some() {
                continue;
            }
            let e = r.msg.epoch();
            let settles = matches!(r.msg, Msg::Decision { .. } | Msg::GiveUp { .. });
            match &mut self.mailbox.doubt {
                Some((d, slot)) if *d == e && settles && slot.is_none() => *slot = Some(r),
                _ if e > self.epoch => self.mailbox.later.push_back(r),
                _ => {}
            }
        }
        super::sync_point::check_peers(&self.ep, self.config.options.timeout)
    }
}

impl<T: Item, G: Group> Balancer<T, G> {
    /// Decides without moving anything: gathers every rank's load (and speed) and runs the
    /// rule. Collective: every rank must call it. Every rank gets the same [`Migration`].
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] when the ranks' configurations differ; [`PeerError::Plan`]
    /// when the rule refuses the loads; failures of peers (see [`PeerError`]);
    /// [`PeerError::Unresolved`] while an earlier call is in doubt.
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` message rounds, then the rule on `P` loads (`O(P log P)` for the hypercube
    /// rules, `O(R·E)` for `R` rounds of a diffusion rule on `E` links), on every rank.
    pub fn plan(&mut self, items: &[T]) -> Result<Migration, PeerError> {
        self.begin()?;
        let units = items
            .iter()
            .try_fold(0u64, |a, it| a.checked_add(it.load()));
        self.decide_now(items.len(), units, 0)
    }

    /// What moving would give, without moving anything (collective: every rank calls it,
    /// and every rank gets the same advice): every candidate rule — the configured one, or
    /// rule `auto`'s list — planned on the gathered loads and predicted at the measured
    /// speeds with the cost model in force (the configured one, or rank 0's learned one):
    /// its loads after, units moved (each hop counted; the cost model's β is per unit, so
    /// `bytes_moved` counts units), messages, predicted move seconds and seconds saved per
    /// iteration; whether the trigger would let it move; and the candidate
    /// [`Balancer::rebalance`] would follow now (`choice`; `None`: it would move nothing),
    /// over the trigger's horizon (1 for `always`). Rule `auto` ranks its candidates as
    /// `rebalance` does, with what each one's moves fell short of their predictions.
    ///
    /// A call of its own: it does not count as a move, and the next `rebalance` decides
    /// afresh.
    ///
    /// # Errors
    /// [`PlanError::SpeedsNotMeasured`] (in [`PeerError::Plan`]) unless the speeds are
    /// measured ([`Speeds::Measured`]) and every rank has recorded a step; as
    /// [`Balancer::plan`] otherwise.
    ///
    /// # Example
    /// ```
    /// use hetlb_peer::{Balancer, BalancerConfig, Speeds};
    /// use hetlb_transport::threads;
    /// let handles: Vec<_> = threads::group(2).into_iter().enumerate().map(|(rank, m)| {
    ///     std::thread::spawn(move || {
    ///         let cfg = BalancerConfig::new("cwa").unwrap().speeds(Speeds::Measured { window: 1 });
    ///         let mut b = Balancer::new(&m, cfg).unwrap();
    ///         let items: Vec<u64> = if rank == 0 { (0..100).collect() } else { Vec::new() };
    ///         b.record(50, 1.0); // 50 units per second on both ranks
    ///         let advice = b.advise(&items).unwrap();
    ///         // 100 units on one rank: 2 s per iteration, 1 s once balanced.
    ///         assert_eq!(advice.candidates[0].prediction.gain_per_iteration, 1.0);
    ///         assert_eq!(advice.choice, Some(0));
    ///         assert_eq!(items.len(), if rank == 0 { 100 } else { 0 }); // nothing moved
    ///     })
    /// }).collect();
    /// for h in handles { h.join().unwrap(); }
    /// ```
    pub fn advise(&mut self, items: &[T]) -> Result<Advice, PeerError> {
        let units = items
            .iter()
            .try_fold(0u64, |a, it| a.checked_add(it.load()));
        self.advise_now(items.len(), units, 0)
    }

    /// Carries out a migration decided by [`Balancer::plan`] in the same call: moves this
    /// rank's part of it, votes, and waits for the call's outcome. Collective.
    ///
    /// On success every rank holds its new share (its kept items in their order, then the
    /// items received). On failure the call is rolled back on every rank: `items` holds
    /// exactly the items it held before — except after [`PeerError::InDoubt`] (see
    /// [`PeerError::holding`]).
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] for a migration of another call; failures of peers;
    /// [`PeerError::Storage`] when this rank cannot make room for what it would receive.
    pub fn migrate(
        &mut self,
        items: &mut Vec<T>,
        migration: &Migration,
    ) -> Result<Report, PeerError> {
        self.migrate_store(items, migration)
    }

    /// Decides and moves in one collective call: [`Balancer::plan`] then
    /// [`Balancer::migrate`] (after [`Balancer::resolve`], if an earlier call is in doubt).
    /// When the rule finds nothing to do, the call costs one all-gather.
    ///
    /// # Errors
    /// As [`Balancer::plan`] and [`Balancer::migrate`].
    pub fn rebalance(&mut self, items: &mut Vec<T>) -> Result<Report, PeerError> {
        self.rebalance_store(items)
    }

    /// Settles a call whose outcome was in doubt ([`PeerError::InDoubt`]): waits (up to the
    /// timeout) for the deciding rank's decision, then puts back into `items` the items the
    /// outcome gives this rank. Does nothing when no call is in doubt.
    ///
    /// # Errors
    /// [`PeerError::InDoubt`] again when the deciding rank is still silent (the items stay
    /// aside); transport errors.
    pub fn resolve(&mut self, items: &mut Vec<T>) -> Result<(), PeerError> {
        self.resolve_store(items)
    }

    /// Settles a call in doubt with an outcome known by other means (`committed`: the move
    /// stands), without waiting for the decision: for tests of the agreement that know the
    /// coordinator's result. Applications call [`Balancer::resolve`].
    ///
    /// # Errors
    /// [`PeerError::Storage`] when the items cannot be put back (they stay aside).
    #[doc(hidden)]
    pub fn settle_in_doubt(
        &mut self,
        items: &mut Vec<T>,
        committed: bool,
    ) -> Result<(), PeerError> {
        self.settle_store(items, committed)
    }
}

/// Byte records: the same calls over [`Records`], fixed-size records in one buffer, moved as
/// plain bytes (the path of the C interface).
///
/// # Example
/// Two threads, one holding 1,000 records of 24 bytes (an id and two more words):
/// ```
/// use hetlb_peer::{Balancer, BalancerConfig, Bytes, Records};
/// use hetlb_transport::threads;
/// let handles: Vec<_> = threads::group(2)
///     .into_iter()
///     .map(|member| {
///         std::thread::spawn(move || {
///             let ids = if member.rank() == 0 { 0..1000u64 } else { 0..0 };
///             let mut buffer: Vec<u8> =
///                 ids.flat_map(|id| [id, 2 * id, 3 * id]).flat_map(u64::to_ne_bytes).collect();
///             let mut b: Balancer<Bytes, _> =
///                 Balancer::new(&member, BalancerConfig::new("dem").unwrap()).unwrap();
///             let mut records = Records::new(&mut buffer, 24, 0).unwrap();
///             b.rebalance_records(&mut records).unwrap();
///             (0..records.len()).map(|i| records.id(i)).collect::<Vec<u64>>()
///         })
///     })
///     .collect();
/// let per_rank: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
/// assert_eq!((per_rank[0].len(), per_rank[1].len()), (500, 500));
/// let mut all: Vec<u64> = per_rank.concat();
/// all.sort_unstable();
/// assert_eq!(all, (0..1000).collect::<Vec<u64>>());
/// ```
impl<G: Group> Balancer<Bytes, G> {
    /// [`Balancer::plan`] for records. Ranks holding records of different sizes get
    /// [`PeerError::Mismatch`] before anything moves.
    ///
    /// # Errors
    /// As [`Balancer::plan`].
    pub fn plan_records<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &Records<'_, B>,
    ) -> Result<Migration, PeerError> {
        self.plan_store(records)
    }

    /// [`Balancer::advise`] for records.
    ///
    /// # Errors
    /// As [`Balancer::advise`].
    pub fn advise_records<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &Records<'_, B>,
    ) -> Result<Advice, PeerError> {
        self.advise_now(records.len(), records.units(), records.shape())
    }

    /// [`Balancer::migrate`] for records: on success the sent records have left the buffer
    /// (the others keep their order) and the received ones follow them; on failure the buffer
    /// holds exactly the records it held before (after [`PeerError::InDoubt`], those the
    /// move did not touch).
    ///
    /// # Errors
    /// As [`Balancer::migrate`]; [`PeerError::Storage`] when the buffer cannot grow.
    pub fn migrate_records<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &mut Records<'_, B>,
        migration: &Migration,
    ) -> Result<Report, PeerError> {
        self.migrate_store(records, migration)
    }

    /// [`Balancer::rebalance`] for records: decides and moves in one collective call.
    ///
    /// # Errors
    /// As [`Balancer::rebalance`].
    pub fn rebalance_records<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &mut Records<'_, B>,
    ) -> Result<Report, PeerError> {
        self.rebalance_store(records)
    }

    /// [`Balancer::resolve`] for records.
    ///
    /// # Errors
    /// As [`Balancer::resolve`].
    pub fn resolve_records<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &mut Records<'_, B>,
    ) -> Result<(), PeerError> {
        self.resolve_store(records)
    }

    /// [`Balancer::settle_in_doubt`] for records.
    ///
    /// # Errors
    /// As [`Balancer::settle_in_doubt`].
    #[doc(hidden)]
    pub fn settle_records_in_doubt<B: RecordBuffer + ?Sized>(
        &mut self,
        records: &mut Records<'_, B>,
        committed: bool,
    ) -> Result<(), PeerError> {
        self.settle_store(records, committed)
    }
}

impl<K: ItemKind, G: Group> Drop for Balancer<K, G> {
    /// The coordinator answers the asks already waiting (see `agreement.rs`): a rank whose
    /// parent in the agreement's tree failed may wait for its answer.
    fn drop(&mut self) {
        if self.rank == COORDINATOR && self.ep.ledger().is_none() {
            while let Ok(Some(r)) = self.ep.try_recv() {
                take_ask(&self.ep, &mut self.mailbox, &r);
            }
        }
    }
}

/// A digest of everything the ranks must agree on (FNV-1a over a canonical text).
fn fingerprint(config: &BalancerConfig, label: &str, network: &Network, size: usize) -> u64 {
    let speeds = match &config.options.speeds {
        Speeds::Equal => "equal".to_string(),
        Speeds::Fixed(c) => format!(
            "fixed:{}",
            c.iter()
                .map(|x| x.to_bits().to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
        Speeds::Measured { window } => format!("measured:{window}"),
    };
    let text = format!(
        "{}|{label}|{size}|{speeds}|{}|{:?}|{:?}|{}|{:?}|{}|{}|{}",
        config.algorithm().name(),
        config.options.schedule.name(),
        config.options.procs_per_group,
        config.options.max_rounds,
        config.options.seed,
        config.options.lambda.map(f64::to_bits),
        config.options.trigger,
        config.options.move_cost.seconds_per_message.to_bits(),
        config.options.move_cost.seconds_per_byte.to_bits(),
    ) + &format!(
        "|{}|{:?}|{}|{}",
        config
            .candidate_list(network)
            .map(|l| l.iter().map(|a| a.name()).collect::<Vec<_>>().join(","))
            .unwrap_or_default(),
        config.options.routing,
        config.options.learn_cost,
        config.options.check_budget.to_bits(),
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
