//! The two-step form, for items that are not flat records (Zoltan's `LB_Partition` +
//! `Migrate`): `hetlb_plan_create` decides where each local item goes, without touching
//! the items; the application reads the export list (local index → destination rank) and
//! the import counts; `hetlb_migrate` moves the items through the application's size, pack
//! and unpack callbacks.
//!
//! **How the plan is made.** Each rank's items are stood for by proxies — 24-byte records
//! (local index, owner rank, load) — that the peer protocol rebalances exactly as it would the
//! items (same rule, same choice of items, same guarantees). Where each proxy ends up is the
//! plan: one all-to-all tells every owner which of its items went where. So the plan's
//! destination of an item is the rank where the rule puts it, even when the rule forwards it
//! through several ranks (the migrate sends it straight there).
#![allow(unsafe_code)]

use crate::balancer::hetlb_balancer;
use crate::collective::{Reduce, all_reduce_i32, all_reduce_u64, all_to_all_bytes, all_to_all_i32};
use crate::error::{CapiError, guard};
use crate::ffi_util::opt_slice;
use hetlb_peer::{PeerError, Records};
use mpi::topology::SimpleCommunicator;
use std::ffi::{c_int, c_void};

/// Bytes of one proxy: local index, owner rank, load (then the item's coordinates, if any).
const PROXY: usize = 24;

/// A plan made by `hetlb_plan_create`, opaque to C; freed by `hetlb_plan_free`.
#[allow(non_camel_case_types)]
#[derive(Debug)]
pub struct hetlb_plan {
    /// Which plan of which balancer (every rank's must match in `hetlb_migrate`).
    serial: u64,
    /// Local indices of the exported items, by destination then index.
    export_index: Vec<usize>,
    /// Their destination ranks.
    export_rank: Vec<c_int>,
    /// Items this rank receives from each rank.
    import_counts: Vec<usize>,
}

/// The C error of a failed plan: no item has moved (only proxies did).
fn plan_error(e: &PeerError) -> CapiError {
    let mut err = crate::balancer::peer_error(e, 0, "proxies");
    let text = format!("{e}; no item has moved (a plan moves only its proxies)");
    match &mut err {
        CapiError::Invalid(m)
        | CapiError::Mismatch(m)
        | CapiError::Plan(m)
        | CapiError::Peer(m)
        | CapiError::InDoubt(m)
        | CapiError::NoMem(m)
        | CapiError::Mpi(m) => *m = text,
        _ => {}
    }
    err
}

/// Decides where this rank's `n` items go (collective). `loads` gives each item's load (NULL:
/// 1 each). Nothing moves: read the plan with `hetlb_plan_exports` and `hetlb_plan_imports`,
/// then call `hetlb_migrate` (or not). Returns 0 and sets `*out`, or a negative code (`*out`
/// is then NULL).
///
/// # Safety
/// `b` is a live balancer; `loads` is NULL or points to `n` values; `out` is writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_plan_create(
    b: *mut hetlb_balancer,
    n: usize,
    loads: *const u64,
    out: *mut *mut hetlb_plan,
) -> c_int {
    // SAFETY: the caller's contract (no coordinates).
    unsafe { hetlb_plan_create_at(b, n, loads, std::ptr::null(), 0, out) }
}

/// `hetlb_plan_create` for items with positions: `coords` holds `dim` doubles (1 to 3) per
/// item, item after item (`coords[i*dim + k]`), and the plan keeps subdomains compact as
/// `hetlb_rebalance` does with the option `coords` (the items nearest the receiving rank's
/// region go; direct plans pair the nearest regions first). `coords` NULL (with `dim` 0) is
/// `hetlb_plan_create`. A position that is not finite is refused (`HETLB_ERR_PLAN`), and
/// every other rank's call fails at once naming this rank.
///
/// # Safety
/// As `hetlb_plan_create`; `coords` is NULL or points to `n * dim` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_plan_create_at(
    b: *mut hetlb_balancer,
    n: usize,
    loads: *const u64,
    coords: *const f64,
    dim: usize,
    out: *mut *mut hetlb_plan,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(CapiError::Null("out"));
        }
        // SAFETY: writable (the contract).
        unsafe { *out = std::ptr::null_mut() };
        // SAFETY: the contract.
        let b = unsafe { b.as_mut() }.ok_or(CapiError::Null("b"))?;
        // SAFETY: the contract.
        let args = unsafe { plan_arguments(n, loads, coords, dim) };
        let (loads, coords) = match args {
            Ok(args) => args,
            // This rank's own arguments are wrong: the others learn it at once.
            Err(e) => return Err(crate::records::refuse(&mut b.plans, e)),
        };
        let plan = make_plan(b, n, loads, coords)?;
        // SAFETY: writable.
        unsafe { *out = Box::into_raw(Box::new(plan)) };
        Ok(())
    })
}

