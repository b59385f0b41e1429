//! The engine's results do not depend on how it finds them: the threshold policy's incremental
//! exchange gives the same run as balancing every pair from scratch with the core's exchange,
//! the future-event list pops what a binary heap of `(time, push order)` pops, and a run is the
//! same whatever the thread count of the pool it runs on.

use hetlb_core::Algorithm;
use hetlb_core::algorithm::{PairRuleVisitor, visit_pair_rule};
use hetlb_core::exchange::transfers_in_place;
use hetlb_core::rules::dimension_exchange::PairRule;
use hetlb_core::topology::{Hypercube, Network};
use hetlb_core::{Capacities, ModelError, Transfer};
use hetlb_sim::engine::{Arrivals, Engine, SeriesOptions, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
use hetlb_sim::policy::{Delivery, HypercubeThreshold, Order, Policy, PolicyError, View};
use hetlb_sim::queue::EventQueue;
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The threshold policy as it was first written: every balancing reads every load and runs the
/// core's in-place exchange over the whole cube.
struct WholeExchange {
    algorithm: Algorithm,
    threshold: u64,
}

struct InPlace<'a> {
    loads: &'a mut [u64],
    transfers: &'a mut Vec<Transfer>,
}

impl PairRuleVisitor for InPlace<'_> {
    type Output = Result<(), ModelError>;
    fn visit<R: PairRule>(self, rule: &R) -> Self::Output {
        transfers_in_place(rule, self.loads, self.transfers)
    }
}

impl Policy for WholeExchange {
    fn name(&self) -> String {
        format!("{} (threshold {})", self.algorithm, self.threshold)
    }

    fn on_arrival(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        if view.load(node) != self.threshold {
            return Ok(());
        }
        let mut loads = Vec::new();
        view.loads_into(&mut loads);
        let mut transfers = Vec::new();
        let caps = Capacities::uniform(loads.len());
        let visitor = InPlace {
            loads: &mut loads,
            transfers: &mut transfers,
        };
        visit_pair_rule(self.algorithm, &caps, visitor)
            .expect("a pair rule")
            .map_err(hetlb_core::BalanceError::from)?;
        orders.extend(transfers.iter().map(|t| Order {
            from: t.from,
            to: t.to,
            tasks: t.units,
            delivery: Delivery::Instant,
        }));
        Ok(())
    }
}

/// A view that keeps no record of changes, so the policy finds them by reading every load.
struct Untracked<'a>(&'a dyn View);

impl View for Untracked<'_> {
    fn now(&self) -> f64 {
        self.0.now()
    }
    fn node_count(&self) -> usize {
        self.0.node_count()
    }
    fn load(&self, node: usize) -> u64 {
        self.0.load(node)
    }
    fn rate(&self, node: usize) -> f64 {
        self.0.rate(node)
    }
    fn neighbors(&self, node: usize) -> &[usize] {
        self.0.neighbors(node)
    }
    fn link(&self, from: usize, to: usize) -> Option<(f64, f64)> {
        self.0.link(from, to)
    }
    fn reported(&self, node: usize) -> hetlb_sim::policy::Reported {
        self.0.reported(node)
    }
}

/// [`HypercubeThreshold`] behind a view without the record of changes.
struct WithoutRecord(HypercubeThreshold);

impl Policy for WithoutRecord {
    fn name(&self) -> String {
        self.0.name()
    }
    fn on_arrival(
        &mut self,
        view: &dyn View,
        node: usize,
        orders: &mut Vec<Order>,
    ) -> Result<(), PolicyError> {
        self.0.on_arrival(&Untracked(view), node, orders)
    }
    fn stats(&self) -> hetlb_sim::policy::PolicyStats {
        self.0.stats()
    }
}

fn engine_parts(dims: u32, seed: u64, per_node: u64, exp: bool) -> (Nodes, Links, Setup) {
    let n = 1usize << dims;
    let cube = Network::Hypercube(Hypercube::for_nodes(n).unwrap());
    let service = if exp {
        Distribution::Exponential
    } else {
        Distribution::Deterministic
    };
    let rates = (0..n).map(|i| 1.0 + (i % 3) as f64 * 0.5).collect();
    let setup = Setup {
        initial: (0..n as u64).map(|i| (i * 7 + seed) % 4).collect(),
        injections: Vec::new(),
        arrivals: Some(Arrivals {
            rates: vec![0.9; n],
            per_node: Some(per_node),
        }),
        seed,
        end_time: None,
        status_interval: None,
        series: SeriesOptions {
            enabled: true,
            interval: 0.0,
        },
        check_conservation: false,
    };
    (
        Nodes::new(rates, service),
        Links::uniform(cube, LinkParams::INSTANT),
        setup,
    )
}

