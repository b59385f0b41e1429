//! Balancers compared on the iterative workload: each run in turn (several times on threads,
//! the run of median total time kept), every run checked for exactly-once, and what the
//! comparison shows — each balancer against no balancing and the ideal, the best, the rules
//! that had nothing to move, the measured speeds that cannot be right.

use hetlb_core::algorithm::Algorithm;
use hetlb_peer::BalancerConfig;
use hetlb_peer::speed_check::{Implausible, implausible, speed};
use hetlb_runtime::workload::iterative::{
    self, IterationProgress, IterativeConfig, IterativeError, IterativeRun, RankLog, Step,
};
use serde::Serialize;
use std::time::Duration;

/// The totals of a balancer's runs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Spread {
    /// Runs made.
    pub runs: u64,
    /// The smallest total, seconds.
    pub min: f64,
    /// The largest total, seconds.
    pub max: f64,
}

/// A balancer's run of median total time, and the spread of its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Compared {
    /// The run of median total time.
    pub run: IterativeRun,
    /// The totals of all its runs.
    pub spread: Spread,
}

pub use iterative::balancer_name;

/// Every item is held by exactly one rank at the end of every run: the ranks hold `cells`
/// items whose ids sum to `cells·(cells−1)/2`.
///
/// # Errors
/// [`IterativeError::NotExactlyOnce`] naming the first run that lost or doubled an item.
pub fn check_exactly_once(cells: u64, runs: &[IterativeRun]) -> Result<(), IterativeError> {
    let expected: u128 = u128::from(cells) * u128::from(cells.saturating_sub(1)) / 2;
    for r in runs {
        let items: u64 = r.ranks.iter().map(|l| l.items).sum();
        let ids: u128 = r.ranks.iter().map(|l| l.id_sum).sum();
        if items != cells || ids != expected {
            return Err(IterativeError::NotExactlyOnce {
                balancer: r.balancer.clone(),
                items,
                id_sum: ids,
                expected_items: cells,
                expected_id_sum: expected,
            });
        }
    }
    Ok(())
}

/// Runs the workload on `ranks` threads once per entry of `balancers` (`None`: not
/// balanced), `runs` times each; checks every run for exactly-once and keeps, per balancer,
/// the run of median total time with the spread of the totals. Before each run
/// `progress(balancer, run)` (runs counted from 0) may return a callback for its iterations.
///
/// # Errors
/// [`IterativeError::Run`] naming the balancer whose run failed;
/// [`IterativeError::NotExactlyOnce`].
///
/// # Example
/// ```
/// use hetlb_experiments::drivers::iterative;
/// use hetlb_peer::BalancerConfig;
/// use hetlb_runtime::workload::iterative::IterativeConfig;
/// use hetlb_runtime::Slowdown;
/// let mut cfg = IterativeConfig::default();
/// (cfg.cells, cfg.iterations, cfg.every, cfg.cost, cfg.payload) = (64, 4, 2, 5, 8);
/// cfg.slowdowns = vec![Slowdown::constant(1), Slowdown::constant(2)];
/// let balancers = [Some(BalancerConfig::new("cwa").unwrap()), None];
/// let out = iterative::on_threads(&cfg, 2, &balancers, 3, None, &mut |_, _| None).unwrap();
/// assert_eq!(out[1].run.balancer, "none");
/// assert_eq!(out[0].spread.runs, 3);
/// assert!(out[0].spread.min <= out[0].run.total_seconds);
/// ```
pub fn on_threads(
    cfg: &IterativeConfig,
    ranks: usize,
    balancers: &[Option<BalancerConfig>],
    runs: u64,
    timeout: Option<Duration>,
    progress: &mut dyn FnMut(&str, u64) -> Option<IterationProgress>,
) -> Result<Vec<Compared>, IterativeError> {
    let mut out = Vec::with_capacity(balancers.len());
    for b in balancers {
        let name = balancer_name(b.as_ref());
        let mut repeats = Vec::new();
        for k in 0..runs.max(1) {
            let run = iterative::run_threads(cfg, ranks, b.clone(), timeout, progress(name, k))
                .map_err(|e| IterativeError::Run {
                    balancer: name.to_string(),
                    source: Box::new(e),
                })?;
            repeats.push(run);
        }
        check_exactly_once(cfg.cells, &repeats)?;
        repeats.sort_by(|a, b| a.total_seconds.total_cmp(&b.total_seconds));
        let spread = Spread {
            runs: repeats.len() as u64,
            min: repeats[0].total_seconds,
            max: repeats[repeats.len() - 1].total_seconds,
        };
        let run = repeats.swap_remove(repeats.len() / 2);
        out.push(Compared { run, spread });
    }
    Ok(out)
}