/// The items' coordinates, item after item, and how many each has.
type Positions<'a> = (&'a [f64], usize);

/// The loads and the coordinates of a plan's items, checked.
///
/// # Safety
/// `loads` is NULL or points to `n` values; `coords` NULL or to `n * dim`.
unsafe fn plan_arguments<'a>(
    n: usize,
    loads: *const u64,
    coords: *const f64,
    dim: usize,
) -> Result<(Option<&'a [u64]>, Option<Positions<'a>>), CapiError> {
    // SAFETY: the contract.
    let loads = unsafe { opt_slice(loads, n, "loads") }?;
    if coords.is_null() {
        if dim != 0 {
            return Err(CapiError::Null("coords (with dim > 0)"));
        }
        return Ok((loads, None));
    }
    if !(1..=3).contains(&dim) {
        return Err(CapiError::Invalid(format!(
            "dim: {dim} coordinates per item (1, 2 or 3)"
        )));
    }
    let values = n
        .checked_mul(dim)
        .ok_or_else(|| CapiError::Invalid(format!("n: {n} items of {dim} coordinates overflow")))?;
    // SAFETY: the contract.
    let coords = unsafe { opt_slice(coords, values, "coords") }?;
    Ok((loads, coords.map(|c| (c, dim))))
}

fn make_plan(
    b: &mut hetlb_balancer,
    n: usize,
    loads: Option<&[u64]>,
    coords: Option<Positions<'_>>,
) -> Result<hetlb_plan, CapiError> {
    let (me, ranks) = (b.rank(), b.size());
    // A plan whose outcome was in doubt has no items to give back: settle it on an empty
    // buffer, whatever it gives.
    if b.plans.in_doubt() {
        let mut scratch: Vec<u8> = Vec::new();
        let mut r =
            Records::new(&mut scratch, PROXY, 0).map_err(|e| CapiError::Internal(e.to_string()))?;
        b.plans.resolve(&mut r).map_err(|e| plan_error(&e))?;
    }
    let dim = coords.map_or(0, |c| c.1);
    let proxy = PROXY + 8 * dim;
    let bytes = n
        .checked_mul(proxy)
        .filter(|&b| isize::try_from(b).is_ok())
        .ok_or_else(|| CapiError::Invalid(format!("n: {n} items overflow")))?;
    let mut proxies: Vec<u8> = Vec::new();
    proxies
        .try_reserve(bytes)
        .map_err(|e| CapiError::NoMem(format!("proxies of {n} items: {e}")))?;
    for i in 0..n {
        let load = loads.map_or(1, |l| l[i]);
        for w in [i as u64, me as u64, load] {
            proxies.extend_from_slice(&w.to_ne_bytes());
        }
        if let Some((c, dim)) = coords {
            for x in &c[i * dim..(i + 1) * dim] {
                proxies.extend_from_slice(&x.to_ne_bytes());
            }
        }
    }
    let weigh = |r: &[u8]| word(r, 2);
    let records =
        Records::new(&mut proxies, proxy, 0).map_err(|e| CapiError::Internal(e.to_string()))?;
    let records = if dim > 0 {
        records
            .with_positions(PROXY, dim)
            .map_err(|e| CapiError::Internal(e.to_string()))?
    } else {
        records
    };
    let mut records = if loads.is_some() {
        records.with_loads(&weigh)
    } else {
        records
    };
    b.plans
        .rebalance(&mut records)
        .map_err(|e| plan_error(&e))?;
    // Tell every owner which of its items this rank now holds.
    let mut held_of: Vec<Vec<u8>> = vec![Vec::new(); ranks];
    let mut import_counts = vec![0usize; ranks];
    for r in proxies.chunks_exact(proxy) {
        let owner = usize::try_from(word(r, 1)).unwrap_or(usize::MAX);
        if owner >= ranks {
            return Err(CapiError::Internal(format!("a proxy of rank {owner}")));
        }
        if owner != me {
            import_counts[owner] += 1;
            held_of[owner].extend_from_slice(&r[..8]);
        }
    }
    let told = exchange(&b.comm, held_of, 0)?;
    let mut exports: Vec<(c_int, usize)> = Vec::new();
    for (dest, bytes) in told.iter().enumerate() {
        for w in bytes.chunks_exact(8) {
            let index = usize::try_from(word(w, 0)).unwrap_or(usize::MAX);
            if index >= n {
                return Err(CapiError::Internal(format!(
                    "an export of item {index} of {n}"
                )));
            }
            exports.push((dest as c_int, index));
        }
    }
    exports.sort_unstable();
    b.plan_serial += 1;
    Ok(hetlb_plan {
        serial: b.plan_serial,
        export_index: exports.iter().map(|&(_, i)| i).collect(),
        export_rank: exports.iter().map(|&(r, _)| r).collect(),
        import_counts,
    })
}

