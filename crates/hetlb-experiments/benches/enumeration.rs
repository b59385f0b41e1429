//! Rim, Jang & Kim's exhaustive enumeration (2003, Table 1): 16 and 32 processors, dem and oem.
//!
//! `cargo bench -p hetlb-experiments --features criterion --bench enumeration`; `hetlb bench enumeration` gives the
//! 32-processor figure with its baseline in one run.

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use hetlb_core::Algorithm;
use hetlb_experiments::enumeration::enumerate;
use std::hint::black_box;

fn enumeration(c: &mut Criterion) {
    let mut group = c.benchmark_group("rim_table1");
    group.sample_size(10);
    for (procs, values) in [(16usize, 13u32), (32, 10)] {
        for alg in [Algorithm::Dem, Algorithm::Oem] {
            group.bench_function(BenchmarkId::new(alg.name(), procs), |b| {
                b.iter(|| black_box(enumerate(alg, procs, values, &|_| {}).unwrap()))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, enumeration);
criterion_main!(benches);
