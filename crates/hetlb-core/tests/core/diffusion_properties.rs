//! Properties of every diffusion rule on random connected graphs, loads and capacities:
//! conservation, no negative load (replay), termination within the stated bound, the potential
//! or lexicographic argument behind it, and `gdem`'s equivalence with `dem` on hypercubes.

use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
use hetlb_core::exchange;
use hetlb_core::model::Capacities;
use hetlb_core::rounds::{RoundOptions, RoundRun, run_rounds};
use hetlb_core::rules::diffusion::{Dishet, DishetTight, Gdem};
use hetlb_core::rules::dimension_exchange::Dem;
use hetlb_core::topology::{EdgeColouring, Graph, Hypercube, Network, Topology, generators};
use proptest::prelude::*;

/// Round limit of these tests; every run must converge well within it.
const LIMIT: u64 = 20_000;

fn graph() -> impl Strategy<Value = Graph> {
    (1usize..24, 0.0f64..0.5, any::<u64>())
        .prop_map(|(n, p, seed)| generators::random_connected(n, p, seed).unwrap())
}

/// Integer capacities 1..=4 (so that `Φ·12` is an integer), or none.
fn capacities(n: usize) -> impl Strategy<Value = Option<Vec<u64>>> {
    prop::option::of(prop::collection::vec(1u64..=4, n))
}

fn instance() -> impl Strategy<Value = (Graph, Vec<u64>, Option<Vec<u64>>)> {
    graph().prop_flat_map(|g| {
        let n = g.node_count();
        (Just(g), prop::collection::vec(0u64..300, n), capacities(n))
    })
}

fn caps_of(c: &Option<Vec<u64>>) -> Option<Capacities> {
    c.as_ref()
        .map(|v| Capacities::new(v.iter().map(|&x| x as f64).collect()).unwrap())
}

/// `Φ·12 = Σ w²·(12/c)`, exact for capacities in 1..=4.
fn potential(loads: &[u64], caps: &Option<Vec<u64>>) -> u128 {
    loads
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let c = caps.as_ref().map_or(1, |c| c[i]);
            u128::from(w) * u128::from(w) * u128::from(12 / c)
        })
        .sum()
}

