//! The paper's experiment on threads: C = A·B for 1000×1000 matrices on nine processors, one
//! fast and eight three times slower, under EFP; prints the per-processor table.
//!
//! `cargo run --release -p hetlb-runtime --example matmul_threads [SIZE]`

use hetlb_core::rules::self_scheduling::{Policy, granularity};
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::{RunConfig, Slowdown, run_threads};
use std::sync::Arc;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(1000);
    let p = 9;
    // eq. (1) with n = 3 and rand() = 0.5
    let g = granularity(3, p, 0.5, n as u64)?;
    let job = Arc::new(MatmulJob::new(n, g, 1));
    let mut cfg = RunConfig::new(Policy::Efp);
    cfg.slowdowns = (0..p)
        .map(|i| Slowdown::constant(if i == 0 { 1 } else { 3 }))
        .collect();
    let out = run_threads(Arc::clone(&job), p, &cfg)?;
    let c = job.assemble(&out.outputs)?;
    let err = c.max_abs_diff(&job.reference());
    let r = &out.report;
    println!("EFP, {n}×{n}, G = {g}, master = processor {}", r.master);
    println!("proc role  rows  Texec  Tcomp  Tcomm  Twait");
    for p in &r.processors {
        println!(
            "{:>4} {:>4} {:>5} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            p.processor, p.role, p.rows, p.t_exec, p.t_comp, p.t_comm, p.t_wait
        );
    }
    println!(
        "makespan {:.3} s, ideal {:.3} s, efficiency {:.3}; max |C - reference| = {err:.2e}",
        r.makespan, r.ideal, r.efficiency
    );
    Ok(())
}
