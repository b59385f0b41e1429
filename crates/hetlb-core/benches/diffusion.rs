//! One synchronous round of `diffusion` and of `dishet` on a 1000 × 1000 torus (10^6 nodes,
//! 2·10^6 edges), from the same seeded random loads each time.
//!
//! `cargo bench -p hetlb-core --features criterion --bench diffusion`; rounds per second = 1 / time per round.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use hetlb_core::model::Capacities;
use hetlb_core::plan::Transfer;
use hetlb_core::rounds::RoundEngine;
use hetlb_core::rules::diffusion::{Dishet, FirstOrder, NodeRule, Rounding};
use hetlb_core::topology::{Graph, generators};
use rand::RngExt;
use rand_pcg::Pcg64;
use std::hint::black_box;
use std::time::Duration;

const SIDE: usize = 1000;

fn loads(n: usize) -> Vec<u64> {
    let mut rng = Pcg64::new(1, 2);
    (0..n).map(|_| rng.random_range(0..=200)).collect()
}

fn capacities(n: usize) -> Capacities {
    let mut rng = Pcg64::new(3, 4);
    Capacities::new(
        (0..n)
            .map(|_| f64::from(rng.random_range(1..=4u32)))
            .collect(),
    )
    .unwrap()
}

fn one_round<R: NodeRule>(
    c: &mut Criterion,
    name: &str,
    rule: &R,
    torus: &Graph,
    loads: &[u64],
    caps: Option<&Capacities>,
    record: bool,
) {
    let mut group = c.benchmark_group("round on a 1000x1000 torus");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    let mut transfers: Vec<Transfer> = Vec::new();
    group.bench_function(name, |b| {
        b.iter_batched(
            || RoundEngine::new(rule, torus, loads, caps, 0).unwrap(),
            |mut engine| {
                transfers.clear();
                let step = engine.step(record.then_some(&mut transfers));
                black_box((step, engine))
            },
            BatchSize::LargeInput,
        )
    });
    group.finish();
}

fn rounds(c: &mut Criterion) {
    let torus = generators::torus(SIDE, SIDE).unwrap();
    let n = SIDE * SIDE;
    let loads = loads(n);
    let caps = capacities(n);
    let diffusion = FirstOrder::new(Rounding::Nearest);
    one_round(
        c,
        "diffusion, equal capacities",
        &diffusion,
        &torus,
        &loads,
        None,
        false,
    );
    one_round(
        c,
        "diffusion, capacities 1..=4",
        &diffusion,
        &torus,
        &loads,
        Some(&caps),
        false,
    );
    one_round(
        c,
        "dishet, equal capacities",
        &Dishet,
        &torus,
        &loads,
        None,
        false,
    );
    one_round(
        c,
        "dishet, capacities 1..=4",
        &Dishet,
        &torus,
        &loads,
        Some(&caps),
        false,
    );
    one_round(
        c,
        "diffusion, recording transfers",
        &diffusion,
        &torus,
        &loads,
        None,
        true,
    );
    one_round(
        c,
        "dishet, recording transfers",
        &Dishet,
        &torus,
        &loads,
        None,
        true,
    );
}

criterion_group!(benches, rounds);
criterion_main!(benches);
