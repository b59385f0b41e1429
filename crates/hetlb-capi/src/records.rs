//! `hetlb_rebalance` and `hetlb_resolve`: the application's records in a `malloc`'ed array,
//! moved as plain bytes by the peer protocol (`hetlb_peer::Records`).
#![allow(unsafe_code)]

use crate::balancer::{RecordsBalancer, hetlb_balancer, peer_error, refuse};
use crate::error::{CapiError, guard};
use crate::malloc_buffer::MallocBuffer;
use hetlb_peer::Records;
use std::ffi::{c_int, c_void};
use std::time::Instant;

/// What `hetlb_rebalance` reports (when its `report` argument is not NULL), filled on
/// success.
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct hetlb_report {
    /// Max/mean of the ranks' loads (relative to their capacities) before the call.
    pub imbalance_before: f64,
    /// The same after the call.
    pub imbalance_after: f64,
    /// Records this rank sent (forwarded ones included).
    pub items_sent: u64,
    /// Records this rank received.
    pub items_received: u64,
    /// Bytes this rank sent.
    pub bytes_sent: u64,
    /// Seconds the call took on this rank.
    pub seconds: f64,
    /// How scattered the ranks' regions were before the call, with the option `coords`: the
    /// worst rank's RMS distance of its records from their centroid over that of all records
    /// from theirs (1: as scattered as a random assignment; NaN without positions).
    pub spread_before: f64,
    /// The same after the call.
    pub spread_after: f64,
    /// 1 when the ranks checked their loads at this call; 0 when the trigger `auto` skipped
    /// it without a message (its `check_budget`): nothing moved and the imbalance fields
    /// are NaN.
    pub checked: i32,
    /// 1 when the trigger held the move back (the predicted gain did not exceed the cost ×
    /// margin): nothing moved.
    pub held_back: i32,
}

/// A record's load, from the application: `load_of(record, ctx)`.
#[allow(non_camel_case_types)]
pub type hetlb_load_fn = Option<unsafe extern "C" fn(item: *const c_void, ctx: *mut c_void) -> u64>;

/// The arguments of `hetlb_rebalance` and `hetlb_resolve`, checked.
struct Args<'a> {
    b: &'a mut hetlb_balancer,
    items: *mut *mut c_void,
    count: *mut usize,
    buffer: MallocBuffer,
    item_size: usize,
}

/// Checks the pointers and sizes; on success the buffer wraps `*items`. A rank whose own
/// arguments are wrong refuses the call, so that the others learn it at once (as
/// `HETLB_ERR_PEER` naming this rank) instead of waiting for it.
///
/// # Safety
/// The contract of [`hetlb_rebalance`].
unsafe fn check<'a>(
    b: *mut hetlb_balancer,
    items: *mut *mut c_void,
    count: *mut usize,
    item_size: usize,
    id_offset: usize,
) -> Result<Args<'a>, CapiError> {
    // SAFETY: the caller's contract.
    let b = unsafe { b.as_mut() }.ok_or(CapiError::Null("b"))?;
    // SAFETY: the caller's contract.
    let layout = unsafe { array_of(items, count, item_size, id_offset, b.doubt_size) };
    let (ptr, bytes) = match layout {
        Ok(layout) => layout,
        Err(e) => return Err(refuse(&mut b.records, e)),
    };
    Ok(Args {
        b,
        items,
        count,
        // SAFETY: `*items` is NULL with no records, or a malloc'ed array of `n` records.
        buffer: unsafe { MallocBuffer::new(ptr.cast(), bytes) },
        item_size,
    })
}

/// The array `*items` of `*count` records: its address and length in bytes.
///
/// # Safety
/// The contract of [`hetlb_rebalance`].
unsafe fn array_of(
    items: *mut *mut c_void,
    count: *mut usize,
    item_size: usize,
    id_offset: usize,
    doubt_size: Option<usize>,
) -> Result<(*mut c_void, usize), CapiError> {
    if items.is_null() {
        return Err(CapiError::Null("items"));
    }
    if count.is_null() {
        return Err(CapiError::Null("count"));
    }
    // SAFETY: both point to readable values (the caller's contract).
    let (ptr, n) = unsafe { (*items, *count) };
    if item_size == 0 {
        return Err(CapiError::Invalid(
            "item_size: records must have at least one byte".into(),
        ));
    }
    if id_offset.checked_add(8).is_none_or(|end| end > item_size) {
        return Err(CapiError::Invalid(format!(
            "id_offset: a uint64_t id at byte {id_offset} does not fit in records of \
             {item_size} bytes (id_offset + 8 must be at most item_size)"
        )));
    }
    if ptr.is_null() && n > 0 {
        return Err(CapiError::Null("*items (with *count > 0)"));
    }
    let bytes = n
        .checked_mul(item_size)
        .filter(|&bytes| isize::try_from(bytes).is_ok())
        .filter(|&bytes| (ptr as usize).checked_add(bytes).is_some())
        .ok_or_else(|| {
            CapiError::Invalid(format!(
                "*count: {n} records of {item_size} bytes are more than an array can hold"
            ))
        })?;
    if let Some(size) = doubt_size
        && size != item_size
    {
        return Err(CapiError::Invalid(format!(
            "item_size: a call in doubt moved records of {size} bytes; settle it with \
             hetlb_resolve on those records first"
        )));
    }
    Ok((ptr, bytes))
}

/// Hands the (possibly moved) array back to the caller: `*items`, `*count`.
///
/// # Safety
/// `items` and `count` are writable (checked non-NULL by [`check`]).
unsafe fn hand_back(
    items: *mut *mut c_void,
    count: *mut usize,
    buffer: MallocBuffer,
    size: usize,
) -> usize {
    let (ptr, len) = buffer.into_raw();
    // SAFETY: the caller's contract.
    unsafe {
        *items = ptr.cast();
        *count = len / size;
    }
    len / size
}