const PAIR_RULES: [Algorithm; 5] = [
    Algorithm::Dem,
    Algorithm::DemFixed,
    Algorithm::DemImproved,
    Algorithm::DemHetero,
    Algorithm::Oem,
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The same report, series included, from the incremental policy (with and without the
    /// engine's record of changes) and from whole exchanges.
    #[test]
    fn incremental_threshold_balancing_gives_the_same_run(
        dims in 1u32..7,
        rule in 0usize..5,
        threshold in 1u64..5,
        per_node in 1u64..40,
        seed in any::<u64>(),
        exp in any::<bool>(),
    ) {
        let algorithm = PAIR_RULES[rule];
        let run = |policy: Box<dyn FnOnce(Nodes, Links, Setup) -> hetlb_sim::Report>| {
            let (nodes, links, setup) = engine_parts(dims, seed, per_node, exp);
            policy(nodes, links, setup)
        };
        let reference = run(Box::new(move |n, l, s| {
            Engine::new(n, l, WholeExchange { algorithm, threshold }, s).unwrap().run().unwrap()
        }));
        let incremental = run(Box::new(move |n, l, s| {
            Engine::new(n, l, HypercubeThreshold::new(algorithm, threshold), s).unwrap().run().unwrap()
        }));
        let untracked = run(Box::new(move |n, l, s| {
            let p = WithoutRecord(HypercubeThreshold::new(algorithm, threshold));
            Engine::new(n, l, p, s).unwrap().run().unwrap()
        }));
        // the statistics are the policy's own; everything the engine did must agree
        let strip = |mut r: hetlb_sim::Report| {
            r.policy_stats = Default::default();
            r
        };
        prop_assert_eq!(&incremental, &untracked);
        prop_assert_eq!(strip(incremental), strip(reference));
    }

    /// Pops in the order of a binary heap keyed by `(time by total_cmp, push number)`, with
    /// pushes interleaved with pops as an engine makes them (never before the last pop) and
    /// many equal times.
    #[test]
    fn the_event_queue_pops_what_a_binary_heap_pops(
        steps in proptest::collection::vec((0u8..6, 0u8..4, any::<bool>()), 1..500),
    ) {
        let mut queue = EventQueue::new();
        let mut heap = BinaryHeap::new();
        let mut now = 0.0f64;
        let mut pushed = 0u64;
        for &(dt, pushes, pop) in &steps {
            for _ in 0..pushes {
                // coarse times make ties common
                let t = now + f64::from(dt) * 0.25;
                queue.push(t, pushed);
                heap.push(Reverse((OrderedTime(t), pushed)));
                pushed += 1;
            }
            if pop {
                let expected = heap.pop().map(|Reverse((t, i))| (t.0, i));
                let got = queue.pop().map(|s| (s.time(), s.event));
                prop_assert_eq!(got, expected);
                if let Some((t, _)) = got {
                    now = t;
                }
            }
            prop_assert_eq!(queue.len(), heap.len());
        }
        while let Some(Reverse((t, i))) = heap.pop() {
            let got = queue.pop().map(|s| (s.time(), s.event));
            prop_assert_eq!(got, Some((t.0, i)));
        }
        prop_assert!(queue.pop().is_none());
    }
}

/// `f64` ordered by `total_cmp`, for the reference heap.
#[derive(Debug, Clone, Copy, PartialEq)]
struct OrderedTime(f64);

impl Eq for OrderedTime {}

impl PartialOrd for OrderedTime {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrderedTime {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Runs of the same scenarios on pools of 1, 2 and 4 threads, several at once, give the same
/// reports as one run on the calling thread.
#[test]
fn runs_do_not_depend_on_the_thread_count() {
    use rayon::prelude::*;
    let jobs: Vec<(u32, u64, usize)> = (0..12)
        .map(|i| (2 + i % 4, 1000 + u64::from(i), (i % 5) as usize))
        .collect();
    let one = |&(dims, seed, rule): &(u32, u64, usize)| {
        let (nodes, links, setup) = engine_parts(dims, seed, 30, true);
        let policy = HypercubeThreshold::new(PAIR_RULES[rule], 3);
        Engine::new(nodes, links, policy, setup)
            .unwrap()
            .run()
            .unwrap()
    };
    let expected: Vec<_> = jobs.iter().map(one).collect();
    for threads in [1, 2, 4] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        let got: Vec<_> = pool.install(|| jobs.par_iter().map(one).collect());
        assert_eq!(got, expected, "{threads} threads");
    }
}
