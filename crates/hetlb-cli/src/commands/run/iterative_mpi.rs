//! `hetlb run iterative --backend mpi`: one rank per MPI process.

use super::iterative::{Args, Setup, present};
use anyhow::{Result, anyhow, bail};
use hetlb_runtime::peer::Balancer;
use hetlb_runtime::peer::mpi::MpiComm;
use hetlb_runtime::workload::iterative::{Cell, IterativeRun, RankLog, run_rank};
use mpi::Threading;
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::topology::Communicator;
use std::time::Instant;

/// Runs every balancer in turn on the MPI job's ranks; rank 0 prints.
pub(super) fn run(args: &Args) -> Result<()> {
    let (universe, _) = mpi::initialize_with_threading(Threading::Multiple)
        .ok_or_else(|| anyhow!("--backend: MPI is already initialised"))?;
    let world = universe.world();
    let (rank, ranks) = (world.rank() as usize, world.size() as usize);
    let fail = |e: anyhow::Error| -> Result<()> {
        if rank == 0 {
            Err(e)
        } else {
            std::process::exit(1)
        }
    };
    if let Some(w) = args.procs {
        if w != ranks {
            return fail(anyhow!(
                "--procs: {w} given but mpiexec started {ranks} ranks"
            ));
        }
    }
    let setup = match Setup::parse(args, ranks) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    // Ranks per core on this rank's node, for the ideal.
    let local = world.split_shared(0).size() as f64;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let oversubscription = local / cores;
    let mut comm = Some(MpiComm::<Cell>::new(&world));
    let mut runs = Vec::new();
    for b in &setup.balancers {
        let name = b
            .as_ref()
            .map_or("none", |c| c.algorithm().name())
            .to_string();
        let mut balancer = match b {
            Some(cfg) => Some(
                Balancer::new(comm.take().expect("one communicator"), cfg.clone())
                    .map_err(|e| anyhow!("--balancer: {e}"))?,
            ),
            None => None,
        };
        let barrier = || {
            polite_barrier(&world);
            true
        };
        world.barrier();
        let start = Instant::now();
        let log = run_rank::<MpiComm<Cell>>(
            &setup.config,
            rank,
            ranks,
            balancer.as_mut(),
            &barrier,
            None,
        );
        let total = start.elapsed().as_secs_f64();
        let log = match log {
            Ok(l) => l,
            Err(e) => {
                // The other ranks may be waiting in the application's barrier.
                eprintln!("error: {name}: {e}");
                world.abort(1);
            }
        };
        if let Some(b) = balancer {
            comm = Some(b.into_comm());
        }
        let logs = gather_logs(&world, rank, &log)?;
        if rank == 0 {
            runs.push(IterativeRun::assemble(&name, total, logs, oversubscription));
        }
    }
    drop(comm);
    if rank == 0 {
        present(args, &setup, ranks, "mpi", &runs)?;
    }
    Ok(())
}

/// A barrier that leaves the core to computing ranks while it waits (MPI's own barrier spins,
/// which on a machine with fewer cores than ranks slows down the ranks still computing).
fn polite_barrier<C: Communicator>(world: &C) {
    let mut request = world.immediate_barrier();
    let mut nap = std::time::Duration::from_micros(10);
    let start = Instant::now();
    loop {
        match request.test() {
            Ok(_) => return,
            Err(r) => request = r,
        }
        if start.elapsed() < std::time::Duration::from_micros(200) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(nap);
            nap = (nap * 2).min(std::time::Duration::from_micros(500));
        }
    }
}

/// Every rank's log at rank 0 (serialised with postcard; lengths first).
fn gather_logs<C: Communicator>(world: &C, rank: usize, log: &RankLog) -> Result<Vec<RankLog>> {
    let bytes =
        postcard::to_allocvec(log).map_err(|e| anyhow!("cannot encode a rank's log: {e}"))?;
    let len = i32::try_from(bytes.len()).map_err(|_| anyhow!("a rank's log is too large"))?;
    let root = world.process_at_rank(0);
    if rank != 0 {
        root.gather_into(&len);
        root.gather_varcount_into(&bytes[..]);
        return Ok(Vec::new());
    }
    let size = world.size() as usize;
    let mut lens = vec![0i32; size];
    root.gather_into_root(&len, &mut lens[..]);
    let total: usize = lens.iter().map(|&l| l as usize).sum();
    let mut buf = vec![0u8; total];
    let displs: Vec<i32> = lens
        .iter()
        .scan(0i32, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect();
    {
        let mut partition = mpi::datatype::PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
        root.gather_varcount_into_root(&bytes[..], &mut partition);
    }
    let mut logs = Vec::with_capacity(size);
    for (i, (&l, &d)) in lens.iter().zip(&displs).enumerate() {
        let part = &buf[d as usize..(d + l) as usize];
        let log: RankLog =
            postcard::from_bytes(part).map_err(|e| anyhow!("cannot decode rank {i}'s log: {e}"))?;
        logs.push(log);
    }
    if logs.len() != size {
        bail!("{} logs gathered for {size} ranks", logs.len());
    }
    Ok(logs)
}