fn word(r: &[u8], k: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&r[8 * k..8 * k + 8]);
    u64::from_ne_bytes(w)
}

/// All-to-all of byte strings (`out[r]` goes to rank `r`; the result's `[r]` came from rank
/// `r`). `status` is this rank's verdict so far (0: fine; otherwise an error code every rank
/// learns): the first step agrees on it, so that no rank waits for one that has stopped.
fn exchange(
    comm: &SimpleCommunicator,
    out: Vec<Vec<u8>>,
    status: i32,
) -> Result<Vec<Vec<u8>>, CapiError> {
    let fits = |x: usize| i32::try_from(x).is_ok();
    let total: usize = out.iter().map(Vec::len).sum();
    let mut mine = status;
    if mine == 0 && !fits(total) {
        mine = 2;
    }
    let worst = all_reduce_i32(comm, mine, Reduce::Max)?;
    match worst {
        0 => {}
        1 => {
            return Err(CapiError::Callback(
                "a size or pack callback failed on some rank; nothing moved".into(),
            ));
        }
        3 => {
            return Err(CapiError::Mismatch(
                "the ranks passed plans of different calls".into(),
            ));
        }
        _ => {
            return Err(CapiError::Invalid(
                "a rank would send 2 GiB or more in one exchange; nothing moved".into(),
            ));
        }
    }
    let send_counts: Vec<i32> = out.iter().map(|v| v.len() as i32).collect();
    let recv_counts = all_to_all_i32(comm, &send_counts)?;
    let received = recv_counts.iter().try_fold(0usize, |sum, &c| {
        usize::try_from(c).ok().map(|c| sum.saturating_add(c))
    });
    let verdict = i32::from(!received.is_some_and(fits));
    let any = all_reduce_i32(comm, verdict, Reduce::Max)?;
    if any != 0 {
        return Err(CapiError::Invalid(
            "a rank would receive 2 GiB or more in one exchange; nothing moved".into(),
        ));
    }
    let displs = |counts: &[i32]| -> Vec<i32> {
        counts
            .iter()
            .scan(0i32, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect()
    };
    let received = received.unwrap_or(0);
    let send: Vec<u8> = out.concat();
    let mut recv = vec![0u8; received];
    // Empty buffers (a rank that sends or receives nothing) go through the transport's buffer
    // function like the others: never a dangling address.
    all_to_all_bytes(
        comm,
        &send,
        &send_counts,
        &displs(&send_counts),
        &mut recv,
        &recv_counts,
        &displs(&recv_counts),
    )?;
    let mut result = Vec::with_capacity(out.len());
    let mut at = 0usize;
    for &c in &recv_counts {
        result.push(recv[at..at + c as usize].to_vec());
        at += c as usize;
    }
    Ok(result)
}

/// The plan's exports: `*n` items leave this rank; `(*local_index)[k]` goes to
/// `(*dest_rank)[k]` (sorted by destination, then index). The arrays belong to the plan and
/// live until `hetlb_plan_free`.
///
/// # Safety
/// `p` is a live plan; `n`, `local_index` and `dest_rank` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_plan_exports(
    p: *const hetlb_plan,
    n: *mut usize,
    local_index: *mut *const usize,
    dest_rank: *mut *const c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the contract.
        let p = unsafe { p.as_ref() }.ok_or(CapiError::Null("p"))?;
        if n.is_null() || local_index.is_null() || dest_rank.is_null() {
            return Err(CapiError::Null("n, local_index or dest_rank"));
        }
        // SAFETY: writable (the contract).
        unsafe {
            *n = p.export_index.len();
            *local_index = p.export_index.as_ptr();
            *dest_rank = p.export_rank.as_ptr();
        }
        Ok(())
    })
}

