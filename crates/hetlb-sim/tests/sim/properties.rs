//! Property tests: on random small systems, tasks are conserved after every event, every
//! task is eventually executed, and a run is a function of its seed.

use hetlb_core::Algorithm;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::{Hypercube, Network, TopologySpec};
use hetlb_sim::engine::{Arrivals, Injection, SeriesOptions, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
use hetlb_sim::policy::{CarryOut, DiffusionSettings};
use hetlb_sim::scenario::{PolicySpec, Scenario};
use proptest::prelude::*;

fn distribution(exp: bool) -> Distribution {
    if exp {
        Distribution::Exponential
    } else {
        Distribution::Deterministic
    }
}

prop_compose! {
    fn scenario()(
        dims in 1u32..4,
        use_cube in any::<bool>(),
        rates in proptest::collection::vec(1u32..50, 8),
        initial in proptest::collection::vec(0u64..30, 8),
        exp_service in any::<bool>(),
        link_rate in prop_oneof![Just(f64::INFINITY), (1u32..100).prop_map(f64::from)],
        delay in 0u32..50,
        exp_delay in any::<bool>(),
        injections in proptest::collection::vec((0usize..8, 0u32..100, 0u64..200), 0..4),
        arrivals in proptest::option::of((1u32..20, 1u64..40)),
        policy in 0u8..9,
        threshold in 1u64..6,
        seed in any::<u64>(),
    ) -> Scenario {
        let n = 1usize << dims;
        let cube = Network::Hypercube(Hypercube::for_nodes(n).unwrap());
        let ring = if n >= 3 { TopologySpec::Ring(n) } else { TopologySpec::Path(n) };
        let network = if use_cube { cube.clone() } else { ring.build().unwrap() };
        let nodes = Nodes::new(rates[..n].iter().map(|&r| f64::from(r)).collect(), distribution(exp_service));
        let links = Links::uniform(network, LinkParams {
            rate: link_rate,
            delay: f64::from(delay) / 100.0,
            distribution: distribution(exp_delay),
        });
        let policy = match policy {
            0 => PolicySpec::None,
            1 => PolicySpec::DelayAware { compensation: Compensation::None, carry: CarryOut::Centre },
            2 => PolicySpec::DelayAware { compensation: Compensation::Factor, carry: CarryOut::Centre },
            3 => PolicySpec::Hypercube { algorithm: Algorithm::Oem, threshold },
            4 => PolicySpec::Hypercube { algorithm: Algorithm::Cwa, threshold },
            5 => PolicySpec::DelayAware { compensation: Compensation::None, carry: CarryOut::Neighbourhood },
            6 => PolicySpec::DelayAware { compensation: Compensation::Factor, carry: CarryOut::Neighbourhood },
            7 => PolicySpec::Diffusion(DiffusionSettings::new(Algorithm::Dishet, 0.05, None).unwrap()),
            _ => PolicySpec::Diffusion(DiffusionSettings::new(Algorithm::RandomBiasing, 0.2, None).unwrap()),
        };
        // Hypercube balancing needs a hypercube.
        let links = if matches!(policy, PolicySpec::Hypercube { .. }) && !use_cube {
            Links::uniform(cube, LinkParams::INSTANT)
        } else {
            links
        };
        Scenario {
            name: None,
            description: None,
            nodes,
            links,
            setup: Setup {
                initial: initial[..n].to_vec(),
                injections: injections
                    .into_iter()
                    .map(|(node, t, tasks)| Injection { node: node % n, time: f64::from(t) / 20.0, tasks })
                    .collect(),
                arrivals: arrivals.map(|(rate, per_node)| Arrivals {
                    rates: vec![f64::from(rate); n],
                    per_node: Some(per_node),
                }),
                seed,
                end_time: None,
                status_interval: Some(0.3),
                series: SeriesOptions { enabled: true, interval: 0.0 },
                check_conservation: true,
            },
            policy,
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// The engine recounts every task after every event and fails on any difference;
    /// without an end time every task is executed in the end.
    #[test]
    fn tasks_are_conserved_at_every_event(s in scenario()) {
        let r = s.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(r.queued_at_end, 0);
        prop_assert_eq!(r.in_transit_at_end, 0);
        prop_assert_eq!(r.executed, r.initial + r.injected + r.arrived);
        let per_node: u64 = r.nodes.iter().map(|n| n.executed).sum();
        prop_assert_eq!(per_node, r.executed);
        let sent: u64 = r.nodes.iter().map(|n| n.sent).sum();
        let received: u64 = r.nodes.iter().map(|n| n.received).sum();
        prop_assert_eq!(sent, r.tasks_moved);
        prop_assert_eq!(received, r.tasks_moved);
        for n in &r.nodes {
            prop_assert!(n.idle >= -1e-9 && n.busy <= r.horizon + 1e-9);
            prop_assert!(n.finish <= r.makespan);
        }
        // Every recorded queue length ends at zero.
        for series in &r.series {
            prop_assert_eq!(series.last().map(|p| p.1), Some(0));
        }
    }

    /// Same inputs and seed, same report, to the last bit.
    #[test]
    fn same_seed_same_report(s in scenario()) {
        let a = serde_json::to_string(&s.run().unwrap()).unwrap();
        let b = serde_json::to_string(&s.run().unwrap()).unwrap();
        prop_assert_eq!(a, b);
    }
}

/// With one node and deterministic service, the makespan is the total work over the rate,
/// whatever the injections (as long as the node never runs dry before one).
#[test]
fn single_node_makespan_is_work_over_rate() {
    let mut setup = Setup::new(vec![100]);
    setup.injections.push(Injection {
        node: 0,
        time: 0.5,
        tasks: 50,
    });
    let s = Scenario {
        name: None,
        description: None,
        nodes: Nodes::new(vec![20.0], Distribution::Deterministic),
        links: Links::uniform(TopologySpec::Path(1).build().unwrap(), LinkParams::INSTANT),
        setup,
        policy: PolicySpec::None,
    };
    let r = s.run().unwrap();
    assert!((r.makespan - 150.0 / 20.0).abs() < 1e-9);
    assert_eq!(r.total_idle, 0.0);
}
