//! Events per second of the engine on a 10,000-node scenario.
//!
//! A 100 × 100 torus; every node starts with 20 tasks and receives 50 Poisson arrivals at
//! 0.9 tasks/s; service is exponential at 1 task/s; 100 injections of 1000 tasks at spread
//! nodes and times trigger the delay-aware policy, whose transfers cross links of 100 tasks/s
//! with exponential delays. Every event type of the engine occurs. Criterion reports the
//! throughput in events (elements) per second; run with
//! `cargo bench -p hetlb-sim --features criterion --bench engine`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::TopologySpec;
use hetlb_sim::engine::{Arrivals, Injection, SeriesOptions, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
use hetlb_sim::scenario::{PolicySpec, Scenario};
use std::hint::black_box;

const SIDE: usize = 100;

fn scenario() -> Scenario {
    let n = SIDE * SIDE;
    Scenario {
        name: Some("bench-10k".into()),
        description: None,
        nodes: Nodes::new(vec![1.0; n], Distribution::Exponential),
        links: Links::uniform(
            TopologySpec::Torus(SIDE, SIDE).build().expect("a torus"),
            LinkParams {
                rate: 100.0,
                delay: 0.05,
                distribution: Distribution::Exponential,
            },
        ),
        setup: Setup {
            initial: vec![20; n],
            injections: (0..100)
                .map(|i| Injection {
                    node: (i * 7919) % n,
                    time: 0.5 * i as f64,
                    tasks: 1000,
                })
                .collect(),
            arrivals: Some(Arrivals {
                rates: vec![0.9; n],
                per_node: Some(50),
            }),
            seed: 42,
            end_time: None,
            status_interval: Some(5.0),
            series: SeriesOptions {
                enabled: false,
                interval: 0.0,
            },
            check_conservation: false,
        },
        policy: PolicySpec::DelayAware {
            compensation: Compensation::Factor,
            carry: hetlb_sim::policy::CarryOut::Centre,
        },
    }
}

fn bench(c: &mut Criterion) {
    let s = scenario();
    let events = s.run().expect("the benchmark scenario runs").events;
    let mut group = c.benchmark_group("engine");
    group.sample_size(10);
    group.throughput(Throughput::Elements(events));
    group.bench_function("torus-10000-nodes", |b| {
        b.iter(|| black_box(s.run().expect("runs")))
    });
    group.finish();
    eprintln!("events per run: {events}");
}

criterion_group!(benches, bench);
criterion_main!(benches);