/// The plan's imports: `*n` items arrive in all; `(*from_rank)[r]` of them from rank `r`, for
/// the `*ranks` ranks of the communicator. The array belongs to the plan.
///
/// # Safety
/// `p` is a live plan; `n`, `from_rank` and `ranks` are writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_plan_imports(
    p: *const hetlb_plan,
    n: *mut usize,
    from_rank: *mut *const usize,
    ranks: *mut c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the contract.
        let p = unsafe { p.as_ref() }.ok_or(CapiError::Null("p"))?;
        if n.is_null() || from_rank.is_null() || ranks.is_null() {
            return Err(CapiError::Null("n, from_rank or ranks"));
        }
        // SAFETY: writable (the contract).
        unsafe {
            *n = p.import_counts.iter().sum();
            *from_rank = p.import_counts.as_ptr();
            *ranks = p.import_counts.len() as c_int;
        }
        Ok(())
    })
}

/// Frees a plan. NULL is ignored.
///
/// # Safety
/// `p` is NULL or a plan from `hetlb_plan_create`, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_plan_free(p: *mut hetlb_plan) {
    if !p.is_null() {
        // SAFETY: from Box::into_raw, freed once (the contract).
        drop(unsafe { Box::from_raw(p) });
    }
}

/// The size in bytes of exported item `local_index` once packed.
#[allow(non_camel_case_types)]
pub type hetlb_size_fn =
    Option<unsafe extern "C" fn(local_index: usize, ctx: *mut c_void) -> usize>;
/// Packs exported item `local_index` into `buf` (`size` bytes, as `size_of` said, with no
/// particular alignment: copy into it with `memcpy`); 0 on success.
#[allow(non_camel_case_types)]
pub type hetlb_pack_fn = Option<
    unsafe extern "C" fn(
        local_index: usize,
        buf: *mut c_void,
        size: usize,
        ctx: *mut c_void,
    ) -> c_int,
>;
/// Unpacks one item from `from_rank` (`size` bytes at `buf`, with no particular alignment:
/// copy it out with `memcpy`), adding it to the application's items; 0 on success.
#[allow(non_camel_case_types)]
pub type hetlb_unpack_fn = Option<
    unsafe extern "C" fn(
        from_rank: c_int,
        buf: *const c_void,
        size: usize,
        ctx: *mut c_void,
    ) -> c_int,
>;

