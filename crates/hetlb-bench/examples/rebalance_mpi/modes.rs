//! `rebalance_mpi --mode hotspot|drift …`: the call an MPI application makes, against its
//! floors, side by side in one run (interleaved, medians):
//!
//! * the call from the start (`hotspot`: every item on rank 0; `drift`: the
//!   capacity-proportional shares, then a share of each rank's items drifted to the next
//!   rank) against `MPI_Alltoallv` of the fewest records that reach the same loads, each
//!   sent once from the end of the items and decoded onto it (the items as the call leaves
//!   them);
//! * the two-step form (`plan` + `migrate`) from the same start, against the one call;
//! * an idle call (already balanced), and an idle two-step, against `MPI_Allreduce`: each
//!   call timed on its own, the median call (and the mean) of rank 0's calls over the runs.
//!
//! Each timing is closed by `MPI_Barrier` on both sides (the slowest rank's time), so that
//! the call and its floor are fenced alike; the floor's buffers are written once before its
//! clock starts. After every call the items are checked held exactly once (count and sum of ids, all-
//! reduced), outside the timings. `--storage items` (the default) holds them as typed items
//! (`Vec<Item64>`, serialised by serde), `--storage records` as 64-byte records in one buffer
//! (`Records`: the path of the C, Fortran and Python faces).

use crate::held::{self, Held, RecordBytes};
use hetlb_bench::call::{
    Start, append_records, displacements, encode_record, floor_exchange, items,
};
use hetlb_bench::rebalance::Item64;
use hetlb_bench::timing::median;
use hetlb_core::routing::Routing;
use hetlb_peer::{BalancerConfig, Speeds};
use hetlb_transport::mpi::Mpi;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::datatype::{Partition, PartitionMut};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::Instant;

/// The flags of the `--mode` form.
pub struct Flags {
    start: Start,
    items: u64,
    runs: usize,
    rule: String,
    routing: Routing,
    ramp: bool,
    idle_calls: usize,
    max_memory: u64,
    records: bool,
}

/// Copies of the items one rank may hold at once: the call's and the two-step's items, the
/// floor's start, its message and what it decodes (rank 0 holds every item in `hotspot`).
const COPIES: u128 = 5;

const USAGE: &str = "usage: rebalance_mpi [MOVED RUNS] | --mode hotspot|drift [--items N] [--runs R] \
[--drift SHARE] [--rule RULE] [--routing direct|paper] [--capacities ramp|equal] [--idle-calls N] \
[--storage items|records] [--max-memory GIB]";

impl Flags {
    /// Parses the flags (`args` without the program name).
    pub fn parse(args: &[String]) -> Result<Self, String> {
        let mut f = Flags {
            start: Start::Hotspot,
            items: 1_000_000,
            runs: 5,
            rule: "cwa".into(),
            routing: Routing::Direct,
            ramp: true,
            idle_calls: 200,
            max_memory: hetlb_core::limit::default_memory_limit(),
            records: false,
        };
        let mut drift = 0.05;
        let mut mode = "hotspot".to_string();
        let mut it = args.iter();
        while let Some(flag) = it.next() {
            let value = it
                .next()
                .ok_or_else(|| format!("{flag}: a value is missing; {USAGE}"))?;
            let number = |what: &str| -> Result<f64, String> {
                value
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| format!("{what}: {value} is not a non-negative number"))
            };
            match flag.as_str() {
                "--mode" => mode = value.clone(),
                "--items" => f.items = number("--items")? as u64,
                "--runs" => f.runs = (number("--runs")? as usize).max(1),
                "--drift" => drift = number("--drift")?.min(1.0),
                "--rule" => f.rule = value.clone(),
                "--idle-calls" => f.idle_calls = (number("--idle-calls")? as usize).max(1),
                "--max-memory" => {
                    f.max_memory = hetlb_core::limit::gib_to_bytes(number("--max-memory")?)
                }
                "--routing" => {
                    f.routing = match value.as_str() {
                        "direct" => Routing::Direct,
                        "paper" => Routing::Paper,
                        _ => return Err(format!("--routing: {value} is not direct or paper")),
                    }
                }
                "--storage" => {
                    f.records = match value.as_str() {
                        "items" => false,
                        "records" => true,
                        _ => return Err(format!("--storage: {value} is not items or records")),
                    }
                }
                "--capacities" => {
                    f.ramp = match value.as_str() {
                        "ramp" => true,
                        "equal" => false,
                        _ => return Err(format!("--capacities: {value} is not ramp or equal")),
                    }
                }
                _ => return Err(format!("{flag}: not a flag; {USAGE}")),
            }
        }
        f.start = match mode.as_str() {
            "hotspot" => Start::Hotspot,
            "drift" => Start::Drift { share: drift },
            _ => return Err(format!("--mode: {mode} is not hotspot or drift")),
        };
        // Every rank parses the same flags, so every rank refuses alike, before allocating.
        hetlb_core::limit::check_memory(
            "--items: the items of one rank",
            u128::from(f.items) * 64 * COPIES,
            u128::from(f.max_memory),
            "--max-memory GIB",
        )
        .map_err(|e| e.to_string())?;
        Ok(f)
    }
}

