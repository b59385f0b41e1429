//! Dimension exchange on large cubes: the in-place kernel and the full planner against a plain
//! pass over the same vector (the memory-bandwidth floor).
//!
//! `cargo bench -p hetlb-core --features criterion --bench exchange`; `hetlb bench exchange --dims 24` times the
//! 2^24 case with medians and ratios in one run.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use hetlb_core::exchange::{balance_in_place, plan};
use hetlb_core::rules::dimension_exchange::{Dem, Oem};
use std::hint::black_box;

fn loads(n: u32) -> Vec<u64> {
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    (0..1usize << n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % 1_000_000
        })
        .collect()
}

fn in_place(c: &mut Criterion) {
    let mut group = c.benchmark_group("in_place");
    group.sample_size(10);
    for n in [16u32, 20, 24] {
        let input = loads(n);
        let mut work = input.clone();
        group.throughput(Throughput::Elements(input.len() as u64));
        group.bench_with_input(BenchmarkId::new("plain_pass", n), &input, |b, v| {
            b.iter(|| black_box(v.iter().fold(0u64, |s, &w| s.wrapping_add(w))))
        });
        group.bench_with_input(BenchmarkId::new("dem", n), &input, |b, v| {
            b.iter(|| {
                work.copy_from_slice(v);
                black_box(balance_in_place(&Dem, &mut work).unwrap())
            })
        });
        group.bench_with_input(BenchmarkId::new("oem", n), &input, |b, v| {
            b.iter(|| {
                work.copy_from_slice(v);
                black_box(balance_in_place(&Oem, &mut work).unwrap())
            })
        });
        group.bench_with_input(BenchmarkId::new("copy_only", n), &input, |b, v| {
            b.iter(|| {
                work.copy_from_slice(v);
                black_box(&work);
            })
        });
    }
    group.finish();
}

fn full_plan(c: &mut Criterion) {
    let mut group = c.benchmark_group("plan");
    group.sample_size(10);
    for n in [12u32, 16, 20] {
        let input = loads(n);
        group.throughput(Throughput::Elements(input.len() as u64));
        group.bench_with_input(BenchmarkId::new("dem", n), &input, |b, v| {
            b.iter(|| black_box(plan(&Dem, v).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("oem", n), &input, |b, v| {
            b.iter(|| black_box(plan(&Oem, v).unwrap()))
        });
    }
    group.finish();
}

criterion_group!(benches, in_place, full_plan);
criterion_main!(benches);
