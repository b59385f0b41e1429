//! Peer rebalancing on MPI. Run by `cargo test --features mpi --test peer_mpi`: the program
//! starts itself under `mpiexec -n 8` and checks the exit status; each rank then runs the same
//! checks as an SPMD program.
//!
//! * `rules` — every rule and schedule on a duplicate of the application's communicator while
//!   the application keeps messages of its own in flight on the original; with unit items every
//!   rank's count equals the planner's final load, and every item is held exactly once. Run
//!   once with `MPI_THREAD_FUNNELED` (no heartbeat thread) and once with
//!   `MPI_THREAD_MULTIPLE` (heartbeat thread).
//! * `silent` — rank 3 stops answering in the middle of a move; every other rank returns an
//!   error naming it and holds what it held before; so does rank 3 when it resumes.
//! * `coordinator` — rank 0, which decides the outcome on MPI, stops right after its vote:
//!   the others report it, keep the items in doubt aside, and settle them with
//!   `Balancer::resolve` once it resumes; every item is then held exactly once.
//! * `stopped` — a rank stopped with `SIGSTOP` between two calls for longer than the timeout
//!   is named by every other rank at the next barrier; stopped for less, it is not reported.
//!   Run with `MPI_THREAD_MULTIPLE` (a heartbeat thread proves liveness between calls) and
//!   with `MPI_THREAD_FUNNELED` (none: the entry timeout names it).
//! * `entry` — one rank computes for three timeouts before it reaches a rebalance: every other
//!   rank's call fails within three timeouts naming it, holding what it held; the late rank's
//!   call fails too, and every later call says the group lost it. At both threading levels.
//! * `refuse` — one rank's own argument fails: it refuses the call, every other rank's call
//!   fails at once naming it, and the next call goes ahead.
//! * `topology` — `topology=mpi` on a 2×4 Cartesian communicator diffuses along the grid the
//!   application declared (`mpi:cart:2x4`, the mesh's shape), every item exactly once; on
//!   `MPI_COMM_WORLD`, which carries no topology, every rank's balancer is refused naming
//!   `topology`.
//! * `messages` — under `mpiexec -n 2`, `-n 4` and `-n 8`: the most messages any rank sends
//!   and receives in a rebalance grows as `log₂ P` (the agreement's votes and decision travel
//!   a tree rooted at rank 0 instead of between rank 0 and every rank).

mod common;

use common::mpiexec;

use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on};
use hetlb_core::model::Capacities;
use hetlb_core::transmission::Schedule;
use hetlb_peer::{Balancer, BalancerConfig, Fault, Holding, PeerError, Speeds};
use hetlb_transport::mpi::Mpi;
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
        Some("coordinator") => child_coordinator(),
        Some("stopped") => child_stopped(Threading::Multiple),
        Some("stopped-funneled") => child_stopped(Threading::Funneled),
        Some("entry") => child_entry(Threading::Multiple),
        Some("entry-funneled") => child_entry(Threading::Funneled),
        Some("refuse") => child_refuse(),
        Some("topology") => child_topology(),
        Some("messages") => child_messages(),
        _ => launcher(),
    }
}

