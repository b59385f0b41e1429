//! Properties every hypercube algorithm must have, on random inputs: the total is conserved,
//! no load ever becomes negative (every plan replays without overdraft), and the published
//! bounds on the final max difference hold.

use hetlb_core::allocation::proportional_targets;
use hetlb_core::{Algorithm, BalanceOptions, Capacities, Metrics, balance};
use proptest::prelude::*;

fn cube_loads(max_dims: u32, max_load: u64) -> impl Strategy<Value = Vec<u64>> {
    (0..=max_dims).prop_flat_map(move |n| prop::collection::vec(0..=max_load, 1usize << n))
}

fn cube_with_capacities(max_dims: u32) -> impl Strategy<Value = (Vec<u64>, Vec<f64>)> {
    (0..=max_dims).prop_flat_map(|n| {
        (
            prop::collection::vec(0u64..5_000, 1usize << n),
            prop::collection::vec(
                prop::sample::select(vec![0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 0.25, 7.0]),
                1usize << n,
            ),
        )
    })
}

fn spread(loads: &[u64]) -> u64 {
    loads.iter().max().unwrap() - loads.iter().min().unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_algorithm_conserves_and_never_overdraws(loads in cube_loads(7, 1_000_000)) {
        for alg in Algorithm::HYPERCUBE {
            let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
            prop_assert_eq!(plan.final_loads.iter().sum::<u64>(), loads.iter().sum::<u64>(), "{}", alg);
            prop_assert_eq!(plan.replay().unwrap(), plan.final_loads.clone(), "{}", alg);
            prop_assert!(plan.transfers().all(|t| t.units > 0 && (t.from ^ t.to).count_ones() == 1), "{}", alg);
        }
    }

    #[test]
    fn published_bounds_hold(loads in cube_loads(8, 1_000_000)) {
        let n = loads.len().trailing_zeros() as u64;
        let diff = |alg| {
            let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
            Metrics::of(&plan, None).max_difference
        };
        prop_assert!(diff(Algorithm::Dem) <= n);
        prop_assert!(diff(Algorithm::DemFixed) <= n);
        prop_assert!(diff(Algorithm::Oem) <= n.div_ceil(2));
        // Chau & Fu's Theorem 1 states n/2, but their own Table 2 has difference 2 at n = 3.
        prop_assert!(diff(Algorithm::DemImproved) <= n.div_ceil(2));
        prop_assert!(diff(Algorithm::Cwa) <= 1);
    }

    #[test]
    fn loads_near_u64_max_do_not_overflow(n in 0u32..5, seed in any::<u64>()) {
        let nodes = 1usize << n;
        let share = u64::MAX / nodes as u64;
        let loads: Vec<u64> = (0..nodes).map(|i| if (seed >> (i % 64)) & 1 == 1 { share } else { share / 3 }).collect();
        for alg in Algorithm::HYPERCUBE {
            let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
            prop_assert_eq!(plan.replay().unwrap(), plan.final_loads.clone());
        }
    }

    #[test]
    fn capacity_aware_algorithms_conserve_and_cwa_hits_targets((loads, caps) in cube_with_capacities(6)) {
        let capacities = Capacities::new(caps.clone()).unwrap();
        let options = BalanceOptions::new().capacities(Some(capacities)).procs_per_group(None);
        for alg in [Algorithm::DemHetero, Algorithm::Cwa, Algorithm::Hybrid] {
            let plan = balance(alg, &loads, &options).unwrap();
            prop_assert_eq!(plan.replay().unwrap(), plan.final_loads.clone(), "{}", alg);
        }
        let plan = balance(Algorithm::Cwa, &loads, &options).unwrap();
        let total: u64 = loads.iter().sum();
        let sum_c: f64 = caps.iter().sum();
        let targets = proportional_targets(total, &caps, &loads);
        prop_assert_eq!(&plan.final_loads, &targets);
        for (w, c) in plan.final_loads.iter().zip(&caps) {
            prop_assert!((*w as f64 - total as f64 * c / sum_c).abs() < 1.0 + 1e-9);
        }
    }

    #[test]
    fn hetero_with_equal_capacities_below_two_is_improved_dem(loads in cube_loads(7, 100_000), c in 0.25f64..2.0) {
        let options = BalanceOptions::new().capacities(Some(Capacities::new(vec![c; loads.len()]).unwrap())).procs_per_group(None);
        let hetero = balance(Algorithm::DemHetero, &loads, &options).unwrap();
        let improved = balance(Algorithm::DemImproved, &loads, &BalanceOptions::default()).unwrap();
        prop_assert_eq!(hetero.phases, improved.phases);
    }

    /// Fig. 5 with equal capacities `c ≥ 2`: every phase but the last as `dem-improved`; in
    /// the last, exactly the pairs more than `c` tasks apart move, by the same amount.
    #[test]
    fn hetero_with_equal_capacities_from_two_keeps_small_last_gaps(loads in cube_loads(7, 1_000), c in 2u64..40) {
        let nodes = loads.len();
        let options = BalanceOptions::new().capacities(Some(Capacities::new(vec![c as f64; nodes]).unwrap())).procs_per_group(None);
        let hetero = balance(Algorithm::DemHetero, &loads, &options).unwrap();
        let improved = balance(Algorithm::DemImproved, &loads, &BalanceOptions::default()).unwrap();
        let last = hetero.phases.len().saturating_sub(1);
        prop_assert_eq!(&hetero.phases[..last], &improved.phases[..last]);
        if nodes > 1 {
            // loads before the last phase, the same for both
            let mut before = loads.clone();
            for phase in &hetero.phases[..last] {
                for t in &phase.transfers {
                    before[t.from] -= t.units;
                    before[t.to] += t.units;
                }
            }
            let expected: Vec<_> = improved.phases[last]
                .transfers
                .iter()
                .filter(|t| before[t.from] - before[t.to] > c)
                .cloned()
                .collect();
            prop_assert_eq!(&hetero.phases[last].transfers, &expected);
        }
    }

    #[test]
    fn hybrid_bound_and_extremes(loads in cube_loads(7, 100_000), p_exp in 0u32..8) {
        let n = loads.len().trailing_zeros();
        let p = 1usize << p_exp.min(n);
        let options = BalanceOptions::new().capacities(None).procs_per_group(Some(p));
        let plan = balance(Algorithm::Hybrid, &loads, &options).unwrap();
        let log_p = u64::from(p.trailing_zeros());
        prop_assert!(spread(&plan.final_loads) <= log_p.div_ceil(2) + 1);
        prop_assert_eq!(plan.phases.len(), n as usize);
    }
}

