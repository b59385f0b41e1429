//! Rule `auto` with the trigger `auto` against every fixed (rule, period) pair, on four
//! workloads of the iterative application ([`hetlb_runtime::workload::iterative`]):
//!
//! | workload | what changes |
//! |---|---|
//! | `static` | half the ranks 3× slower for the whole run |
//! | `hotspot` | a window of 8× costlier items drifts over the items (2 sweeps) |
//! | `speed-change` | every rank equal, then from the middle two ranks 4× slower |
//! | `balanced` | nothing: every rank equal, every item one unit |
//!
//! Work is **sleep-based** ([`Work::Sleep`]): a rank sleeps a fixed time per unit, so the
//! ranks' speeds, the imbalance and the predictions do not depend on what else the machine
//! runs, and every rank has what it needs without a core of its own. Each fixed pair runs
//! its rule every `period` iterations with the trigger `always`; `auto` is called every
//! iteration, picks among the same rules, moves only when the gain predicted over the
//! horizon exceeds the predicted cost, and learns the cost of moving from its own moves.
//!
//! The report gives every run's time (the median over `runs`), `auto` beside the best fixed
//! pair and beside no balancing, and the prediction errors of `auto`'s moves: the move time,
//! and the gain per iteration measured at the next call. A run's time is **accounted**: the
//! sum over iterations of the slowest rank's work, plus the sum over rebalances of the time
//! the last rank to reach the call spends in it, measured
//! ([`IterativeRun::accounted_seconds`]). The wall time is reported beside it; it adds the
//! operating system's wake-up delays, which a loaded machine makes large and random.

use crate::BenchError;
use crate::timing::{Machine, Progress, median};
use hetlb_core::advice::Trigger;
use hetlb_core::algorithm::Algorithm;
use hetlb_peer::{AUTO, BalancerConfig, Speeds};
use hetlb_runtime::Slowdown;
use hetlb_runtime::workload::iterative::{
    Drift, IterativeConfig, IterativeRun, SpeedChange, Work, run_threads,
};
use serde::Serialize;
use std::time::Duration;

/// One of the four workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Workload {
    /// Half the ranks 3× slower for the whole run.
    Static,
    /// A hot window of items drifting over the items.
    Hotspot,
    /// Equal ranks, then two ranks 4× slower from the middle of the run.
    SpeedChange,
    /// Nothing to balance.
    Balanced,
}

impl Workload {
    /// All four, in the order reported.
    pub const ALL: [Workload; 4] = [
        Workload::Static,
        Workload::Hotspot,
        Workload::SpeedChange,
        Workload::Balanced,
    ];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Workload::Static => "static",
            Workload::Hotspot => "hotspot",
            Workload::SpeedChange => "speed-change",
            Workload::Balanced => "balanced",
        }
    }

    /// How close `auto` must come to the best fixed pair (`balanced`: to no balancing).
    pub fn aim(self) -> f64 {
        match self {
            Workload::Balanced => 1.02,
            _ => 1.05,
        }
    }

    /// The iterative run of this workload for `cfg`.
    fn config(self, cfg: &AutoConfig) -> IterativeConfig {
        let p = cfg.ranks;
        let mut slowdowns = vec![Slowdown::constant(1); p];
        let mut drift = None;
        let mut speed_change = None;
        match self {
            Workload::Static => {
                for s in slowdowns.iter_mut().skip(p / 2) {
                    *s = Slowdown::constant(3);
                }
            }
            Workload::Hotspot => {
                drift = Some(Drift::HotSpot {
                    factor: 8,
                    width: 0.125,
                    sweeps: 2.0,
                });
            }
            Workload::SpeedChange => {
                let mut after = vec![1u32; p];
                for s in after.iter_mut().take(2.min(p.saturating_sub(1))) {
                    *s = 4;
                }
                speed_change = Some(SpeedChange {
                    at_iteration: cfg.iterations / 2,
                    slowdowns: after,
                });
            }
            Workload::Balanced => {}
        }
        let mut run = IterativeConfig::default();
        (run.cells, run.iterations, run.every) = (cfg.items, cfg.iterations, 1);
        (run.cost, run.payload) = (0, cfg.item_bytes);
        (run.slowdowns, run.drift, run.speed_change) = (slowdowns, drift, speed_change);
        run.work = Work::Sleep {
            per_unit: cfg.sleep_per_unit,
        };
        run
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Workload::ALL
            .into_iter()
            .find(|w| w.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown workload '{s}' (expected static, hotspot, speed-change or balanced)"
                )
            })
    }
}

