//! Peer rebalancing on MPI against its floors, side by side (the MPI counterpart of
//! `hetlb bench rebalance`):
//!
//! * `cwa` moving items of 64 bytes (half the ranks send half their items across the cube's
//!   highest dimension) against `MPI_Alltoallv` moving the same bytes between the same ranks;
//! * a `rebalance` with nothing to do against `MPI_Allreduce` of one `u64`.
//!
//! Every timing is fenced by hetlb's timed barrier (`SyncPoint`), for kernel and
//! floor alike, so a rank that stops is reported instead of hanging the run.
//!
//! Build and run (8 ranks, 1,000,000 items moved, 5 runs):
//! ```sh
//! cargo build --release -p hetlb-bench --features mpi --example rebalance_mpi
//! mpiexec -n 8 target/release/examples/rebalance_mpi 1000000 5
//! ```
//!
//! With flags, the call an application makes (`modes.rs`): capacities `1..P`, every item on
//! rank 0 or a drift of 5% of each rank's items, against the fewest records moved once by
//! `MPI_Alltoallv`; the two-step form; idle calls against `MPI_Allreduce`:
//! ```sh
//! mpiexec -n 8 target/release/examples/rebalance_mpi --mode hotspot --items 1000000
//! mpiexec -n 8 target/release/examples/rebalance_mpi --mode drift --drift 0.05
//! mpiexec -n 8 target/release/examples/rebalance_mpi --mode drift --storage records
//! ```

mod held;
mod modes;

use hetlb_bench::call::{decode_records, displacements, encode_record};
use hetlb_bench::rebalance::Item64;
use hetlb_bench::timing::median;
use hetlb_peer::{Balancer, BalancerConfig, DEFAULT_TIMEOUT, SyncPoint};
use hetlb_transport::mpi::Mpi;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Instant;

fn main() {
    let (universe, _) =
        mpi::initialize_with_threading(mpi::Threading::Multiple).expect("MPI initialises");
    let world = universe.world();
    let mpi = Mpi::adopt(&universe, &world);
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let args: Vec<String> = std::env::args().collect();
    if args.iter().skip(1).any(|a| a.starts_with("--")) {
        let result = modes::Flags::parse(&args[1..]).and_then(|f| modes::run(&mpi, &world, &f));
        if let Err(e) = result {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
        return;
    }
    let moved: u64 = args
        .get(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let runs: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5);
    assert!(
        size >= 2 && size.is_power_of_two(),
        "a power-of-two number of ranks"
    );
    let half = size / 2;
    let setting = Setting {
        rank,
        size,
        half,
        per_sender: moved / half as u64,
    };
    let mut sync = SyncPoint::new(&mpi, DEFAULT_TIMEOUT).expect("a barrier");
    let mut fence = move || sync.wait().expect("every rank is running");
    let mut b = Balancer::new(&mpi, BalancerConfig::new("cwa").expect("cwa")).expect("config");
    let (mut kernel, mut floor, mut idle, mut reduce) = (vec![], vec![], vec![], vec![]);
    let calls = 200;
    for _ in 0..runs {
        // cwa
        let mut mine = setting.items();
        fence();
        let t = Instant::now();
        b.rebalance(&mut mine).expect("rebalance");
        fence();
        kernel.push(t.elapsed().as_secs_f64());
        assert_eq!(mine.len() as u64, setting.per_sender);
        // nothing to do: 200 calls
        fence();
        let t = Instant::now();
        for _ in 0..calls {
            b.rebalance(&mut mine).expect("rebalance");
        }
        fence();
        idle.push(t.elapsed().as_secs_f64() / calls as f64);
        // the floors: the same bytes by MPI_Alltoallv; an MPI_Allreduce of a u64
        floor.push(setting.alltoallv(&world, &mut fence));
        fence();
        let t = Instant::now();
        let mut total = 0u64;
        for _ in 0..calls {
            world.all_reduce_into(&(rank as u64), &mut total, SystemOperation::sum());
        }
        fence();
        reduce.push(t.elapsed().as_secs_f64() / calls as f64);
    }
    if rank == 0 {
        let (k, f, i, r) = (
            median(&kernel),
            median(&floor),
            median(&idle),
            median(&reduce),
        );
        println!("{size} ranks, medians of {runs} runs, kernel and floor interleaved:");
        println!(
            "  cwa moving {moved} items of 64 B: {:.2} ms; MPI_Alltoallv of the same bytes (and decoding): {:.2} ms; ratio {:.2}",
            k * 1e3,
            f * 1e3,
            k / f
        );
        println!(
            "  rebalance with nothing to do: {:.1} µs; MPI_Allreduce of a u64: {:.1} µs; ratio {:.2}",
            i * 1e6,
            r * 1e6,
            i / r
        );
    }
}

/// The ranks of the benchmark: the lower half send `per_sender` items each to the upper half.
struct Setting {
    rank: usize,
    size: usize,
    half: usize,
    per_sender: u64,
}

impl Setting {
    /// This rank's items before a run: twice `per_sender` on the lower half, none above.
    fn items(&self) -> Vec<Item64> {
        if self.rank < self.half {
            let lo = self.rank as u64 * 2 * self.per_sender;
            (lo..lo + 2 * self.per_sender)
                .map(|id| Item64 { id, data: [id; 7] })
                .collect()
        } else {
            Vec::new()
        }
    }

    /// Seconds of the floor: the bytes of the items `cwa` moves, sent by `MPI_Alltoallv`
    /// between the same ranks and decoded, fenced by `fence`.
    fn alltoallv(&self, world: &SimpleCommunicator, fence: &mut impl FnMut()) -> f64 {
        let (rank, size, half, per_sender) = (self.rank, self.size, self.half, self.per_sender);
        let sent: Vec<Item64> = self
            .items()
            .into_iter()
            .rev()
            .take(per_sender as usize)
            .collect();
        let mut bytes = vec![0u8; sent.len() * 64];
        for (slot, item) in bytes.chunks_exact_mut(64).zip(&sent) {
            encode_record(item, slot);
        }
        let mut send_counts = vec![0i32; size];
        let mut recv_counts = vec![0i32; size];
        if rank < half {
            send_counts[rank + half] = bytes.len() as i32;
        } else {
            recv_counts[rank - half] = (per_sender * 64) as i32;
        }
        let (sd, rd) = (displacements(&send_counts), displacements(&recv_counts));
        let mut inbox = vec![0u8; recv_counts.iter().sum::<i32>() as usize];
        // Never an empty buffer: its dangling address may be the library's MPI_IN_PLACE
        // (Open MPI), which the call then refuses. The counts stay zero.
        if bytes.is_empty() {
            bytes.push(0);
        }
        if inbox.is_empty() {
            inbox.push(0);
        }
        let received_bytes = recv_counts.iter().sum::<i32>() as usize;
        fence();
        let t = Instant::now();
        {
            let send = Partition::new(&bytes[..], &send_counts[..], &sd[..]);
            let mut recv = PartitionMut::new(&mut inbox[..], &recv_counts[..], &rd[..]);
            world.all_to_all_varcount_into(&send, &mut recv);
        }
        let received = decode_records(&inbox[..received_bytes]);
        fence();
        let seconds = t.elapsed().as_secs_f64();
        assert_eq!(
            received.len() as u64,
            if rank < half { 0 } else { per_sender }
        );
        seconds
    }
}
