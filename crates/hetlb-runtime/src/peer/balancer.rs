//! The embeddable collective: [`Balancer::rebalance`], or [`Balancer::plan`] and
//! [`Balancer::migrate`] separately.

use super::comm::{Comm, RankState};
use super::config::{BalancerConfig, Speeds};
use super::decide::{Migration, RuleInputs, decide, imbalance};
use super::error::PeerError;
use super::gather::all_gather;
use super::item::Item;
use super::migrate::carry_out;
use super::report::Report;
use super::session::{Mailbox, Session};
use super::speed::SpeedMeter;
use hetlb_core::topology::Network;
use std::time::Instant;

/// One rank's balancer: built once, called at the same point of every rank's loop.
///
/// Every rank of the group builds a balancer with the same [`BalancerConfig`] on its end of
/// the group's network ([`super::threads::group`], or `super::mpi::MpiComm` on a duplicate of
/// the application's MPI communicator) and calls [`Balancer::rebalance`] collectively.
///
/// # Example
/// Four threads, one holding every item, balanced with the odd–even method:
/// ```
/// use hetlb_runtime::peer::{threads, Balancer, BalancerConfig};
/// let handles: Vec<_> = threads::group::<u64>(4)
///     .into_iter()
///     .map(|comm| {
///         std::thread::spawn(move || {
///             let first = comm.rank_id() == 0;
///             let mut items: Vec<u64> = if first { (0..30).collect() } else { Vec::new() };
///             let mut b = Balancer::new(comm, BalancerConfig::new("oem").unwrap()).unwrap();
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
pub struct Balancer<T, C> {
    comm: C,
    config: BalancerConfig,
    label: String,
    network: Network,
    fingerprint: u64,
    epoch: u64,
    mailbox: Mailbox<T>,
    meter: SpeedMeter,
}

