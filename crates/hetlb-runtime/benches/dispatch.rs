//! Dispatch overhead per task on the threads backend: empty tasks, a master that only
//! dispatches and one worker, so every task is one request–reply round trip under
//! self-scheduling; EFP batches amortise it. Reported per task (criterion's throughput).
//!
//! `cargo bench -p hetlb-runtime --features criterion --bench dispatch`. The MPI counterpart is the example
//! `dispatch_mpi` of `hetlb-bench`, run under `mpiexec -n 2`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{RunConfig, run_threads};
use std::sync::Arc;
use std::time::Duration;

const TASKS: u64 = 20_000;

fn dispatch(c: &mut Criterion) {
    let job = Arc::new(Synthetic::new(TASKS, 0));
    let mut group = c.benchmark_group("dispatch_per_empty_task");
    group
        .throughput(Throughput::Elements(TASKS))
        .sample_size(10)
        .measurement_time(Duration::from_secs(8));
    for policy in [Policy::SelfScheduling, Policy::Efp] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![1.0, 1.0]);
        cfg.master_computes = false;
        group.bench_function(format!("threads/{policy}"), |b| {
            b.iter(|| run_threads(Arc::clone(&job), 2, &cfg).map(|o| o.outputs.len()))
        });
    }
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