/// What [`run`] measures.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AutoConfig {
    /// Ranks (threads): any count; off a power of two every rule runs on `complete:N`.
    pub ranks: usize,
    /// Items in all.
    pub items: u64,
    /// Bytes of payload per item.
    pub item_bytes: usize,
    /// Iterations of every run.
    pub iterations: u64,
    /// Sleep per unit of work.
    pub sleep_per_unit: Duration,
    /// The fixed rules swept (and `auto`'s candidates).
    pub algorithms: Vec<Algorithm>,
    /// The periods swept.
    pub periods: Vec<u64>,
    /// `auto`'s horizon in iterations.
    pub horizon: u64,
    /// The workloads.
    pub workloads: Vec<Workload>,
    /// Runs of every configuration (the median total is reported).
    pub runs: usize,
}

impl AutoConfig {
    /// An estimate of the bytes [`run`] holds at its peak: every item held once and at most
    /// twice more while it moves (`item_bytes` and 48 bytes each time), as `hetlb run
    /// iterative` counts it, and 256 KiB a rank.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::auto::AutoConfig;
    /// assert_eq!(AutoConfig::default().items(1000).ranks(2).memory_needed(), 1000 * 112 * 3 + 2 * (256 << 10));
    /// ```
    pub fn memory_needed(&self) -> u128 {
        u128::from(self.items) * (self.item_bytes as u128 + 48) * 3
            + self.ranks as u128 * (256 << 10)
    }
}

impl Default for AutoConfig {
    fn default() -> Self {
        Self {
            ranks: 8,
            items: 4096,
            item_bytes: 64,
            iterations: 40,
            sleep_per_unit: Duration::from_micros(100),
            algorithms: vec![
                Algorithm::Cwa,
                Algorithm::DemHetero,
                Algorithm::Oem,
                Algorithm::Dishet,
            ],
            periods: vec![1, 2, 5, 10, 20],
            horizon: Trigger::DEFAULT_HORIZON,
            workloads: Workload::ALL.to_vec(),
            runs: 1,
        }
    }
}

crate::setters!(AutoConfig {
    ranks: usize,
    items: u64,
    item_bytes: usize,
    iterations: u64,
    sleep_per_unit: Duration,
    algorithms: Vec<Algorithm>,
    periods: Vec<u64>,
    horizon: u64,
    workloads: Vec<Workload>,
    runs: usize,
});

/// One configuration on one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AutoRow {
    /// The workload.
    pub workload: Workload,
    /// A rule, `auto`, or `none`.
    pub balancer: String,
    /// Iterations between calls (`None` for no balancing).
    pub period: Option<u64>,
    /// Median of the runs' accounted seconds: every iteration's slowest rank's work plus
    /// every rebalance's slowest rank ([`IterativeRun::accounted_seconds`]).
    pub seconds: f64,
    /// Median wall-clock seconds of the runs (wake-up and scheduling delays included).
    pub wall_seconds: f64,
    /// The shortest accounted seconds of the runs.
    pub min_seconds: f64,
    /// The longest.
    pub max_seconds: f64,
    /// Calls that moved something (the median run).
    pub moves: usize,
    /// Calls the trigger held back (the median run).
    pub held_back: usize,
    /// Units moved over the run (the median run).
    pub units_moved: u64,
}

