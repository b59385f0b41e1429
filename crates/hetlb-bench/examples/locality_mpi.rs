//! Keeping subdomains compact on MPI: the comparison of `hetlb bench locality` with hetlb's
//! calls made by MPI processes. A hotspot drifts across a domain of uniformly placed items
//! over the steps, with one rebalance per step (capacities 1..P, direct routing), three ways
//! side by side in one run: hetlb with the items' positions, hetlb without them, and
//! recursive coordinate bisection recomputed from scratch at every step (the reference a
//! geometric partitioner such as Zoltan's RCB gives). Per method: the worst spread of the
//! ranks' regions (1.0 random, lower compact) and its ratio to RCB's at the same step, units
//! moved against the minimum, the worst imbalance and the median call time (the slowest
//! rank's). After every step every item is checked to be held by exactly one rank.
//!
//! Build and run (8 ranks, 200,000 items, 20 steps, 2-D, cwa):
//! ```sh
//! cargo build --release -p hetlb-bench --features mpi --example locality_mpi
//! mpiexec -n 8 target/release/examples/locality_mpi 200000 20 2 cwa
//! ```

use hetlb_bench::locality::{LocalityConfig, RankSteps, Setup, rank_steps, run_with};
use hetlb_transport::mpi::Mpi;
use mpi::collective::CommunicatorCollectives;
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::process::ExitCode;

fn main() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(mpi::Threading::Multiple) else {
        eprintln!("error: MPI is already initialised");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let mpi = Mpi::adopt(&universe, &world);
    let rank = world.rank();
    let cfg = match config(world.size() as usize) {
        Ok(cfg) => cfg,
        Err(e) => {
            if rank == 0 {
                eprintln!("error: {e}");
            }
            return ExitCode::FAILURE;
        }
    };
    let hetlb = |setup: &Setup, located: bool| {
        let mine = rank_steps(setup, &mpi, located)?;
        let held = all_ranks_steps(&world, &mine);
        setup.owners(&held)
    };
    match run_with(&cfg, &hetlb) {
        Ok(r) if rank == 0 => {
            println!(
                "Locality on MPI: {} items in {}-D on {} ranks (capacities 1..{}), a hotspot \
                 crossing the domain over {} steps, {} with direct routing; every item held \
                 exactly once after every step",
                r.items, r.dims, r.ranks, r.ranks, r.steps, r.rule
            );
            println!(
                "{:<14}{:>14}{:>20}{:>17}{:>28}{:>17}{:>11}",
                "method",
                "worst spread",
                "worst spread / rcb",
                "moved / minimum",
                "worst step moved / minimum",
                "worst imbalance",
                "median ms"
            );
            for m in &r.totals {
                println!(
                    "{:<14}{:>14.3}{:>20.3}{:>17.3}{:>28.3}{:>17.4}{:>11.2}",
                    m.method,
                    m.worst_spread,
                    m.worst_spread_over_rcb,
                    m.moved_over_minimum,
                    m.worst_moved_over_minimum,
                    m.worst_imbalance,
                    m.median_seconds * 1e3
                );
            }
            ExitCode::SUCCESS
        }
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: rank {rank}: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `[ITEMS] [STEPS] [DIMS] [RULE]` from the command line, on `ranks` ranks.
fn config(ranks: usize) -> Result<LocalityConfig, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut cfg = LocalityConfig::default();
    cfg.ranks = ranks;
    let number = |i: usize, name: &str| -> Result<Option<u64>, String> {
        args.get(i)
            .map(|s| {
                s.parse::<u64>()
                    .map_err(|_| format!("{name}: '{s}' is not a whole number"))
            })
            .transpose()
    };
    if let Some(n) = number(0, "ITEMS")? {
        cfg.items = n;
    }
    if let Some(n) = number(1, "STEPS")? {
        cfg.steps = usize::try_from(n).map_err(|_| format!("STEPS: {n} is too many"))?;
    }
    if let Some(n) = number(2, "DIMS")? {
        cfg.dims = usize::try_from(n).map_err(|_| format!("DIMS: {n} is not 2 or 3"))?;
    }
    if let Some(rule) = args.get(3) {
        cfg.rule = rule.parse().map_err(|e| format!("RULE: {e}"))?;
    }
    Ok(cfg)
}

/// Every rank's steps, gathered on every rank: per step the ids each rank held, and its
/// call's seconds.
fn all_ranks_steps(world: &SimpleCommunicator, mine: &RankSteps) -> Vec<RankSteps> {
    let size = world.size() as usize;
    let mut held: Vec<RankSteps> = vec![Vec::with_capacity(mine.len()); size];
    for (ids, seconds) in mine {
        let mut counts = vec![0i32; size];
        let count = i32::try_from(ids.len()).unwrap_or(i32::MAX);
        world.all_gather_into(&count, &mut counts[..]);
        let mut times = vec![0f64; size];
        world.all_gather_into(seconds, &mut times[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0i32, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0u64; total];
        {
            let mut into = PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            world.all_gather_varcount_into(&ids[..], &mut into);
        }
        for (r, h) in held.iter_mut().enumerate() {
            let (d, c) = (displs[r] as usize, counts[r] as usize);
            h.push((all[d..d + c].to_vec(), times[r]));
        }
    }
    held
}
