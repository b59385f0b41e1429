//! Every example scenario parses and runs, and the Mirtaheri scenarios match hand
//! calculations.

use hetlb_sim::Scenario;
use std::path::PathBuf;

fn example(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/scenarios")
        .join(name);
    Scenario::from_path(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[test]
fn every_example_runs_and_conserves_tasks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/scenarios");
    let mut count = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let mut s = Scenario::from_path(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            s.setup.check_conservation = true;
            let r = s.run().unwrap_or_else(|e| panic!("{path:?}: {e}"));
            assert_eq!(
                r.executed + r.queued_at_end + r.in_transit_at_end,
                r.initial + r.injected + r.arrived,
                "{path:?}"
            );
            assert!(r.events > 0, "{path:?}");
            count += 1;
        }
    }
    assert!(count >= 5, "found only {count} example scenarios");
}

/// Mirtaheri & Grandinetti 2017 §5, Fig. 8. By hand: node 1 (0 here) executes 500 tasks/s without a break from 0 to
/// the end, 300 + 1000 tasks in all, so it finishes at 1300 / 500 = 2.6 s. The other five
/// finish their 300 tasks at 0.6 s and wait 2 s each: 10 s of idle time.
#[test]
fn no_balancing_finishes_at_2_6_s() {
    let r = example("mirtaheri-no-balancing.toml").run().unwrap();
    assert!(close(r.makespan, 2.6, 1e-9), "{}", r.makespan);
    assert!(close(r.nodes[0].finish, 2.6, 1e-9));
    assert!(close(r.nodes[0].idle, 0.0, 1e-9));
    for n in &r.nodes[1..] {
        assert!(close(n.finish, 0.6, 1e-9), "node {}: {}", n.node, n.finish);
        assert!(close(n.idle, 2.0, 1e-9), "node {}: {}", n.node, n.idle);
    }
    assert!(close(r.total_idle, 10.0, 1e-9), "{}", r.total_idle);
    assert_eq!(r.tasks_moved, 0);
    assert_eq!(r.executed, 6 * 300 + 1000);
}

/// Mirtaheri & Grandinetti 2017 §5, Fig. 9. By hand: at 0.1 s node 0 holds 1250 tasks (1251 if its 50th completion
/// is ordered after the injection), nodes 1 and 4 are estimated at 300 − 500·0.1 = 250. The
/// neighbourhood average is 583.3, node 0's extra load 666.7, half of it each: ⌊333.3⌋ = 333
/// tasks to nodes 1 and 4. Node 0 keeps 1250 − 666 = 584 (0.1 + 584/500 = 1.268 s), nodes 1
/// and 4 finish 583 tasks at 1.266 s.
#[test]
fn balancing_without_delay_halves_the_makespan() {
    let r = example("mirtaheri-balanced.toml").run().unwrap();
    assert_eq!(r.tasks_moved, 666);
    assert_eq!(r.nodes[1].received, 333);
    assert_eq!(r.nodes[4].received, 333);
    assert!(
        close(r.nodes[1].finish, 1.266, 1e-9),
        "{}",
        r.nodes[1].finish
    );
    assert!(
        close(r.makespan, 1.268, 1e-9) || close(r.makespan, 1.270, 1e-9),
        "{}",
        r.makespan
    );
}

/// Mirtaheri & Grandinetti 2017 §5, delayed scenario without compensation. By hand: at 0.1 s node 5 holds
/// 300 − 20 + 1000 = 1280 tasks, node 4 about 280; the average is 780, so 500 tasks go over a
/// 100 tasks/s link and land at 0.1 + 5 = 5.1 s. Node 4 ran dry at 1.5 s; it finishes the
/// 500 at 5.1 + 2.5 = 7.6 s.
#[test]
fn delayed_transfer_without_compensation_leaves_the_receiver_idle() {
    let r = example("mirtaheri-delayed.toml").run().unwrap();
    assert_eq!(r.tasks_moved, 500);
    assert!(close(r.makespan, 7.6, 1e-6), "{}", r.makespan);
    assert!(close(r.nodes[4].idle, 3.6, 1e-6), "{}", r.nodes[4].idle);
    assert!(
        close(r.nodes[4].waiting, 3.6, 1e-6),
        "{}",
        r.nodes[4].waiting
    );
    assert!(close(r.nodes[5].finish, 4.0, 1e-6), "{}", r.nodes[5].finish);
}

