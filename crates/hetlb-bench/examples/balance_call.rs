//! The Rust side of the Python package's `hetlb.balance` timing: the library calls that
//! `hetlb.balance` makes (`balance_on_within` and `Metrics::of` on the hypercube of the
//! loads), timed on the loads of a file, median of several runs after one not counted.
//!
//! ```sh
//! cargo run --release -p hetlb-bench --example balance_call -- LOADS.txt 5 cwa,oem,dem-hetero,hybrid
//! ```
//! prints one line per rule: `rule median`, then every run's seconds.

use hetlb_bench::timing::median;
use hetlb_core::algorithm::{BalanceOptions, balance_on_within};
use hetlb_core::topology::{Hypercube, Network};
use hetlb_core::{Algorithm, Metrics};
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let path = args
        .get(1)
        .ok_or("usage: balance_call LOADS.txt [RUNS] [RULES]")?;
    let runs: usize = args.get(2).map_or(Ok(5), |s| s.parse())?;
    let rules = args.get(3).map_or("cwa,oem", String::as_str);
    let loads: Vec<u64> = std::fs::read_to_string(path)?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse::<u64>())
        .collect::<Result<_, _>>()?;
    let network = Network::Hypercube(Hypercube::for_nodes(loads.len())?);
    let options = BalanceOptions::default();
    for name in rules.split(',') {
        let algorithm: Algorithm = name.parse()?;
        // One run not counted: the thread pool starts and the allocator warms up, as in a
        // process that has balanced before.
        balance_on_within(&network, algorithm, &loads, &options, u64::MAX)?;
        let mut times = Vec::with_capacity(runs);
        let mut check = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let run = balance_on_within(&network, algorithm, &loads, &options, u64::MAX)?;
            let metrics = Metrics::of(&run.plan, None);
            times.push(t.elapsed().as_secs_f64());
            check = metrics.max_difference;
        }
        let each: Vec<String> = times.iter().map(|t| format!("{t:.6}")).collect();
        println!(
            "{name} {:.6} {} (max_difference {check})",
            median(&times),
            each.join(" ")
        );
    }
    Ok(())
}
