//! The hypercube rules on node counts that are not a power of two
//! (`hetlb_core::embedding`): every rule conserves the total and never overdraws a node, `cwa`
//! keeps its bound (every node within one unit of its exact share) on virtual nodes, and the
//! folded rules end within their bound on `⌊log₂N⌋` dimensions plus two units.

use hetlb_core::allocation::proportional_targets;
use hetlb_core::embedding::Embedding;
use hetlb_core::{Algorithm, BalanceOptions, Capacities, Metrics, balance};
use proptest::prelude::*;

/// The bound of `algorithm` on an `n`-cube with equal capacities, as the property tests of
/// the power-of-two case check it (`tests/core/properties.rs`).
fn cube_bound(algorithm: Algorithm, n: u32) -> u64 {
    let n = u64::from(n);
    match algorithm {
        Algorithm::Dem | Algorithm::DemFixed => n,
        Algorithm::DemImproved | Algorithm::DemHetero | Algorithm::Oem => n.div_ceil(2),
        Algorithm::Cwa => 1,
        Algorithm::Hybrid => (n / 2).div_ceil(2) + 1,
        _ => unreachable!("a hypercube rule"),
    }
}

fn any_count_loads(max_nodes: usize, max_load: u64) -> impl Strategy<Value = Vec<u64>> {
    (1..=max_nodes).prop_flat_map(move |n| prop::collection::vec(0..=max_load, n))
}

fn check_bound(algorithm: Algorithm, loads: &[u64]) -> Result<(), TestCaseError> {
    let plan = balance(algorithm, loads, &BalanceOptions::default()).unwrap();
    let total: u64 = loads.iter().sum();
    prop_assert_eq!(plan.final_loads.iter().sum::<u64>(), total, "{}", algorithm);
    prop_assert_eq!(
        plan.replay().unwrap(),
        plan.final_loads.clone(),
        "{}",
        algorithm
    );
    prop_assert!(plan.transfers().all(|t| t.units > 0 && t.from != t.to));
    let embedding = Embedding::of(algorithm, loads.len());
    let bound = cube_bound(algorithm, embedding.dimensions()) + embedding.extra_bound();
    let diff = Metrics::of(&plan, None).max_difference;
    prop_assert!(
        diff <= bound,
        "{} on {} nodes: max difference {} > bound {}",
        algorithm,
        loads.len(),
        diff,
        bound
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn every_rule_on_any_count_conserves_and_keeps_its_bound(loads in any_count_loads(70, 1_000_000)) {
        for alg in Algorithm::HYPERCUBE {
            check_bound(alg, &loads)?;
        }
    }

    #[test]
    fn small_loads_on_any_count(loads in any_count_loads(40, 6)) {
        for alg in Algorithm::HYPERCUBE {
            check_bound(alg, &loads)?;
        }
    }

    #[test]
    fn cwa_on_virtual_nodes_hits_the_capacity_targets(
        (loads, caps) in (3usize..40).prop_flat_map(|n| (
            prop::collection::vec(0u64..5_000, n),
            prop::collection::vec(prop::sample::select(vec![0.5, 1.0, 1.5, 2.0, 3.0, 7.0]), n),
        ))
    ) {
        let options = BalanceOptions::new().capacities(Some(Capacities::new(caps.clone()).unwrap())).procs_per_group(None);
        let total: u64 = loads.iter().sum();
        let plan = balance(Algorithm::Cwa, &loads, &options).unwrap();
        prop_assert_eq!(plan.replay().unwrap(), plan.final_loads.clone());
        let sum_c: f64 = caps.iter().sum();
        for (w, c) in plan.final_loads.iter().zip(&caps) {
            prop_assert!((*w as f64 - total as f64 * c / sum_c).abs() < 1.0 + 1e-9);
        }
        // the folded capacity-aware rules conserve and never overdraw, and the extra
        // nodes end on their exact shares
        for alg in [Algorithm::DemHetero, Algorithm::Hybrid] {
            let plan = balance(alg, &loads, &options).unwrap();
            prop_assert_eq!(plan.replay().unwrap(), plan.final_loads.clone(), "{}", alg);
            let cube = 1usize << (usize::BITS - 1 - loads.len().leading_zeros());
            let after = &plan.final_loads;
            let targets = proportional_targets(total, &caps, after);
            for e in cube..loads.len() {
                prop_assert!(after[e].abs_diff(targets[e]) <= 1, "{}: node {}", alg, e);
            }
        }
    }
}

#[test]
fn every_count_up_to_70_with_one_hot_loads() {
    // The worst case of the fold: everything on one node, on every node in turn.
    for n in 1..=70usize {
        for hot in [0, n / 2, n - 1] {
            let mut loads = vec![0u64; n];
            loads[hot] = 1_000_003;
            for alg in Algorithm::HYPERCUBE {
                check_bound(alg, &loads).unwrap();
            }
        }
    }
}

#[test]
fn a_balanced_vector_moves_nothing_on_any_count() {
    for n in 1..=70usize {
        let equal = vec![7u64; n];
        for alg in Algorithm::HYPERCUBE {
            let plan = balance(alg, &equal, &BalanceOptions::default()).unwrap();
            assert_eq!(plan.transfers().count(), 0, "{alg} on {n} equal loads");
        }
        // One node a unit above the others: the rule may move the odd unit (dem-fixed gives
        // it to the low node), but the fold and the last phase move nothing.
        let mut one_above = equal.clone();
        one_above[n - 1] += 1;
        for alg in Algorithm::HYPERCUBE {
            let plan = balance(alg, &one_above, &BalanceOptions::default()).unwrap();
            let embedding_moves = plan
                .phases
                .iter()
                .filter(|p| p.dimension.is_none())
                .map(|p| p.transfers.len())
                .sum::<usize>();
            assert_eq!(embedding_moves, 0, "{alg} on {one_above:?}");
        }
    }
}

#[test]
fn a_power_of_two_is_the_rule_itself() {
    let loads = [4, 7, 0, 9, 2, 2, 8, 1];
    for alg in Algorithm::HYPERCUBE {
        let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
        assert!(plan.phases.iter().all(|p| p.dimension.is_some()), "{alg}");
        assert_eq!(plan.phases.len(), 3, "{alg}");
    }
}

#[test]
fn six_ranks_as_in_the_documentation() {
    // 600 units on rank 5 of 6: dem folds 500 of them onto rank 1, balances 4 nodes, serves 4.
    let loads = [0, 0, 0, 0, 0, 600];
    let plan = balance(Algorithm::Dem, &loads, &BalanceOptions::default()).unwrap();
    assert_eq!(plan.final_loads, vec![100; 6]);
    assert_eq!(plan.phases.len(), 4); // fold, two dimensions, serve
    assert_eq!(plan.phases[0].transfers[0].from, 5);
    assert_eq!(plan.phases[0].transfers[0].to, 1);
    let cwa = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
    assert_eq!(cwa.final_loads, vec![100; 6]);
    assert_eq!(cwa.phases.len(), 3); // the three dimensions of the 8-cube
}