fn launcher() -> ExitCode {
    let mut failed = 0;
    let runs = [
        ("rules-funneled", RANKS),
        ("rules-multiple", RANKS),
        ("silent", RANKS),
        ("coordinator", RANKS),
        ("stopped", RANKS),
        ("stopped-funneled", RANKS),
        ("entry", RANKS),
        ("entry-funneled", RANKS),
        ("refuse", RANKS),
        ("topology", RANKS),
        ("messages", 2),
        ("messages", 4),
        ("messages", 8),
    ];
    for (mode, ranks) in runs {
        let start = Instant::now();
        match mpiexec(ranks, CHILD, mode, Duration::from_secs(300)) {
            Ok((true, _)) => println!(
                "{mode} ({ranks} ranks): passed in {:.1} s",
                start.elapsed().as_secs_f64()
            ),
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
    let mpi = Mpi::adopt(&universe, &world);
    check(
        mpi.has_progress_thread() == (provided == Threading::Multiple),
        "a progress thread exactly under MPI_THREAD_MULTIPLE",
    );
    // The node's cores are the union of its processes' allowed CPUs: at least this
    // process's own.
    let own = std::thread::available_parallelism().map_or(1, |n| n.get());
    check(
        mpi.cores_on_this_node() >= own && (1..=RANKS).contains(&mpi.ranks_on_this_node()),
        &format!(
            "rank {rank}: {} ranks on {} cores of this node, {own} of them its own",
            mpi.ranks_on_this_node(),
            mpi.cores_on_this_node()
        ),
    );
    let loads: Vec<u64> = (0..size as u64).map(|r| (r * 37 + 11) % 50).collect();
    let caps: Vec<f64> = (0..size).map(|r| 1.0 + (r % 3) as f64).collect();
    let network = "hypercube:3"
        .parse::<hetlb_core::topology::TopologySpec>()
        .unwrap()
        .build()
        .unwrap();
    let mut next_id = 0u64;
    for algorithm in Algorithm::all() {
        for schedule in Schedule::ALL {
            for with_caps in [false, true] {
                let start: u64 = loads[..rank].iter().sum();
                let mut items: Vec<u64> =
                    (start..start + loads[rank]).map(|i| i + next_id).collect();
                next_id += 10_000;
                let mut cfg = BalancerConfig::for_algorithm(algorithm)
                    .schedule(schedule)
                    .timeout(Duration::from_secs(20));
                // Capacity-blind rules refuse capacities (they would ignore them).
                if with_caps && algorithm.uses_capacities() {
                    cfg = cfg.speeds(Speeds::Fixed(caps.clone()));
                }
                let mut b = Balancer::new(&mpi, cfg).expect("config");
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
                    &BalanceOptions::new()
                        .capacities(with_caps.then(|| Capacities::new(caps.clone()).unwrap())),
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

/// Every item exactly once over the group: the count and the sum of ids.
fn exactly_once<C: Communicator>(world: &C, items: &[u64], total: u64) -> bool {
    let mut count = 0u64;
    let mut sum = 0u64;
    world.all_reduce_into(&(items.len() as u64), &mut count, SystemOperation::sum());
    world.all_reduce_into(&items.iter().sum::<u64>(), &mut sum, SystemOperation::sum());
    count == total && sum == (0..total).sum::<u64>()
}

fn child_silent() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mpi = Mpi::adopt(&universe, &world);
    let victim = 3;
    let mut items: Vec<u64> = if rank == victim {
        (0..800).collect()
    } else {
        Vec::new()
    };
    let before = items.clone();
    let mut cfg = BalancerConfig::new("dem")
        .unwrap()
        .timeout(Duration::from_millis(1500));
    if rank == victim {
        cfg = cfg.fault(Fault::FreezeAfterSends(1, Duration::from_secs(4)));
    }
    let mut b = Balancer::new(&mpi, cfg).unwrap();
    let e = match b.rebalance(&mut items) {
        Ok(_) => {
            eprintln!("rank {rank}: a silent peer went unnoticed");
            std::process::exit(1);
        }
        Err(e) => e,
    };
    check(
        e.culprit() == Some(victim),
        &format!("rank {rank} names rank {victim}: {e}"),
    );
    check(e.holding() == Holding::Before, "rolled back");
    check(items == before, "every rank holds what it held before");
    check(exactly_once(&world, &items, 800), "every item exactly once");
    ExitCode::SUCCESS
}

fn child_coordinator() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mpi = Mpi::adopt(&universe, &world);
    // Rank 5 holds everything; rank 0 (the coordinator) stops right after its vote.
    let mut items: Vec<u64> = if rank == 5 {
        (0..640).collect()
    } else {
        Vec::new()
    };
    let mut cfg = BalancerConfig::new("cwa")
        .unwrap()
        .timeout(Duration::from_millis(1000));
    if rank == 0 {
        cfg = cfg.fault(Fault::FreezeAfterVote(Duration::from_secs(3)));
    }
    let mut b = Balancer::new(&mpi, cfg).unwrap();
    match b.rebalance(&mut items) {
        Ok(_) => {}
        Err(e @ PeerError::InDoubt { .. }) => {
            check(
                e.culprit() == Some(0),
                &format!("rank {rank} names rank 0: {e}"),
            );
            check(
                matches!(e.holding(), Holding::InDoubt { .. }),
                "in doubt: items kept aside",
            );
            // Rank 0 resumes within the next timeouts and decides: settle.
            let mut settled = false;
            for _ in 0..10 {
                match b.resolve(&mut items) {
                    Ok(()) => {
                        settled = true;
                        break;
                    }
                    Err(PeerError::InDoubt { .. }) => {}
                    Err(e) => {
                        eprintln!("rank {rank}: resolve: {e}");
                        std::process::exit(1);
                    }
                }
            }
            check(settled, "the outcome arrives once the coordinator resumes");
        }
        Err(e) => {
            eprintln!("rank {rank}: {e}");
            std::process::exit(1);
        }
    }
    check(exactly_once(&world, &items, 640), "every item exactly once");
    // The group goes on: another call balances what is left.
    let report = b.rebalance(&mut items).expect("the next call");
    check(report.imbalance_after <= 1.0 + 1e-9, "balanced");
    check(exactly_once(&world, &items, 640), "still exactly once");
    ExitCode::SUCCESS
}

fn child_messages() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let mpi = Mpi::adopt(&universe, &world);
    // Random loads: every rank moves something in most dimensions.
    let loads: Vec<u64> = (0..size as u64).map(|r| (r * 7919 + 13) % 23 + 1).collect();
    let start: u64 = loads[..rank].iter().sum();
    let mut items: Vec<u64> = (start..start + loads[rank]).collect();
    let cfg = BalancerConfig::new("cwa")
        .unwrap()
        .timeout(Duration::from_secs(20));
    let mut b = Balancer::new(&mpi, cfg).unwrap();
    let report = b.rebalance(&mut items).expect("rebalance");
    check(report.balanced, "the call moved items");
    check(
        exactly_once(&world, &items, loads.iter().sum()),
        "every item exactly once",
    );
    let mine = report.messages_sent + report.messages_received;
    let mut most = 0u64;
    world.all_reduce_into(&mine, &mut most, SystemOperation::max());
    let mut most_sent = 0u64;
    world.all_reduce_into(
        &report.messages_sent,
        &mut most_sent,
        SystemOperation::max(),
    );
    let dims = u64::from(size.trailing_zeros());
    if rank == 0 {
        println!(
            "{size} ranks: the most messages a rank sent {most_sent}, sent and received {most} \
             (bound 6·log₂ P + 4 = {})",
            6 * dims + 4
        );
    }
    // Gather and move: at most log₂ P messages each way each; the agreement: at most
    // log₂ P + 1 each way. Rank 0 exchanging a vote and a decision with every rank would
    // take 2·(P − 1) on its own.
    check(
        most <= 6 * dims + 4,
        &format!("{size} ranks: a rank sent and received {most} messages"),
    );
    ExitCode::SUCCESS
}

/// Stops this process with `SIGSTOP` and has it continued after `seconds` by a detached shell.
fn stop_self_for(seconds: f64) {
    let pid = std::process::id();
    let _ = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("sleep {seconds}; kill -CONT {pid}"))
        .spawn();
    let _ = std::process::Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status();
}

fn child_stopped(level: Threading) -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(level) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mpi = Mpi::adopt(&universe, &world);
    let victim = 6;
    let cfg = BalancerConfig::new("oem")
        .unwrap()
        .timeout(Duration::from_secs(2));
    let mut b = Balancer::<u64, _>::new(&mpi, cfg).unwrap();
    // Stopped for a quarter of the timeout between calls: not a failure.
    b.barrier().expect("the first barrier");
    if rank == victim {
        stop_self_for(0.5);
    }
    b.barrier().expect("a short stop is not a failure");
    // Stopped for three timeouts: every other rank names it.
    if rank == victim {
        stop_self_for(6.0);
    }
    let result = b.barrier();
    if rank != victim {
        let e = result.expect_err("a stopped rank is reported");
        check(
            e.culprit() == Some(victim),
            &format!("rank {rank} names rank {victim}: {e}"),
        );
    }
    // Everyone (the stopped rank too, once continued) meets again.
    world.barrier();
    ExitCode::SUCCESS
}

fn child_entry(level: Threading) -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(level) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mpi = Mpi::adopt(&universe, &world);
    let (late, timeout) = (5, Duration::from_secs(1));
    let cfg = BalancerConfig::new("oem").unwrap().timeout(timeout);
    let mut b = Balancer::<u64, _>::new(&mpi, cfg).unwrap();
    let mut items: Vec<u64> = if rank == 0 {
        (0..80).collect()
    } else {
        Vec::new()
    };
    b.rebalance(&mut items).expect("a first call with everyone");
    let held = items.clone();
    if rank == late {
        // Late by more than the entry timeout, and after every other rank has given the
        // call up (each says so on the world communicator once its call has returned): on
        // a loaded machine the others can be late themselves.
        std::thread::sleep(timeout * 4);
        for _ in 1..world.size() {
            let _: (u8, _) = world.any_process().receive();
        }
    }
    let start = Instant::now();
    let e = b
        .rebalance(&mut items)
        .expect_err("the call without rank 5 fails");
    let took = start.elapsed();
    if rank != late {
        world.process_at_rank(late as i32).send(&1u8);
    }
    check(
        e.culprit() == Some(late),
        &format!("rank {rank} names rank {late}: {e}"),
    );
    check(items == held, &format!("rank {rank} holds what it held"));
    if rank != late {
        check(
            took <= timeout * 3,
            &format!("rank {rank} knew within three timeouts ({took:?})"),
        );
    }
    let again = b.rebalance(&mut items).expect_err("the group lost rank 5");
    let lost = match again {
        PeerError::GroupLost { rank: r, .. } => r == late && rank != late,
        PeerError::Excluded { .. } => rank == late,
        _ => false,
    };
    check(lost, &format!("rank {rank}: {again}"));
    world.barrier();
    ExitCode::SUCCESS
}

