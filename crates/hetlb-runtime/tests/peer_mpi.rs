//! Peer rebalancing on MPI. Run by `cargo test --features mpi --test peer_mpi`: the program
//! starts itself under `mpiexec -n 8` and checks the exit status; each rank then runs the same
//! checks as an SPMD program.
//!
//! * `rules` — every rule and schedule on a duplicate of the application's communicator while
//!   the application keeps messages of its own in flight on the original; with unit items every
//!   rank's count equals the planner's final load, and every item is held exactly once. Run
//!   once with `MPI_THREAD_FUNNELED` (no heartbeat thread) and once with
//!   `MPI_THREAD_MULTIPLE` (heartbeat thread).
//! * `silent` — rank 0 stops answering in the middle of a move; every other rank returns an
//!   error naming it within the timeout and holds what it held before.

mod common;

use common::mpiexec;

use hetlb_core::model::Capacities;
use hetlb_core::network_algorithm::{NetworkAlgorithm, NetworkOptions, balance_on};
use hetlb_core::transmission::Schedule;
use hetlb_runtime::peer::mpi::MpiComm;
use hetlb_runtime::peer::{Balancer, BalancerConfig, Fault, Speeds};
use mpi::Threading;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const CHILD: &str = "HETLB_PEER_MPI_CHILD";
const RANKS: usize = 8;

fn main() -> ExitCode {
    match std::env::var(CHILD).ok().as_deref() {
        Some("rules-funneled") => child_rules(Threading::Funneled),
        Some("rules-multiple") => child_rules(Threading::Multiple),
        Some("silent") => child_silent(),
        _ => launcher(),
    }
}

fn launcher() -> ExitCode {
    let mut failed = 0;
    for mode in ["rules-funneled", "rules-multiple", "silent"] {
        let start = Instant::now();
        match mpiexec(RANKS, CHILD, mode, Duration::from_secs(300)) {
            Ok((true, _)) => println!("{mode}: passed in {:.1} s", start.elapsed().as_secs_f64()),
            Ok((false, err)) => {
                eprintln!("{mode}: failed:\n{err}");
                failed += 1;
            }
            Err(e) => {
                eprintln!("{e}");
                failed += 1;
            }
        }
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn check(ok: bool, what: &str) {
    if !ok {
        eprintln!("check failed: {what}");
        std::process::exit(1);
    }
}

fn child_rules(level: Threading) -> ExitCode {
    let Some((universe, provided)) = mpi::initialize_with_threading(level) else {
        eprintln!("MPI already initialised");
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    check(size == RANKS, "8 ranks");
    let comm = MpiComm::<u64>::new(&world);
    check(
        comm.has_heartbeat_thread() == (provided == Threading::Multiple),
        "heartbeat thread exactly under MPI_THREAD_MULTIPLE",
    );
    let loads: Vec<u64> = (0..size as u64).map(|r| (r * 37 + 11) % 50).collect();
    let caps: Vec<f64> = (0..size).map(|r| 1.0 + (r % 3) as f64).collect();
    let network = "hypercube:3"
        .parse::<hetlb_core::topology::TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    let mut comm = Some(comm);
    let mut next_id = 0u64;
    for algorithm in NetworkAlgorithm::all() {
        for schedule in Schedule::ALL {
            for with_caps in [false, true] {
                let start: u64 = loads[..rank].iter().sum();
                let mut items: Vec<u64> =
                    (start..start + loads[rank]).map(|i| i + next_id).collect();
                next_id += 10_000;
                let mut cfg = BalancerConfig::for_algorithm(algorithm)
                    .schedule(schedule)
                    .timeout(Duration::from_secs(20));
                if with_caps {
                    cfg = cfg.speeds(Speeds::Fixed(caps.clone()));
                }
                let mut b = Balancer::new(comm.take().expect("comm"), cfg).expect("config");
                // The application's own message, in flight on the original communicator
                // during the rebalance.
                let right = ((rank + 1) % size) as i32;
                let left = ((rank + size - 1) % size) as i32;
                world
                    .process_at_rank(right)
                    .send_with_tag(&(rank as u64), 7);
                let report = b.rebalance(&mut items).expect("rebalance");
                let (got, _) = world.process_at_rank(left).receive_with_tag::<u64>(7);
                check(got == left as u64, "the application's message is intact");
                let expected = balance_on(
                    &network,
                    algorithm,
                    &loads,
                    &NetworkOptions {
                        capacities: with_caps.then(|| Capacities::new(caps.clone()).unwrap()),
                        ..NetworkOptions::default()
                    },
                )
                .unwrap()
                .plan
                .final_loads;
                check(
                    items.len() as u64 == expected[rank],
                    &format!("{algorithm} {schedule} caps {with_caps}: count equals the planner"),
                );
                check(
                    report.loads_after == expected,
                    "loads after equal the planner",
                );
                // Exactly once: the sum of ids and the count over all ranks.
                let mut count = 0u64;
                let mut sum = 0u64;
                world.all_reduce_into(&(items.len() as u64), &mut count, SystemOperation::sum());
                world.all_reduce_into(&items.iter().sum::<u64>(), &mut sum, SystemOperation::sum());
                let total: u64 = loads.iter().sum();
                let base = next_id - 10_000;
                let expected_sum: u64 = (0..total).map(|i| i + base).sum();
                check(
                    count == total && sum == expected_sum,
                    "every item exactly once",
                );
                comm = Some(b.into_comm());
            }
        }
    }
    if rank == 0 {
        println!(
            "peer rebalancing on MPI ({provided:?}): 12 rules x 3 schedules x 2 speeds agree with the planner"
        );
    }
    ExitCode::SUCCESS
}

fn child_silent() -> ExitCode {
    let Some(universe) = mpi::initialize() else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mut items: Vec<u64> = if rank == 0 {
        (0..800).collect()
    } else {
        Vec::new()
    };
    let before = items.clone();
    let mut cfg = BalancerConfig::new("dem")
        .unwrap()
        .timeout(Duration::from_millis(1500));
    if rank == 0 {
        cfg = cfg.fault(Fault::FreezeAfterSends(1, Duration::from_secs(5)));
    }
    let mut b = Balancer::new(MpiComm::<u64>::new(&world), cfg).unwrap();
    let start = Instant::now();
    let result = b.rebalance(&mut items);
    if rank != 0 {
        let e = match result {
            Ok(_) => {
                eprintln!("rank {rank}: a silent peer went unnoticed");
                std::process::exit(1);
            }
            Err(e) => e,
        };
        check(
            e.culprit() == Some(0),
            &format!("rank {rank} names rank 0: {e}"),
        );
        check(items == before, "the survivors hold what they held before");
        check(
            start.elapsed() < Duration::from_secs(5),
            "the failure is reported before the silent rank wakes up",
        );
    }
    world.barrier();
    ExitCode::SUCCESS
}
