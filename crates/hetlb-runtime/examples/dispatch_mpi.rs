//! Dispatch overhead on MPI over loopback: empty tasks, a master that only dispatches, and
//! one task per request, so every task costs one request–reply round trip. Prints the median
//! over five runs of the makespan divided by the number of tasks.
//!
//! ```text
//! cargo build --release -p hetlb-runtime --features mpi --example dispatch_mpi
//! mpiexec -n 2 target/release/examples/dispatch_mpi [TASKS]
//! ```

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::transport::mpi::Mpi;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{RunConfig, run_mpi};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = Mpi::init()?;
    let tasks: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(20_000);
    let job = Synthetic::new(tasks, 0);
    for policy in [Policy::SelfScheduling, Policy::Efp] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![1.0; mpi.size()]);
        cfg.master_computes = false;
        let mut per_task = Vec::new();
        for _ in 0..5 {
            match run_mpi(&mpi, &job, &cfg) {
                Ok(Some(out)) => per_task.push(out.report.makespan / tasks as f64),
                Ok(None) => {}
                Err(e) => {
                    eprintln!("error: {e}");
                    mpi.abort(1);
                }
            }
        }
        if mpi.rank() == 0 {
            per_task.sort_by(f64::total_cmp);
            println!(
                "{policy}: {} ranks, {tasks} empty tasks: median {:.2} µs per task (runs: {})",
                mpi.size(),
                per_task[per_task.len() / 2] * 1e6,
                per_task
                    .iter()
                    .map(|t| format!("{:.2}", t * 1e6))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
        }
    }
    Ok(())
}
