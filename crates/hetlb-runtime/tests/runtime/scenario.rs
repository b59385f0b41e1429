//! Scenarios on real workers (threads): every task executed exactly once under arrivals and
//! balancing, the policies' decisions taken, failures reported. How close a real run comes to
//! the simulator's prediction depends on the machine and what else it runs: `hetlb run
//! scenario --compare` reports it (with the CPU the ranks got and how late their events
//! were), and no test asserts it.

use hetlb_runtime::scenario::{
    Calibration, RealConfig, ScenarioRunError, Work, check, run_threads,
};
use hetlb_sim::Scenario;
use std::time::Duration;

fn cfg(scale: f64) -> RealConfig {
    RealConfig::new(scale, Work::Sleep)
        .keep_ids(true)
        .timeout(Duration::from_secs(30))
}

const CAL: Calibration = Calibration {
    rounds_per_second: 1e8,
};

fn exactly_once(report: &hetlb_runtime::scenario::RealReport) {
    let mut ids: Vec<u64> = report
        .nodes
        .iter()
        .flat_map(|n| n.executed_ids.iter().copied())
        .collect();
    let n = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), n, "no task executed twice");
    assert_eq!(n as u64, report.tasks_completed);
    let created: u64 = report.nodes.iter().map(|n| n.created).sum();
    assert_eq!(
        created, report.tasks_completed,
        "every task that entered was executed"
    );
}

#[test]
fn arrivals_and_hypercube_balancing_execute_every_task_once() {
    let s = Scenario::from_toml(
        r#"
        seed = 3
        topology = "hypercube:3"
        [nodes]
        count = 8
        rate = 100.0
        service = "exponential"
        initial = 0
        [arrivals]
        rates = [90.0, 10.0, 10.0, 10.0, 60.0, 10.0, 10.0, 10.0]
        per_node = 40
        [policy]
        kind = "hypercube"
        algorithm = "oem"
        threshold = 3
        "#,
    )
    .unwrap();
    let sim = s.run().unwrap();
    let real = run_threads(&s, &cfg(0.5), CAL).unwrap();
    assert_eq!(real.tasks_arrived, 320);
    exactly_once(&real);
    assert!(sim.policy_stats.balancings > 0);
    assert!(
        !real.nodes[0].balancings.is_empty(),
        "the threshold triggered balancing on real workers too"
    );
}

#[test]
fn delay_aware_injection_executes_every_task_once_over_measured_links() {
    let s = Scenario::from_toml(
        r#"
        topology = "ring:4"
        [nodes]
        count = 4
        rate = 200.0
        initial = 20
        [links]
        rate = 400.0
        delay = 0.01
        [[injections]]
        node = 0
        time = 0.05
        tasks = 200
        [policy]
        kind = "delay-aware"
        compensate = true
        "#,
    )
    .unwrap();
    let real = run_threads(&s, &cfg(2.0), CAL).unwrap();
    exactly_once(&real);
    assert_eq!(real.tasks_injected, 200);
    // The injection at node 0 makes it the most loaded of its neighbourhood: it sends.
    assert!(real.tasks_moved > 0);
    assert!(real.nodes[0].decisions > 0 && real.nodes[0].sent > 0);
    // Every directed link was probed before the run, in both directions of the ring.
    let links: Vec<_> = real.nodes.iter().flat_map(|n| n.links.clone()).collect();
    assert_eq!(links.len(), 8);
    for l in links {
        // What a probe measures depends on the machine (a loaded round trip that comes back
        // no slower than an empty one reads as an instant link): only its form is checked.
        assert!(
            l.measured_rate > 0.0 && l.measured_delay.is_finite() && l.measured_delay >= 0.0,
            "{l:?}"
        );
        assert_eq!((l.file_rate, l.file_delay), (400.0, 0.01), "{l:?}");
    }
}

#[test]
fn a_failing_node_ends_the_run_with_a_clear_error() {
    let s = Scenario::from_toml(
        "topology = \"ring:4\"\n[nodes]\ncount = 4\nrate = 100.0\ninitial = 50\n",
    )
    .unwrap();
    for node in [0, 2] {
        let mut c = cfg(0.5);
        c.fail = Some((node, 0.1));
        let e = run_threads(&s, &c, CAL).unwrap_err();
        let m = e.to_string();
        assert!(m.contains("injected fault"), "{m}");
        if node != 0 {
            assert!(m.contains(&format!("node {node}")), "{m}");
        }
    }
}

#[test]
fn scenarios_too_large_for_real_workers_are_refused() {
    let s = Scenario::from_toml(
        "topology = \"ring:300\"\n[nodes]\ncount = 300\nrate = 1.0\ninitial = 1\n",
    )
    .unwrap();
    assert!(matches!(
        check(&s, 256, 1.0, 1.0),
        Err(ScenarioRunError::TooLarge(_))
    ));
    let s =
        Scenario::from_toml("topology = \"ring:3\"\n[nodes]\ncount = 3\nrate = 1.0\ninitial = 5\n")
            .unwrap();
    let e = check(&s, 256, 10_000.0, 5.0).unwrap_err().to_string();
    assert!(e.contains("at most 3600"), "{e}");
}

#[test]
fn diffusion_rounds_between_neighbours_execute_every_task_once() {
    for algorithm in [
        "dishet",
        "diffusion",
        "random-biasing",
        "dynamic-biasing",
        "gdem",
    ] {
        let s = Scenario::from_toml(&format!(
            r#"
            seed = 5
            topology = "ring:6"
            [nodes]
            count = 6
            rates = [100.0, 200.0, 100.0, 400.0, 100.0, 200.0]
            initial_loads = [300, 0, 0, 0, 0, 0]
            [links]
            rate = 1000.0
            delay = 0.005
            [policy]
            kind = "diffusion"
            algorithm = "{algorithm}"
            interval = 0.05
            "#
        ))
        .unwrap();
        let real = run_threads(&s, &cfg(1.0), CAL).unwrap();
        exactly_once(&real);
        assert_eq!(real.tasks_completed, 300, "{algorithm}");
        // Round 0 is at time 0, when node 0 holds all 300 tasks and its neighbours none:
        // every rule sends from it then, whatever the machine.
        assert!(real.nodes[0].sent > 0, "{algorithm}");
        assert!(real.tasks_moved > 0, "{algorithm}");
    }
}