/// One balancer's run beside no balancing and the ideal (serialised in this order: what
/// `hetlb run iterative --format json` prints for each balancer).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct BalancerReport {
    /// The rule, or `none`.
    pub balancer: String,
    /// Seconds of the run reported (the run of median total time when there were several).
    pub total_seconds: f64,
    /// The balancer's runs.
    pub runs: u64,
    /// The smallest total among them.
    pub total_seconds_min: f64,
    /// The largest total among them.
    pub total_seconds_max: f64,
    /// `total_seconds` per iteration.
    pub mean_iteration_seconds: f64,
    /// The run's ideal ([`IterativeRun::ideal_seconds`]).
    pub ideal_seconds: f64,
    /// `total_seconds` over the total of the run without balancing, when there was one.
    pub vs_none: Option<f64>,
    /// `total_seconds` over the ideal.
    pub vs_ideal: f64,
    /// Ranks per core ([`IterativeRun::oversubscription`]).
    pub oversubscription: f64,
    /// Every iteration's time ([`IterativeRun::iteration_seconds`]).
    pub iteration_seconds: Vec<f64>,
    /// Every rebalance.
    pub steps: Vec<Step>,
    /// Every rank at the end.
    pub ranks: Vec<RankLog>,
    /// Items moved over all rebalances.
    pub items_moved: u64,
    /// Bytes of item messages over all rebalances.
    pub bytes: u64,
    /// Mean imbalance before the rebalances (none without a rebalance).
    #[serde(skip)]
    pub mean_imbalance_before: Option<f64>,
    /// Mean imbalance after them.
    #[serde(skip)]
    pub mean_imbalance_after: Option<f64>,
}

/// A measured speed that cannot be right, in a balancer's run.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SpeedWarning {
    /// The balancer whose run measured it.
    pub balancer: String,
    /// The speed, its rank and why it cannot be right.
    #[serde(flatten)]
    pub speed: Implausible,
}

/// What a comparison of balancers shows.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Assessment {
    /// One per run, in order.
    pub balancers: Vec<BalancerReport>,
    /// The run of least total time, running without balancing (`none`) included: `none`
    /// when no balancer beat it; `None` when `none` alone ran.
    pub best: Option<String>,
    /// Rules that do not weigh the ranks' speeds and moved nothing: they see only the
    /// items' loads, which were level.
    pub unmoved: Vec<String>,
    /// The first impossible speed of each rank in each balancer's run, among the speeds the
    /// rules were given at each rebalance and each rank's over the run.
    pub implausible_speeds: Vec<SpeedWarning>,
}

/// The mean imbalance before and after the rebalances of `steps` (none for no step).
pub fn mean_imbalance(steps: &[Step]) -> (Option<f64>, Option<f64>) {
    if steps.is_empty() {
        return (None, None);
    }
    let n = steps.len() as f64;
    (
        Some(steps.iter().map(|s| s.imbalance_before).sum::<f64>() / n),
        Some(steps.iter().map(|s| s.imbalance_after).sum::<f64>() / n),
    )
}

