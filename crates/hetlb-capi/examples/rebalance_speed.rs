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
//! * the two-step form, `hetlb_plan_create` + `hetlb_migrate` with size, pack and unpack
//!   callbacks (the items in a `Vec` of records, the exported ones removed afterwards, as an
//!   application does),
//!
//! in turn, and prints the medians and the ratios. Each call is checked: every id held
//! exactly once afterwards. Then, from equal shares (already balanced), it times idle calls
//! one by one (`IDLE` of each, default 200): `hetlb_rebalance`, the two-step form, and an
//! `MPI_Allreduce` of one `u64` beside them; it prints each rank's median, the slowest
//! rank's, and the ratios to the all-reduce.
//!
//! ```sh
//! cargo build --release -p hetlb-capi --features mpi --example rebalance_speed
//! mpiexec -n 8 target/release/examples/rebalance_speed 1000000 7     # RECORDS TRIALS [IDLE]
//! ```
#![allow(unsafe_code)]

use hetlb::balancer::{hetlb_balancer, hetlb_balancer_create, hetlb_balancer_free};
use hetlb::records::hetlb_rebalance;
use hetlb::two_step::{
    hetlb_migrate, hetlb_plan, hetlb_plan_create, hetlb_plan_exports, hetlb_plan_free,
    hetlb_plan_imports,
};
use hetlb_peer::{Balancer, BalancerConfig, Bytes, Item, Records};
use hetlb_transport::mpi::Mpi;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::raw::AsRaw;
use mpi::topology::Communicator;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, c_int, c_void};
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

/// The records of `ids` in a fresh `malloc`'ed array (at least one byte), as a C
/// application holds them; `hetlb_rebalance` may `realloc` it, the caller `free`s it.
fn malloc_records(ids: &std::ops::Range<u64>) -> *mut c_void {
    let n = ids.clone().count();
    // SAFETY: a fresh allocation of n records (at least one byte), filled before use.
    let items: *mut c_void = unsafe { libc::malloc((n * SIZE).max(1)) };
    assert!(!items.is_null(), "malloc of {n} records");
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
    items
}

