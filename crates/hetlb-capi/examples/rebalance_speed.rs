//! `hetlb_rebalance` (the C interface) against the Rust API on the same records in the same
//! run: 64-byte records (a `u64` id and 56 bytes of payload), rank `r` starting with a share
//! proportional to `r + 1`, rebalanced with `dem`. Each trial times, after a barrier, the
//! slowest rank's call of
//!
//! * `hetlb_rebalance` on a `malloc`'ed array (the C path: the same protocol over the
//!   caller's memory),
//! * `Balancer::rebalance` of `Records` on a `Vec<u8>` (the Rust API on byte records),
//! * `Balancer::rebalance` on a `Vec` of a 64-byte serde struct (the Rust API on items),
//!
//! in turn, and prints the medians and the ratios. Each call is checked: every id held
//! exactly once afterwards.
//!
//! ```sh
//! cargo build --release -p hetlb-capi --features mpi --example rebalance_speed
//! mpiexec -n 8 target/release/examples/rebalance_speed 1000000 7
//! ```
#![allow(unsafe_code)]

use hetlb::balancer::{hetlb_balancer, hetlb_balancer_create, hetlb_balancer_free};
use hetlb::records::hetlb_rebalance;
use hetlb_peer::{Balancer, BalancerConfig, Bytes, Item, Records};
use hetlb_transport::mpi::Mpi;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, c_void};
use std::time::Instant;

const SIZE: usize = 64;

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Rec {
    id: u64,
    payload: [u64; 7],
}

impl Item for Rec {
    fn id(&self) -> u64 {
        self.id
    }
}

fn record(id: u64) -> [u8; SIZE] {
    let mut r = [0u8; SIZE];
    for (k, w) in r.chunks_exact_mut(8).enumerate() {
        w.copy_from_slice(&(id.wrapping_mul(k as u64 + 1)).to_ne_bytes());
    }
    r
}

/// Seconds of one `hetlb_rebalance` of this rank's records in a `malloc`'ed array, checked.
fn c_call(
    c: *mut hetlb_balancer,
    ids: &std::ops::Range<u64>,
    check: &dyn Fn(u64, u64, bool) -> f64,
) -> f64 {
    let n = ids.clone().count();
    // SAFETY: a fresh allocation of n records (at least one byte), filled before use.
    let mut items: *mut c_void = unsafe { libc::malloc((n * SIZE).max(1)) };
    assert!(!items.is_null());
    for (i, id) in ids.clone().enumerate() {
        // SAFETY: record i lies within the allocation.
        unsafe {
            std::ptr::copy_nonoverlapping(
                record(id).as_ptr(),
                items.cast::<u8>().add(i * SIZE),
                SIZE,
            )
        };
    }
    let mut count = n;
    check(0, 0, false);
    let t = Instant::now();
    // SAFETY: a live balancer and a malloc'ed array of `count` records.
    let rc = unsafe {
        hetlb_rebalance(
            c,
            &mut items,
            &mut count,
            SIZE,
            0,
            None,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        )
    };
    let secs = t.elapsed().as_secs_f64();
    if rc != 0 {
        // SAFETY: the thread's message.
        let m = unsafe { CStr::from_ptr(hetlb::hetlb_last_error()) };
        panic!("hetlb_rebalance: {}", m.to_string_lossy());
    }
    // SAFETY: `count` records in the (possibly moved) array.
    let held = unsafe { std::slice::from_raw_parts(items.cast::<u8>(), count * SIZE) };
    let id_sum = held
        .chunks_exact(SIZE)
        .map(|r| u64::from_ne_bytes(r[..8].try_into().expect("8 bytes")))
        .sum();
    check(count as u64, id_sum, true);
    // SAFETY: from malloc/realloc.
    unsafe { libc::free(items) };
    secs
}

/// Seconds of one `Balancer::rebalance` of the same records in a `Vec<u8>` of the same
/// capacity (no spare room, as the `malloc`'ed array), checked.
fn records_call<G: hetlb_transport::Group>(
    b: &mut Balancer<Bytes, G>,
    ids: &std::ops::Range<u64>,
    check: &dyn Fn(u64, u64, bool) -> f64,
) -> f64 {
    let mut buffer: Vec<u8> = Vec::with_capacity(ids.clone().count() * SIZE);
    for id in ids.clone() {
        buffer.extend_from_slice(&record(id));
    }
    check(0, 0, false);
    let t = Instant::now();
    let mut records = Records::new(&mut buffer, SIZE, 0).expect("records");
    b.rebalance(&mut records).expect("rebalance");
    let secs = t.elapsed().as_secs_f64();
    let id_sum = (0..records.len()).map(|i| records.id(i)).sum();
    check(records.len() as u64, id_sum, true);
    secs
}

