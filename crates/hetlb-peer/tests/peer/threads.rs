//! Peer rebalancing on threads: the decisions are the planner's, every item is held exactly
//! once, and failures are reported without losing anything.

use crate::support::unit_items;
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::routing::Routing;
use hetlb_core::topology::TopologySpec;
use hetlb_core::transmission::Schedule;
use hetlb_peer::{Balancer, BalancerConfig, Fault, Item, PeerError, Report, Speeds};
use hetlb_transport::{simulated, threads};
use proptest::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Work {
    id: u64,
    cost: u64,
    payload: [u8; 8],
}

impl Item for Work {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.cost
    }
}

/// Runs one rebalance on `items.len()` threads; returns each rank's result and items after.
fn run_group<T: Item>(
    items: Vec<Vec<T>>,
    config: impl Fn(usize) -> BalancerConfig,
) -> Vec<(Result<Report, PeerError>, Vec<T>)> {
    let members = threads::group(items.len());
    run_members(members, items, config)
}

/// As `run_group`, on the given members (a group without a ledger agrees by messages).
fn run_members<T: Item>(
    members: Vec<threads::Member>,
    items: Vec<Vec<T>>,
    config: impl Fn(usize) -> BalancerConfig,
) -> Vec<(Result<Report, PeerError>, Vec<T>)> {
    let handles: Vec<_> = members
        .into_iter()
        .zip(items)
        .enumerate()
        .map(|(rank, (member, mut mine))| {
            let cfg = config(rank);
            std::thread::spawn(move || {
                let mut b = Balancer::new(&member, cfg).expect("valid configuration");
                let r = b.rebalance(&mut mine);
                (r, mine)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn planner_final(
    spec: &str,
    algorithm: Algorithm,
    loads: &[u64],
    caps: Option<&[f64]>,
) -> Vec<u64> {
    let network = spec.parse::<TopologySpec>().unwrap().build().unwrap();
    let options =
        BalanceOptions::new().capacities(caps.map(|c| Capacities::new(c.to_vec()).unwrap()));
    balance_on(&network, algorithm, loads, &options)
        .unwrap()
        .plan
        .final_loads
}

fn assert_exactly_once(before: &[Vec<u64>], after: &[(Result<Report, PeerError>, Vec<u64>)]) {
    let mut a: Vec<u64> = before.iter().flatten().copied().collect();
    let mut b: Vec<u64> = after.iter().flat_map(|(_, v)| v.iter().copied()).collect();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "every item exactly once");
}

#[test]
fn unit_counts_equal_the_planner_for_every_rule_and_schedule() {
    let loads = [13u64, 0, 7, 22, 1, 9, 30, 4];
    let caps = [1.0, 2.0, 1.0, 3.0, 1.0, 1.0, 2.0, 1.0];
    for algorithm in Algorithm::all() {
        let spec = "hypercube:3";
        for schedule in Schedule::ALL {
            for capacities in [None, Some(&caps[..])] {
                let expected = planner_final(spec, algorithm, &loads, capacities);
                let items = unit_items(&loads);
                let out = run_group(items.clone(), |_| {
                    let cfg = BalancerConfig::for_algorithm(algorithm)
                        .topology(spec)
                        .unwrap()
                        .schedule(schedule);
                    // Capacity-blind rules refuse capacities (they would ignore them).
                    match capacities.filter(|_| algorithm.uses_capacities()) {
                        Some(c) => cfg.speeds(Speeds::Fixed(c.to_vec())),
                        None => cfg,
                    }
                });
                let counts: Vec<u64> = out.iter().map(|(_, v)| v.len() as u64).collect();
                assert_eq!(
                    counts, expected,
                    "{algorithm} {schedule} capacities {capacities:?}"
                );
                for (r, _) in &out {
                    let r = r.as_ref().unwrap();
                    assert_eq!(r.loads_after, expected);
                    assert_eq!(r.planned_after, expected);
                    assert_eq!(r.residual, 0);
                }
                assert_exactly_once(&items, &out);
            }
        }
    }
}

#[test]
fn diffusion_rules_on_other_networks_equal_the_planner() {
    for (spec, loads) in [
        ("ring:6", vec![60u64, 0, 3, 0, 0, 17]),
        ("torus:2x3", vec![0u64, 40, 0, 5, 5, 0]),
        ("path:5", vec![25u64, 0, 0, 0, 1]),
        ("random:7:0.5:3", vec![9u64, 0, 0, 21, 0, 0, 2]),
    ] {
        for algorithm in Algorithm::all().filter(|a| !a.needs_hypercube()) {
            let expected = planner_final(spec, algorithm, &loads, None);
            let items = unit_items(&loads);
            let out = run_group(items.clone(), |_| {
                BalancerConfig::for_algorithm(algorithm)
                    .topology(spec)
                    .unwrap()
            });
            let counts: Vec<u64> = out.iter().map(|(_, v)| v.len() as u64).collect();
            assert_eq!(counts, expected, "{algorithm} on {spec}");
            assert_exactly_once(&items, &out);
        }
    }
}

#[test]
fn a_balanced_group_costs_one_gather_and_moves_nothing() {
    let items = unit_items(&[5, 5, 5, 5]);
    let out = run_group(items.clone(), |_| BalancerConfig::new("cwa").unwrap());
    for (r, v) in &out {
        let r = r.as_ref().unwrap();
        assert!(!r.balanced);
        assert_eq!((r.items_sent, r.items_received, v.len()), (0, 0, 5));
        assert_eq!(r.imbalance_before, 1.0);
    }
}

#[test]
fn six_ranks_run_diffusion_on_a_ring_and_every_hypercube_rule_embedded() {
    let items = unit_items(&[12, 0, 0, 0, 0, 0]);
    let out = run_group(items, |_| BalancerConfig::new("dishet").unwrap());
    let r = out[0].0.as_ref().unwrap();
    assert_eq!(r.topology, "ring:6");
    assert!(r.imbalance_after < r.imbalance_before);
    // The hypercube rules on 6, 7 and 12 ranks: each ends on the plan of `hetlb balance`
    // (hetlb_core::embedding), every item exactly once.
    for loads in [
        vec![600, 0, 0, 0, 0, 0],
        vec![0, 0, 0, 0, 0, 0, 70],
        vec![0, 13, 2, 40, 0, 0, 9, 1, 0, 0, 30, 4],
    ] {
        for rule in Algorithm::HYPERCUBE {
            let items = unit_items(&loads);
            let out = run_group(items.clone(), move |_| BalancerConfig::for_algorithm(rule));
            assert_exactly_once(&items, &out);
            let expected = hetlb_core::balance(rule, &loads, &Default::default()).unwrap();
            for (rank, (report, mine)) in out.iter().enumerate() {
                let report = report.as_ref().unwrap();
                assert_eq!(report.topology, format!("complete:{}", loads.len()));
                assert_eq!(
                    mine.len() as u64,
                    expected.final_loads[rank],
                    "{rule} rank {rank}"
                );
            }
        }
    }
}

#[test]
fn ranks_with_different_rules_are_told_before_anything_moves() {
    let items = unit_items(&[8, 0, 0, 0]);
    let out = run_group(items.clone(), |r| {
        BalancerConfig::new(if r == 2 { "dem" } else { "oem" }).unwrap()
    });
    for ((r, v), before) in out.iter().zip(&items) {
        assert!(matches!(r, Err(PeerError::Mismatch(_))), "{r:?}");
        assert_eq!(v, before);
    }
}

#[test]
fn weighted_items_follow_the_plan_within_one_item_per_transfer() {
    // 8 ranks, rank 0 holds items of costs 1..=40, the others nothing.
    let mut items: Vec<Vec<Work>> = vec![Vec::new(); 8];
    items[0] = (1..=40)
        .map(|i| Work {
            id: i,
            cost: i,
            payload: [i as u8; 8],
        })
        .collect();
    let total: u64 = (1..=40).sum();
    let out = run_group(items, |_| BalancerConfig::new("cwa").unwrap());
    let mut ids: Vec<u64> = out
        .iter()
        .flat_map(|(_, v)| v.iter().map(|w| w.id))
        .collect();
    ids.sort_unstable();
    assert_eq!(ids, (1..=40).collect::<Vec<u64>>());
    let r = out[0].0.as_ref().unwrap();
    assert_eq!(r.loads_after.iter().sum::<u64>(), total);
    for (&after, &planned) in r.loads_after.iter().zip(&r.planned_after) {
        assert!(after.abs_diff(planned) <= 40, "{after} vs {planned}");
    }
    assert!(r.imbalance_after < r.imbalance_before);
    let before = out[0].0.as_ref().unwrap().imbalance_before;
    assert!(before >= 7.9);
}

/// Rank 0 holds everything; rank `victim` suffers `fault`; everyone else must return an error
/// naming it and hold exactly what it held before (the call rolls back everywhere); a victim
/// that survives the fault holds what it held before too.
fn survive(fault: Fault, victim: usize) {
    let loads = [400u64, 0, 0, 0, 0, 0, 0, 0];
    let items = unit_items(&loads);
    let handles: Vec<_> = threads::group(8)
        .into_iter()
        .zip(items.clone())
        .enumerate()
        .map(|(rank, (member, mut mine))| {
            std::thread::spawn(move || {
                // Hop by hop: a rank that held nothing forwards items too, so a fault after
                // its sends strikes mid-move whichever rank suffers it.
                let mut cfg = BalancerConfig::new("dem")
                    .unwrap()
                    .routing(Routing::Paper)
                    .timeout(Duration::from_millis(300));
                if rank == victim {
                    cfg = cfg.fault(fault);
                }
                let mut b = Balancer::new(&member, cfg).unwrap();
                let r = b.rebalance(&mut mine);
                (r, mine)
            })
        })
        .collect();
    let out: Vec<_> = handles.into_iter().map(|h| h.join()).collect();
    for (rank, (o, before)) in out.into_iter().zip(&items).enumerate() {
        let Ok((r, after)) = o else {
            assert_eq!(rank, victim, "only the victim may panic");
            continue;
        };
        let e = r.expect_err("the call fails everywhere");
        assert_eq!(e.culprit(), Some(victim), "rank {rank}: {e}");
        assert_eq!(&after, before, "rank {rank} holds what it held before");
    }
}

#[test]
fn a_peer_that_panics_mid_move_is_named_and_the_call_rolls_back() {
    survive(Fault::PanicAfterSends(1), 0);
}

#[test]
fn a_peer_that_stops_answering_is_named_and_rolls_back_when_it_resumes() {
    survive(Fault::FreezeAfterSends(1, Duration::from_secs(1)), 0);
}

#[test]
fn a_peer_that_gives_up_mid_move_makes_everyone_roll_back() {
    // The smallest case of the report: 4 ranks, dem, rank 1 holds 8 unit items and gives
    // up after its last send; before, 6 of the 8 items were held afterwards.
    let items = unit_items(&[0, 8, 0, 0]);
    let out = run_group(items.clone(), |rank| {
        let cfg = BalancerConfig::new("dem").unwrap();
        if rank == 1 {
            cfg.fault(Fault::LeaveAfterSends(2))
        } else {
            cfg
        }
    });
    assert_exactly_once(&items, &out);
    for ((r, after), before) in out.iter().zip(&items) {
        assert!(r.is_err());
        assert_eq!(after, before);
    }
    survive(Fault::LeaveAfterSends(1), 3);
}

#[test]
fn a_busy_peer_is_never_declared_dead() {
    // Rank 3 computes for three timeouts before it joins the call (virtual time: the
    // simulated transport, under several seeds); the entry timeout is off.
    for seed in 0..8 {
        let items = unit_items(&[40, 0, 0, 0]);
        let handles: Vec<_> = simulated::group(4, seed)
            .into_iter()
            .zip(items)
            .enumerate()
            .map(|(rank, (member, mut mine))| {
                std::thread::spawn(move || {
                    let cfg = BalancerConfig::new("oem")
                        .unwrap()
                        .timeout(Duration::from_millis(100))
                        .entry_timeout(None);
                    let mut b = Balancer::new(&member, cfg).unwrap();
                    if rank == 3 {
                        member.sleep(Duration::from_millis(300));
                    }
                    b.rebalance(&mut mine).map(|_| mine.len())
                })
            })
            .collect();
        let counts: Vec<usize> = handles
            .into_iter()
            .map(|h| h.join().unwrap().unwrap())
            .collect();
        assert_eq!(counts, vec![10, 10, 10, 10], "seed {seed}");
    }
}

#[test]
fn repeated_calls_keep_the_epochs_apart() {
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .enumerate()
        .map(|(rank, member)| {
            std::thread::spawn(move || {
                let mut b =
                    Balancer::new(&member, BalancerConfig::new("dem-improved").unwrap()).unwrap();
                let mut mine: Vec<u64> = Vec::new();
                for step in 0..20u64 {
                    // each step rank (step % 4) gains 9 new items
                    if rank as u64 == step % 4 {
                        mine.extend((0..9).map(|i| 1000 * step + i));
                    }
                    b.rebalance(&mut mine).unwrap();
                }
                mine
            })
        })
        .collect();
    let all: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let mut ids: Vec<u64> = all.iter().flatten().copied().collect();
    ids.sort_unstable();
    let mut expected: Vec<u64> = (0..20u64)
        .flat_map(|s| (0..9).map(move |i| 1000 * s + i))
        .collect();
    expected.sort_unstable();
    assert_eq!(ids, expected);
    let counts: Vec<usize> = all.iter().map(Vec::len).collect();
    assert!(
        counts.iter().max().unwrap() - counts.iter().min().unwrap() <= 2,
        "{counts:?}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn every_item_is_held_exactly_once(
        dims in 0u32..4,
        rule in 0usize..12,
        costs in prop::collection::vec((0usize..16, 0u64..6), 0..60),
        caps in prop::collection::vec(1u32..5, 8),
        schedule in 0usize..3,
        use_caps in any::<bool>(),
    ) {
        let ranks = 1usize << dims;
        let algorithm = Algorithm::all().nth(rule).unwrap();
        let mut items: Vec<Vec<Work>> = vec![Vec::new(); ranks];
        for (id, &(owner, cost)) in costs.iter().enumerate() {
            items[owner % ranks].push(Work { id: id as u64, cost, payload: [0; 8] });
        }
        let caps: Vec<f64> = caps[..ranks].iter().map(|&c| f64::from(c)).collect();
        let spec = format!("hypercube:{dims}");
        let out = run_group(items.clone(), |_| {
            let cfg = BalancerConfig::for_algorithm(algorithm)
                .topology(&spec)
                .unwrap()
                .schedule(Schedule::ALL[schedule]);
            if use_caps && algorithm.uses_capacities() {
                cfg.speeds(Speeds::Fixed(caps.clone()))
            } else {
                cfg
            }
        });
        let mut before: Vec<(u64, u64)> = items.iter().flatten().map(|w| (w.id, w.cost)).collect();
        let mut after: Vec<(u64, u64)> =
            out.iter().flat_map(|(_, v)| v.iter().map(|w| (w.id, w.cost))).collect();
        before.sort_unstable();
        after.sort_unstable();
        prop_assert_eq!(before, after);
        for (r, v) in &out {
            let r = r.as_ref().unwrap();
            prop_assert_eq!(r.units_after, v.iter().map(|w| w.cost).sum::<u64>());
        }
    }
}

#[test]
fn a_rank_that_cannot_take_part_stops_the_others() {
    // Rank 1's units overflow: it cannot gather; the others learn it at once.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct Huge(u64);
    impl Item for Huge {
        fn id(&self) -> u64 {
            self.0
        }
        fn load(&self) -> u64 {
            u64::MAX / 2 + 1
        }
    }
    // The others never time out (an hour): they can only end because rank 1 told them.
    let items = vec![vec![], vec![Huge(1), Huge(2)], vec![], vec![]];
    let out = run_group(items, |_| {
        BalancerConfig::new("oem")
            .unwrap()
            .timeout(Duration::from_secs(3600))
    });
    for (rank, (r, _)) in out.iter().enumerate() {
        let e = r.as_ref().unwrap_err();
        if rank == 1 {
            assert!(matches!(e, PeerError::Plan(_)), "{e}");
        } else {
            assert!(e.to_string().contains("overflow"), "rank {rank}: {e}");
        }
    }
}

#[test]
fn a_barrier_names_a_rank_that_is_gone_and_passes_a_busy_one() {
    // Rank 2 is busy for a while before it reaches the barrier: not reported. Then rank 3
    // leaves the group (its balancer is dropped) before the second barrier: every other rank
    // names it.
    for seed in 0..8 {
        let handles: Vec<_> = simulated::group(4, seed)
            .into_iter()
            .map(|member| {
                std::thread::spawn(move || {
                    let rank = member.rank();
                    let cfg = BalancerConfig::new("oem")
                        .unwrap()
                        .timeout(Duration::from_millis(50))
                        .entry_timeout(None);
                    let mut b = Balancer::<u64, _>::new(&member, cfg).unwrap();
                    if rank == 2 {
                        member.sleep(Duration::from_millis(200));
                    }
                    b.barrier().expect("a busy rank is not a failed one");
                    if rank == 3 {
                        return None;
                    }
                    Some(b.barrier().expect_err("rank 3 is gone").culprit())
                })
            })
            .collect();
        let culprits: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        assert_eq!(
            culprits,
            vec![Some(Some(3)), Some(Some(3)), Some(Some(3)), None],
            "seed {seed}"
        );
    }
}

#[test]
fn check_reports_a_departed_peer_without_waiting() {
    let mut members = threads::group(2);
    let b1 = members.pop().unwrap();
    let b0 = members.pop().unwrap();
    let cfg = BalancerConfig::new("dem").unwrap();
    let mut a = Balancer::<u64, _>::new(&b0, cfg.clone()).unwrap();
    let b = Balancer::<u64, _>::new(&b1, cfg).unwrap();
    assert!(a.check().is_ok());
    drop(b);
    let e = a.check().unwrap_err();
    assert_eq!(e.culprit(), Some(1), "{e}");
}

#[test]
fn an_impossible_measured_speed_is_named_in_the_report() {
    // Rank 1 reports 10^10 units in a second (a work loop the compiler removed, say).
    let items = unit_items(&[40, 0, 0, 0]);
    let handles: Vec<_> = threads::group(4)
        .into_iter()
        .zip(items)
        .map(|(member, mut mine)| {
            std::thread::spawn(move || {
                let rank = member.rank();
                let cfg = BalancerConfig::new("cwa")
                    .unwrap()
                    .speeds(Speeds::Measured { window: 1 });
                let mut b = Balancer::new(&member, cfg).unwrap();
                let units = if rank == 1 { 10_000_000_000 } else { 100 };
                b.record(units, 1.0);
                b.rebalance(&mut mine).unwrap()
            })
        })
        .collect();
    for h in handles {
        let report = h.join().unwrap();
        let named: Vec<usize> = report.implausible_speeds.iter().map(|i| i.rank).collect();
        assert_eq!(named, vec![1]);
    }
}

#[test]
fn messages_per_rank_grow_as_log_p() {
    // cwa on 8, 64 and 256 ranks, every rank's load random, agreeing in the ledger and by
    // messages (the tree-shaped two-phase commit of MPI): a rank sends and receives at most
    // ⌈log₂ P⌉ gather messages each way, one transfer and one acknowledgement per dimension,
    // and in the agreement at most ⌈log₂ P⌉ + 1 messages each way (wake-ups in the ledger;
    // votes up and the decision down the tree) — never one message per peer. With rank 0
    // collecting a vote from every rank and sending each a decision, rank 0 alone would
    // exceed the bound at every size (2·(P − 1) agreement messages).
    for by_messages in [false, true] {
        for dims in [3u32, 6, 8] {
            let ranks = 1usize << dims;
            let loads: Vec<u64> = (0..ranks as u64).map(|r| (r * 7919 + 13) % 23).collect();
            let items = unit_items(&loads);
            let members = if by_messages {
                threads::group_without_ledger(ranks)
            } else {
                threads::group(ranks)
            };
            let out = run_members(members, items.clone(), |_| {
                BalancerConfig::new("cwa").unwrap()
            });
            assert_exactly_once(&items, &out);
            let reports: Vec<&Report> = out.iter().map(|(r, _)| r.as_ref().unwrap()).collect();
            let sent = reports.iter().map(|r| r.messages_sent).max().unwrap();
            let both = reports
                .iter()
                .map(|r| r.messages_sent + r.messages_received)
                .max()
                .unwrap();
            let d = u64::from(dims);
            eprintln!(
                "{ranks} ranks, by messages: {by_messages}: most sent {sent}, most sent and \
                 received {both}"
            );
            assert!(
                sent <= 4 * d + 2,
                "{ranks} ranks (by messages: {by_messages}): a rank sent {sent} messages"
            );
            assert!(
                both <= 6 * d + 4,
                "{ranks} ranks (by messages: {by_messages}): a rank sent and received {both}"
            );
        }
    }
}

/// One call on four threads, each recording 100 units per second, with `trigger` and `cost`.
fn triggered(
    loads: &[u64],
    trigger: Trigger,
    cost: CostModel,
) -> Vec<(Result<Report, PeerError>, Vec<u64>)> {
    run_group(unit_items(loads), move |_| {
        BalancerConfig::new("cwa")
            .unwrap()
            .speeds(Speeds::Measured { window: 1 })
            .trigger(trigger)
            .cost_model(cost)
    })
    .into_iter()
    .collect()
}

#[test]
fn the_trigger_holds_back_a_move_that_does_not_pay_and_lets_one_that_does() {
    // 400 units on rank 0 at 100 units/s: 4 s per iteration, 1 s after the move. The move
    // (cwa: 300 units out of rank 0 over two phases) is priced at 1 s per unit.
    let loads = [400, 0, 0, 0];
    let dear = CostModel {
        seconds_per_message: 0.0,
        seconds_per_byte: 1.0,
    };
    let cheap = CostModel {
        seconds_per_message: 1e-6,
        seconds_per_byte: 1e-9,
    };
    let auto = |horizon| Trigger::Auto {
        horizon,
        margin: 1.0,
    };
    for (trigger, cost, moves) in [
        (auto(10), dear, false),  // 30 s of gain against 300 s of moving
        (auto(1000), dear, true), // 3,000 s of gain
        (auto(1), cheap, true),   // a move that costs nothing
        (Trigger::Always, dear, true),
    ] {
        let items = unit_items(&loads);
        let out = triggered_recorded(&loads, trigger, cost);
        assert_exactly_once(&items, &out);
        for (rank, (report, mine)) in out.iter().enumerate() {
            let r = report.as_ref().unwrap();
            let p = r.prediction.expect("every speed is measured");
            assert_eq!(p.iteration_seconds_before, 4.0);
            assert_eq!(p.iteration_seconds_after, 1.0);
            assert_eq!(r.held_back, !moves, "{trigger}");
            let expected = if moves { 100 } else { loads[rank] };
            assert_eq!(mine.len() as u64, expected, "{trigger}: rank {rank}");
        }
    }
}

/// As [`triggered`], each rank first recording 100 units in one second.
fn triggered_recorded(
    loads: &[u64],
    trigger: Trigger,
    cost: CostModel,
) -> Vec<(Result<Report, PeerError>, Vec<u64>)> {
    let members = threads::group(loads.len());
    let handles: Vec<_> = members
        .into_iter()
        .zip(unit_items(loads))
        .map(|(member, mut mine)| {
            std::thread::spawn(move || {
                let cfg = BalancerConfig::new("cwa")
                    .unwrap()
                    .speeds(Speeds::Measured { window: 1 })
                    .trigger(trigger)
                    .cost_model(cost);
                let mut b = Balancer::new(&member, cfg).unwrap();
                b.record(100, 1.0);
                let r = b.rebalance(&mut mine);
                (r, mine)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn without_measured_speeds_the_trigger_moves_as_always_or_is_refused() {
    // No rank has recorded a speed yet: no prediction, the call moves.
    let loads = [40, 0, 0, 0];
    let out = triggered(
        &loads,
        Trigger::Auto {
            horizon: 1,
            margin: 1e9,
        },
        CostModel::FREE,
    );
    assert_exactly_once(&unit_items(&loads), &out);
    assert!(out.iter().all(|(r, m)| {
        let r = r.as_ref().unwrap();
        r.prediction.is_none() && !r.held_back && m.len() == 10
    }));
    // Auto with fixed speeds cannot weigh seconds: refused before anything moves.
    let cfg = BalancerConfig::new("cwa").unwrap().trigger(Trigger::Auto {
        horizon: 10,
        margin: 1.0,
    });
    assert!(
        matches!(cfg.check(4), Err(PeerError::Config(m)) if m.to_string().contains("measured speeds"))
    );
}