/// `auto` beside the sweep on one workload.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AutoSummary {
    /// The workload.
    pub workload: Workload,
    /// The fastest fixed (rule, period) pair.
    pub best_rule: String,
    /// Its period.
    pub best_period: u64,
    /// Its median seconds.
    pub best_seconds: f64,
    /// No balancing.
    pub none_seconds: f64,
    /// `auto`.
    pub auto_seconds: f64,
    /// `auto ÷ best fixed pair`.
    pub auto_over_best: f64,
    /// `auto ÷ none`.
    pub auto_over_none: f64,
    /// The aim: `auto_over_best` (or `auto_over_none` on `balanced`) at most this.
    pub aim: f64,
    /// Whether the aim was met in this run.
    pub met: bool,
    /// `auto`'s moves with a measured move time and a prediction.
    pub moves_measured: usize,
    /// Median of `|predicted − measured| ÷ measured` move time over those moves.
    pub move_time_error: Option<f64>,
    /// Median of `predicted ÷ measured` move time.
    pub move_time_ratio: Option<f64>,
    /// Moves whose gain was measured at the next call.
    pub gains_measured: usize,
    /// Median of `|predicted − measured|` gain per iteration, in seconds.
    pub gain_error_seconds: Option<f64>,
    /// Median measured gain per iteration, in seconds (for scale).
    pub gain_measured_seconds: Option<f64>,
}

/// Everything [`run`] measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct AutoReport {
    /// The machine.
    pub machine: Machine,
    /// Ranks.
    pub ranks: usize,
    /// Items.
    pub items: u64,
    /// Iterations.
    pub iterations: u64,
    /// Sleep per unit, seconds.
    pub sleep_per_unit: f64,
    /// `auto`'s horizon.
    pub horizon: u64,
    /// Runs per configuration.
    pub runs: usize,
    /// Every configuration.
    pub rows: Vec<AutoRow>,
    /// `auto` beside the sweep, per workload.
    pub summaries: Vec<AutoSummary>,
}

/// The most runs [`run`] makes in all (configurations × workloads × runs).
pub const MAX_RUNS: usize = 20_000;

/// Runs the sweep and `auto` on every workload; `progress` is told `(done, total)`.
///
/// # Errors
/// [`BenchError::Setting`] for a setting out of range; [`BenchError::Check`] when a run fails
/// or loses an item.
pub fn run(cfg: &AutoConfig, progress: Progress<'_>) -> Result<AutoReport, BenchError> {
    check(cfg)?;
    let per_workload = cfg.algorithms.len() * cfg.periods.len() + 2;
    let total = per_workload * cfg.workloads.len() * cfg.runs;
    let mut done = 0;
    let mut rows = Vec::new();
    let mut summaries = Vec::new();
    // Off a power of two every rule runs on the complete network (the hypercube rules
    // embedded in a cube), so that the sweep and auto's candidates share one network.
    let network = |b: BalancerConfig| -> Result<BalancerConfig, BenchError> {
        if cfg.ranks.is_power_of_two() {
            return Ok(b);
        }
        b.topology(&format!("complete:{}", cfg.ranks))
            .map_err(|e| BenchError::Check(e.to_string()))
    };
    for &workload in &cfg.workloads {
        let base = workload.config(cfg);
        let mut configs: Vec<(String, Option<u64>, Option<BalancerConfig>)> = Vec::new();
        configs.push(("none".into(), None, None));
        for &rule in &cfg.algorithms {
            for &period in &cfg.periods {
                let b = BalancerConfig::for_algorithm(rule).speeds(Speeds::Measured { window: 1 });
                configs.push((rule.name().to_string(), Some(period), Some(network(b)?)));
            }
        }
        let auto = BalancerConfig::new(AUTO)
            .map_err(|e| BenchError::Check(e.to_string()))?
            .candidates(cfg.algorithms.clone())
            .speeds(Speeds::Measured { window: 1 })
            .trigger(Trigger::Auto {
                horizon: cfg.horizon,
                margin: 1.0,
            })
            .learn_cost(true);
        configs.push((AUTO.to_string(), Some(1), Some(network(auto)?)));
        let mut auto_runs = Vec::new();
        for (name, period, balancer) in configs {
            let mut iterative = base.clone();
            iterative.every = period.unwrap_or(1);
            let mut totals = Vec::with_capacity(cfg.runs);
            let mut walls = Vec::with_capacity(cfg.runs);
            let mut runs = Vec::with_capacity(cfg.runs);
            for _ in 0..cfg.runs {
                let r = run_threads(&iterative, cfg.ranks, balancer.clone(), None, None)
                    .map_err(|e| BenchError::Check(format!("{} {name}: {e}", workload.name())))?;
                check_exactly_once(&r, cfg.items, &name)?;
                totals.push(r.accounted_seconds.unwrap_or(r.total_seconds));
                walls.push(r.total_seconds);
                runs.push(r);
                done += 1;
                progress(done as u64, total as u64);
            }
            let seconds = median(&totals);
            let accounted = |r: &IterativeRun| r.accounted_seconds.unwrap_or(r.total_seconds);
            let mid = runs
                .iter()
                .min_by(|a, b| {
                    (accounted(a) - seconds)
                        .abs()
                        .total_cmp(&(accounted(b) - seconds).abs())
                })
                .cloned();
            let (moves, held_back, units_moved) = mid.as_ref().map_or((0, 0, 0), counts);
            rows.push(AutoRow {
                workload,
                balancer: name.clone(),
                period,
                seconds,
                wall_seconds: median(&walls),
                min_seconds: totals.iter().copied().fold(f64::INFINITY, f64::min),
                max_seconds: totals.iter().copied().fold(0.0, f64::max),
                moves,
                held_back,
                units_moved,
            });
            if name == AUTO {
                auto_runs = runs;
            }
        }
        summaries.push(summarise(workload, &rows, &auto_runs));
    }
    Ok(AutoReport {
        machine: Machine::here(cfg.ranks),
        ranks: cfg.ranks,
        items: cfg.items,
        iterations: cfg.iterations,
        sleep_per_unit: cfg.sleep_per_unit.as_secs_f64(),
        horizon: cfg.horizon,
        runs: cfg.runs,
        rows,
        summaries,
    })
}

