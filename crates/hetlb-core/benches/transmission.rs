//! Scheduling the transmission of a 2^16-node plan (Rim, Jang & Kim 2003, §6).
//!
//! `cargo bench -p hetlb-core --features criterion --bench transmission`; `hetlb bench transmission` reports the
//! medians in one run.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hetlb_core::transmission::{Schedule, transmit};
use hetlb_core::{Algorithm, BalanceOptions, balance};
use std::hint::black_box;

fn schedules(c: &mut Criterion) {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let loads: Vec<u64> = (0..1usize << 16)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1000
        })
        .collect();
    let mut group = c.benchmark_group("transmission_2^16");
    group.sample_size(10);
    for alg in [Algorithm::Dem, Algorithm::Oem, Algorithm::Cwa] {
        let plan = balance(alg, &loads, &BalanceOptions::default()).unwrap();
        for schedule in Schedule::ALL {
            group.bench_with_input(
                BenchmarkId::new(alg.name(), schedule.name()),
                &plan,
                |b, p| b.iter(|| black_box(transmit(p, schedule).unwrap())),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, schedules);
criterion_main!(benches);
