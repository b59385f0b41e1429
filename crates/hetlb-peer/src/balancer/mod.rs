//! The embeddable collective: [`Balancer::rebalance`], or [`Balancer::plan`] and
//! [`Balancer::migrate`] separately; [`Balancer::barrier`] and [`Balancer::check`] between
//! calls. What the balancer learns across calls is in `tuning.rs`; a call whose outcome is in
//! doubt, in `doubt.rs`.

mod deferred;
mod doubt;
mod traced;
mod tuning;

use crate::config::BalancerConfig;
use crate::decide::{Migration, RuleInputs, advise, decide};
use crate::error::{PeerError, PlanError};
use crate::faults::Fault;
use crate::gather::{all_gather, all_gather_values, barrier};
use crate::locality::{Moments, moments_of};
use crate::migrate::{Failed, carry_out};
use crate::options::Speeds;
use crate::probe::probe;
use crate::report::{Committed, Report};
use crate::session::COORDINATOR;
use crate::session::{Mailbox, Session, SessionSettings, Traffic, note_lost, take_ask};
use crate::shortfalls::Shortfalls;
use crate::store::{Bytes, ItemKind, Storage};
use crate::trace::Recorder;
use crate::wire::{Msg, RankState};
pub use deferred::Deferred;
use doubt::Doubt;
use hetlb_core::advice::{Advice, CostModel};
use hetlb_core::topology::Network;
use hetlb_transport::{Group, Transport};
use std::time::Instant;
use tuning::{Adopted, Tuning};

/// What this rank brings to a call's gather: its items and units, its store's shape, and
/// the moments of its items' positions (or why they cannot be used).
struct Local {
    items: usize,
    units: Option<u64>,
    shape: u64,
    moments: Result<Option<Moments>, String>,
    unit_items: bool,
}

impl Local {
    fn of<S: crate::store::Store>(store: &S) -> Self {
        Self {
            items: store.len(),
            units: store.units(),
            shape: store.shape(),
            moments: moments_of(store.len(), |i| store.position(i)),
            unit_items: store.unit_loads(),
        }
    }
}

/// What a deciding call gathered: every rank's state and what the rule needs from it.
struct Gathered {
    states: Vec<RankState>,
    capacities: Option<Vec<f64>>,
    measured_speeds: Option<Vec<f64>>,
    cost_model: CostModel,
    shortfalls: Shortfalls,
}