fn check(cfg: &AutoConfig) -> Result<(), BenchError> {
    let bad = |setting, message: String| Err(BenchError::Setting { setting, message });
    if !(2..=64).contains(&cfg.ranks) {
        return bad("ranks", format!("{} is not from 2 to 64", cfg.ranks));
    }
    if cfg.items < cfg.ranks as u64 || cfg.items > 10_000_000 {
        return bad(
            "items",
            format!("{} is not from the rank count to 10,000,000", cfg.items),
        );
    }
    if cfg.iterations < 2 || cfg.iterations > 100_000 {
        return bad(
            "iterations",
            format!("{} is not from 2 to 100000", cfg.iterations),
        );
    }
    if cfg.algorithms.is_empty() || cfg.periods.is_empty() || cfg.workloads.is_empty() {
        return bad(
            "algorithms",
            "algorithms, periods and workloads must not be empty".into(),
        );
    }
    if cfg.periods.contains(&0) {
        return bad("periods", "a period is at least 1".into());
    }
    if cfg.horizon == 0 {
        return bad("horizon", "must be at least 1".into());
    }
    if cfg.runs == 0 {
        return bad("runs", "at least one".into());
    }
    let total = (cfg.algorithms.len() * cfg.periods.len() + 2)
        .saturating_mul(cfg.workloads.len())
        .saturating_mul(cfg.runs);
    if total > MAX_RUNS {
        return bad(
            "runs",
            format!("{total} runs in all is more than {MAX_RUNS}"),
        );
    }
    Ok(())
}

fn check_exactly_once(r: &IterativeRun, items: u64, name: &str) -> Result<(), BenchError> {
    let held: u64 = r.ranks.iter().map(|l| l.items).sum();
    let id_sum: u128 = r.ranks.iter().map(|l| l.id_sum).sum();
    let expected: u128 = (0..u128::from(items)).sum();
    if held != items || id_sum != expected {
        return Err(BenchError::Check(format!(
            "{name}: {held} items (id sum {id_sum}) at the end, expected {items} ({expected})"
        )));
    }
    Ok(())
}

/// Moves, held-back calls and units moved in a run.
fn counts(r: &IterativeRun) -> (usize, usize, u64) {
    let moves = r.steps.iter().filter(|s| s.units_moved > 0).count();
    let held = r.steps.iter().filter(|s| s.report.held_back).count();
    let units = r.steps.iter().map(|s| s.units_moved).sum();
    (moves, held, units)
}

