//! EFP against the ideal makespan and against the static equal split, on the paper's case:
//! C = A·B, 1000×1000, nine processors, one fast and eight three times slower (slowdown
//! factors 1,3,…,3), granularity by eq. (1) with n = 3 and the default seed. Each policy runs
//! `REPS` times; medians are printed. Also the same on two processors (1,3), where each
//! processor has a core of its own on a two-core machine (with 100 tasks: eq. (1) degenerates
//! for two processors).
//!
//! `cargo bench -p hetlb-runtime --features criterion --bench policies [-- REPS]`

use hetlb_core::rules::self_scheduling::Policy;
use hetlb_runtime::grain::paper_granularity;
use hetlb_runtime::workload::matmul::MatmulJob;
use hetlb_runtime::{RunConfig, RunReport, Slowdown, run_sequential, run_threads};
use std::sync::Arc;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn case(
    n: usize,
    factors: &[u32],
    given: Option<u64>,
    reps: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let p = factors.len();
    let (g, source) = match given {
        Some(g) => (g, "given".to_string()),
        None => {
            let (g, r) = paper_granularity(3, p, n as u64, 1)?;
            (g, format!("eq. (1), rand() = {r:.4}"))
        }
    };
    let job = Arc::new(MatmulJob::new(n, g, 1));
    let (_, one) = run_sequential(&*job)?;
    println!(
        "\n{n}×{n}, {p} processors, slowdowns {factors:?}, G = {g} ({source}), {reps} runs \
         each; one worker alone: {one:.3} s"
    );
    println!(
        "{:<13} {:>9} {:>9} {:>10} {:>8} {:>12} {:>10} {:>11}",
        "policy", "makespan", "ideal", "efficiency", "spread", "master/slow", "vs one", "vs static"
    );
    let policies = [
        Policy::StaticEqual,
        Policy::Efp,
        Policy::StaticProportional,
        Policy::SelfScheduling,
    ];
    // Policies interleaved within each repetition, so that a change in the machine's load
    // during the benchmark affects them alike.
    let mut all: Vec<Vec<RunReport>> = vec![Vec::new(); policies.len()];
    for _ in 0..reps {
        for (i, &policy) in policies.iter().enumerate() {
            let mut cfg = RunConfig::new(policy);
            cfg.slowdowns = factors.iter().map(|&f| Slowdown::constant(f)).collect();
            all[i].push(run_threads(Arc::clone(&job), p, &cfg)?.report);
        }
    }
    let mut static_makespan = f64::NAN;
    for (&policy, reports) in policies.iter().zip(&all) {
        let pick = |f: &dyn Fn(&RunReport) -> f64| median(reports.iter().map(f).collect());
        let makespan = pick(&|r| r.makespan);
        let ratio = pick(&|r| {
            let m = r.processors[r.master].rows as f64;
            let slow: Vec<f64> = r
                .processors
                .iter()
                .filter(|q| factors[q.processor] > 1)
                .map(|q| q.rows as f64)
                .collect();
            m / (slow.iter().sum::<f64>() / slow.len().max(1) as f64)
        });
        if policy == Policy::StaticEqual {
            static_makespan = makespan;
        }
        println!(
            "{:<13} {:>8.3}s {:>8.3}s {:>10.3} {:>7.1}% {:>12.2} {:>10.2} {:>11.2}",
            policy.name(),
            makespan,
            pick(&|r| r.ideal),
            pick(&|r| r.efficiency),
            100.0 * pick(&|r| r.finish_spread()),
            ratio,
            one / makespan,
            static_makespan / makespan
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let reps = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
        .unwrap_or(5);
    case(1000, &[1, 3, 3, 3, 3, 3, 3, 3, 3], None, reps)?;
    case(2000, &[1, 3, 3, 3, 3, 3, 3, 3, 3], None, reps.min(3))?;
    // Eq. (1) gives G = 1 for two processors with this seed; 100 tasks instead.
    case(1000, &[1, 3], Some(100), reps)?;
    Ok(())
}
