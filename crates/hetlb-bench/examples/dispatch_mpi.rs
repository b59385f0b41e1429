//! Dispatch overhead on MPI over loopback against a plain MPI ping-pong between the same two
//! ranks (the MPI counterpart of `hetlb bench dispatch`): empty tasks, a master that only
//! dispatches, and one task per request, so every task costs one request–reply round trip.
//! Each repetition runs the ping-pong (as many round trips as tasks, blocking sends and
//! receives on the world communicator), self-scheduling and EFP in turn; rank 0 prints the
//! medians per task and the ratios to the ping-pong.
//!
//! ```text
//! cargo build --release -p hetlb-bench --features mpi --example dispatch_mpi
//! mpiexec -n 2 target/release/examples/dispatch_mpi [TASKS] [REPETITIONS]
//! ```

use hetlb_bench::timing::median;
use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::synthetic::Synthetic;
use hetlb_runtime::{RunConfig, run_mpi};
use hetlb_transport::mpi::Mpi;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Instant;

/// The tag of the ping-pong's messages.
const PING: i32 = 0x5049;

/// Seconds of `round_trips` blocking 8-byte exchanges between ranks 0 and 1 (other ranks
/// return at once).
fn ping_pong(world: &SimpleCommunicator, round_trips: u64) -> f64 {
    let start = Instant::now();
    match world.rank() {
        0 if world.size() > 1 => {
            let peer = world.process_at_rank(1);
            for i in 0..round_trips {
                peer.send_with_tag(&i, PING);
                let _ = peer.receive_with_tag::<u64>(PING);
            }
        }
        1 => {
            let peer = world.process_at_rank(0);
            for _ in 0..round_trips {
                let (i, _) = peer.receive_with_tag::<u64>(PING);
                peer.send_with_tag(&i, PING);
            }
        }
        _ => {}
    }
    start.elapsed().as_secs_f64()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (universe, _) = mpi::initialize_with_threading(mpi::Threading::Multiple)
        .ok_or("MPI is already initialised")?;
    let world = universe.world();
    let mpi = Mpi::adopt(&universe, &world);
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
        ping.push(ping_pong(&world, tasks) / tasks as f64);
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
        let floor = median(&ping);
        println!(
            "{} ranks, {tasks} empty tasks, medians of {repetitions} interleaved repetitions",
            mpi.size()
        );
        println!("ping_pong_us_per_round_trip {:.3}", floor * 1e6);
        for (p, policy) in policies.iter().enumerate() {
            let m = median(&per_task[p]);
            let key = policy.to_string().replace('-', "_");
            println!("{key}_us_per_task {:.3}", m * 1e6);
            println!("{key}_ratio {:.2}", m / floor);
        }
    }
    Ok(())
}