/// The same with eq. 25: k = 1/3 + 2/3 · 1.4/5 = 0.52, 260 tasks land at 2.7 s; node 4 finishes
/// at 2.7 + 1.3 = 4.0 s and node 5 its 1020 at 0.1 + 5.1 = 5.2 s.
#[test]
fn compensation_shortens_the_delayed_scenario() {
    let r = example("mirtaheri-compensated.toml").run().unwrap();
    assert_eq!(r.tasks_moved, 260);
    let d = &r.policy_stats.decisions[0].transfers[0];
    assert!(close(d.factor, 0.52, 1e-9), "{}", d.factor);
    assert!(close(r.makespan, 5.2, 1e-6), "{}", r.makespan);
    assert!(close(r.nodes[4].finish, 4.0, 1e-6), "{}", r.nodes[4].finish);
    // Node 4 waits from 1.5 s to 2.7 s.
    assert!(
        close(r.nodes[4].waiting, 1.2, 1e-6),
        "{}",
        r.nodes[4].waiting
    );
}

#[test]
fn same_seed_same_output_and_another_seed_differs() {
    let s = example("rim-dynamic.toml");
    let a = serde_json::to_string(&s.run().unwrap()).unwrap();
    let b = serde_json::to_string(&s.run().unwrap()).unwrap();
    assert_eq!(a, b);
    let mut other = s.clone();
    other.setup.seed += 1;
    let c = serde_json::to_string(&other.run().unwrap()).unwrap();
    assert_ne!(a, c);
}

/// A relayed order crosses both links, store and forward, without entering the middle
/// node's queue.
#[test]
fn relayed_tasks_cross_two_links() {
    use hetlb_core::topology::TopologySpec;
    use hetlb_sim::engine::{Engine, Injection, Setup};
    use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
    use hetlb_sim::policy::{Delivery, Order, Policy, PolicyError, View};

    struct RelayAll;
    impl Policy for RelayAll {
        fn name(&self) -> String {
            "relay".into()
        }
        fn on_injection(
            &mut self,
            _view: &dyn View,
            node: usize,
            orders: &mut Vec<Order>,
        ) -> Result<(), PolicyError> {
            orders.push(Order {
                from: node,
                to: 2,
                tasks: 10,
                delivery: Delivery::Relay { via: 1 },
            });
            Ok(())
        }
    }
    let path = "path:3".parse::<TopologySpec>().unwrap().build().unwrap();
    let links = Links::uniform(
        path,
        LinkParams {
            rate: 10.0,
            delay: 0.25,
            distribution: Distribution::Deterministic,
        },
    );
    let nodes = Nodes::new(vec![100.0; 3], Distribution::Deterministic);
    let mut setup = Setup::new(vec![0, 0, 0]);
    setup.injections.push(Injection {
        node: 0,
        time: 0.0,
        tasks: 10,
    });
    setup.check_conservation = true;
    let r = Engine::new(nodes, links, RelayAll, setup)
        .unwrap()
        .run()
        .unwrap();
    // 1 s on each link plus 0.25 s of delay each, then 10 tasks at 100 tasks/s
    assert!(close(r.makespan, 2.5 + 0.1, 1e-9), "{}", r.makespan);
    assert_eq!(r.nodes[1].executed, 0);
    assert_eq!(r.nodes[1].received, 0);
    assert_eq!(r.nodes[2].executed, 10);
    assert_eq!(r.tasks_moved, 10);
}
