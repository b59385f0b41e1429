//! A balancer on the application's MPI communicator: `hetlb_balancer_create` (and its
//! Fortran form), `hetlb_record`, `hetlb_balancer_free`.
#![allow(unsafe_code)]

use crate::error::{CapiError, guard};
use crate::ffi_util::{opt_slice, opt_str, req_str};
use crate::options;
use hetlb_peer::{Balancer, Bytes, PeerError, Records};
use hetlb_transport::mpi::{Mpi, check, duplicate_raw};
// Open MPI's MPI_Fint is a macro, which bindgen cannot see: the shim's typedef is the same type
// (the header spells it MPI_Fint).
use mpi::ffi::{MPI_Comm, RSMPI_Fint};
use mpi::topology::SimpleCommunicator;
use std::ffi::{c_char, c_int};

/// One rank's balancer, opaque to C: made by `hetlb_balancer_create` on every rank of a
/// communicator, freed by `hetlb_balancer_free`.
#[allow(non_camel_case_types)]
pub struct hetlb_balancer {
    // Fields drop in this order: the balancers' endpoints before the transport they use,
    // the transport before MPI's own duplicate.
    /// Moves the application's records (`hetlb_rebalance`).
    pub(crate) records: Balancer<Bytes, Mpi<'static>>,
    /// Moves the proxies of the two-step form (`hetlb_plan_create`): its own epochs, so that
    /// a plan in doubt never mixes with the application's records.
    pub(crate) plans: Balancer<Bytes, Mpi<'static>>,
    /// The record size of the `records` call in doubt, if one is.
    pub(crate) doubt_size: Option<usize>,
    /// Plans made so far (the next plan's serial): every rank makes them in the same order.
    pub(crate) plan_serial: u64,
    /// Where each record of `hetlb_rebalance` keeps its position (option `coords`).
    pub(crate) coords: Option<options::Coords>,
    /// Every rank's load after the last `hetlb_rebalance` that checked the loads.
    pub(crate) loads_after: Vec<u64>,
    pub(crate) mpi: Mpi<'static>,
    /// hetlb's duplicate of the application's communicator for the two-step form's
    /// collectives (counts and payloads of `hetlb_migrate`).
    pub(crate) comm: SimpleCommunicator,
}

impl hetlb_balancer {
    /// This rank.
    pub(crate) fn rank(&self) -> usize {
        self.mpi.rank()
    }

    /// Ranks of the communicator.
    pub(crate) fn size(&self) -> usize {
        self.mpi.size()
    }
}

/// The C error for a failed collective, with what this rank holds now (`held` records in
/// the caller's array).
pub(crate) fn peer_error(e: &PeerError, held: usize, noun: &str) -> CapiError {
    let holding = match e {
        PeerError::InDoubt { items_aside, .. } | PeerError::Unresolved { items_aside, .. } => {
            format!(
                "this rank holds {held} {noun} in its array and {items_aside} more kept aside \
                 until hetlb_resolve settles the call"
            )
        }
        _ => format!("this rank holds the {held} {noun} it held before the call"),
    };
    let message = format!("{e}; {holding}");
    match e {
        PeerError::Config(_) => CapiError::Invalid(message),
        PeerError::Mismatch(_) => CapiError::Mismatch(message),
        PeerError::Plan(_) => CapiError::Plan(message),
        PeerError::InDoubt { .. } | PeerError::Unresolved { .. } => CapiError::InDoubt(message),
        PeerError::Storage(_) => CapiError::NoMem(message),
        PeerError::Transport(_) => CapiError::Mpi(message),
        _ => CapiError::Peer(message),
    }
}

