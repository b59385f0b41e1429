//! Rule `auto`, direct routing, the learned cost model and per-item destinations on threads:
//! the decisions are those the predictions give, and every item is held exactly once.

use crate::support::unit_items;
use hetlb_core::advice::{CostModel, Prediction, Trigger};
use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::plan::Plan;
use hetlb_core::routing::{Routing, minimum_units};
use hetlb_core::topology::TopologySpec;
use hetlb_peer::{AUTO, Balancer, BalancerConfig, PeerError, Report, Speeds};
use hetlb_transport::threads;
use proptest::prelude::*;

/// One rank's reports, one per call, and the items it holds at the end.
type RankOutcome = (Vec<Result<Report, PeerError>>, Vec<u64>);

/// `calls` rebalances on `loads.len()` threads; before each, rank `r` records
/// `speeds[r]` units in one second. Returns every rank's reports and items after.
fn run(
    loads: &[u64],
    speeds: &[f64],
    calls: usize,
    config: impl Fn() -> BalancerConfig + Send + Sync + Clone + 'static,
) -> Vec<RankOutcome> {
    run_recording(loads, speeds, calls, config, |_, speed, _| {
        (speed as u64, 1.0)
    })
}

/// As [`run`], rank `r` recording `step(call, speeds[r], items held)` before each call.
fn run_recording(
    loads: &[u64],
    speeds: &[f64],
    calls: usize,
    config: impl Fn() -> BalancerConfig + Send + Sync + Clone + 'static,
    step: fn(usize, f64, usize) -> (u64, f64),
) -> Vec<RankOutcome> {
    let speeds = speeds.to_vec();
    let handles: Vec<_> = threads::group(loads.len())
        .into_iter()
        .zip(unit_items(loads))
        .enumerate()
        .map(|(rank, (member, mut mine))| {
            let config = config.clone();
            let speed = speeds[rank];
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, config()).unwrap();
                let mut reports = Vec::new();
                for call in 0..calls {
                    let (units, seconds) = step(call, speed, mine.len());
                    b.record(units, seconds);
                    reports.push(b.rebalance(&mut mine));
                }
                (reports, mine)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// Every id `0..total` is held exactly once across `held`.
fn assert_held_once<'a>(held: impl IntoIterator<Item = &'a Vec<u64>>, total: u64) {
    let mut all: Vec<u64> = held.into_iter().flatten().copied().collect();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..total).collect::<Vec<u64>>(),
        "every item exactly once"
    );
}

fn assert_exactly_once(loads: &[u64], out: &[RankOutcome]) {
    let mut all: Vec<u64> = out.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    all.sort_unstable();
    let total: u64 = loads.iter().sum();
    assert_eq!(
        all,
        (0..total).collect::<Vec<u64>>(),
        "every item exactly once"
    );
}

/// The plan of `algorithm` on `loads` with capacities in units of the slowest speed, as the
/// balancer makes it, computed here from the core alone.
fn plan_of(spec: &str, algorithm: Algorithm, loads: &[u64], speeds: &[f64]) -> Plan {
    let network = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    let slowest = speeds.iter().copied().fold(f64::INFINITY, f64::min);
    let caps = Capacities::new(speeds.iter().map(|s| s / slowest).collect()).unwrap();
    let options = BalanceOptions::new().capacities(Some(caps));
    balance_on(&network, algorithm, loads, &options)
        .unwrap()
        .plan
}

/// The prediction of `algorithm` on `loads`, computed here from the core alone.
fn predicted(spec: &str, algorithm: Algorithm, loads: &[u64], speeds: &[f64]) -> Prediction {
    let plan = plan_of(spec, algorithm, loads, speeds);
    Prediction::of(&plan, speeds, 1, &CostModel::FREE).unwrap()
}

