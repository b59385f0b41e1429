//! Dispatch overhead on MPI over loopback against a plain MPI ping-pong between the same two
//! ranks: empty tasks, a master that only dispatches, and one task per request, so every task
//! costs one request–reply round trip. Each repetition runs the ping-pong (as many round trips
//! as tasks), self-scheduling and EFP in turn; rank 0 prints the medians per task and the
//! ratios to the ping-pong.
//!
//! ```text
//! cargo build --release -p hetlb-runtime --features mpi --example dispatch_mpi
//! mpiexec -n 2 target/release/examples/dispatch_mpi [TASKS] [REPETITIONS]
//! ```

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::transport::mpi::Mpi;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{RunConfig, run_mpi};

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mpi = Mpi::init()?;
    let arg = |i: usize, default: u64| -> Result<u64, std::num::ParseIntError> {
        std::env::args()
            .nth(i)
            .map(|s| s.parse())
            .transpose()
            .map(|x| x.unwrap_or(default))
    };
    let tasks = arg(1, 20_000)?.max(1);
    let repetitions = arg(2, 7)?.max(1);
    let job = Synthetic::new(tasks, 0);
    let policies = [Policy::SelfScheduling, Policy::Efp];
    let mut ping = Vec::new();
    let mut per_task = vec![Vec::new(); policies.len()];
    for _ in 0..repetitions {
        ping.push(mpi.ping_pong(tasks)?.as_secs_f64() / tasks as f64);
        for (p, &policy) in policies.iter().enumerate() {
            let mut cfg = RunConfig::new(policy);
            cfg.capacities = Some(vec![1.0; mpi.size()]);
            cfg.master_computes = false;
            match run_mpi(&mpi, &job, &cfg) {
                Ok(Some(out)) => per_task[p].push(out.report.makespan / tasks as f64),
                Ok(None) => {}
                Err(e) => {
                    eprintln!("error: {e}");
                    mpi.abort(1);
                }
            }
        }
    }
    if mpi.rank() == 0 {
        let floor = median(ping);
        println!(
            "{} ranks, {tasks} empty tasks, medians of {repetitions} interleaved repetitions",
            mpi.size()
        );
        println!("ping_pong_us_per_round_trip {:.3}", floor * 1e6);
        for (p, policy) in policies.iter().enumerate() {
            let m = median(per_task[p].clone());
            let key = policy.to_string().replace('-', "_");
            println!("{key}_us_per_task {:.3}", m * 1e6);
            println!("{key}_ratio {:.2}", m / floor);
        }
    }
    Ok(())
}
