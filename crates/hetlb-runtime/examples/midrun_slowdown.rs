//! EFP following a processor that slows down in the middle of a run.
//!
//! Four equal processors multiply 1200×1200 matrices; after a third of the expected time,
//! processor 2 becomes six times slower. The timeline shows the speed factor the master
//! measured for it at each of its requests and the tasks it got; the static equal split is
//! run on the same change for comparison.
//!
//! `cargo run --release -p hetlb-runtime --example midrun_slowdown`

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::{RunConfig, Slowdown, run_threads};
use std::sync::Arc;
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let job = Arc::new(MatmulJob::new(1200, 600, 3));
    let p = 4;
    // Measure the undisturbed run first, to place the change at a third of it.
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.capacities = Some(vec![1.0; p]);
    let plain = run_threads(Arc::clone(&job), p, &cfg)?.report.makespan;
    let at = Duration::from_secs_f64(plain / 3.0);
    println!("undisturbed EFP makespan {plain:.3} s; processor 2 slows down ×6 at {at:.2?}");
    let mut slow = vec![Slowdown::constant(1); p];
    slow[2] = Slowdown::constant(1).then(at, 6);
    for policy in [Policy::Efp, Policy::StaticEqual] {
        let mut cfg = RunConfig::new(policy);
        cfg.capacities = Some(vec![1.0; p]);
        cfg.slowdowns = slow.clone();
        let out = run_threads(Arc::clone(&job), p, &cfg)?;
        let r = &out.report;
        println!("\n{policy}: makespan {:.3} s", r.makespan);
        for q in &r.processors {
            println!(
                "  processor {}: {:>4} rows, T_exec {:.3} s",
                q.processor, q.rows, q.t_exec
            );
        }
        if policy == Policy::Efp {
            println!("  processor 2's requests (time, speed factor measured, tasks sent):");
            for d in r.timeline.iter().filter(|d| d.processor == 2) {
                println!(
                    "    {:>6.3} s  S = {:.2}  {} task(s)",
                    d.at, d.speed_factor, d.tasks
                );
            }
        }
    }
    Ok(())
}
