//! `hetlb_migrate`: the items packed by the application's callbacks, sent straight to their
//! destinations over hetlb's endpoint, and unpacked once every rank has what it expected.
#![allow(unsafe_code)]

use super::{hetlb_plan, plan_error, word};
use crate::balancer::hetlb_balancer;
use crate::error::{CapiError, guard};
use hetlb_peer::PeerError;
use std::ffi::{c_int, c_void};

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

/// The bytes packed for one destination rank.
type Part = (usize, Vec<u8>);

/// The application's callbacks that pack an exported item.
type Packer = (
    unsafe extern "C" fn(usize, *mut c_void) -> usize,
    unsafe extern "C" fn(usize, *mut c_void, usize, *mut c_void) -> c_int,
    *mut c_void,
);

/// Packs the plan's exports, `[size u64][bytes]` each in export order, into one byte string
/// per destination (the export list is sorted by destination; each string is reserved once,
/// from the sizes); `Err((status, why))` with the status every rank learns (1: a callback
/// failed; 2: the packed items do not fit in memory) when it cannot.
fn pack_exports(p: &hetlb_plan, (size_of, pack, ctx): Packer) -> Result<Vec<Part>, (i32, String)> {
    // SAFETY (both callbacks): the application's, with its context.
    let sizes: Vec<usize> = p
        .export_index
        .iter()
        .map(|&i| unsafe { size_of(i, ctx) })
        .collect();
    let mut parts = Vec::new();
    let mut first = 0;
    while first < sizes.len() {
        let dest = p.export_rank[first];
        let end = first
            + p.export_rank[first..]
                .iter()
                .take_while(|&&d| d == dest)
                .count();
        let too_large = || {
            (
                2,
                format!("the items packed for rank {dest} do not fit in memory"),
            )
        };
        let bytes = sizes[first..end]
            .iter()
            .try_fold(0usize, |t, &s| t.checked_add(s)?.checked_add(8))
            .filter(|&b| isize::try_from(b).is_ok())
            .ok_or_else(too_large)?;
        let mut part: Vec<u8> = Vec::new();
        part.try_reserve_exact(bytes).map_err(|_| too_large())?;
        for (&i, &size) in p.export_index[first..end].iter().zip(&sizes[first..end]) {
            part.extend_from_slice(&(size as u64).to_ne_bytes());
            let at = part.len();
            part.resize(at + size, 0);
            // SAFETY: `size` writable bytes at `at`.
            let rc = unsafe { pack(i, part[at..].as_mut_ptr().cast(), size, ctx) };
            if rc != 0 {
                return Err((1, format!("pack of local item {i} returned {rc}")));
            }
        }
        parts.push((dest as usize, part));
        first = end;
    }
    Ok(parts)
}

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
/// timeout, refused it for its own bad arguments, or stopped while the items travelled
/// (named; nothing is unpacked on any rank that returns the error, and the exports stay
/// with their senders; only a rank that stops in the final barrier can leave the others
/// divided).
///
/// The items travel over hetlb's endpoint, not MPI collectives: one byte string per
/// destination, waited for as `hetlb_rebalance` waits. When nothing moves on any rank (the
/// plan has no export and no import on every rank, as after a call of an already balanced
/// group), the newest plan returns 0 at once, without communicating, and `hetlb_plan_create`
/// made it for the price of one gather, without a proxy per item.
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
            Err(e) => return Err(crate::balancer::refuse(&mut b.plans, e)),
        };
        // The newest plan of this balancer, in which nothing moves on any rank: every rank's
        // plan of that call says so, and each returns without a word.
        if !p.moves && p.serial == b.plan_serial {
            return Ok(());
        }
        // Pack the exports, one byte string per destination.
        let (parts, status, failed) = match pack_exports(p, (size_of, pack, ctx)) {
            Ok(parts) => (parts, 0, String::new()),
            Err((code, why)) => (Vec::new(), code, why),
        };
        // One timed gather: every rank has reached the call (a rank that never does is named
        // within the entry timeout by every other), passes the plan of the same call, and
        // has packed its items.
        let peer = |e: &PeerError| crate::balancer::peer_error(e, 0, "items");
        let all = b
            .plans
            .all_gather_values(&[p.serial as f64, f64::from(status)])
            .map_err(|e| plan_error(&e))?;
        if all.iter().any(|v| v[0] != p.serial as f64) {
            return Err(CapiError::Mismatch(
                "the ranks passed plans of different calls; nothing moved".into(),
            ));
        }
        match all.iter().map(|v| v[1] as i32).max().unwrap_or(0) {
            0 => {}
            1 => {
                let on_this_rank = if failed.is_empty() {
                    String::new()
                } else {
                    format!(" ({failed} on this rank)")
                };
                return Err(CapiError::Callback(format!(
                    "a size or pack callback failed on some rank; nothing moved{on_this_rank}"
                )));
            }
            _ => {
                return Err(CapiError::Invalid(format!(
                    "a rank cannot hold the items it packed; nothing moved{}",
                    if failed.is_empty() {
                        String::new()
                    } else {
                        format!(" ({failed} on this rank)")
                    }
                )));
            }
        }
        // The items travel over hetlb's endpoint, straight to their destinations (timed:
        // a rank that stops is named); every rank then confirms it has what it expected
        // before any unpacks, so that a failure leaves every item with its sender.
        let from: Vec<usize> = (0..ranks).filter(|&r| p.import_counts[r] > 0).collect();
        let received = b.plans.exchange_bytes(parts, &from).map_err(|e| peer(&e))?;
        b.plans.barrier().map_err(|e| peer(&e))?;
        for (&from, bytes) in from.iter().zip(&received) {
            let mut at = 0usize;
            let mut k = 0usize;
            while at < bytes.len() {
                let frame = bytes
                    .get(at..at + 8)
                    .and_then(|w| usize::try_from(word(w, 0)).ok())
                    .filter(|&size| size <= bytes.len() - at - 8);
                let Some(size) = frame else {
                    return Err(CapiError::Internal(format!(
                        "a damaged frame from rank {from}"
                    )));
                };
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