#[test]
fn worked_examples_of_the_papers() {
    // Rim et al. §3: P6 = 4 and P7 = 7 become 5 and 6 under OEM (phase 0 of a 3-cube).
    let mut loads = vec![0u64; 8];
    loads[6] = 4;
    loads[7] = 7;
    let plan = balance(Algorithm::Oem, &loads, &BalanceOptions::default()).unwrap();
    let phase0 = &plan.phases[0].transfers;
    assert_eq!(phase0.len(), 1);
    assert_eq!((phase0[0].from, phase0[0].to, phase0[0].units), (7, 6, 1));

    // Rim et al. §2: P0 = 7 and P2 = 14 before phase 1 become 10 and 11 under DEM.
    let plan = balance(Algorithm::Dem, &[7, 7, 14, 14], &BalanceOptions::default()).unwrap();
    let phase1 = &plan.phases[1].transfers;
    assert!(phase1.iter().any(|t| (t.from, t.to, t.units) == (2, 0, 3)));
    assert_eq!(plan.final_loads, vec![10, 10, 11, 11]);

    // Chau & Fu §4: 640 tasks on 64 processors and 960 on 32: 427 tasks move, when the
    // orientation rule gives the larger cluster the rounded-up share (pair (0, 1) of a 2-cube).
    let caps = Capacities::new(vec![64.0, 32.0, 64.0, 32.0]).unwrap();
    let options = BalanceOptions::new()
        .capacities(Some(caps))
        .procs_per_group(None);
    let plan = balance(Algorithm::DemHetero, &[640, 960, 640, 960], &options).unwrap();
    let first = &plan.phases[0].transfers;
    assert!(first.iter().any(|t| (t.from, t.to, t.units) == (1, 0, 427)));
    assert!(first.iter().any(|t| (t.from, t.to, t.units) == (3, 2, 426)));
}

#[test]
fn dem_worst_case_reaches_its_bound() {
    // Rim et al. §2.1, Fig. 3: a 16-node vector DEM does not change, with difference 4 = log N.
    // Built by the paper's induction: combine a worst case of a with one of a + 1.
    fn worst(n: u32, a: u64) -> Vec<u64> {
        if n == 0 {
            return vec![a];
        }
        let mut low = worst(n - 1, a);
        let high = worst(n - 1, a + 1);
        // dimension n-1 pairs node u with u + 2^(n-1): interleave halves in address order
        low.extend(high);
        low
    }
    let loads = worst(4, 5);
    let plan = balance(Algorithm::Dem, &loads, &BalanceOptions::default()).unwrap();
    let m = Metrics::of(&plan, None);
    assert_eq!(m.max_difference, 4);
    let oem = balance(Algorithm::Oem, &loads, &BalanceOptions::default()).unwrap();
    assert!(Metrics::of(&oem, None).max_difference <= 2);
}

#[test]
fn metrics_and_schedules_do_not_overflow_on_extreme_totals() {
    use hetlb_core::transmission::{Schedule, TransmissionError, transmit};
    let caps = Capacities::new(vec![3.0, 1.0]).unwrap();
    let options = BalanceOptions::new()
        .capacities(Some(caps.clone()))
        .procs_per_group(None);
    let plan = balance(Algorithm::DemHetero, &[u64::MAX, 0], &options).unwrap();
    let m = Metrics::of(&plan, Some(&caps));
    assert!(m.weighted_imbalance >= 1.0 && m.distance_from_optimal >= 0.0);
    let mut loads = vec![0u64; 8];
    loads[0] = u64::MAX;
    let plan = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
    // Every unit leaves node 0 and crosses one link per bit of its destination: the exact
    // sum is past u64::MAX and kept in 128 bits.
    let hops: u128 = plan
        .final_loads
        .iter()
        .enumerate()
        .map(|(i, &w)| u128::from(w) * u128::from(i.count_ones()))
        .sum();
    assert!(hops > u128::from(u64::MAX));
    assert_eq!(Metrics::of(&plan, None).task_hops, hops);
    assert!(transmit(&plan, Schedule::Overlap).is_ok());
    assert!(matches!(
        transmit(&plan, Schedule::Pipeline),
        Err(TransmissionError::TooLarge { .. })
    ));
}