fn child_topology() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let cfg = || {
        BalancerConfig::new("dishet")
            .unwrap()
            .topology("mpi")
            .unwrap()
            .timeout(Duration::from_secs(30))
    };
    // The world has no topology: refused, naming the option.
    let plain = Mpi::adopt(&universe, &world);
    let e = Balancer::<u64, _>::new(&plain, cfg()).expect_err("no topology on the world");
    check(
        e.to_string().contains("topology") && e.to_string().contains("MPI_Cart_create"),
        &format!("rank {rank}: {e}"),
    );
    drop(plain);
    let Some(grid) = world.create_cartesian_communicator(&[2, 4], &[false, false], false) else {
        eprintln!("rank {rank}: no Cartesian communicator");
        return ExitCode::FAILURE;
    };
    let mpi = Mpi::adopt(&universe, &grid);
    let mut b = Balancer::<u64, _>::new(&mpi, cfg()).expect("the grid's balancer");
    check(
        b.topology() == "mpi:cart:2x4",
        &format!("rank {rank}: topology {}", b.topology()),
    );
    // Rank 0 (a corner) holds everything.
    let total = 800u64;
    let mut items: Vec<u64> = if rank == 0 {
        (0..total).collect()
    } else {
        Vec::new()
    };
    let report = b.rebalance(&mut items).expect("rebalance on the grid");
    check(
        report.topology == "mpi:cart:2x4",
        "the report names the grid",
    );
    check(
        exactly_once(&world, &items, total),
        "every item exactly once",
    );
    // Diffusion on the mesh leaves the integer residual of its last rounds.
    check(
        report.imbalance_before == RANKS as f64 && report.imbalance_after <= 1.05,
        &format!(
            "rank {rank}: imbalance {} -> {}",
            report.imbalance_before, report.imbalance_after
        ),
    );
    world.barrier();
    ExitCode::SUCCESS
}