/// One rank's balancer: built once, called at the same point of every rank's loop.
///
/// Every rank of the group builds a balancer with the same [`BalancerConfig`] from its
/// membership in the group ([`hetlb_transport::threads::group`], or
/// `hetlb_transport::mpi::Mpi` over the application's MPI communicator) and calls
/// [`Balancer::rebalance`] collectively. Each balancer opens its own endpoint of the group's
/// transport: build them in the same order on every rank.
///
/// `K` is what it moves ([`ItemKind`]): the application's [`Item`](crate::Item) type, kept in a `Vec`
/// ([`Balancer::rebalance`]), or [`Bytes`], fixed-size byte records kept in one buffer
/// ([`Records`](crate::Records)): every call takes either ([`Storage`]). Both run the same protocol with the
/// same guarantees.
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
    /// The topology's label and network, and the digest of what the ranks must agree on.
    label: String,
    network: Network,
    fingerprint: u64,
    /// The protocol's state: the current call, messages kept for later, a call in doubt, the
    /// traffic of the current call's gather and probe.
    epoch: u64,
    mailbox: Mailbox<K::Chunk>,
    doubt: Option<Doubt<K::Chunk>>,
    gather_traffic: (u64, Traffic),
    /// When the current call started, on the transport's clock.
    call_started: Instant,
    /// Once a call lost a rank: the error every later call returns.
    lost: Option<PeerError>,
    /// What it learns and schedules across calls.
    tuning: Tuning,
    /// The trace it writes (option `trace`).
    trace: Option<Recorder>,
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
        let config = config.on_group(group)?;
        let (label, network) = config.resolve(size)?;
        let fingerprint = fingerprint(&config, &label, &network, size);
        let about = (config.rule_name(), label.as_str());
        let trace = Recorder::open(&config.options, group.rank(), size, group.backend(), about)?;
        let ep = group.open::<Msg<K::Chunk>>()?;
        Ok(Self {
            ep,
            rank: group.rank(),
            size,
            backend: group.backend(),
            tuning: Tuning::new(&config),
            config,
            label,
            network,
            fingerprint,
            epoch: 0,
            mailbox: Mailbox::new(size),
            doubt: None,
            gather_traffic: (0, Traffic::default()),
            call_started: Instant::now(),
            lost: None,
            trace,
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
        self.tuning.record(units, seconds);
        if let Some(t) = &mut self.trace {
            t.step(units, seconds, self.tuning.speed());
        }
    }

    /// [`Balancer::record`] of a measurement from an application, checked: the faces (C,
    /// Python) report through it, so that they refuse the same values.
    ///
    /// # Errors
    /// [`PeerError::Config`] naming `seconds` when it is not positive and finite (a step that
    /// took no time says nothing of a speed).
    pub fn try_record(&mut self, units: u64, seconds: f64) -> Result<(), PeerError> {
        if !(seconds.is_finite() && seconds > 0.0) {
            return Err(crate::error::ConfigError::option(
                "seconds",
                format!("{seconds} is not a positive, finite time"),
            )
            .into());
        }
        self.record(units, seconds);
        Ok(())
    }

    /// This rank's measured speed (units per second), once it has one.
    pub fn speed(&self) -> Option<f64> {
        self.tuning.speed()
    }

    /// Decides without moving anything: gathers every rank's load (and speed) and runs the
    /// rule. Collective: every rank must call it. Every rank gets the same [`Migration`].
    /// Ranks holding records of different sizes get [`PeerError::Mismatch`].
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] when the ranks' configurations differ; [`PeerError::Plan`]
    /// when the rule refuses the loads; failures of peers (see [`PeerError`]);
    /// [`PeerError::Unresolved`] while an earlier call is in doubt.
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` message rounds, then the rule on `P` loads (`O(P log P)` for the hypercube
    /// rules, `O(R·E)` for `R` rounds of a diffusion rule on `E` links), on every rank.
    pub fn plan<S: Storage<K>>(&mut self, items: &S) -> Result<Migration, PeerError> {
        let planned = self.plan_in(items);
        self.noted(planned)
    }

    fn plan_in<S: Storage<K>>(&mut self, items: &S) -> Result<Migration, PeerError> {
        self.plan_local(Local::of(items))
    }

    /// [`Balancer::plan`] from what this rank brings.
    fn plan_local(&mut self, local: Local) -> Result<Migration, PeerError> {
        self.begin()?;
        // The call's start, just read by `begin`; the trace's clock only when tracing.
        let start = self.call_started;
        let traced = self.trace.is_some().then(Instant::now);
        let g = self.gather_inputs(local)?;
        let deciding = traced.map(|gathering| {
            self.trace_span("gather", gathering, serde_json::Value::Null);
            Instant::now()
        });
        let (states, inputs) = self.rule_inputs(g);
        let mut migration = decide(self.epoch, &states, inputs)?;
        migration.decide_seconds = self.seconds_since(start);
        if let (Some(gathering), Some(deciding)) = (traced, deciding) {
            self.trace_span("decide", deciding, serde_json::Value::Null);
            self.trace_decided(&migration, gathering);
        }
        Ok(migration)
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
    pub fn advise<S: Storage<K>>(&mut self, items: &S) -> Result<Advice, PeerError> {
        let advice = self.begin().and_then(|()| {
            let g = self.gather_inputs(Local::of(items))?;
            let (states, inputs) = self.rule_inputs(g);
            advise(&states, inputs)
        });
        let skips = self.tuning.skips_left();
        self.noted(advice.map(|a| a.skipping(skips)))
    }

    /// Carries out a migration decided by [`Balancer::plan`] in the same call: moves this
    /// rank's part of it, votes, and waits for the call's outcome. Collective.
    ///
    /// On success every rank holds its new share (its kept items in their order, then the
    /// items received; records: the sent ones have left the buffer, the others keep their
    /// order and the received ones follow). On failure the call is rolled back on every
    /// rank: `items` holds exactly the items it held before — except after
    /// [`PeerError::InDoubt`] (see [`PeerError::holding`]).
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] for a migration of another call; failures of peers;
    /// [`PeerError::Storage`] when this rank cannot make room for what it would receive.
    pub fn migrate<S: Storage<K>>(
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
        if migration.is_empty() {
            return self.unchanged(migration.clone());
        }
        let outcome = self.tuning.outcome(migration.step_seconds);
        let items_before = items.len() as u64;
        let start = self.ep.now();
        let traced = Instant::now();
        let (fault, epoch) = (self.fault(), self.epoch);
        let mut session = self.session();
        let result = carry_out(&mut session, items, migration, fault);
        let traffic = session.finish();
        let stats = match result {
            Ok(stats) => stats,
            Err(failed) => {
                let error = self.failed(failed);
                return self.noted(Err(error));
            }
        };
        let slowest_move_seconds = stats
            .dones
            .iter()
            .map(|d| d.move_seconds)
            .fold(0.0, f64::max);
        let candidates = self.config.candidate_list(&self.network);
        self.tuning
            .moved(migration, slowest_move_seconds, candidates);
        let gathered = match self.gather_traffic {
            (e, t) if e == epoch => t,
            _ => Traffic::default(),
        };
        let report = Report::committed(Committed {
            migration,
            rank: me,
            backend: self.backend,
            items: (items_before, items.len() as u64),
            units_after: items.units().unwrap_or(u64::MAX),
            stats: &stats,
            traffic,
            gathered,
            move_seconds: self.seconds_since(start),
            slowest_move_seconds,
            outcome,
        });
        self.trace_moved(migration, traced, stats.agree_seconds, &report);
        Ok(report)
    }

    /// Decides and moves in one collective call: [`Balancer::plan`] then
    /// [`Balancer::migrate`] (after [`Balancer::resolve`], if an earlier call is in doubt).
    /// When the rule finds nothing to do, the call costs one all-gather.
    ///
    /// # Errors
    /// As [`Balancer::plan`] and [`Balancer::migrate`].
    pub fn rebalance<S: Storage<K>>(&mut self, items: &mut S) -> Result<Report, PeerError> {
        let started = Instant::now();
        let result = self.rebalance_in(items);
        if self.trace.is_some() {
            let args = match &result {
                Ok(r) => serde_json::json!({ "epoch": r.epoch, "rule": r.algorithm,
                    "items_sent": r.items_sent, "items_received": r.items_received }),
                Err(e) => serde_json::json!({ "epoch": self.epoch, "error": e.to_string() }),
            };
            self.trace_span("rebalance", started, args);
        }
        result
    }

    fn rebalance_in<S: Storage<K>>(&mut self, items: &mut S) -> Result<Report, PeerError> {
        self.resolve(items)?;
        if let Some(skipped) = self.skipped(items.len(), || items.units()) {
            return Ok(skipped);
        }
        let local = Local::of(items);
        self.decide_then_move(local, |b: &mut Self, migration: &Migration| {
            b.migrate(items, migration)
        })
    }

    /// The report of a call the trigger skips, when it skips this one.
    fn skipped(&mut self, items: usize, units: impl FnOnce() -> Option<u64>) -> Option<Report> {
        if !self.tuning.skip() {
            return None;
        }
        self.trace_skipped();
        Some(Report::skipped(
            self.epoch,
            self.rank,
            self.backend,
            (self.config.rule_name(), &self.label),
            (self.config.options.schedule, self.config.options.routing),
            items as u64,
            units().unwrap_or(u64::MAX),
        ))
    }

    /// The deciding half of a rebalance (plan, then `carry` the migration out; one that moves
    /// nothing is reported unchanged without `carry`), with the trigger told what was checked
    /// and whether anything moved.
    fn decide_then_move(
        &mut self,
        local: Local,
        carry: impl FnOnce(&mut Self, &Migration) -> Result<Report, PeerError>,
    ) -> Result<Report, PeerError> {
        let planned = self.plan_local(local);
        let result = self.noted(planned).and_then(|migration| {
            self.tuning.checked(migration.decide_seconds);
            if migration.is_empty() {
                // Nothing to carry out: the report is made of the migration itself.
                return self.unchanged(migration).map(|report| (report, false));
            }
            carry(self, &migration).map(|report| (report, true))
        });
        self.tuning
            .schedule_next_check(result.as_ref().map(|(_, moved)| *moved).map_err(|_| ()));
        result.map(|(report, _)| report)
    }

    /// The report of a migration in which nothing moves on any rank — unless the call was
    /// given up meanwhile. Such a call ends without a vote: a rank that reached it after the
    /// others gave it up (they waited for it past the entry timeout) completes its gather
    /// from the values they sent before, and would return success; the give-up they sent
    /// after those values is already here, and is read (without waiting) and returned.
    fn unchanged(&mut self, migration: Migration) -> Result<Report, PeerError> {
        self.file_waiting()?;
        if let Some(news) = self.mailbox.lost_news.take() {
            return self.noted(Err(news));
        }
        let outcome = self.tuning.outcome(migration.step_seconds);
        let mut report = Report::unchanged(migration, self.rank, self.backend);
        report.outcome = outcome;
        Ok(report)
    }

    /// Settles a call whose outcome was in doubt ([`PeerError::InDoubt`]): waits (up to the
    /// timeout) for the deciding rank's decision, then puts back into `items` the items the
    /// outcome gives this rank. Does nothing when no call is in doubt.
    ///
    /// # Errors
    /// [`PeerError::InDoubt`] again when the deciding rank is still silent (the items stay
    /// aside); transport errors.
    pub fn resolve<S: Storage<K>>(&mut self, items: &mut S) -> Result<(), PeerError> {
        self.resolve_in(items)
    }

    /// Settles a call in doubt with an outcome known by other means (`committed`: the move
    /// stands), without waiting for the decision: for tests of the agreement that know the
    /// coordinator's result (feature `fault-injection`). Applications call
    /// [`Balancer::resolve`].
    ///
    /// # Errors
    /// [`PeerError::Storage`] when the items cannot be put back (they stay aside).
    #[cfg(feature = "fault-injection")]
    pub fn settle_in_doubt<S: Storage<K>>(
        &mut self,
        items: &mut S,
        committed: bool,
    ) -> Result<(), PeerError> {
        self.settle_in(items, committed)
    }

    /// True while a call's outcome is in doubt on this rank ([`PeerError::InDoubt`]): the
    /// items it involves are kept aside until [`Balancer::resolve`] settles it.
    pub fn in_doubt(&self) -> bool {
        self.doubt.is_some()
    }

    /// Items kept aside by a call in doubt (0 when none is).
    pub fn items_aside(&self) -> u64 {
        self.doubt.as_ref().map_or(0, |d| d.aside.len() as u64)
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
        let result = self.begin().and_then(|()| {
            let mut session = self.session();
            let result = barrier(&mut session).map_err(|e| session.give_up(e));
            session.finish();
            result
        });
        self.noted(result)
    }

    /// Gathers a few numbers from every rank, timed as every call is: element `i` of the
    /// result is rank `i`'s `mine`, the same vector on every rank (so a sum taken in rank
    /// order is bit-identical everywhere). Every rank gives as many numbers. Faces use it to
    /// agree on a value before a call (Python's `quantum="auto"` gathers each rank's total
    /// cost and item count); a rank that stops or refuses is named as in
    /// [`rebalance`](Self::rebalance).
    ///
    /// # Errors
    /// As [`barrier`](Self::barrier); [`PeerError::Mismatch`] when ranks give different
    /// counts of numbers, or another rank called another collective.
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` rounds of one message each way; `P · mine.len()` numbers received.
    ///
    /// # Example
    /// ```
    /// use hetlb_peer::{Balancer, BalancerConfig};
    /// use hetlb_transport::threads;
    /// let handles: Vec<_> = threads::group(3)
    ///     .into_iter()
    ///     .map(|member| {
    ///         std::thread::spawn(move || {
    ///             let mut b: Balancer<u64, _> =
    ///                 Balancer::new(&member, BalancerConfig::new("oem").unwrap()).unwrap();
    ///             let all = b.all_gather_values(&[member.rank() as f64]).unwrap();
    ///             all.iter().map(|v| v[0]).sum::<f64>()
    ///         })
    ///     })
    ///     .collect();
    /// let sums: Vec<f64> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    /// assert_eq!(sums, vec![3.0, 3.0, 3.0]);
    /// ```
    pub fn all_gather_values(&mut self, mine: &[f64]) -> Result<Vec<Vec<f64>>, PeerError> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        let result = self.begin().and_then(|()| {
            let mut session = self.session();
            let result =
                all_gather_values(&mut session, mine.to_vec()).map_err(|e| session.give_up(e));
            session.finish();
            result
        });
        self.noted(result)
    }

    /// Sends byte strings to some ranks and receives one from each of some others, timed as
    /// every call is: `send` gives `(rank, bytes)` (each rank at most once), `from` the
    /// ranks this rank receives from; the result holds their byte strings in the order of
    /// `from`. Collective: every rank calls it (a rank with nothing to send or receive
    /// too), and every rank's `from` must name exactly the ranks that send to it. For faces
    /// whose plan already says who sends to whom (the C two-step form's migrate); a rank
    /// that stops or refuses is named as in [`rebalance`](Self::rebalance).
    ///
    /// When it fails on a rank, the bytes it sent may have arrived: the caller agrees on
    /// the outcome (e.g. with [`barrier`](Self::barrier)) before it acts on them.
    ///
    /// # Errors
    /// As [`barrier`](Self::barrier); [`PeerError::Mismatch`] for a rank out of range or
    /// named twice, or bytes from a rank `from` does not name.
    ///
    /// # Complexity
    /// One message per destination (per 64 MiB); the bytes copied once into a message
    /// where the transport serialises, and once out.
    ///
    /// # Example
    /// ```
    /// use hetlb_peer::{Balancer, BalancerConfig};
    /// use hetlb_transport::threads;
    /// let handles: Vec<_> = threads::group(3)
    ///     .into_iter()
    ///     .map(|member| {
    ///         std::thread::spawn(move || {
    ///             let mut b: Balancer<u64, _> =
    ///                 Balancer::new(&member, BalancerConfig::new("oem").unwrap()).unwrap();
    ///             // Rank 0 sends to rank 2; rank 1 neither sends nor receives.
    ///             match member.rank() {
    ///                 0 => b.exchange_bytes(vec![(2, b"hello".to_vec())], &[]).unwrap(),
    ///                 1 => b.exchange_bytes(Vec::new(), &[]).unwrap(),
    ///                 _ => b.exchange_bytes(Vec::new(), &[0]).unwrap(),
    ///             }
    ///         })
    ///     })
    ///     .collect();
    /// let got: Vec<Vec<Vec<u8>>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    /// assert_eq!(got[2], vec![b"hello".to_vec()]);
    /// ```
    pub fn exchange_bytes(
        &mut self,
        send: Vec<(usize, Vec<u8>)>,
        from: &[usize],
    ) -> Result<Vec<Vec<u8>>, PeerError> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        let result = self.begin().and_then(|()| {
            let mut session = self.session();
            let result =
                crate::exchange::exchange(&mut session, send, from).map_err(|e| session.give_up(e));
            session.finish();
            result
        });
        self.noted(result)
    }

    /// Joins the next collective call only to refuse it, because this rank's own arguments
    /// failed a check (a load that is not a whole number, a size that overflows, a bad
    /// coordinate …): every other rank's call returns at once with [`PeerError::Refused`]
    /// naming this rank and `reason`, nothing moves, and the group goes on. Call it where
    /// the collective call would have been, instead of it, then report the argument's error
    /// on this rank as usual. A call the trigger `auto` skips (the others send nothing
    /// either) needs no refusal: nothing is sent then.
    ///
    /// # Errors
    /// As the call would: [`PeerError::Unresolved`] while a call is in doubt,
    /// [`PeerError::GroupLost`] after the group lost a rank.
    pub fn refuse(&mut self, reason: &str) -> Result<(), PeerError> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        if self.tuning.skip() {
            return Ok(());
        }
        self.begin()?;
        let me = self.rank;
        let mut session = self.session();
        session.give_up(PeerError::Refused {
            rank: me,
            reason: reason.to_string(),
        });
        session.finish();
        Ok(())
    }

    /// Checks every peer's liveness now, without waiting or sending anything: an error names
    /// the first peer whose balancer is gone, or that has been silent for longer than the
    /// timeout where the transport proves liveness outside calls.
    ///
    /// # Errors
    /// [`PeerError::PeerFailed`] naming the peer.
    pub fn check(&mut self) -> Result<(), PeerError> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        let checked = self.check_peers();
        self.noted(checked)
    }

    fn check_peers(&mut self) -> Result<(), PeerError> {
        // What is waiting is read first (kept for the calls it belongs to): a peer that left
        // sent its last messages before it did.
        self.file_waiting()?;
        if let Some(news) = self.mailbox.lost_news.take() {
            return Err(news);
        }
        crate::sync_point::check_peers(&self.ep, self.config.options.timeout)
    }

    /// Reads what is waiting, without waiting: a later call's messages are kept for it, the
    /// decision of a call in doubt is kept for `resolve`, and a give-up naming a failed rank
    /// becomes the mailbox's lost news.
    fn file_waiting(&mut self) -> Result<(), PeerError> {
        while let Some(r) = self.ep.try_recv()? {
            if take_ask(&self.ep, &mut self.mailbox, &r).is_some() {
                continue;
            }
            let e = r.msg.epoch();
            let settles = matches!(r.msg, Msg::Decision { .. } | Msg::GiveUp { .. });
            match &mut self.mailbox.doubt {
                Some((d, slot)) if *d == e && settles && slot.is_none() => *slot = Some(r),
                _ if e > self.epoch => self.mailbox.later.push_back(r),
                _ => note_lost(&mut self.mailbox, &r),
            }
        }
        Ok(())
    }

    /// Seconds from `start` to now on the transport's clock.
    fn seconds_since(&self, start: Instant) -> f64 {
        self.ep.now().saturating_duration_since(start).as_secs_f64()
    }

    fn fault(&self) -> Fault {
        self.config.fault
    }

    fn session(&mut self) -> Session<'_, K::Chunk, G::Endpoint<Msg<K::Chunk>>> {
        Session::new(
            &self.ep,
            &mut self.mailbox,
            SessionSettings {
                epoch: self.epoch,
                timeout: self.config.options.timeout,
                entry_timeout: self
                    .config
                    .options
                    .entry_timeout
                    .limit(self.config.options.timeout),
                started: self.call_started,
                count_bytes: self.config.options.count_bytes,
            },
        )
    }

    /// A call's result, noting an error that loses a rank: every later call fails with it.
    fn noted<T>(&mut self, result: Result<T, PeerError>) -> Result<T, PeerError> {
        if let Err(e) = &result {
            self.trace_failed(e);
            if self.lost.is_none() && e.loses_a_rank() {
                let (epoch, me) = (self.epoch, self.rank);
                let reason = match e {
                    PeerError::PeerFailed { rank, failure } => format!("rank {rank} {failure}"),
                    PeerError::Aborted { reason, .. } => reason.clone(),
                    other => other.to_string(),
                };
                self.lost = Some(match e.culprit() {
                    Some(rank) if rank != me => PeerError::GroupLost {
                        rank,
                        epoch,
                        reason,
                    },
                    _ => PeerError::Excluded { epoch, reason },
                });
            }
        }
        result
    }

    /// Starts a new call: the next epoch; the ledger forgets what this rank no longer needs.
    fn begin(&mut self) -> Result<(), PeerError> {
        if let Some(lost) = &self.lost {
            return Err(lost.clone());
        }
        if let Some(d) = &self.doubt {
            return Err(PeerError::Unresolved {
                epoch: d.epoch,
                items_aside: d.aside.len() as u64,
            });
        }
        self.epoch += 1;
        self.call_started = self.ep.now();
        if let Some(ledger) = self.ep.ledger() {
            ledger.release(self.rank, self.epoch);
        }
        Ok(())
    }

    /// A move that did not commit: the error to return; when the outcome is not known here,
    /// the items it involves are kept aside as the call in doubt.
    fn failed(&mut self, Failed { error, aside }: Failed<K::Chunk>) -> PeerError {
        if let Some(aside) = aside {
            self.mailbox.doubt = Some((self.epoch, None));
            self.doubt = Some(Doubt {
                epoch: self.epoch,
                coordinator: error.culprit().unwrap_or(COORDINATOR),
                aside,
            });
        }
        error
    }

    /// The rule's inputs from a call's gathered parts (moved, not copied), and the states.
    fn rule_inputs(&self, g: Gathered) -> (Vec<RankState>, RuleInputs<'_>) {
        let o = &self.config.options;
        let centroids = g.states.iter().any(|s| s.moments.is_some()).then(|| {
            g.states
                .iter()
                .map(|s| s.moments.and_then(|m| m.centroid()))
                .collect()
        });
        let inputs = RuleInputs {
            algorithm: self.config.algorithm(),
            candidates: self.config.candidate_list(&self.network),
            routing: o.routing,
            network: &self.network,
            label: &self.label,
            capacities: g.capacities,
            measured_speeds: g.measured_speeds,
            procs_per_group: o.procs_per_group,
            max_rounds: o.max_rounds,
            seed: o.seed,
            lambda: o.lambda,
            schedule: o.schedule,
            trigger: o.trigger,
            cost_model: g.cost_model,
            shortfalls: g.shortfalls,
            geometry: centroids
                .as_deref()
                .filter(|_| self.config.follows_geometry())
                .and_then(crate::geometry::network_from_centroids),
            centroids,
        };
        (g.states, inputs)
    }

    /// The start of every deciding call: the probe (once), the all-gather of every rank's
    /// state, the check that the ranks are configured alike, and what the rule needs.
    fn gather_inputs(&mut self, local: Local) -> Result<Gathered, PeerError> {
        let me = self.rank;
        let Local {
            items,
            units,
            shape,
            moments,
            unit_items,
        } = local;
        let mut probed = Traffic::default();
        // Every rank probes at its first deciding call, whatever comes of it.
        if self.tuning.probe_now(&self.config) {
            let mut session = self.session();
            match probe(&mut session) {
                Ok(samples) => {
                    probed = session.finish();
                    if let Some(samples) = samples {
                        self.tuning.observe_probe(samples);
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
        let moments = match moments {
            Ok(m) => m,
            Err(why) => {
                // This rank's own argument: it refuses the call.
                let mut session = self.session();
                return Err(session.give_up(PlanError::Positions(why).into()));
            }
        };
        // The store's shape (the record size) joins the digest: ranks holding records of
        // different sizes disagree before anything moves.
        let fingerprint = self.fingerprint ^ shape.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let mut mine = RankState {
            rank: me as u32,
            units,
            items: items as u64,
            fingerprint,
            moments,
            unit_items,
            ..RankState::default()
        };
        self.tuning.fill(&self.config, &mut mine);
        let mut session = self.session();
        let states = match all_gather(&mut session, mine).and_then(|states| {
            // What arrived with the last of the gather is read before anything is decided: a
            // rank that came late may find the call given up by the others.
            session.drain()?;
            match session.stopped() {
                Some(e) => Err(e),
                None => Ok(states),
            }
        }) {
            Ok(s) => s,
            Err(e) => return Err(session.give_up(e)),
        };
        let gathered = session.finish();
        self.mailbox.all_arrived(self.epoch);
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
            // Every rank's own capacity, gathered (each gave it as its `speed`).
            Speeds::Own(_) => (
                states.iter().map(|s| s.speed).collect::<Option<Vec<f64>>>(),
                None,
            ),
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
        // Rank 0's learned model and shortfalls are the group's, so that every rank predicts
        // alike; every rank measures the last move alike.
        let Adopted {
            cost_model,
            shortfalls,
        } = self.tuning.adopt(&self.config, &states);
        Ok(Gathered {
            states,
            capacities,
            measured_speeds,
            cost_model,
            shortfalls,
        })
    }
}

/// A balancer of byte records: every call of [`Balancer`] takes [`Records`](crate::Records),
/// fixed-size records in one buffer, moved as plain bytes (the path of the C interface).
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
///             b.rebalance(&mut records).unwrap();
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
pub type RecordsBalancer<G> = Balancer<Bytes, G>;

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
        // The values differ by rank; the ranks agree on taking their own.
        Speeds::Own(_) => "own".to_string(),
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