/// Runs the `--mode` form and prints rank 0's lines.
pub fn run(mpi: &Mpi<'_>, world: &SimpleCommunicator, f: &Flags) -> Result<(), String> {
    if f.records {
        run_with::<RecordBytes>(mpi, world, f)
    } else {
        run_with::<Vec<Item64>>(mpi, world, f)
    }
}

/// The `--mode` form with the items held as `H` holds them.
fn run_with<H: Held>(mpi: &Mpi<'_>, world: &SimpleCommunicator, f: &Flags) -> Result<(), String> {
    let (rank, size) = (world.rank() as usize, world.size() as usize);
    let caps: Vec<f64> = (0..size)
        .map(|r| if f.ramp { (r + 1) as f64 } else { 1.0 })
        .collect();
    let mut config = BalancerConfig::new(&f.rule)
        .map_err(|e| e.to_string())?
        .routing(f.routing);
    if f.ramp {
        config = config.speeds(Speeds::Fixed(caps.clone()));
    }
    // The fences around each timing are MPI's own barrier: the call and its floor are then
    // closed alike, whatever hetlb's transport takes to notice a peer.
    let mut fence = || world.barrier();
    let mut b = held::balancer::<H>(mpi, config)?;
    let start = || items(f.start, rank, f.items, &caps);
    let expected = (f.items, (0..f.items).map(u128::from).sum::<u128>());
    let mut t = Timings::default();
    for _ in 0..f.runs {
        // The one call.
        let mut mine = H::from_items(start());
        fence();
        let clock = Instant::now();
        let report = mine.rebalance(&mut b).map_err(|e| e.to_string())?;
        fence();
        t.call.push(clock.elapsed().as_secs_f64());
        check(world, &mine, expected)?;
        t.moved = hetlb_core::routing::minimum_units(&report.loads_before, &report.loads_after);
        // The floor: the fewest records to the same loads.
        t.floor.push(floor(
            world,
            rank,
            start(),
            &report.loads_before,
            &report.loads_after,
            &mut fence,
        )?);
        // The two-step form from the same start.
        let mut mine2 = H::from_items(start());
        fence();
        let clock = Instant::now();
        mine2.two_step(&mut b).map_err(|e| e.to_string())?;
        fence();
        t.two_step.push(clock.elapsed().as_secs_f64());
        check(world, &mine2, expected)?;
        // Idle: the balanced items again; each call timed on its own.
        fence();
        for _ in 0..f.idle_calls {
            let clock = Instant::now();
            mine.rebalance(&mut b).map_err(|e| e.to_string())?;
            t.idle.push(clock.elapsed().as_secs_f64());
        }
        fence();
        for _ in 0..f.idle_calls {
            let clock = Instant::now();
            mine.two_step(&mut b).map_err(|e| e.to_string())?;
            t.idle_two_step.push(clock.elapsed().as_secs_f64());
        }
        fence();
        let mut total = 0u64;
        for _ in 0..f.idle_calls {
            let clock = Instant::now();
            world.all_reduce_into(&(rank as u64), &mut total, SystemOperation::sum());
            t.reduce.push(clock.elapsed().as_secs_f64());
        }
        fence();
    }
    if rank == 0 {
        t.print(f, size)
            .map_err(|e| format!("writing the results: {e}"))?;
    }
    Ok(())
}

#[derive(Default)]
struct Timings {
    call: Vec<f64>,
    floor: Vec<f64>,
    two_step: Vec<f64>,
    idle: Vec<f64>,
    idle_two_step: Vec<f64>,
    reduce: Vec<f64>,
    moved: u128,
}

