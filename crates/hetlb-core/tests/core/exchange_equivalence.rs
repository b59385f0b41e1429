//! The in-place engine (vector lanes, narrower lanes, blocks, column groups, threads) against
//! the scalar rule applied pair by pair by the planner, for every pair rule: same final loads,
//! task-hops, task messages and `Tmax` per phase, whatever the number of threads; and the
//! recording engine of the simulator's policies ([`transfers_in_place`]) against the planner's
//! transfers, one by one and in order.

use hetlb_core::exchange::{balance_in_place, plan, transfers_in_place, transfers_of};
use hetlb_core::model::Capacities;
use hetlb_core::model::load_summary;
use hetlb_core::rules::dimension_exchange::{
    Dem, DemFixed, DemHetero, DemImproved, Oem, PairContext, PairRule,
};
use proptest::prelude::*;

/// Every built-in rule's `odd_unit`, where it has one, says what `split` does.
fn check_odd_unit<R: PairRule>(rule: &R, a: u64, b: u64, k: u32, n: u32, low: usize) {
    let ctx = PairContext {
        dimension: k,
        dimensions: n,
        low,
    };
    let next_bit = (low >> (k + 1)) & 1 == 1;
    if let Some(odd) = rule.odd_unit(k, n, next_bit) {
        let keeps = odd.low_keeps(a, b);
        let half = (a + b) / 2 + u64::from(keeps && (a + b) % 2 == 1);
        assert_eq!(
            rule.split(ctx, a, b),
            half,
            "{odd:?} {a} {b} k={k} n={n} low={low}"
        );
    }
}

fn same<R: PairRule>(rule: &R, loads: &[u64], threads: usize) -> Result<(), TestCaseError> {
    let reference = plan(rule, loads).unwrap();
    let mut fast = loads.to_vec();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .unwrap();
    let summary = pool.install(|| balance_in_place(rule, &mut fast)).unwrap();
    prop_assert_eq!(&fast, &reference.final_loads);
    prop_assert_eq!(
        summary.task_hops,
        reference
            .transfers()
            .map(|t| u128::from(t.units))
            .sum::<u128>()
    );
    prop_assert_eq!(summary.task_messages, reference.transfers().count() as u64);
    let tmax: Vec<u64> = reference
        .phases
        .iter()
        .map(|p| p.transfers.iter().map(|t| t.units).max().unwrap_or(0))
        .collect();
    prop_assert_eq!(summary.tmax, tmax);
    Ok(())
}

/// Loads of a `2^n`-cube below `max`: small maxima exercise the narrower lanes, large ones the
/// full width.
fn cube(dims: std::ops::RangeInclusive<u32>) -> impl Strategy<Value = Vec<u64>> {
    (
        dims,
        prop::sample::select(vec![2u64, 100, 70_000, 1 << 31, 1 << 40]),
    )
        .prop_flat_map(|(n, max)| prop::collection::vec(0..max, 1usize << n))
}

/// Loads held as `u16` and `u32` (whose lanes narrow to `u8` and `u16`) give what the same
/// loads held as `u64` give: the same final loads and totals.
fn same_in_narrow_types<R: PairRule>(rule: &R, loads: &[u64]) -> Result<(), TestCaseError> {
    let mut wide = loads.to_vec();
    let expected = balance_in_place(rule, &mut wide).unwrap();
    let mut words: Vec<u32> = loads.iter().map(|&x| x as u32).collect();
    prop_assert_eq!(&balance_in_place(rule, &mut words).unwrap(), &expected);
    prop_assert!(words.iter().zip(&wide).all(|(&x, &y)| u64::from(x) == y));
    let mut halves: Vec<u16> = loads.iter().map(|&x| x as u16).collect();
    prop_assert_eq!(&balance_in_place(rule, &mut halves).unwrap(), &expected);
    prop_assert!(halves.iter().zip(&wide).all(|(&x, &y)| u64::from(x) == y));
    Ok(())
}

/// [`transfers_in_place`] gives the planner's final loads and its transfers in the same order.
fn same_transfers<R: PairRule>(rule: &R, loads: &[u64]) -> Result<(), TestCaseError> {
    let reference = plan(rule, loads).unwrap();
    let mut fast = loads.to_vec();
    let mut transfers = vec![hetlb_core::Transfer {
        from: 7,
        to: 9,
        units: 1,
    }];
    transfers_in_place(rule, &mut fast, &mut transfers).unwrap();
    prop_assert_eq!(&fast, &reference.final_loads);
    prop_assert_eq!(
        transfers[0],
        hetlb_core::Transfer {
            from: 7,
            to: 9,
            units: 1
        }
    );
    prop_assert!(transfers[1..].iter().eq(reference.transfers()));
    // The same transfers with the loads left as they were, and the outcome's extremes.
    let (mut recorded, mut scratch) = (Vec::new(), vec![3, 1]);
    let after = transfers_of(rule, loads, &mut scratch, &mut recorded).unwrap();
    prop_assert!(recorded.iter().eq(reference.transfers()));
    prop_assert_eq!(after, load_summary(&reference.final_loads).unwrap());
    Ok(())
}