/// Carries out plan `p` (collective, with every rank's plan of the same call): packs every
/// exported item with `size_of` and `pack`, sends them straight to their destinations, and
/// calls `unpack` for every item received (by source rank, then in the sender's export
/// order). The exported items stay in the application's hands: once this returns 0 they
/// belong to their destinations, and the application removes them (the export list names
/// them).
///
/// Returns 0; `HETLB_ERR_CALLBACK` when a `size_of` or `pack` on any rank failed (nothing
/// moved on any rank) or an `unpack` on this rank failed (the message says which items were
/// not unpacked); `HETLB_ERR_MISMATCH` when the ranks passed plans of different calls
/// (nothing moved); `HETLB_ERR_PEER` when a rank did not reach the call within the entry
/// timeout, or refused it for its own bad arguments (named; nothing moved).
///
/// # Safety
/// `b` and `p` are live; the callbacks are NULL or functions of the given signatures;
/// `ctx` is passed to them untouched.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_migrate(
    b: *mut hetlb_balancer,
    p: *const hetlb_plan,
    size_of: hetlb_size_fn,
    pack: hetlb_pack_fn,
    unpack: hetlb_unpack_fn,
    ctx: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the contract.
        let b = unsafe { b.as_mut() }.ok_or(CapiError::Null("b"))?;
        // SAFETY: the contract.
        let p = unsafe { p.as_ref() };
        let ranks = b.size();
        let checked = match (p, size_of, pack, unpack) {
            (None, ..) => Err(CapiError::Null("p")),
            (Some(_), None, _, _) | (Some(_), _, None, _) | (Some(_), _, _, None) => {
                Err(CapiError::Null("size_of, pack or unpack"))
            }
            (Some(p), Some(size_of), Some(pack), Some(unpack)) => {
                if p.import_counts.len() == ranks {
                    Ok((p, size_of, pack, unpack))
                } else {
                    Err(CapiError::Invalid(format!(
                        "the plan is for {} ranks, the balancer has {ranks}",
                        p.import_counts.len()
                    )))
                }
            }
        };
        let (p, size_of, pack, unpack) = match checked {
            Ok(args) => args,
            // This rank's own arguments are wrong: the others learn it at once.
            Err(e) => return Err(crate::records::refuse(&mut b.plans, e)),
        };
        // Every rank has reached the call (a rank that never does is named within the entry
        // timeout by every other, instead of leaving them in MPI's collectives for ever).
        b.plans.barrier().map_err(|e| plan_error(&e))?;
        // Every rank must pass the plan of the same call.
        let lo = all_reduce_u64(&b.comm, p.serial, Reduce::Min)?;
        let hi = all_reduce_u64(&b.comm, p.serial, Reduce::Max)?;
        // Pack: [size u64][bytes] per item, per destination.
        let mut out: Vec<Vec<u8>> = vec![Vec::new(); ranks];
        let mut status = if lo == hi { 0 } else { 3 };
        let mut failed = String::new();
        for (&i, &dest) in p.export_index.iter().zip(&p.export_rank) {
            if status != 0 {
                break;
            }
            // SAFETY: the application's callback.
            let size = unsafe { size_of(i, ctx) };
            let buf = &mut out[dest as usize];
            buf.extend_from_slice(&(size as u64).to_ne_bytes());
            let at = buf.len();
            if buf.try_reserve(size).is_err() {
                status = 2;
                break;
            }
            buf.resize(at + size, 0);
            // SAFETY: `size` writable bytes at `at`.
            let rc = unsafe { pack(i, buf[at..].as_mut_ptr().cast(), size, ctx) };
            if rc != 0 {
                status = 1;
                failed = format!("pack of local item {i} returned {rc}");
            }
        }
        let received = exchange(&b.comm, out, status).map_err(|e| match e {
            CapiError::Callback(m) if !failed.is_empty() => {
                CapiError::Callback(format!("{m} ({failed} on this rank)"))
            }
            e => e,
        })?;
        for (from, bytes) in received.iter().enumerate() {
            let mut at = 0usize;
            let mut k = 0usize;
            while at < bytes.len() {
                let size = usize::try_from(word(&bytes[at..at + 8], 0))
                    .map_err(|_| CapiError::Internal("a frame size".into()))?;
                at += 8;
                let item = &bytes[at..at + size];
                // SAFETY: `size` readable bytes; the application's callback.
                let rc = unsafe { unpack(from as c_int, item.as_ptr().cast(), size, ctx) };
                if rc != 0 {
                    return Err(CapiError::Callback(format!(
                        "unpack of item {k} from rank {from} returned {rc}; the items after it \
                         from rank {from} and from higher ranks were not unpacked"
                    )));
                }
                at += size;
                k += 1;
            }
            if k != p.import_counts[from] {
                return Err(CapiError::Internal(format!(
                    "{k} items arrived from rank {from}, the plan says {}",
                    p.import_counts[from]
                )));
            }
        }
        Ok(())
    })
}