#[test]
fn auto_follows_the_candidate_with_the_best_predicted_gain() {
    let loads = [300, 0, 0, 40, 0, 0, 0, 100];
    let speeds = [100.0, 200.0, 300.0, 400.0, 100.0, 200.0, 300.0, 800.0];
    let out = run(&loads, &speeds, 1, || {
        BalancerConfig::new(AUTO)
            .unwrap()
            .speeds(Speeds::Measured { window: 1 })
    });
    assert_exactly_once(&loads, &out);
    let candidates = [
        Algorithm::Cwa,
        Algorithm::DemHetero,
        Algorithm::Oem,
        Algorithm::Dishet,
    ];
    let gains: Vec<f64> = candidates
        .iter()
        .map(|&a| predicted("hypercube:3", a, &loads, &speeds).gain_per_iteration)
        .collect();
    let best = (0..gains.len())
        .max_by(|&a, &b| gains[a].total_cmp(&gains[b]).then(b.cmp(&a)))
        .unwrap();
    for (reports, _) in &out {
        let r = reports[0].as_ref().unwrap();
        assert_eq!(r.algorithm, candidates[best].name());
        let listed: Vec<Algorithm> = r.alternatives.iter().map(|c| c.algorithm).collect();
        assert_eq!(listed, candidates);
        for (c, g) in r.alternatives.iter().zip(&gains) {
            assert_eq!(c.prediction.gain_per_iteration, *g, "{}", c.algorithm);
        }
        assert_eq!(r.loads_after, r.planned_after);
    }
}

#[test]
fn auto_runs_its_first_candidate_until_speeds_are_measured() {
    let loads = [40, 0, 0, 0];
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .zip(unit_items(&loads))
        .map(|(member, mut mine)| {
            std::thread::spawn(move || {
                let cfg = BalancerConfig::new(AUTO)
                    .unwrap()
                    .speeds(Speeds::Measured { window: 1 });
                let mut b = Balancer::new(&member, cfg).unwrap();
                let r = b.rebalance(&mut mine).unwrap();
                (r, mine)
            })
        })
        .collect();
    for h in handles {
        let (r, mine) = h.join().unwrap();
        assert_eq!(r.algorithm, "cwa");
        assert!(r.alternatives.is_empty() && r.prediction.is_none());
        assert_eq!(mine.len(), 10);
    }
}

#[test]
fn auto_is_configured_for_any_rank_count_and_refused_without_measured_speeds() {
    let auto = BalancerConfig::new(AUTO).unwrap();
    assert_eq!(auto.rule_name(), AUTO);
    let e = auto.check(4).unwrap_err().to_string();
    assert!(e.contains("measured speeds"), "{e}");
    let measured = auto.speeds(Speeds::Measured { window: 2 });
    measured.check(6).unwrap(); // complete:6: the hypercube rules embedded, and dishet
    measured.check(8).unwrap();
    let with_oem = BalancerConfig::new(AUTO)
        .unwrap()
        .candidates(vec![Algorithm::Oem, Algorithm::Dishet])
        .speeds(Speeds::Measured { window: 2 });
    with_oem.clone().check(6).unwrap();
    // On a ring named by the application, oem cannot run.
    let e = with_oem
        .topology("ring:6")
        .unwrap()
        .check(6)
        .unwrap_err()
        .to_string();
    assert!(e.contains("oem") && e.contains("complete network"), "{e}");
}

#[test]
fn the_learned_model_is_the_same_on_every_rank_and_the_outcome_follows() {
    // Two calls: the first moves (and is measured), the second predicts with the fitted
    // model and reports how the first prediction turned out.
    let loads = [64, 0, 0, 0];
    let speeds = [100.0; 4];
    // First every rank measures 100 units/s over a 1 s step; before the second call each
    // records its own share at that speed (16 units: 0.16 s).
    let out = run_recording(
        &loads,
        &speeds,
        2,
        || {
            BalancerConfig::new("cwa")
                .unwrap()
                .speeds(Speeds::Measured { window: 1 })
                .learn_cost(true)
        },
        |call, speed, held| match call {
            0 => (speed as u64, 1.0),
            _ => (held as u64, held as f64 / speed),
        },
    );
    assert_exactly_once(&loads, &out);
    let first: Vec<&Report> = out.iter().map(|o| o.0[0].as_ref().unwrap()).collect();
    let second: Vec<&Report> = out.iter().map(|o| o.0[1].as_ref().unwrap()).collect();
    // The first call predicts with the probe's model (rank 0's, on every rank), no longer
    // the free prior.
    let probed = first[0].cost_model;
    assert_ne!(
        probed,
        CostModel::FREE,
        "the probe measures before the first move"
    );
    assert!(first.iter().all(|r| r.cost_model == probed));
    assert!(first.iter().all(|r| r.outcome.is_none()));
    let learned = second[0].cost_model;
    assert_ne!(learned, CostModel::FREE);
    assert!(second.iter().all(|r| r.cost_model == learned));
    for r in &second {
        let o = r.outcome.expect("the first call moved");
        assert_eq!(o.epoch, first[0].epoch);
        assert_eq!(o.iteration_seconds_before, 1.0);
        assert_eq!(o.iteration_seconds_after, 0.16);
        assert_eq!(o.measured_gain_per_iteration, 1.0 - 0.16);
        assert_eq!(
            o.predicted_gain_per_iteration,
            first[0].prediction.unwrap().gain_per_iteration
        );
        assert_eq!(o.measured_move_seconds, first[0].slowest_move_seconds);
    }
}

