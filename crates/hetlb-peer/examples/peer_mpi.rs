//! Peer rebalancing embedded in an MPI application.
//!
//! The application initialises MPI itself (any threading level) and keeps using its
//! communicator; hetlb works on a duplicate of it. Every rank starts with a different number
//! of cells; every three steps the ranks rebalance them with the odd–even method. Before its
//! own collective, each step meets at hetlb's timed barrier, so that a rank that stopped is
//! reported (by every other rank, naming it) instead of hanging the collective.
//!
//! Build and run:
//! ```sh
//! cargo build --release -p hetlb-peer --features mpi --example peer_mpi
//! mpiexec -n 4 target/release/examples/peer_mpi
//! ```

use hetlb_peer::{Balancer, BalancerConfig, Item};
use hetlb_transport::mpi::Mpi;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::topology::Communicator;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Cell {
    id: u64,
    value: f64,
}

impl Item for Cell {
    fn id(&self) -> u64 {
        self.id
    }
}

fn main() {
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    let mpi = Mpi::adopt(&universe, &world);
    let rank = world.rank() as u64;
    // Rank r starts with 100·(r+1)² cells.
    let first: u64 = (0..rank).map(|r| 100 * (r + 1) * (r + 1)).sum();
    let mut cells: Vec<Cell> = (first..first + 100 * (rank + 1) * (rank + 1))
        .map(|id| Cell {
            id,
            value: id as f64,
        })
        .collect();
    let config = BalancerConfig::new("oem").expect("a known rule");
    let mut balancer = Balancer::new(&mpi, config).expect("a power-of-two job");
    for step in 1..=6 {
        for c in &mut cells {
            c.value = (c.value * 1.000_1).sqrt();
        }
        // Everyone is still running? (An error names the rank that stopped.)
        if let Err(e) = balancer.barrier() {
            eprintln!("rank {rank}: {e}");
            std::process::exit(1);
        }
        // The application's own collective, on its own communicator.
        let mut total = 0u64;
        world.all_reduce_into(&(cells.len() as u64), &mut total, SystemOperation::sum());
        if step % 3 == 0 {
            let report = balancer.rebalance(&mut cells).expect("rebalance");
            if rank == 0 {
                println!(
                    "step {step}: {total} cells, loads {:?} -> {:?}",
                    report.loads_before, report.loads_after
                );
            }
        }
    }
}