/// What `runs` show, with `spreads[i]` the spread of run `i` (one run each when missing).
///
/// # Complexity
/// `O(Σ (steps + iterations) × ranks)`.
pub fn assess(runs: Vec<IterativeRun>, spreads: &[Spread]) -> Assessment {
    let none_total = runs
        .iter()
        .find(|r| r.balancer == "none")
        .map(|r| r.total_seconds);
    let implausible_speeds = implausible_speeds(&runs);
    let balancers: Vec<BalancerReport> = runs
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let (before, after) = mean_imbalance(&r.steps);
            let spread = spreads.get(i);
            BalancerReport {
                total_seconds: r.total_seconds,
                runs: spread.map_or(1, |s| s.runs),
                total_seconds_min: spread.map_or(r.total_seconds, |s| s.min),
                total_seconds_max: spread.map_or(r.total_seconds, |s| s.max),
                mean_iteration_seconds: r.total_seconds / r.iteration_seconds.len().max(1) as f64,
                ideal_seconds: r.ideal_seconds,
                vs_none: none_total.map(|n| r.total_seconds / n),
                vs_ideal: r.total_seconds / r.ideal_seconds.max(f64::MIN_POSITIVE),
                oversubscription: r.oversubscription,
                items_moved: r.steps.iter().map(|s| s.items_moved).sum(),
                bytes: r.steps.iter().map(|s| s.bytes).sum(),
                mean_imbalance_before: before,
                mean_imbalance_after: after,
                balancer: r.balancer,
                iteration_seconds: r.iteration_seconds,
                steps: r.steps,
                ranks: r.ranks,
            }
        })
        .collect();
    // Running without balancing ("none") competes too: a balancer slower than it is not best.
    let best = balancers
        .iter()
        .min_by(|a, b| a.total_seconds.total_cmp(&b.total_seconds))
        .filter(|b| b.balancer != "none" || balancers.len() > 1)
        .map(|b| b.balancer.clone());
    let unmoved = balancers
        .iter()
        .filter(|b| b.items_moved == 0 && b.balancer != "none")
        .filter(|b| {
            b.balancer
                .parse::<Algorithm>()
                .is_ok_and(|a| !a.uses_capacities())
        })
        .map(|b| b.balancer.clone())
        .collect();
    Assessment {
        balancers,
        best,
        unmoved,
        implausible_speeds,
    }
}

/// The first impossible speed of each rank in each run of `runs`, among the speeds the rules
/// were given at each rebalance and each rank's over the run.
fn implausible_speeds(runs: &[IterativeRun]) -> Vec<SpeedWarning> {
    let mut implausible_speeds: Vec<SpeedWarning> = Vec::new();
    for r in runs {
        let over_run: Vec<Option<f64>> = r
            .ranks
            .iter()
            .map(|l| speed(l.units_processed, l.busy_seconds))
            .collect();
        let given = r
            .steps
            .iter()
            .filter_map(|s| s.report.measured_speeds.as_ref())
            .map(|v| v.iter().map(|&x| Some(x)).collect::<Vec<_>>());
        for speeds in given.chain(std::iter::once(over_run)) {
            for found in implausible(&speeds) {
                let seen = implausible_speeds
                    .iter()
                    .any(|w| w.balancer == r.balancer && w.speed.rank == found.rank);
                if !seen {
                    implausible_speeds.push(SpeedWarning {
                        balancer: r.balancer.clone(),
                        speed: found,
                    });
                }
            }
        }
    }
    implausible_speeds
}

/// Runs every balancer of `balancers` in turn on the ranks of `job` — every rank calls it —
/// and gathers the ranks' logs at rank 0, which gets one [`IterativeRun`] per balancer,
/// checked for exactly-once; the other ranks get `None`. A rank that fails or stops is
/// reported by every other rank (each prints the error naming it), then the job is ended,
/// since a stopped process would otherwise keep the launcher waiting.
///
/// # Errors
/// [`IterativeError::NotExactlyOnce`], on rank 0.
#[cfg(feature = "mpi")]
pub fn on_mpi_job(
    job: &super::mpi_job::MpiJob,
    cfg: &IterativeConfig,
    balancers: &[Option<BalancerConfig>],
    timeout: Duration,
) -> Result<Option<Vec<IterativeRun>>, IterativeError> {
    match iterative::run_group(cfg, job.mpi(), balancers, timeout, job.oversubscription()) {
        Ok(runs) if job.rank() == 0 => {
            check_exactly_once(cfg.cells, &runs)?;
            Ok(Some(runs))
        }
        Ok(_) => Ok(None),
        Err(e) => job.report_and_end(&e.to_string(), timeout.min(Duration::from_secs(2))),
    }
}

#[cfg(test)]
mod best_tests {
    use super::*;

    fn run(balancer: &str, total_seconds: f64) -> IterativeRun {
        IterativeRun::assemble(balancer, total_seconds, Vec::new(), 1.0)
    }

    #[test]
    fn a_balancer_slower_than_none_is_not_best() {
        let a = assess(vec![run("none", 10.0), run("cwa", 12.55)], &[]);
        assert_eq!(a.best.as_deref(), Some("none"));
        let a = assess(
            vec![run("none", 10.0), run("cwa", 8.0), run("oem", 9.0)],
            &[],
        );
        assert_eq!(a.best.as_deref(), Some("cwa"));
        let a = assess(vec![run("none", 10.0)], &[]);
        assert_eq!(a.best, None);
        let a = assess(vec![run("dishet", 3.0)], &[]);
        assert_eq!(a.best.as_deref(), Some("dishet"));
    }
}