#[test]
fn destinations_end_every_rank_on_the_plan() {
    let loads = [13u64, 0, 7, 22, 1, 9, 30, 4];
    let handles: Vec<_> = threads::group(loads.len())
        .into_iter()
        .zip(unit_items(&loads))
        .map(|(member, mine)| {
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, BalancerConfig::new("cwa").unwrap()).unwrap();
                let m = b.plan(&mine).unwrap();
                let d = m.destinations(b.rank(), &vec![1; mine.len()]).unwrap();
                (m, b.rank(), mine, d)
            })
        })
        .collect();
    let mut after = vec![Vec::new(); loads.len()];
    let mut planned = None;
    for h in handles {
        let (m, rank, mine, d) = h.join().unwrap();
        for (item, dest) in mine.into_iter().zip(d) {
            after[dest.unwrap_or(rank)].push(item);
        }
        planned = Some(m.planned_after);
    }
    let counts: Vec<u64> = after.iter().map(|v| v.len() as u64).collect();
    assert_eq!(Some(counts), planned);
    let mut all: Vec<u64> = after.into_iter().flatten().collect();
    all.sort_unstable();
    assert_eq!(all, (0..86).collect::<Vec<u64>>());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Direct routing moves exactly the units the start and end vectors require, ends on
    /// the rule's loads, and holds every item exactly once — on every rule.
    #[test]
    fn direct_routing_moves_no_more_than_the_vectors_require(
        loads in prop::collection::vec(0u64..30, 8),
        rule in 0usize..13,
    ) {
        let algorithm = Algorithm::all().nth(rule % Algorithm::all().count()).unwrap();
        let out = run(&loads, &[1.0; 8], 1, move || {
            BalancerConfig::for_algorithm(algorithm).routing(Routing::Direct)
        });
        assert_exactly_once(&loads, &out);
        let r = out[0].0[0].as_ref().unwrap();
        let received: u64 = out.iter().map(|o| o.0[0].as_ref().unwrap().units_received).sum();
        prop_assert_eq!(u128::from(received), minimum_units(&r.loads_before, &r.planned_after));
        prop_assert_eq!(&r.loads_after, &r.planned_after);
        prop_assert!(r.phases <= 1);
        prop_assert_eq!(r.routing, Routing::Direct);
    }
}

#[test]
fn the_trigger_weighs_the_learned_model() {
    // A prior that makes every move dear holds the calls back on every rank. With learning
    // on, the probe before the first move replaces the prior by rank 0's measured model, on
    // every rank alike, and the ranks decide alike with it.
    let loads = [64, 0, 0, 0];
    let dear = CostModel {
        seconds_per_message: 1e6,
        seconds_per_byte: 0.0,
    };
    let config = move |learn: bool| {
        move || {
            BalancerConfig::new("cwa")
                .unwrap()
                .speeds(Speeds::Measured { window: 1 })
                .trigger(Trigger::Auto {
                    horizon: 10,
                    margin: 1.0,
                })
                .cost_model(dear)
                .learn_cost(learn)
        }
    };
    let out = run(&loads, &[100.0; 4], 2, config(false));
    assert_exactly_once(&loads, &out);
    for (reports, _) in &out {
        for r in reports {
            let r = r.as_ref().unwrap();
            assert!(r.held_back);
            assert_eq!(r.cost_model, dear);
        }
    }
    assert_eq!(out[0].1.len(), 64);
    let out = run(&loads, &[100.0; 4], 2, config(true));
    assert_exactly_once(&loads, &out);
    for call in 0..2 {
        let reports: Vec<&Report> = out.iter().map(|o| o.0[call].as_ref().unwrap()).collect();
        assert!(
            reports
                .iter()
                .all(|r| r.cost_model == reports[0].cost_model)
        );
        assert!(reports.iter().all(|r| r.held_back == reports[0].held_back));
        assert_ne!(reports[0].cost_model, dear);
    }
}