fn summarise(workload: Workload, rows: &[AutoRow], auto_runs: &[IterativeRun]) -> AutoSummary {
    let here: Vec<&AutoRow> = rows.iter().filter(|r| r.workload == workload).collect();
    let seconds_of = |name: &str| {
        here.iter()
            .find(|r| r.balancer == name)
            .map_or(f64::NAN, |r| r.seconds)
    };
    let best = here
        .iter()
        .filter(|r| r.balancer != AUTO && r.balancer != "none")
        .min_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let (best_rule, best_period, best_seconds) = best.map_or((String::new(), 0, f64::NAN), |r| {
        (r.balancer.clone(), r.period.unwrap_or(0), r.seconds)
    });
    let none_seconds = seconds_of("none");
    let auto_seconds = seconds_of(AUTO);
    let auto_over_best = auto_seconds / best_seconds;
    let auto_over_none = auto_seconds / none_seconds;
    let aim = workload.aim();
    let met = match workload {
        Workload::Balanced => auto_over_none <= aim,
        _ => auto_over_best <= aim,
    };
    let mut move_errors = Vec::new();
    let mut move_ratios = Vec::new();
    let mut gain_errors = Vec::new();
    let mut gains = Vec::new();
    for r in auto_runs {
        for s in &r.steps {
            if let Some(p) = s.report.prediction
                && s.units_moved > 0
                && s.measured_move_seconds > 0.0
            {
                move_errors.push(
                    (p.move_seconds - s.measured_move_seconds).abs() / s.measured_move_seconds,
                );
                move_ratios.push(p.move_seconds / s.measured_move_seconds);
            }
            if let Some(o) = s.report.outcome {
                gain_errors
                    .push((o.predicted_gain_per_iteration - o.measured_gain_per_iteration).abs());
                gains.push(o.measured_gain_per_iteration);
            }
        }
    }
    let med = |v: &[f64]| (!v.is_empty()).then(|| median(v));
    AutoSummary {
        workload,
        best_rule,
        best_period,
        best_seconds,
        none_seconds,
        auto_seconds,
        auto_over_best,
        auto_over_none,
        aim,
        met,
        moves_measured: move_errors.len(),
        move_time_error: med(&move_errors),
        move_time_ratio: med(&move_ratios),
        gains_measured: gain_errors.len(),
        gain_error_seconds: med(&gain_errors),
        gain_measured_seconds: med(&gains),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_run_keeps_every_item_and_the_summary_names_auto_and_the_best_pair() {
        let cfg = AutoConfig::default()
            .ranks(4)
            .items(64)
            .iterations(4)
            .sleep_per_unit(Duration::from_micros(1))
            .algorithms(vec![Algorithm::Cwa])
            .periods(vec![1, 2])
            .workloads(vec![Workload::Static]);
        let report = run(&cfg, &mut |_, _| {}).unwrap();
        let names: Vec<&str> = report.rows.iter().map(|r| r.balancer.as_str()).collect();
        assert_eq!(names, ["none", "cwa", "cwa", AUTO]);
        let s = &report.summaries[0];
        assert_eq!(s.best_rule, "cwa");
        assert!(s.best_period == 1 || s.best_period == 2);
        // The static workload is imbalanced from the start: auto's first call checks and
        // decides (whether the move pays depends on the probe's measured cost, not asserted).
        let auto = &report.rows[3];
        assert!(auto.moves + auto.held_back >= 1, "{auto:?}");
    }

    #[test]
    fn bad_settings_are_named() {
        let e = |c: AutoConfig| match run(&c, &mut |_, _| {}) {
            Err(BenchError::Setting { setting, .. }) => setting,
            other => panic!("{other:?}"),
        };
        assert_eq!(e(AutoConfig::default().ranks(1)), "ranks");
        assert_eq!(e(AutoConfig::default().periods(vec![0])), "periods");
        assert_eq!(
            e(AutoConfig::default().algorithms(Vec::new())),
            "algorithms"
        );
        assert_eq!(e(AutoConfig::default().runs(10_000)), "runs");
    }
}