fn child_refuse() -> ExitCode {
    let Some((universe, _)) = mpi::initialize_with_threading(Threading::Multiple) else {
        return ExitCode::FAILURE;
    };
    let world = universe.world();
    let rank = world.rank() as usize;
    let mpi = Mpi::adopt(&universe, &world);
    let cfg = BalancerConfig::new("oem")
        .unwrap()
        .timeout(Duration::from_secs(30));
    let mut b = Balancer::<u64, _>::new(&mpi, cfg).unwrap();
    let mut items: Vec<u64> = (rank as u64 * 10..rank as u64 * 10 + 10).collect();
    let start = Instant::now();
    if rank == 3 {
        b.refuse("load: value 2 (-1) is negative").expect("refused");
    } else {
        let e = b.rebalance(&mut items).expect_err("rank 3 refused");
        check(
            matches!(&e, PeerError::Refused { rank: 3, .. }),
            &format!("rank {rank}: {e}"),
        );
        check(
            start.elapsed() < Duration::from_secs(10),
            &format!("rank {rank} knew at once ({:?})", start.elapsed()),
        );
    }
    b.rebalance(&mut items).expect("the group goes on");
    check(
        exactly_once(&world, &items, RANKS as u64 * 10),
        "every item exactly once",
    );
    world.barrier();
    ExitCode::SUCCESS
}