impl<T, C: Comm<T>> std::fmt::Debug for Balancer<T, C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Balancer")
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .field("algorithm", &self.config.algorithm.name())
            .field("topology", &self.label)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl<T: Item, C: Comm<T>> Balancer<T, C> {
    /// A balancer for this rank. Checks the configuration against the group's size; nothing
    /// is sent.
    ///
    /// # Errors
    /// [`PeerError::Config`]: a hypercube rule on a rank count that is not a power of two, a
    /// topology of another size, capacities of the wrong length or not positive, an option
    /// the rule does not have.
    pub fn new(comm: C, config: BalancerConfig) -> Result<Self, PeerError> {
        let (label, network) = config.resolve(comm.size())?;
        let window = match config.speeds {
            Speeds::Measured { window } => window,
            _ => 1,
        };
        let fingerprint = fingerprint(&config, &label, comm.size());
        let size = comm.size();
        Ok(Self {
            comm,
            config,
            label,
            network,
            fingerprint,
            epoch: 0,
            mailbox: Mailbox::new(size),
            meter: SpeedMeter::new(window),
        })
    }

    /// This rank.
    pub fn rank(&self) -> usize {
        self.comm.rank()
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.comm.size()
    }

    /// The topology's spec (`hypercube:3`, `ring:6`, …).
    pub fn topology(&self) -> &str {
        &self.label
    }

    /// Gives the communicator back (to build another balancer on it, with another rule).
    pub fn into_comm(self) -> C {
        self.comm
    }

    /// The configuration.
    pub fn config(&self) -> &BalancerConfig {
        &self.config
    }

    /// Reports that this rank processed `units` units of work in `seconds` (measured speeds;
    /// ignored otherwise). Call it once per step of the application's loop.
    pub fn record(&mut self, units: u64, seconds: f64) {
        self.meter.record(units, seconds);
    }

    /// This rank's measured speed (units per second), once it has one.
    pub fn speed(&self) -> Option<f64> {
        self.meter.speed()
    }

    /// Decides without moving anything: gathers every rank's load (and speed) and runs the
    /// rule. Collective: every rank must call it. Every rank gets the same [`Migration`].
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] when the ranks' configurations differ; [`PeerError::Plan`]
    /// when the rule refuses the loads; failures of peers (see [`PeerError`]).
    ///
    /// # Complexity
    /// `⌈log₂ P⌉` message rounds, then the rule on `P` loads (`O(P log P)` for the hypercube
    /// rules, `O(R·E)` for `R` rounds of a diffusion rule on `E` links), on every rank.
    pub fn plan(&mut self, items: &[T]) -> Result<Migration, PeerError> {
        self.epoch += 1;
        self.comm.note_call_state(None);
        let result = self.decide_now(items);
        self.note_failure(&result);
        result
    }

    /// Tells peers that look (threads) that this rank gave up the call, and whom it blames.
    fn note_failure<R>(&mut self, result: &Result<R, PeerError>) {
        if let Err(e @ (PeerError::PeerFailed { .. } | PeerError::Aborted { .. })) = result {
            self.comm
                .note_call_state(Some((e.culprit(), e.to_string())));
        }
    }

    fn decide_now(&mut self, items: &[T]) -> Result<Migration, PeerError> {
        let start = Instant::now();
        let units = items
            .iter()
            .try_fold(0u64, |a, it| a.checked_add(it.load()));
        let Some(units) = units else {
            // The others wait for this rank's load: tell them.
            let me = self.comm.rank();
            let mut session = Session::new(
                &mut self.comm,
                &mut self.mailbox,
                self.epoch,
                self.config.timeout,
                self.config.entry_timeout,
            );
            return Err(session.fail(PeerError::Plan(format!("rank {me}'s units overflow u64"))));
        };
        let mine = RankState {
            rank: self.comm.rank() as u32,
            units,
            items: items.len() as u64,
            speed: match self.config.speeds {
                Speeds::Measured { .. } => self.meter.speed(),
                _ => None,
            },
            fingerprint: self.fingerprint,
        };
        let mut session = Session::new(
            &mut self.comm,
            &mut self.mailbox,
            self.epoch,
            self.config.timeout,
            self.config.entry_timeout,
        );
        let states = match all_gather(&mut session, mine) {
            Ok(s) => s,
            Err(e) => return Err(session.fail(e)),
        };
        session.finish();
        if let Some(s) = states.iter().find(|s| s.fingerprint != self.fingerprint) {
            return Err(PeerError::Mismatch(format!(
                "rank {} is configured differently from rank {} (rule, topology, speeds, \
                 schedule or options)",
                s.rank,
                self.comm.rank()
            )));
        }
        let (capacities, measured_speeds) = match &self.config.speeds {
            Speeds::Equal => (None, None),
            Speeds::Fixed(c) => (Some(c.clone()), None),
            Speeds::Measured { .. } => {
                let speeds: Option<Vec<f64>> = states.iter().map(|s| s.speed).collect();
                // In units of the slowest rank: proportional shares do not depend on the
                // scale, but dem-hetero's last-dimension test (a gap of more than one task per
                // unit of capacity, 000_… Fig. 5) does, and reads capacities as processor
                // counts.
                let capacities = speeds.as_ref().map(|v| {
                    let slowest = v.iter().copied().fold(f64::INFINITY, f64::min);
                    v.iter().map(|x| x / slowest).collect()
                });
                (capacities, speeds)
            }
        };
        let mut migration = decide(
            self.epoch,
            &states,
            RuleInputs {
                algorithm: self.config.algorithm,
                network: &self.network,
                label: &self.label,
                capacities,
                measured_speeds,
                procs_per_group: self.config.procs_per_group,
                max_rounds: self.config.max_rounds,
                seed: self.config.seed,
                lambda: self.config.lambda,
                schedule: self.config.schedule,
            },
        )?;
        migration.decide_seconds = start.elapsed().as_secs_f64();
        Ok(migration)
    }

    /// Carries out a migration decided by [`Balancer::plan`] in the same call: moves this
    /// rank's part of it and waits until every rank has finished. Collective.
    ///
    /// On success `items` holds this rank's new share (its kept items in their order, then
    /// the items received). On failure it holds exactly the items it held before (see
    /// [`PeerError`]).
    ///
    /// # Errors
    /// [`PeerError::Mismatch`] for a migration of another call; failures of peers.
    pub fn migrate(
        &mut self,
        items: &mut Vec<T>,
        migration: &Migration,
    ) -> Result<Report, PeerError> {
        let me = self.comm.rank();
        if migration.epoch != self.epoch || migration.loads_before.len() != self.comm.size() {
            return Err(PeerError::Mismatch(format!(
                "the migration belongs to call {}, but this balancer's last plan was call {}",
                migration.epoch, self.epoch
            )));
        }
        let backend = self.comm.backend();
        if migration.is_empty() {
            return Ok(Report::unchanged(migration, me, backend));
        }
        let units_before = migration.loads_before[me];
        let items_before = items.len() as u64;
        let start = Instant::now();
        let mut session = Session::new(
            &mut self.comm,
            &mut self.mailbox,
            self.epoch,
            self.config.timeout,
            self.config.entry_timeout,
        );
        let result = carry_out(&mut session, items, migration, self.config.fault);
        let traffic = session.finish();
        self.note_failure(&result);
        let stats = result?;
        let move_seconds = start.elapsed().as_secs_f64();
        let dones: Vec<_> = stats.dones.iter().map(|d| d.unwrap_or_default()).collect();
        let loads_after: Vec<u64> = dones.iter().map(|d| d.units).collect();
        let items_after_all: Vec<u64> = dones.iter().map(|d| d.items).collect();
        let link_seconds: f64 = dones.iter().map(|d| d.link_seconds).sum();
        let link_units: u64 = dones.iter().map(|d| d.link_units).sum();
        let seconds_per_unit = (link_units > 0).then(|| link_seconds / link_units as f64);
        let weights = migration.weights();
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
            units_after: items.iter().map(Item::load).sum(),
            items_sent: stats.items_sent,
            items_received: stats.items_received,
            units_sent: stats.units_sent,
            units_received: stats.units_received,
            bytes_sent: traffic.bytes_sent,
            bytes_received: traffic.bytes_received,
            messages_sent: traffic.messages_sent,
            phases: migration.phases,
            imbalance_before: imbalance(&migration.loads_before, &weights),
            imbalance_after: imbalance(&loads_after, &weights),
            planned_imbalance_after: imbalance(&migration.planned_after, &weights),
            balanced: true,
            converged: migration.converged,
            residual: stats.residual,
            decide_seconds: migration.decide_seconds,
            move_seconds,
            slowest_move_seconds: dones.iter().map(|d| d.move_seconds).fold(0.0, f64::max),
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
        })
    }

    /// Decides and moves in one collective call: [`Balancer::plan`] then
    /// [`Balancer::migrate`]. When the rule finds nothing to do, the call costs one
    /// all-gather.
    ///
    /// # Errors
    /// As [`Balancer::plan`] and [`Balancer::migrate`].
    pub fn rebalance(&mut self, items: &mut Vec<T>) -> Result<Report, PeerError> {
        let migration = self.plan(items)?;
        self.migrate(items, &migration)
    }
}

/// A digest of everything the ranks must agree on (FNV-1a over a canonical text).
fn fingerprint(config: &BalancerConfig, label: &str, size: usize) -> u64 {
    let speeds = match &config.speeds {
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
        "{}|{label}|{size}|{speeds}|{}|{:?}|{:?}|{}|{:?}",
        config.algorithm.name(),
        config.schedule.name(),
        config.procs_per_group,
        config.max_rounds,
        config.seed,
        config.lambda.map(f64::to_bits),
    );
    text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