/// A balanced cube (loads `q` and `q + 1`) with a few nodes changed, as the simulator's
/// threshold policy sees it between two balances: most groups of pairs move nothing.
fn nearly_balanced() -> impl Strategy<Value = Vec<u64>> {
    (0u32..=12, 0u64..5, any::<u64>(), 0usize..6).prop_flat_map(|(n, q, pattern, changes)| {
        let len = 1usize << n;
        let base: Vec<u64> = (0..len)
            .map(|i| q + (pattern.rotate_left(i as u32 % 64) & 1))
            .collect();
        prop::collection::vec((0..len, 0u64..8), changes).prop_map(move |edits| {
            let mut loads = base.clone();
            for (node, load) in edits {
                loads[node] = load;
            }
            loads
        })
    })
}

/// A cube whose loads lie within three units of the smallest, `min` even or odd, small or
/// large, each offset drawn with its own weight: what the simulator's threshold policy balances
/// on bit planes.
fn within_four_values() -> impl Strategy<Value = Vec<u64>> {
    (
        6u32..=12,
        prop::sample::select(vec![0u64, 1, 2, 7, (1 << 40) + 1, 1 << 41]),
        prop::array::uniform4(0u32..4),
    )
        .prop_flat_map(|(n, min, weights)| {
            let offsets: Vec<u64> = (0..4u64)
                .flat_map(|o| std::iter::repeat_n(o, weights[o as usize] as usize))
                .collect();
            let offsets = if offsets.is_empty() {
                vec![0, 3]
            } else {
                offsets
            };
            prop::collection::vec(prop::sample::select(offsets), 1usize << n)
                .prop_map(move |o| o.into_iter().map(|o| min + o).collect::<Vec<u64>>())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn cubes_within_four_values_give_the_planner_s_transfers(loads in within_four_values()) {
        same_transfers(&Dem, &loads)?;
        same_transfers(&DemFixed, &loads)?;
        same_transfers(&DemImproved, &loads)?;
        same_transfers(&Oem, &loads)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn recorded_transfers_equal_the_planner_for_every_pair_rule(
        loads in prop_oneof![cube(0..=12), nearly_balanced()],
    ) {
        same_transfers(&Dem, &loads)?;
        same_transfers(&DemFixed, &loads)?;
        same_transfers(&DemImproved, &loads)?;
        same_transfers(&Oem, &loads)?;
        let caps = Capacities::new(
            (0..loads.len()).map(|i| 1.0 + (i * 7 % 5) as f64).collect(),
        )
        .unwrap();
        same_transfers(&DemHetero::new(&caps), &loads)?;
    }

    #[test]
    fn in_place_equals_the_scalar_rule_for_every_pair_rule(
        loads in cube(0..=17),
        threads in 1usize..=3,
    ) {
        same(&Dem, &loads, threads)?;
        same(&DemFixed, &loads, threads)?;
        same(&DemImproved, &loads, threads)?;
        same(&Oem, &loads, threads)?;
        let caps = Capacities::new(
            (0..loads.len()).map(|i| 1.0 + (i * 7 % 5) as f64).collect(),
        )
        .unwrap();
        same(&DemHetero::new(&caps), &loads, threads)?;
    }

    #[test]
    fn narrower_load_types_give_the_same_balance(
        n in 0u32..=16,
        max in prop::sample::select(vec![2u64, 60, 127, 3_000, 32_767]),
        seed in any::<u64>(),
    ) {
        // pair sums stay below 2·max, within u16; 127 and below narrow u16 loads to u8 lanes
        let loads: Vec<u64> = (0..1u64 << n)
            .map(|i| (i ^ seed).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29) % (max + 1))
            .collect();
        same_in_narrow_types(&Dem, &loads)?;
        same_in_narrow_types(&DemImproved, &loads)?;
        same_in_narrow_types(&Oem, &loads)?;
    }

    #[test]
    fn odd_units_agree_with_split(
        a in 0u64..1000,
        b in 0u64..1000,
        n in 1u32..20,
        k_frac in 0.0f64..1.0,
        low in any::<usize>(),
    ) {
        let k = ((n as f64 * k_frac) as u32).min(n - 1);
        let low = (low & ((1usize << n) - 1)) & !(1usize << k);
        check_odd_unit(&Dem, a, b, k, n, low);
        check_odd_unit(&DemFixed, a, b, k, n, low);
        check_odd_unit(&DemImproved, a, b, k, n, low);
        check_odd_unit(&Oem, a, b, k, n, low);
    }
}
