//! What a balancer learns and schedules across calls, apart from the protocol: this rank's
//! measured speed, the cost of moving it learns, the shortfalls of rule `auto`'s candidates,
//! and when the trigger `auto` checks again.

use crate::config::{BalancerConfig, LEARNED_SAMPLES};
use crate::decide::{Migration, max_step};
use crate::learning::{CostLearner, Outcome, PendingOutcome};
use crate::options::Speeds;
use crate::shortfalls::Shortfalls;
use crate::speed::SpeedMeter;
use crate::wire::RankState;
use hetlb_core::advice::{CostModel, MoveSample, Trigger};
use hetlb_core::algorithm::Algorithm;

/// One rank's learning and check schedule (see the module's documentation).
#[derive(Debug)]
pub(super) struct Tuning {
    meter: SpeedMeter,
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
    /// True once this rank has run the cost probe (`crate::probe`).
    probed: bool,
}

/// What the group's gather gives every rank alike: the cost model to predict with and rule
/// `auto`'s shortfalls.
pub(super) struct Adopted {
    pub(super) cost_model: CostModel,
    pub(super) shortfalls: Shortfalls,
}

impl Tuning {
    pub(super) fn new(config: &BalancerConfig) -> Self {
        let window = match config.options.speeds {
            Speeds::Measured { window } => window,
            _ => 1,
        };
        Self {
            meter: SpeedMeter::new(window),
            learner: CostLearner::new(LEARNED_SAMPLES),
            pending: PendingOutcome::default(),
            shortfalls: Shortfalls::default(),
            last_step_seconds: None,
            last_check_seconds: None,
            skip_left: 0,
            interval: 1,
            check_cap: 1,
            probed: false,
        }
    }

    /// A step of the application: `units` in `seconds`.
    pub(super) fn record(&mut self, units: u64, seconds: f64) {
        self.meter.record(units, seconds);
        if seconds.is_finite() && seconds >= 0.0 {
            self.last_step_seconds = Some(seconds);
        }
    }

    /// This rank's measured speed, once it has one.
    pub(super) fn speed(&self) -> Option<f64> {
        self.meter.speed()
    }

    /// True the first time it is asked, when the cost is learned: the call probes.
    pub(super) fn probe_now(&mut self, config: &BalancerConfig) -> bool {
        let now = config.options.learn_cost && !self.probed;
        self.probed |= now;
        now
    }

    /// What the probe measured.
    pub(super) fn observe_probe(&mut self, samples: [MoveSample; 2]) {
        self.learner.observe_probe(samples);
    }

    /// This rank's part of the call's gather: its speed, learned model, last step and check,
    /// and (rank 0 of rule `auto`) the shortfalls.
    pub(super) fn fill(&self, config: &BalancerConfig, state: &mut RankState) {
        state.speed = match config.options.speeds {
            Speeds::Measured { .. } => self.meter.speed(),
            Speeds::Own(capacity) => Some(capacity),
            _ => None,
        };
        state.model = self.learner.model().filter(|_| config.options.learn_cost);
        state.step_seconds = self.last_step_seconds;
        state.call_seconds = self.last_check_seconds;
        state.shortfalls = (state.rank == 0 && config.is_auto()).then_some(self.shortfalls);
    }

    /// Adopts what the gather gives every rank alike: rank 0's learned model and shortfalls,
    /// and the budget's cap on the interval between checks.
    pub(super) fn adopt(&mut self, config: &BalancerConfig, states: &[RankState]) -> Adopted {
        self.check_cap = check_cap(config, states);
        let cost_model = match states.first().and_then(|s| s.model) {
            Some(learned) if config.options.learn_cost => learned,
            _ => config.options.move_cost,
        };
        let mut shortfalls = states
            .first()
            .and_then(|s| s.shortfalls)
            .unwrap_or_default();
        shortfalls.settle(max_step(states));
        self.shortfalls = shortfalls;
        Adopted {
            cost_model,
            shortfalls,
        }
    }

    /// How the previous move's prediction turned out, measured at this call.
    pub(super) fn outcome(&mut self, step_seconds: Option<f64>) -> Option<Outcome> {
        self.pending.measure(step_seconds)
    }

    /// A move committed: its measured seconds teach the cost model, the outcome is measured
    /// at the next call, and rule `auto`'s candidate that moved is tracked.
    pub(super) fn moved(
        &mut self,
        migration: &Migration,
        slowest_move_seconds: f64,
        candidates: Option<Vec<Algorithm>>,
    ) {
        self.learner.observe(migration, slowest_move_seconds);
        self.pending.moved(migration, slowest_move_seconds);
        if let Some(list) = candidates {
            let position = list.iter().position(|&a| a == migration.algorithm);
            let after = migration.prediction.map(|p| p.iteration_seconds_after);
            self.shortfalls.moved(position, after);
        }
    }

    /// Calls the trigger `auto` will skip before it checks again.
    pub(super) fn skips_left(&self) -> u64 {
        self.skip_left
    }

    /// True when the trigger `auto` skips this call (counted).
    pub(super) fn skip(&mut self) -> bool {
        let skip = self.skip_left > 0;
        self.skip_left = self.skip_left.saturating_sub(1);
        skip
    }

    /// A check took `seconds` (its gather and plans).
    pub(super) fn checked(&mut self, seconds: f64) {
        self.last_check_seconds = Some(seconds);
    }

    /// After a move, look again at the next call (imbalance that drifts comes back); after a
    /// check that found nothing to move, twice as long, up to what the budget allows; after a
    /// failed call, at the next. The same on every rank: the outcome is the group's.
    pub(super) fn schedule_next_check(&mut self, result: Result<bool, ()>) {
        self.interval = match result {
            Ok(true) | Err(()) => 1,
            Ok(false) => (self.interval * 2).min(self.check_cap),
        };
        self.skip_left = self.interval - 1;
    }
}

/// The most calls between two checks of the trigger `auto`
/// ([`BalancerConfig::check_budget`]), from the gathered states: the same on every rank.
fn check_cap(config: &BalancerConfig, states: &[RankState]) -> u64 {
    let Trigger::Auto { horizon, .. } = config.options.trigger else {
        return 1;
    };
    let budget = config.options.check_budget;
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