fn check_common(run: &RoundRun, loads: &[u64]) -> Result<(), TestCaseError> {
    prop_assert_eq!(run.plan.replay().unwrap(), run.plan.final_loads.clone());
    prop_assert_eq!(
        run.plan.final_loads.iter().sum::<u64>(),
        loads.iter().sum::<u64>()
    );
    prop_assert!(run.converged, "not converged: {}", run.convergence);
    prop_assert!(run.rounds <= LIMIT);
    prop_assert_eq!(run.plan.phases.len() as u64, run.rounds);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// First-order rules and gdem: Φ = Σ w²/c strictly decreases in every round that moves a
    /// unit, so with equal capacities at most Σw² − ⌈W²/N⌉ rounds move.
    #[test]
    fn potential_rules_conserve_stay_non_negative_and_decrease_phi(
        (g, loads, caps) in instance(),
        which in 0usize..4,
        seed in any::<u64>(),
    ) {
        let algorithm = [
            Algorithm::Diffusion,
            Algorithm::RandomBiasing,
            Algorithm::DynamicBiasing,
            Algorithm::Gdem,
        ][which];
        let network = Network::from_graph(g);
        let options = BalanceOptions::new().capacities(caps_of(&caps)).max_rounds(Some(LIMIT)).seed(seed);
        let run = balance_on(&network, algorithm, &loads, &options).unwrap();
        check_common(&run, &loads)?;
        let mut phi = potential(&loads, &caps);
        let mut moving = 0u128;
        for (r, after) in run.loads_after_each_round().iter().enumerate() {
            let next = potential(after, &caps);
            if !run.plan.phases[r].transfers.is_empty() {
                prop_assert!(next < phi, "round {}: Φ {} -> {}", r, phi, next);
                moving += 1;
            } else {
                prop_assert_eq!(next, phi);
            }
            phi = next;
        }
        if caps.is_none() {
            let n = loads.len() as u128;
            let w: u128 = loads.iter().map(|&x| u128::from(x)).sum();
            let floor_phi = (w * w).div_ceil(n) * 12;
            prop_assert!(moving * 12 <= potential(&loads, &caps) - floor_phi);
        }
    }

    /// DISHET (the paper's `LD > 1` and the tight `LD ≥ 1`): the ascending vector of levels
    /// increases lexicographically in every round that moves a unit (the termination
    /// argument), every run converges, and with equal capacities every edge ends within two
    /// units (one for the tight reading).
    #[test]
    fn dishet_conserves_and_its_sorted_levels_increase((g, loads, caps) in instance()) {
        let c = caps_of(&caps);
        let options = { let mut o = RoundOptions::default(); o.max_rounds = LIMIT; o };
        let paper = run_rounds(&Dishet, &g, &loads, c.as_ref(), &options).unwrap();
        let tight = run_rounds(&DishetTight, &g, &loads, c.as_ref(), &options).unwrap();
        for (run, bound) in [(paper, 2), (tight, 1)] {
            check_common(&run, &loads)?;
            let sorted_levels = |w: &[u64]| {
                let mut x: Vec<f64> = w
                    .iter()
                    .enumerate()
                    .map(|(i, &w)| w as f64 / caps.as_ref().map_or(1, |c| c[i]) as f64)
                    .collect();
                x.sort_by(f64::total_cmp);
                x
            };
            let mut before = sorted_levels(&loads);
            for after in run.loads_after_each_round() {
                let now = sorted_levels(&after);
                prop_assert!(now > before, "{:?} -> {:?}", before, now);
                before = now;
            }
            if caps.is_none() {
                let w = &run.plan.final_loads;
                for (a, b) in g.edges() {
                    prop_assert!(w[a].abs_diff(w[b]) <= bound);
                }
            }
        }
    }

    /// DISHET converges on every pathological distribution: all load on one node, 25, 50 or
    /// 75% of the nodes idle.
    #[test]
    fn dishet_converges_on_pathological_distributions(
        g in graph(),
        total in 0u64..10_000,
        idle_share in 0usize..4,
        start in any::<usize>(),
        caps_seed in any::<u64>(),
    ) {
        let n = g.node_count();
        let busy: Vec<usize> = match idle_share {
            0 => vec![start % n],
            k => {
                let idle = (n * k).div_ceil(4).min(n - 1);
                (0..n).map(|i| (start + i) % n).skip(idle).collect()
            }
        };
        let mut loads = vec![0u64; n];
        for (k, &i) in busy.iter().enumerate() {
            loads[i] = total / busy.len() as u64 + u64::from((k as u64) < total % busy.len() as u64);
        }
        let caps: Vec<u64> = (0..n).map(|i| 1 + (caps_seed >> (i % 32) & 3)).collect();
        let c = caps_of(&Some(caps));
        let options = { let mut o = RoundOptions::default(); o.max_rounds = LIMIT; o };
        let run = run_rounds(&Dishet, &g, &loads, c.as_ref(), &options).unwrap();
        check_common(&run, &loads)?;
    }

    /// gdem with λ = 1/2 on a hypercube coloured by dimension: the first n rounds are dem.
    #[test]
    fn gdem_one_half_on_a_hypercube_is_dem(
        n in 0u32..8,
        seed in any::<u64>(),
    ) {
        let cube = Hypercube::new(n).unwrap();
        let mut x = seed;
        let loads: Vec<u64> = (0..cube.nodes())
            .map(|_| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (x >> 35) % 1000
            })
            .collect();
        let colouring = EdgeColouring::hypercube(cube);
        let rule = Gdem::new(&colouring, 0.5).unwrap();
        let options = { let mut o = RoundOptions::default(); o.max_rounds = u64::from(n); o };
        let run = run_rounds(&rule, &cube, &loads, None, &options).unwrap();
        let dem = exchange::plan(&Dem, &loads).unwrap();
        prop_assert_eq!(&run.plan.final_loads, &dem.final_loads);
        for (k, phase) in dem.phases.iter().enumerate() {
            let mut want = phase.transfers.clone();
            want.sort_by_key(|t| t.from);
            let got = run.plan.phases.get(k).map_or(&[][..], |p| &p.transfers);
            prop_assert_eq!(got, want.as_slice());
        }
    }
}

/// Every algorithm runs on every kind of topology.
#[test]
fn every_algorithm_runs_on_every_topology_kind() {
    let specs = [
        "path:7",
        "ring:9",
        "mesh:3x4",
        "torus:4x4",
        "kary:3:2",
        "star:6",
        "complete:5",
        "hypercube:3",
        "random:12:0.3:4",
    ];
    for spec in specs {
        let network = spec
            .parse::<hetlb_core::topology::TopologySpec>()
            .unwrap()
            .build()
            .unwrap();
        let n = network.node_count();
        let loads: Vec<u64> = (0..n).map(|i| (i as u64 * 29) % 50).collect();
        let caps = Capacities::new((0..n).map(|i| 1.0 + (i % 3) as f64).collect()).unwrap();
        for algorithm in Algorithm::all() {
            let options = BalanceOptions::new().capacities(Some(caps.clone()));
            let result = balance_on(&network, algorithm, &loads, &options);
            if algorithm.needs_hypercube() && !network.runs_hypercube_rules() {
                assert!(result.is_err(), "{algorithm} on {spec}");
                continue;
            }
            let run = result.unwrap_or_else(|e| panic!("{algorithm} on {spec}: {e}"));
            assert!(run.converged, "{algorithm} on {spec}");
            assert_eq!(run.plan.replay().unwrap(), run.plan.final_loads);
        }
    }
}