/// Seconds of one `rebalance` of the same records as a `Vec<Rec>`, checked.
fn items_call<G: hetlb_transport::Group>(
    b: &mut Balancer<Rec, G>,
    ids: &std::ops::Range<u64>,
    check: &dyn Fn(u64, u64, bool) -> f64,
) -> f64 {
    let mut recs: Vec<Rec> = ids
        .clone()
        .map(|id| Rec {
            id,
            payload: std::array::from_fn(|k| id.wrapping_mul(k as u64 + 2)),
        })
        .collect();
    check(0, 0, false);
    let t = Instant::now();
    b.rebalance(&mut recs).expect("rebalance");
    let secs = t.elapsed().as_secs_f64();
    check(recs.len() as u64, recs.iter().map(|r| r.id).sum(), true);
    secs
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let total: u64 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("a record count"));
    let trials: usize = args.next().map_or(7, |a| a.parse().expect("a trial count"));
    let universe = mpi::initialize().expect("MPI initialises");
    let world = universe.world();
    let (rank, size) = (world.rank() as u64, world.size() as u64);
    // Rank r holds a share proportional to r + 1.
    let shares = size * (size + 1) / 2;
    let first: u64 = (0..rank).map(|r| total * (r + 1) / shares).sum();
    let mine = if rank + 1 == size {
        total - first
    } else {
        total * (rank + 1) / shares
    };
    let ids = first..first + mine;

    let mut c: *mut hetlb_balancer = std::ptr::null_mut();
    // SAFETY: MPI is initialised and outlives the balancer (freed below).
    let rc =
        unsafe { hetlb_balancer_create(world.as_raw(), c"dem".as_ptr(), std::ptr::null(), &mut c) };
    assert_eq!(rc, 0, "hetlb_balancer_create failed");
    let transport = Mpi::adopt(&universe, &world);
    let config = BalancerConfig::new("dem").expect("a rule");
    let mut bytes_balancer: Balancer<Bytes, _> =
        Balancer::new(&transport, config.clone()).expect("a balancer");
    let mut item_balancer: Balancer<Rec, _> =
        Balancer::new(&transport, config).expect("a balancer");

    let barrier = || world.barrier();
    let slowest = |secs: f64| {
        let mut max = 0.0f64;
        world.all_reduce_into(&secs, &mut max, SystemOperation::max());
        max
    };
    // check(n, id_sum, true) checks the records; check(_, _, false) is the barrier before a
    // timed call.
    let check = |n: u64, sum: u64, records: bool| {
        if !records {
            barrier();
            return 0.0;
        }
        let (mut all, mut all_sum) = (0u64, 0u64);
        world.all_reduce_into(&n, &mut all, SystemOperation::sum());
        world.all_reduce_into(&sum, &mut all_sum, SystemOperation::sum());
        assert_eq!(all, total, "records lost or doubled");
        assert_eq!(all_sum, total * (total - 1) / 2, "ids lost or doubled");
        0.0
    };
    let (mut t_c, mut t_bytes, mut t_items) = (Vec::new(), Vec::new(), Vec::new());
    for trial in 0..trials {
        // The three calls in turn, starting with a different one each trial.
        for which in (0..3).map(|k| (k + trial) % 3) {
            match which {
                0 => t_c.push(slowest(c_call(c, &ids, &check))),
                1 => t_bytes.push(slowest(records_call(&mut bytes_balancer, &ids, &check))),
                _ => t_items.push(slowest(items_call(&mut item_balancer, &ids, &check))),
            }
        }
    }
    // SAFETY: made above, freed once, before MPI is finalised.
    unsafe { hetlb_balancer_free(c) };
    if rank == 0 {
        let (mc, mb, mi) = (median(&mut t_c), median(&mut t_bytes), median(&mut t_items));
        println!(
            "{total} records x {SIZE} bytes on {size} ranks, dem, {trials} trials, medians of the slowest rank:"
        );
        println!(
            "  hetlb_rebalance (C, malloc'ed array)  {:9.1} ms",
            mc * 1e3
        );
        println!("  rebalance (Rust, Records in Vec<u8>) {:9.1} ms", mb * 1e3);
        println!(
            "  rebalance (Rust, Vec of a serde item) {:9.1} ms",
            mi * 1e3
        );
        println!(
            "  C / Rust records: {:.2}x   C / Rust items: {:.2}x",
            mc / mb,
            mc / mi
        );
    }
}