/// Seconds of one `hetlb_rebalance` of this rank's records in a `malloc`'ed array, checked.
fn c_call(
    c: *mut hetlb_balancer,
    ids: &std::ops::Range<u64>,
    check: &dyn Fn(u64, u64, bool) -> f64,
) -> f64 {
    let n = ids.clone().count();
    let mut items = malloc_records(ids);
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

/// Panics with the library's message unless `rc` is 0.
fn ok(rc: c_int, what: &str) {
    if rc != 0 {
        // SAFETY: the thread's message.
        let m = unsafe { CStr::from_ptr(hetlb::hetlb_last_error()) };
        panic!("{what}: {}", m.to_string_lossy());
    }
}

/// The application's side of a two-step call: its records (those that arrive are appended;
/// the exported ones are removed once the migrate has returned).
struct App {
    held: Vec<[u8; SIZE]>,
}

unsafe extern "C" fn size_cb(_i: usize, _ctx: *mut c_void) -> usize {
    SIZE
}

unsafe extern "C" fn pack_cb(i: usize, buf: *mut c_void, size: usize, ctx: *mut c_void) -> c_int {
    // SAFETY: `ctx` is the `App` of the call; `buf` holds `size` = SIZE bytes.
    unsafe {
        let app = &*ctx.cast::<App>();
        std::ptr::copy_nonoverlapping(app.held[i].as_ptr(), buf.cast::<u8>(), size);
    }
    0
}

unsafe extern "C" fn unpack_cb(
    _from: c_int,
    buf: *const c_void,
    size: usize,
    ctx: *mut c_void,
) -> c_int {
    if size != SIZE {
        return 1;
    }
    // SAFETY: `ctx` is the `App` of the call; `buf` holds SIZE bytes.
    unsafe {
        let app = &mut *ctx.cast::<App>();
        let mut r = [0u8; SIZE];
        std::ptr::copy_nonoverlapping(buf.cast::<u8>(), r.as_mut_ptr(), SIZE);
        app.held.push(r);
    }
    0
}

/// One two-step call (plan, migrate, then the exported records removed and the arrived ones
/// appended, as an application does); returns the seconds of the plan and of the migrate.
fn two_step(c: *mut hetlb_balancer, app: &mut App) -> [f64; 2] {
    let t = Instant::now();
    let mut p: *mut hetlb_plan = std::ptr::null_mut();
    // SAFETY: a live balancer; no loads (one unit each).
    ok(
        unsafe { hetlb_plan_create(c, app.held.len(), std::ptr::null(), &mut p) },
        "hetlb_plan_create",
    );
    let (mut n, mut idx, mut dest) = (0usize, std::ptr::null(), std::ptr::null());
    // SAFETY: a live plan.
    ok(
        unsafe { hetlb_plan_exports(p, &mut n, &mut idx, &mut dest) },
        "hetlb_plan_exports",
    );
    let planned = t.elapsed().as_secs_f64();
    let (mut imports, mut from, mut ranks) = (0usize, std::ptr::null(), 0);
    // SAFETY: a live plan.
    ok(
        unsafe { hetlb_plan_imports(p, &mut imports, &mut from, &mut ranks) },
        "hetlb_plan_imports",
    );
    // Room for what arrives, made once.
    app.held.reserve(imports);
    let own = app.held.len();
    let ctx: *mut App = app;
    // SAFETY: a live balancer and plan; the callbacks read and write `app` through `ctx`.
    let rc = unsafe {
        hetlb_migrate(
            c,
            p,
            Some(size_cb),
            Some(pack_cb),
            Some(unpack_cb),
            ctx.cast(),
        )
    };
    ok(rc, "hetlb_migrate");
    let migrated = t.elapsed().as_secs_f64() - planned;
    if n > 0 {
        // SAFETY: the plan's `n` export indices, alive until the plan is freed.
        let gone = unsafe { std::slice::from_raw_parts(idx, n) };
        let mut leaving = vec![false; own];
        for &i in gone {
            leaving[i] = true;
        }
        let mut k = 0;
        app.held.retain(|_| {
            k += 1;
            k > own || !leaving[k - 1]
        });
    }
    // SAFETY: made above, freed once.
    unsafe { hetlb_plan_free(p) };
    [planned, migrated]
}

/// Seconds of one two-step call of this rank's records, checked; and of its plan and its
/// migrate.
fn two_step_call(
    c: *mut hetlb_balancer,
    ids: &std::ops::Range<u64>,
    check: &dyn Fn(u64, u64, bool) -> f64,
) -> [f64; 3] {
    let mut app = App {
        held: ids.clone().map(record).collect(),
    };
    check(0, 0, false);
    let t = Instant::now();
    let [planned, migrated] = two_step(c, &mut app);
    let secs = t.elapsed().as_secs_f64();
    let id_sum = app
        .held
        .iter()
        .map(|r| u64::from_ne_bytes(r[..8].try_into().expect("8 bytes")))
        .sum();
    check(app.held.len() as u64, id_sum, true);
    [secs, planned, migrated]
}

/// Each call of `calls` idle ones timed on its own on this rank: `(C call, two-step,
/// MPI_Allreduce)` seconds, interleaved.
fn idle_calls(
    c: *mut hetlb_balancer,
    world: &mpi::topology::SimpleCommunicator,
    share: std::ops::Range<u64>,
    calls: usize,
) -> [Vec<f64>; 3] {
    let n = share.clone().count();
    let mut items = malloc_records(&share);
    let mut app = App {
        held: share.map(record).collect(),
    };
    let mut times: [Vec<f64>; 3] = Default::default();
    world.barrier();
    for k in 0..calls {
        for which in (0..3).map(|w| (w + k) % 3) {
            let t = Instant::now();
            match which {
                0 => {
                    let mut count = n;
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
                    ok(rc, "hetlb_rebalance (idle)");
                    assert_eq!(count, n, "an idle call moved records");
                }
                1 => {
                    let _ = two_step(c, &mut app);
                    assert_eq!(app.held.len(), n, "an idle two-step moved records");
                }
                _ => {
                    let mut sum = 0u64;
                    world.all_reduce_into(&(n as u64), &mut sum, SystemOperation::sum());
                }
            }
            times[which].push(t.elapsed().as_secs_f64());
        }
    }
    // SAFETY: from malloc/realloc.
    unsafe { libc::free(items) };
    times
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The most records timed: each copy of them is 64 bytes a record, and a run holds several.
const MAX_RECORDS: u64 = 1 << 27;

/// `RECORDS TRIALS IDLE`, checked: the error names the argument.
fn arguments() -> Result<(u64, usize, usize), String> {
    let mut args = std::env::args().skip(1);
    let mut next = |name: &str, default: u64, max: u64| -> Result<u64, String> {
        let Some(a) = args.next() else {
            return Ok(default);
        };
        match a.parse::<u64>() {
            Ok(v) if (1..=max).contains(&v) => Ok(v),
            _ => Err(format!(
                "{name}: '{a}' is not a whole number from 1 to {max}"
            )),
        }
    };
    let total = next("RECORDS", 1_000_000, MAX_RECORDS)?;
    let trials = next("TRIALS", 7, 10_000)? as usize;
    let idle = next("IDLE", 200, 1_000_000)? as usize;
    Ok((total, trials, idle))
}

fn main() -> std::process::ExitCode {
    let (total, trials, idle) = match arguments() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("error: {e}");
            return std::process::ExitCode::from(2);
        }
    };
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
    let (mut t_two, mut t_plan, mut t_migrate) = (Vec::new(), Vec::new(), Vec::new());
    for trial in 0..trials {
        // The four calls in turn, starting with a different one each trial.
        for which in (0..4).map(|k| (k + trial) % 4) {
            match which {
                0 => t_c.push(slowest(c_call(c, &ids, &check))),
                1 => t_bytes.push(slowest(records_call(&mut bytes_balancer, &ids, &check))),
                2 => t_items.push(slowest(items_call(&mut item_balancer, &ids, &check))),
                _ => {
                    let [secs, planned, migrated] = two_step_call(c, &ids, &check);
                    t_two.push(slowest(secs));
                    t_plan.push(slowest(planned));
                    t_migrate.push(slowest(migrated));
                }
            }
        }
    }
    // Equal shares: every call is idle.
    let per_rank = total / size;
    let share = rank * per_rank..(rank + 1) * per_rank;
    let [mut i_c, mut i_two, mut i_reduce] = idle_calls(c, &world, share, idle);
    let idle_medians = [median(&mut i_c), median(&mut i_two), median(&mut i_reduce)];
    let mut slowest_idle = [0.0f64; 3];
    world.all_reduce_into(
        &idle_medians[..],
        &mut slowest_idle[..],
        SystemOperation::max(),
    );
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
        let mt = median(&mut t_two);
        println!(
            "  two-step (hetlb_plan_create + hetlb_migrate) {:9.1} ms   two-step / C call: {:.2}x",
            mt * 1e3,
            mt / mc
        );
        println!(
            "    of which hetlb_plan_create {:9.1} ms, hetlb_migrate {:9.1} ms (slowest rank's)",
            median(&mut t_plan) * 1e3,
            median(&mut t_migrate) * 1e3
        );
        let [ic, it, ir] = slowest_idle;
        println!(
            "idle calls ({per_rank} records on every rank, {idle} calls each, median of the slowest rank):"
        );
        println!(
            "  hetlb_rebalance {:9.1} us   two-step {:9.1} us   MPI_Allreduce {:9.1} us",
            ic * 1e6,
            it * 1e6,
            ir * 1e6
        );
        println!(
            "  idle C call / all-reduce: {:.2}x   idle two-step / all-reduce: {:.2}x",
            ic / ir,
            it / ir
        );
    }
    std::process::ExitCode::SUCCESS
}