#[test]
fn the_trigger_checks_within_its_budget_at_the_same_calls_on_every_rank() {
    // Steps of a microsecond: any check costs far more than 1% of one, so the budget allows
    // the horizon (5 calls) between checks. The first call moves; the next checks again,
    // finds nothing, and the interval doubles (2, 4) up to 5.
    let loads = [64, 0, 0, 0];
    let config = |budget: f64| {
        move || {
            BalancerConfig::new(AUTO)
                .unwrap()
                .speeds(Speeds::Measured { window: 1 })
                .trigger(Trigger::Auto {
                    horizon: 5,
                    margin: 1.0,
                })
                .check_budget(budget)
        }
    };
    let out = run_recording(&loads, &[1.0; 4], 14, config(0.01), |_, _, held| {
        (held.max(1) as u64, 1e-6)
    });
    assert_exactly_once(&loads, &out);
    let checked: Vec<Vec<bool>> = out
        .iter()
        .map(|(reports, _)| {
            reports
                .iter()
                .map(|r| r.as_ref().unwrap().checked)
                .collect()
        })
        .collect();
    assert!(checked.iter().all(|c| c == &checked[0]), "{checked:?}");
    let expected = [
        true, true, false, true, false, false, false, true, false, false, false, false, true, false,
    ];
    assert_eq!(checked[0], expected);
    // A budget of 0 checks at every call.
    let out = run_recording(&loads, &[1.0; 4], 6, config(0.0), |_, _, held| {
        (held.max(1) as u64, 1e-6)
    });
    assert!(
        out.iter()
            .all(|(r, _)| r.iter().all(|r| r.as_ref().unwrap().checked))
    );
    assert!(
        BalancerConfig::new("cwa")
            .unwrap()
            .check_budget(2.0)
            .check(4)
            .is_err()
    );
}

#[test]
fn auto_ranks_a_candidate_whose_moves_fell_short_below_one_not_yet_tried() {
    // cwa and oem predict the same for [64, 0, 0, 0] at equal speeds; the tie goes to cwa.
    // Its step after is then twice as long as predicted (0.32 s for 0.16 s): a shortfall of
    // 0.16 s per iteration, which ranks oem (never tried) above it when the load comes back.
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .zip(unit_items(&[64, 0, 0, 0]))
        .enumerate()
        .map(|(rank, (member, mut mine))| {
            std::thread::spawn(move || {
                let config = BalancerConfig::new(AUTO)
                    .unwrap()
                    .candidates(vec![Algorithm::Cwa, Algorithm::Oem])
                    .speeds(Speeds::Measured { window: 1 })
                    .trigger(Trigger::Always);
                let mut b = Balancer::new(&member, config).unwrap();
                b.record(100, 1.0);
                let first = b.rebalance(&mut mine).unwrap();
                if rank == 0 {
                    mine.extend(64..128);
                }
                let held = mine.len() as u64;
                let step = if rank == 0 { 16 } else { held };
                b.record(step, 2.0 * step as f64 / 100.0);
                let second = b.rebalance(&mut mine).unwrap();
                (first, second, mine)
            })
        })
        .collect();
    let out: Vec<(Report, Report, Vec<u64>)> =
        handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_held_once(out.iter().map(|o| &o.2), 128);
    for (first, second, _) in &out {
        assert_eq!(first.algorithm, "cwa");
        assert!(first.alternatives.iter().all(|c| c.shortfall.is_none()));
        let after = first.prediction.unwrap().iteration_seconds_after;
        assert_eq!(after, 0.16);
        let shortfalls: Vec<Option<f64>> =
            second.alternatives.iter().map(|c| c.shortfall).collect();
        assert_eq!(shortfalls, vec![Some(0.32 - 0.16), None]);
        assert_eq!(second.algorithm, "oem", "the candidate not yet tried");
        assert_eq!(second.loads_after, second.planned_after);
    }
}

