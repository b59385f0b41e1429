//! The two-step form, for items that are not flat records (Zoltan's `LB_Partition` +
//! `Migrate`): `hetlb_plan_create` decides where each local item goes, without touching
//! the items; the application reads the export list (local index → destination rank) and
//! the import counts; `hetlb_migrate` moves the items through the application's size, pack
//! and unpack callbacks.
//!
//! **How the plan is made.** One gather and the rule, as in `hetlb_rebalance`
//! (`Balancer::rebalance_deferred`), then one of three ways, the same on every rank:
//!
//! * **Nothing moves** on any rank: the plan is empty, made without memory per item, and its
//!   migrate returns at once.
//! * **Unit items without positions and a direct migration** (no rank both sends and
//!   receives: `routing=direct`, the default, or any single-hop plan): each rank reads its
//!   exports from the migration — its transfers take its last items, the first transfer the
//!   very last ones, as the peer protocol does — and its imports from the transfers it
//!   receives. No proxy and no message beyond the gather.
//! * **Otherwise** (loads, positions, or a rule that forwards items through several ranks),
//!   each item is stood for by a proxy — a 24-byte record (local index, owner rank, load,
//!   then its coordinates) — that the peer protocol rebalances exactly as it would the item
//!   (same rule, same choice of items, same guarantees); where each proxy ends up is the
//!   plan, and one all-to-all tells every owner which of its items went where, so an item the
//!   rule forwards is sent straight to its last rank.
//!
//! **How the items move.** `hetlb_migrate` packs them, agrees with the other ranks in one
//! timed gather (same call, every pack done), sends each destination one byte string over
//! hetlb's endpoint (`Balancer::exchange_bytes`: waits as the one call waits, and names a
//! rank that stops), confirms with a barrier that every rank has what it expected, and only
//! then unpacks.
#![allow(unsafe_code)]

mod exchange;
mod migrate;
mod proxies;

pub use migrate::{hetlb_migrate, hetlb_pack_fn, hetlb_size_fn, hetlb_unpack_fn};

use crate::balancer::hetlb_balancer;
use crate::error::{CapiError, guard};
use crate::ffi_util::opt_slice;
use exchange::{by_rank, exchange};
use hetlb_peer::{PeerError, Records};
use proxies::{PROXY, Proxies};
use std::ffi::c_int;

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
    /// False when nothing moves on any rank (the same on every rank of the call).
    moves: bool,
}

/// The C error of a failed plan: no item has moved (only proxies did).
pub(super) fn plan_error(e: &PeerError) -> CapiError {
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
            Err(e) => return Err(crate::balancer::refuse(&mut b.plans, e)),
        };
        let plan = make_plan(b, n, loads, coords)?;
        // SAFETY: writable.
        unsafe { *out = Box::into_raw(Box::new(plan)) };
        Ok(())
    })
}

/// The items' coordinates, item after item, and how many each has.
pub(super) type Positions<'a> = (&'a [f64], usize);

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
    let mut proxies = Proxies::new(me, n, loads, coords);
    b.plans
        .rebalance_deferred(&mut proxies)
        .map_err(|e| plan_error(&e))?;
    b.plan_serial += 1;
    if let Some(direct) = proxies.direct.take() {
        return Ok(hetlb_plan {
            serial: b.plan_serial,
            moves: true,
            export_index: direct.exports.iter().map(|&(_, i)| i).collect(),
            export_rank: direct.exports.iter().map(|&(r, _)| r).collect(),
            import_counts: direct.import_counts,
        });
    }
    if !proxies.built {
        // Nothing moves on any rank: every rank knows it without another word.
        return Ok(hetlb_plan {
            serial: b.plan_serial,
            moves: false,
            export_index: Vec::new(),
            export_rank: Vec::new(),
            import_counts: vec![0; ranks],
        });
    }
    // Tell every owner which of its items this rank now holds.
    let proxy = proxies.size;
    let mut held_of: Vec<Vec<u8>> = vec![Vec::new(); ranks];
    let mut import_counts = vec![0usize; ranks];
    for r in proxies.buffer.chunks_exact(proxy) {
        let owner = usize::try_from(word(r, 1)).unwrap_or(usize::MAX);
        if owner >= ranks {
            return Err(CapiError::Internal(format!("a proxy of rank {owner}")));
        }
        if owner != me {
            import_counts[owner] += 1;
            held_of[owner].extend_from_slice(&r[..8]);
        }
    }
    let counts: Vec<usize> = held_of.iter().map(Vec::len).collect();
    let (told, told_counts) = exchange(&b.comm, &held_of.concat(), &counts)?;
    let mut exports: Vec<(c_int, usize)> = Vec::new();
    for (dest, bytes) in by_rank(&told, &told_counts) {
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
    Ok(hetlb_plan {
        serial: b.plan_serial,
        moves: true,
        export_index: exports.iter().map(|&(_, i)| i).collect(),
        export_rank: exports.iter().map(|&(r, _)| r).collect(),
        import_counts,
    })
}

pub(super) fn word(r: &[u8], k: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&r[8 * k..8 * k + 8]);
    u64::from_ne_bytes(w)
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