/// Creates this rank's balancer on `comm` (collective: every rank of `comm` calls it, with
/// the same `rule` and `options`). hetlb works on a duplicate of `comm`; the application
/// keeps using `comm`. MPI must be initialised, and stay so until `hetlb_balancer_free`.
///
/// `rule`: any name `hetlb balance --algorithm` takes (`dem`, `oem`, `cwa`, `dishet`,
/// `diffusion`, …). `options`: NULL or `"key=value;..."`, e.g.
/// `"speeds=measured;timeout=10;topology=ring:8"` (keys in `docs/c-api.md`).
///
/// Returns 0 and sets `*out`, or a negative `HETLB_ERR_*` code (and `*out` is NULL).
///
/// # Safety
/// `comm` is a live intra-communicator; `rule` and `options` are NULL or NUL-terminated
/// strings; `out` is NULL or points to writable memory for a pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_create(
    comm: MPI_Comm,
    rule: *const c_char,
    options: *const c_char,
    out: *mut *mut hetlb_balancer,
) -> c_int {
    guard(|| {
        if out.is_null() {
            return Err(CapiError::Null("out"));
        }
        // SAFETY: `out` is writable (the caller's contract).
        unsafe { *out = std::ptr::null_mut() };
        // SAFETY: the caller's contract.
        let (rule, options) = unsafe { (req_str(rule, "rule")?, opt_str(options, "options")?) };
        let (config, coords) = options::config(rule, options)?;
        let mut b = create(comm, config)?;
        b.coords = coords;
        // SAFETY: as above.
        unsafe { *out = Box::into_raw(Box::new(b)) };
        Ok(())
    })
}

/// `hetlb_balancer_create` with a Fortran communicator handle (an `integer`, converted
/// with `MPI_Comm_f2c`): what the Fortran module calls.
///
/// # Safety
/// As `hetlb_balancer_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_create_f(
    comm: RSMPI_Fint,
    rule: *const c_char,
    options: *const c_char,
    out: *mut *mut hetlb_balancer,
) -> c_int {
    if !mpi::environment::is_initialized() {
        return guard(|| Err(not_initialised()));
    }
    if mpi::environment::is_finalized() {
        return guard(|| Err(CapiError::Mpi("MPI is already finalised".into())));
    }
    // SAFETY: MPI is initialised; the conversion reads a handle.
    let comm = unsafe { mpi::ffi::RSMPI_Comm_f2c(comm) };
    // SAFETY: the caller's contract.
    unsafe { hetlb_balancer_create(comm, rule, options, out) }
}

/// Why MPI looks uninitialised to the library: not initialised yet, or initialised in another
/// MPI library than the one libhetlb is linked to.
fn not_initialised() -> CapiError {
    let ours = mpi::environment::library_version().unwrap_or_default();
    let ours = ours.lines().next().unwrap_or("(unknown)").trim();
    CapiError::Mpi(format!(
        "MPI is not initialised (call MPI_Init first); if it is, the program uses another MPI \
         library than libhetlb, which is built against {ours}: build both with the same MPI \
         (docs/c-api.md, 'MPI ABI')"
    ))
}

fn create(comm: MPI_Comm, config: hetlb_peer::BalancerConfig) -> Result<hetlb_balancer, CapiError> {
    if !mpi::environment::is_initialized() {
        return Err(not_initialised());
    }
    if mpi::environment::is_finalized() {
        return Err(CapiError::Mpi("MPI is already finalised".into()));
    }
    // SAFETY: RSMPI_COMM_NULL is a constant of the MPI library.
    if comm == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
        return Err(CapiError::Invalid("comm is MPI_COMM_NULL".into()));
    }
    let mut inter: c_int = 0;
    // SAFETY: `comm` is a live communicator (the caller's contract); `inter` is writable.
    let rc = unsafe { mpi::ffi::MPI_Comm_test_inter(comm, &mut inter) };
    check(rc, "MPI_Comm_test_inter").map_err(|e| CapiError::Mpi(e.to_string()))?;
    if inter != 0 {
        return Err(CapiError::Invalid("comm is an inter-communicator".into()));
    }
    // hetlb's duplicate, with MPI_ERRORS_RETURN: no MPI error on it ends the job.
    // SAFETY: `comm` is a live intra-communicator (the caller's contract, checked above).
    // Collective over `comm`.
    let comm = unsafe { duplicate_raw(comm) }.map_err(|e| CapiError::Mpi(e.to_string()))?;
    // SAFETY: the C contract: MPI stays initialised until hetlb_balancer_free, which drops
    // the transport.
    let mpi = unsafe { Mpi::adopt_foreign(&comm) }.map_err(|e| CapiError::Mpi(e.to_string()))?;
    let records = Balancer::new(&mpi, config.clone()).map_err(|e| peer_error(&e, 0, "records"));
    let plans = Balancer::new(&mpi, config).map_err(|e| peer_error(&e, 0, "records"));
    // Every rank checked the same configuration against the same size: they fail alike.
    let (records, plans) = (records?, plans?);
    Ok(hetlb_balancer {
        records,
        plans,
        doubt_size: None,
        plan_serial: 0,
        coords: None,
        loads_after: Vec::new(),
        mpi,
        comm,
    })
}