#[test]
fn advise_moves_nothing_and_names_what_the_next_rebalance_does() {
    let loads = [300, 0, 0, 40, 0, 0, 0, 100];
    let speeds = [100.0, 200.0, 300.0, 400.0, 100.0, 200.0, 300.0, 800.0];
    let handles: Vec<_> = threads::group(loads.len())
        .into_iter()
        .zip(unit_items(&loads))
        .enumerate()
        .map(|(rank, (member, mut mine))| {
            let speed = speeds[rank];
            std::thread::spawn(move || {
                let config = BalancerConfig::new(AUTO)
                    .unwrap()
                    .speeds(Speeds::Measured { window: 1 })
                    .trigger(Trigger::Auto {
                        horizon: 10,
                        margin: 1.0,
                    });
                let mut b = Balancer::new(&member, config).unwrap();
                b.record(speed as u64, 1.0);
                let before = mine.clone();
                let advice = b.advise(&mine).unwrap();
                assert_eq!(mine, before, "advice moves nothing");
                let report = b.rebalance(&mut mine).unwrap();
                (advice, report, mine)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_held_once(out.iter().map(|o| &o.2), 440);
    let first = &out[0].0;
    for (advice, report, _) in &out {
        assert_eq!(advice, first, "every rank gets the same advice");
        assert_eq!(advice.horizon, 10);
        let names: Vec<Algorithm> = advice.candidates.iter().map(|c| c.algorithm).collect();
        let listed: Vec<Algorithm> = report.alternatives.iter().map(|c| c.algorithm).collect();
        assert_eq!(names, listed);
        for (c, alt) in advice.candidates.iter().zip(&report.alternatives) {
            assert_eq!(c.prediction, alt.prediction, "{}", c.algorithm);
            assert_eq!(
                c.final_loads,
                plan_of("hypercube:3", c.algorithm, &loads, &speeds).final_loads
            );
        }
        let chosen = advice.choice.expect("this imbalance pays at once");
        assert_eq!(report.algorithm, advice.candidates[chosen].algorithm.name());
        assert_eq!(report.planned_after, advice.candidates[chosen].final_loads);
    }
}

#[test]
fn advise_without_measured_speeds_is_refused_alike_on_every_rank() {
    let handles: Vec<_> = threads::group(2)
        .into_iter()
        .map(|member| {
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, BalancerConfig::new("cwa").unwrap()).unwrap();
                let items: Vec<u64> = vec![1, 2, 3];
                b.advise(&items).unwrap_err().to_string()
            })
        })
        .collect();
    for h in handles {
        let e = h.join().unwrap();
        assert!(e.contains("measured speed"), "{e}");
    }
}

/// After a check that found nothing worth moving, the trigger `auto` skips calls; `advise`
/// says so (`skips > 0`, no choice) at exactly the calls `rebalance` then skips, and every
/// call it advises a move at is a call that moves — also when the steps slow down during
/// the skipped calls, so that a move would now pay.
#[test]
fn advise_agrees_with_the_trigger_that_skips_the_next_calls() {
    let loads = [64u64, 0, 0, 0];
    let handles: Vec<_> = threads::group(loads.len())
        .into_iter()
        .zip(unit_items(&loads))
        .map(|(member, mut mine)| {
            std::thread::spawn(move || {
                let config = BalancerConfig::new(AUTO)
                    .unwrap()
                    .speeds(Speeds::Measured { window: 1 })
                    .trigger(Trigger::Auto {
                        horizon: 5,
                        margin: 1.0,
                    })
                    .check_budget(0.01)
                    .learn_cost(false)
                    .cost_model(CostModel {
                        seconds_per_message: 0.5,
                        seconds_per_byte: 0.0,
                    });
                let mut b = Balancer::new(&member, config).unwrap();
                let mut calls = Vec::new();
                for call in 0..14 {
                    // Steps of a microsecond first (a move does not pay), then of a second.
                    let seconds = if call < 4 { 1e-6 } else { 1.0 };
                    b.record(mine.len().max(1) as u64, seconds * mine.len().max(1) as f64);
                    let advice = b.advise(&mine).unwrap();
                    let report = b.rebalance(&mut mine).unwrap();
                    calls.push((
                        advice.choice,
                        advice.skips,
                        report.checked,
                        report.units_sent,
                    ));
                }
                (calls, mine)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_held_once(out.iter().map(|o| &o.1), 64);
    let mut skipped = 0;
    for (call, &(choice, skips, checked, _)) in out[0].0.iter().enumerate() {
        assert_eq!(
            skips > 0,
            !checked,
            "call {call}: advice skips {skips}, checked {checked}"
        );
        if skips > 0 {
            assert_eq!(choice, None, "call {call}");
            skipped += 1;
        }
        let moved_anywhere = out.iter().any(|(calls, _)| calls[call].3 > 0);
        assert_eq!(choice.is_some(), moved_anywhere, "call {call}");
    }
    assert!(skipped >= 2, "the trigger skipped {skipped} calls of 14");
    assert!(
        out[0].0.iter().any(|c| c.0.is_some()),
        "the slow steps pay for a move"
    );
}
