//! A user task on threads: any closure over any inputs.
//!
//! `cargo run --release -p hetlb-runtime --example closure_threads`

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::{ClosureJob, RunConfig, Slowdown, run_threads};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Collatz stopping times of 1..=200000, in 400 tasks of 500 numbers.
    let inputs: Vec<(u64, u64)> = (0..400).map(|i| (i * 500 + 1, (i + 1) * 500 + 1)).collect();
    let job = Arc::new(ClosureJob::new(inputs, |&(a, b): &(u64, u64)| {
        let steps = |mut n: u64| {
            let mut s = 0u32;
            while n != 1 {
                n = if n.is_multiple_of(2) {
                    n / 2
                } else {
                    3 * n + 1
                };
                s += 1;
            }
            s
        };
        Ok::<_, String>((a..b).map(steps).max().unwrap_or(0))
    }));
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.slowdowns = vec![
        Slowdown::constant(1),
        Slowdown::constant(2),
        Slowdown::constant(4),
    ];
    let out = run_threads(job, 3, &cfg)?;
    let longest = out.outputs.iter().max().copied().unwrap_or(0);
    println!("longest Collatz stopping time up to 200000: {longest} steps");
    for p in &out.report.processors {
        println!(
            "processor {} ({}): {} tasks, T_exec {:.3} s, T_comp {:.3} s",
            p.processor, p.role, p.tasks, p.t_exec, p.t_comp
        );
    }
    Ok(())
}