impl Timings {
    fn print(&self, f: &Flags, size: usize) -> std::io::Result<()> {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let m = |v: &Vec<f64>| median(v);
        let start = match f.start {
            Start::Hotspot => "hotspot (every item on rank 0)".to_string(),
            Start::Drift { share } => format!(
                "drift ({:.0}% of each rank's items to the next)",
                share * 100.0
            ),
        };
        writeln!(
            out,
            "{size} ranks, {start}, {} {} of 64 B, capacities {}, rule {}, routing {}; medians of {} runs, interleaved:",
            f.items,
            if f.records { "records" } else { "items" },
            if f.ramp {
                format!("1..{size}")
            } else {
                "equal".into()
            },
            f.rule,
            f.routing.name(),
            f.runs
        )?;
        writeln!(
            out,
            "  the call: {:.2} ms; MPI_Alltoallv of the fewest records ({} of 64 B, each once, decoded): {:.2} ms; ratio {:.2}",
            m(&self.call) * 1e3,
            self.moved,
            m(&self.floor) * 1e3,
            m(&self.call) / m(&self.floor)
        )?;
        writeln!(
            out,
            "  two-step (plan + migrate): {:.2} ms; ratio to the call {:.2}",
            m(&self.two_step) * 1e3,
            m(&self.two_step) / m(&self.call)
        )?;
        // Rank 0's calls, each timed: the median call, and the mean (which a slow tail
        // raises: on an oversubscribed machine a whole loop may run slow when the ranks'
        // threads share a core).
        let mean = |v: &Vec<f64>| v.iter().sum::<f64>() / v.len().max(1) as f64;
        writeln!(
            out,
            "  idle call: {:.2} µs; idle two-step: {:.2} µs; MPI_Allreduce of a u64: {:.2} µs; ratios {:.2} and {:.2} (medians of {} calls each; means {:.2}, {:.2} and {:.2} µs)",
            m(&self.idle) * 1e6,
            m(&self.idle_two_step) * 1e6,
            m(&self.reduce) * 1e6,
            m(&self.idle) / m(&self.reduce),
            m(&self.idle_two_step) / m(&self.reduce),
            self.idle.len(),
            mean(&self.idle) * 1e6,
            mean(&self.idle_two_step) * 1e6,
            mean(&self.reduce) * 1e6,
        )?;
        out.flush()
    }
}

/// Every id held exactly once: the count and the sum of ids over the ranks.
fn check<H: Held>(
    world: &SimpleCommunicator,
    mine: &H,
    (n, sum): (u64, u128),
) -> Result<(), String> {
    let local = mine.count_and_id_sum();
    let mut total = [0u64; 2];
    world.all_reduce_into(&local[..], &mut total[..], SystemOperation::sum());
    if u128::from(total[0]) != u128::from(n) || u128::from(total[1]) != sum % (1u128 << 64) {
        return Err(format!(
            "items not held exactly once: {} held, id sum {} (expected {n}, {sum})",
            total[0], total[1]
        ));
    }
    Ok(())
}

/// Seconds of the floor: this rank's part of the fewest records from `before` to `after`,
/// sent by `MPI_Alltoallv` from the end of `mine` and decoded onto its end (the
/// application's vector, as the call leaves the items), fenced.
fn floor(
    world: &SimpleCommunicator,
    rank: usize,
    mut mine: Vec<Item64>,
    before: &[u64],
    after: &[u64],
    fence: &mut impl FnMut(),
) -> Result<f64, String> {
    let size = before.len();
    let (sends, receives) = floor_exchange(rank, before, after)?;
    let mut send_counts = vec![0i32; size];
    let mut recv_counts = vec![0i32; size];
    let bytes_of = |records: u64| {
        i32::try_from(records * 64).map_err(|_| "over 2 GiB to one rank".to_string())
    };
    for &(to, n) in &sends {
        send_counts[to] = bytes_of(n)?;
    }
    for &(from, n) in &receives {
        recv_counts[from] = bytes_of(n)?;
    }
    let (sd, rd) = (displacements(&send_counts), displacements(&recv_counts));
    let out_records: usize = sends.iter().map(|s| s.1 as usize).sum();
    let in_bytes: usize = recv_counts.iter().map(|&c| c as usize).sum();
    // Never an empty buffer (Open MPI may take its dangling address for MPI_IN_PLACE).
    let mut outbox = vec![0u8; (out_records * 64).max(1)];
    let mut inbox = vec![0u8; in_bytes.max(1)];
    // Both buffers written once before the clock, as an application's reused buffers are:
    // memory the allocator maps afresh (which depends on what the calls before left) would
    // otherwise put page faults in some floors and not in others.
    outbox.fill(1);
    inbox.fill(1);
    fence();
    let clock = Instant::now();
    // Each record copied once into the message, in place of the application's packing.
    for (slot, item) in outbox
        .chunks_exact_mut(64)
        .zip(mine[mine.len() - out_records..].iter())
    {
        encode_record(item, slot);
    }
    {
        let send = Partition::new(&outbox[..], &send_counts[..], &sd[..]);
        let mut recv = PartitionMut::new(&mut inbox[..], &recv_counts[..], &rd[..]);
        world.all_to_all_varcount_into(&send, &mut recv);
    }
    mine.truncate(mine.len() - out_records);
    append_records(&inbox[..in_bytes], &mut mine);
    fence();
    let seconds = clock.elapsed().as_secs_f64();
    std::hint::black_box(mine);
    Ok(seconds)
}
