//! A run does not depend on how the engine finds it: leaving out the completions cancelled
//! within one balancing gives the same report as queueing them, the future-event list pops
//! what a binary heap of `(time, push order)` pops, a node's service parameter kept in its
//! record gives what the model's own lookup gives, and a run is the same whatever the thread
//! count of the pool it runs on.

use hetlb_core::Algorithm;
use hetlb_core::topology::{Hypercube, Network};
use hetlb_sim::engine::{Arrivals, Engine, SeriesOptions, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, NodeModel, Nodes};
use hetlb_sim::policy::HypercubeThreshold;
use hetlb_sim::queue::EventQueue;
use proptest::prelude::*;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

fn engine_parts(
    dims: u32,
    seed: u64,
    per_node: u64,
    exp: bool,
    end_time: Option<f64>,
) -> (Nodes, Links, Setup) {
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
        end_time,
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

    /// The same report, series included, whether the completions cancelled within a
    /// balancing are queued or left out, with and without an end time that cuts the run.
    #[test]
    fn leaving_out_cancelled_completions_changes_nothing(
        dims in 1u32..6,
        rule in 0usize..5,
        threshold in 1u64..5,
        per_node in 1u64..40,
        seed in any::<u64>(),
        exp in any::<bool>(),
        end in proptest::option::of(1u32..60),
    ) {
        let algorithm = PAIR_RULES[rule];
        let end_time = end.map(f64::from);
        let run = |keep: bool| {
            let (nodes, links, setup) = engine_parts(dims, seed, per_node, exp, end_time);
            let engine = Engine::new(nodes, links, HypercubeThreshold::new(algorithm, threshold), setup)
                .unwrap();
            let engine = if keep { engine.keep_cancelled_events() } else { engine };
            engine.run().unwrap()
        };
        prop_assert_eq!(run(false), run(true));
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
        let (nodes, links, setup) = engine_parts(dims, seed, 30, true, None);
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

/// [`Nodes`] with the node model's defaults: nothing kept in the node records, every service
/// time looked up by the model.
struct LookedUp(Nodes);

impl NodeModel for LookedUp {
    fn node_count(&self) -> usize {
        self.0.node_count()
    }

    fn rate(&self, node: usize) -> f64 {
        self.0.rate(node)
    }

    fn service_time(&self, node: usize, rng: &mut rand_pcg::Pcg64) -> f64 {
        self.0.service_time(node, rng)
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The engine keeps each node's mean service time in its record: the same reports, queue
    /// series included, as a model that looks it up at every service.
    #[test]
    fn a_service_parameter_kept_in_the_record_changes_nothing(
        dims in 1u32..6,
        seed in 0u64..1000,
        exp in any::<bool>(),
        rule in 0usize..5,
    ) {
        let run = |looked_up: bool| {
            let (nodes, links, setup) = engine_parts(dims, seed, 20, exp, None);
            let policy = HypercubeThreshold::new(PAIR_RULES[rule], 3);
            if looked_up {
                Engine::new(LookedUp(nodes), links, policy, setup).unwrap().run().unwrap()
            } else {
                Engine::new(nodes, links, policy, setup).unwrap().run().unwrap()
            }
        };
        prop_assert_eq!(run(false), run(true));
    }
}