/// Reports that this rank processed `units` units of work in `seconds` (used by
/// `speeds=measured`, ignored otherwise). Call it once per step of the application's loop.
///
/// Returns 0, or `HETLB_ERR_NULL` / `HETLB_ERR_INVALID` (seconds not positive and finite).
///
/// # Safety
/// `b` is NULL or a balancer from `hetlb_balancer_create`, not freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_record(b: *mut hetlb_balancer, units: u64, seconds: f64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let b = unsafe { b.as_mut() }.ok_or(CapiError::Null("b"))?;
        b.records
            .try_record(units, seconds)
            .map_err(|e| CapiError::Invalid(e.to_string()))?;
        b.plans.record(units, seconds);
        Ok(())
    })
}

/// What `hetlb_rebalance` would do now, moving nothing (collective: every rank calls it and
/// gets the same advice). `loads` gives this rank's `n` items' loads (NULL: 1 each). Every
/// candidate rule (the balancer's rule, or rule `auto`'s candidates) is planned on the
/// ranks' loads and predicted at the measured speeds with the cost model in force.
/// `*choice` (when not NULL) receives the index of the candidate `hetlb_rebalance` would
/// follow, or -1 when it would move nothing (also while the trigger `auto` skips calls after
/// a held-back check: `skips` in the JSON counts them); `*json` (when not NULL) the advice as
/// JSON (`candidates` with each rule's `prediction` and `final_loads`, `choice`, `horizon`,
/// `skips`), a
/// NUL-terminated string from `malloc` that the caller frees (`free` or `hetlb_free`).
///
/// Needs `speeds=measured` and a `hetlb_record` on every rank (`HETLB_ERR_PLAN` otherwise,
/// on every rank). Returns 0, or a negative `HETLB_ERR_*` code with the message in
/// `hetlb_last_error()`.
///
/// # Safety
/// `b` is a live balancer; `loads` is NULL or points to `n` values; `choice` and `json` are
/// NULL or point to writable values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_advise(
    b: *mut hetlb_balancer,
    n: usize,
    loads: *const u64,
    choice: *mut i64,
    json: *mut *mut c_char,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let b = unsafe { b.as_mut() }.ok_or(CapiError::Null("b"))?;
        // SAFETY: the caller's contract.
        let checked = unsafe { opt_slice(loads, n, "loads") }.and_then(|loads| {
            n.checked_mul(8)
                .filter(|&b| isize::try_from(b).is_ok())
                .map(|bytes| (loads, bytes))
                .ok_or_else(|| CapiError::Invalid(format!("n: {n} items overflow")))
        });
        let (loads, bytes) = match checked {
            Ok(args) => args,
            // This rank's own arguments are wrong: the others learn it at once.
            Err(e) => return Err(refuse(&mut b.records, e)),
        };
        let mut buffer: Vec<u8> = Vec::new();
        buffer
            .try_reserve(bytes)
            .map_err(|e| CapiError::NoMem(format!("loads of {n} items: {e}")))?;
        for i in 0..n {
            buffer.extend_from_slice(&loads.map_or(1, |l| l[i]).to_ne_bytes());
        }
        let weigh = |r: &[u8]| r.try_into().map_or(0, u64::from_ne_bytes);
        let records =
            Records::new(&mut buffer, 8, 0).map_err(|e| CapiError::Internal(e.to_string()))?;
        let advice = b.records.advise(&records.with_loads(&weigh)).map_err(|e| {
            let mut err = peer_error(&e, 0, "records");
            if let CapiError::Invalid(m)
            | CapiError::Mismatch(m)
            | CapiError::Plan(m)
            | CapiError::Peer(m)
            | CapiError::InDoubt(m)
            | CapiError::NoMem(m)
            | CapiError::Mpi(m) = &mut err
            {
                *m = format!("{e}; nothing moved (advice moves nothing)");
            }
            err
        })?;
        if !choice.is_null() {
            let index = advice
                .choice
                .map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX));
            // SAFETY: writable, by the contract.
            unsafe { *choice = index };
        }
        let text = serde_json::to_string_pretty(&advice)
            .map_err(|e| CapiError::Internal(e.to_string()))?;
        // SAFETY: `json` is NULL or writable, by the contract.
        unsafe { crate::advise::write_json(&text, json) }
    })
}