/// Rebalances this rank's records with the others' (collective: every rank of the balancer's
/// communicator calls it, with the same `item_size`).
///
/// The records are `*count` records of `item_size` bytes end to end in `*items`, an array from
/// `malloc` (NULL when `*count` is 0). Each carries a `uint64_t` id at byte `id_offset`
/// (native byte order; for checks, never routing). `load_of(record, ctx)` gives a record's
/// load (NULL: 1 per record) and must give it the same value on every rank. On return
/// `*items` may have been `realloc`'ed and `*count` changed: the records this rank kept, in
/// their order, then those it received. `report`, when not NULL, is filled on success.
///
/// Returns 0, or a negative `HETLB_ERR_*` code; on every return `*items`/`*count` describe
/// exactly the records this rank holds (after `HETLB_ERR_IN_DOUBT`, some are kept aside until
/// `hetlb_resolve`; the message says how many).
///
/// # Safety
/// `b` is a live balancer; `items` and `count` point to the array's pointer and count;
/// `load_of` is NULL or a function that reads one record; `report` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_rebalance(
    b: *mut hetlb_balancer,
    items: *mut *mut c_void,
    count: *mut usize,
    item_size: usize,
    id_offset: usize,
    load_of: hetlb_load_fn,
    ctx: *mut c_void,
    report: *mut hetlb_report,
) -> c_int {
    guard(|| {
        let start = Instant::now();
        // SAFETY: the caller's contract.
        let mut a = unsafe { check(b, items, count, item_size, id_offset)? };
        let result = with_records(&mut a, id_offset, load_of, ctx, |bal, r| bal.rebalance(r));
        // SAFETY: checked non-NULL.
        let held = unsafe { hand_back(a.items, a.count, a.buffer, a.item_size) };
        match result {
            Ok(r) => {
                a.b.doubt_size = None;
                if r.checked {
                    a.b.loads_after.clone_from(&r.loads_after);
                }
                // SAFETY: NULL or writable (the caller's contract).
                if let Some(out) = unsafe { report.as_mut() } {
                    *out = hetlb_report {
                        imbalance_before: r.imbalance_before,
                        imbalance_after: r.imbalance_after,
                        items_sent: r.items_sent,
                        items_received: r.items_received,
                        bytes_sent: r.bytes_sent,
                        seconds: start.elapsed().as_secs_f64(),
                        spread_before: r.spread_before.unwrap_or(f64::NAN),
                        spread_after: r.spread_after.unwrap_or(f64::NAN),
                        checked: i32::from(r.checked),
                        held_back: i32::from(r.held_back),
                    };
                }
                Ok(())
            }
            Err(e) => {
                a.b.doubt_size = a.b.records.in_doubt().then_some(item_size);
                Err(peer_error(&e, held, "records"))
            }
        }
    })
}

/// Settles a call that ended in `HETLB_ERR_IN_DOUBT`: waits (up to the timeout) for the
/// outcome and puts the records it gives this rank back into `*items` (`realloc`'ed as
/// needed). Does nothing when no call is in doubt. Same arguments as `hetlb_rebalance`.
///
/// Returns 0, `HETLB_ERR_IN_DOUBT` again when the outcome is still unknown, or another
/// negative code.
///
/// # Safety
/// As `hetlb_rebalance`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_resolve(
    b: *mut hetlb_balancer,
    items: *mut *mut c_void,
    count: *mut usize,
    item_size: usize,
    id_offset: usize,
    load_of: hetlb_load_fn,
    ctx: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let mut a = unsafe { check(b, items, count, item_size, id_offset)? };
        let result = with_records(&mut a, id_offset, load_of, ctx, |bal, r| bal.resolve(r));
        // SAFETY: checked non-NULL.
        let held = unsafe { hand_back(a.items, a.count, a.buffer, a.item_size) };
        a.b.doubt_size = a.b.records.in_doubt().then_some(item_size);
        result.map_err(|e| peer_error(&e, held, "records"))
    })
}

/// Runs `f` on the balancer and the records (weighed by `load_of` when given).
fn with_records<R>(
    a: &mut Args<'_>,
    id_offset: usize,
    load_of: hetlb_load_fn,
    ctx: *mut c_void,
    f: impl FnOnce(
        &mut RecordsBalancer,
        &mut Records<'_, MallocBuffer>,
    ) -> Result<R, hetlb_peer::PeerError>,
) -> Result<R, hetlb_peer::PeerError> {
    let weigh = move |r: &[u8]| match load_of {
        // SAFETY: `r` is one whole record; the function reads it (the caller's contract).
        Some(f) => unsafe { f(r.as_ptr().cast(), ctx) },
        None => 1,
    };
    let records = Records::new(&mut a.buffer, a.item_size, id_offset);
    let records = match (records, a.b.coords) {
        (Ok(r), Some(c)) => r.with_positions(c.offset, c.dim),
        (records, _) => records,
    };
    let records = match records {
        Ok(records) => records,
        Err(source) => {
            let e = hetlb_peer::PeerError::from(hetlb_peer::ConfigError::Records {
                argument: None,
                source,
            });
            // This rank's own layout is wrong: the others learn it at once.
            let _ = a.b.records.refuse(&e.to_string());
            return Err(e);
        }
    };
    let mut records = if load_of.is_some() {
        records.with_loads(&weigh)
    } else {
        records
    };
    f(&mut a.b.records, &mut records)
}