/// Every rank's load (in units) after the last `hetlb_rebalance` that checked the loads
/// (`hetlb_report.checked`): `*n` values at `*loads`, owned by the balancer and valid until
/// its next call or `hetlb_balancer_free`; `*n` is 0 before the first such call.
///
/// Returns 0, or `HETLB_ERR_NULL`.
///
/// # Safety
/// `b` is NULL or a live balancer; `n` and `loads` are NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_loads(
    b: *const hetlb_balancer,
    n: *mut usize,
    loads: *mut *const u64,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let b = unsafe { b.as_ref() }.ok_or(CapiError::Null("b"))?;
        if n.is_null() || loads.is_null() {
            return Err(CapiError::Null("n or loads"));
        }
        // SAFETY: writable (the caller's contract).
        unsafe {
            *n = b.loads_after.len();
            *loads = if b.loads_after.is_empty() {
                std::ptr::null()
            } else {
                b.loads_after.as_ptr()
            };
        }
        Ok(())
    })
}

/// This rank's number in the balancer's communicator (as `MPI_Comm_rank`), or a negative
/// code for NULL.
///
/// # Safety
/// As `hetlb_record`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_rank(b: *const hetlb_balancer) -> c_int {
    let mut rank = 0;
    let rc = guard(|| {
        // SAFETY: the caller's contract.
        let b = unsafe { b.as_ref() }.ok_or(CapiError::Null("b"))?;
        rank = c_int::try_from(b.rank()).map_err(|_| CapiError::Internal("rank".into()))?;
        Ok(())
    });
    if rc == 0 { rank } else { rc }
}

/// Frees a balancer (collective: every rank frees its own, before `MPI_Finalize`). Records in
/// doubt (after `HETLB_ERR_IN_DOUBT`, not resolved) are lost with it. NULL is ignored.
///
/// # Safety
/// `b` is NULL or a balancer from `hetlb_balancer_create`, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balancer_free(b: *mut hetlb_balancer) {
    if b.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: made by Box::into_raw in hetlb_balancer_create, freed once (the contract).
        drop(unsafe { Box::from_raw(b) });
        Ok(())
    });
}

/// The balancer of byte records every call of the C interface drives.
pub(crate) type RecordsBalancer =
    hetlb_peer::Balancer<hetlb_peer::Bytes, hetlb_transport::mpi::Mpi<'static>>;

/// Refuses this rank's part of the call for its own argument error `e`, which it returns:
/// the other ranks fail at once naming this rank, rather than waiting for it.
pub(crate) fn refuse(balancer: &mut RecordsBalancer, e: CapiError) -> CapiError {
    // The caller's error says what is wrong here; a failure to tell the others (a group
    // already lost) is theirs to report.
    let _ = balancer.refuse(&e.to_string());
    e
}
