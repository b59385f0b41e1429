//! The functions that need no MPI: the version, the last error, and `hetlb_balance` (the
//! rule on a vector of loads, as `hetlb balance` computes it).
#![allow(unsafe_code)]

use crate::error::{CapiError, guard, last_error_ptr};
use crate::ffi_util::{opt_slice, opt_str, req_slice, req_slice_mut, req_str};
use hetlb_core::topology::{MAX_NODES, TopologySpec};
use hetlb_core::{Algorithm, BalanceOptions, Capacities, balance, balance_on};
use hetlb_peer::BalancerConfig;
use std::ffi::{c_char, c_int};

/// The largest topology file `hetlb_balance` reads (as a balancer, 64 MiB).
const MAX_TOPOLOGY_FILE_BYTES: u64 = 64 << 20;

/// The library's version, as a static NUL-terminated string ("0.1.0").
#[unsafe(no_mangle)]
pub extern "C" fn hetlb_version() -> *const c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}

/// This thread's last error message, `""` when the last hetlb call on this thread succeeded
/// (or none was made). The pointer stays valid until the next hetlb call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn hetlb_last_error() -> *const c_char {
    last_error_ptr()
}

/// Balances `n` loads with the rule `algorithm` (any name `hetlb balance --algorithm` takes:
/// `dem`, `oem`, `cwa`, `dishet`, `diffusion`, …) on `topology` (a spec such as `ring:8` or
/// `torus:2x4`; NULL for the hypercube of `n` nodes, where a count that is not a power of
/// two runs the hypercube rules embedded in a cube) and writes the `n` loads after
/// balancing to `final_loads`. `capacities` are the nodes' relative speeds (NULL: equal).
/// No MPI: this is the plan `hetlb balance` prints.
///
/// Returns 0, or a negative `HETLB_ERR_*` code with the message in `hetlb_last_error()`:
/// `HETLB_ERR_INVALID` for more than 2^24 nodes (a network's limit), checked before any
/// array is read.
///
/// # Safety
/// `algorithm` and `topology` are NULL or NUL-terminated strings; `loads`, `capacities`
/// (when not NULL) and `final_loads` point to `n` values each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_balance(
    algorithm: *const c_char,
    topology: *const c_char,
    n: usize,
    loads: *const u64,
    capacities: *const f64,
    final_loads: *mut u64,
) -> c_int {
    guard(|| {
        check_nodes(n, "n")?;
        // SAFETY: the caller's contract, for every pointer.
        let (algorithm, topology, loads, capacities, out) = unsafe {
            (
                req_str(algorithm, "algorithm")?,
                opt_str(topology, "topology")?,
                req_slice(loads, n, "loads")?,
                opt_slice(capacities, n, "capacities")?,
                req_slice_mut(final_loads, n, "final_loads")?,
            )
        };
        let result = balance_loads(algorithm, topology, loads, capacities)?;
        out.copy_from_slice(&result);
        Ok(())
    })
}

/// Refuses more nodes than a network can have ([`MAX_NODES`]), before anything is read or
/// allocated for them.
pub(crate) fn check_nodes(n: usize, what: &str) -> Result<(), CapiError> {
    if n > MAX_NODES {
        return Err(CapiError::Invalid(format!(
            "{what}: {n} nodes; a network has at most {MAX_NODES}"
        )));
    }
    Ok(())
}

/// The safe body of [`hetlb_balance`].
pub(crate) fn balance_loads(
    algorithm: &str,
    topology: Option<&str>,
    loads: &[u64],
    capacities: Option<&[f64]>,
) -> Result<Vec<u64>, CapiError> {
    if loads.is_empty() {
        return Err(CapiError::Invalid("n: at least one load is needed".into()));
    }
    if algorithm == hetlb_peer::AUTO {
        return Err(CapiError::Invalid(
            "algorithm: auto picks a rule from measured speeds at each rebalance; name a rule \
             here"
                .into(),
        ));
    }
    // The rule's name, checked as a balancer checks it (the message lists the known rules).
    let algorithm: Algorithm = BalancerConfig::new(algorithm)
        .map_err(|e| CapiError::Invalid(format!("algorithm: {e}")))?
        .algorithm();
    let options = BalanceOptions::new().capacities(
        capacities
            .map(|c| Capacities::new(c.to_vec()))
            .transpose()
            .map_err(|e| CapiError::Invalid(format!("capacities: {e}")))?,
    );
    let plan = match topology {
        None => balance(algorithm, loads, &options),
        Some(spec) => {
            let spec: TopologySpec = spec
                .parse()
                .map_err(|e| CapiError::Invalid(format!("topology: {e}")))?;
            let network = spec
                .build_reading(None, Some(loads.len()), MAX_TOPOLOGY_FILE_BYTES)
                .map_err(|e| CapiError::Invalid(format!("topology: {e}")))?;
            balance_on(&network, algorithm, loads, &options).map(|run| run.plan)
        }
    }
    .map_err(|e| CapiError::Invalid(e.to_string()))?;
    Ok(plan.final_loads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{HETLB_ERR_INVALID, HETLB_ERR_NULL, HETLB_OK};
    use std::ffi::{CStr, CString};

    fn last() -> String {
        // SAFETY: this thread's live message.
        unsafe { CStr::from_ptr(hetlb_last_error()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn balance_matches_the_core_and_conserves_the_total() {
        let loads = [5u64, 0, 3, 9, 2, 2, 8, 1];
        let mut out = [0u64; 8];
        let rule = CString::new("cwa").unwrap();
        // SAFETY: valid pointers of 8 values.
        let rc = unsafe {
            hetlb_balance(
                rule.as_ptr(),
                std::ptr::null(),
                8,
                loads.as_ptr(),
                std::ptr::null(),
                out.as_mut_ptr(),
            )
        };
        assert_eq!(rc, HETLB_OK, "{}", last());
        let core = balance(Algorithm::Cwa, &loads, &BalanceOptions::default()).unwrap();
        assert_eq!(out.to_vec(), core.final_loads);
        assert_eq!(out.iter().sum::<u64>(), 30);
    }

    #[test]
    fn bad_arguments_are_refused_with_a_message() {
        let loads = [1u64, 2, 3, 4];
        let mut out = [0u64; 4];
        let good = CString::new("dem").unwrap();
        let unknown = CString::new("dem-superb").unwrap();
        let ring = CString::new("ring:4").unwrap();
        let bad_topology = CString::new("ring:x").unwrap();
        let call = |rule: *const c_char, topo: *const c_char, loads: *const u64, out: *mut u64| {
            // SAFETY: valid or NULL pointers of 4 values.
            unsafe { hetlb_balance(rule, topo, 4, loads, std::ptr::null(), out) }
        };
        let null = std::ptr::null();
        assert_eq!(
            call(null, null, loads.as_ptr(), out.as_mut_ptr()),
            HETLB_ERR_NULL
        );
        assert_eq!(last(), "algorithm is NULL");
        assert_eq!(
            call(good.as_ptr(), null, std::ptr::null(), out.as_mut_ptr()),
            HETLB_ERR_NULL
        );
        assert_eq!(
            call(good.as_ptr(), null, loads.as_ptr(), std::ptr::null_mut()),
            HETLB_ERR_NULL
        );
        assert_eq!(
            call(unknown.as_ptr(), null, loads.as_ptr(), out.as_mut_ptr()),
            HETLB_ERR_INVALID
        );
        assert!(last().contains("dem-superb"), "{}", last());
        let auto = CString::new("auto").unwrap();
        assert_eq!(
            call(auto.as_ptr(), null, loads.as_ptr(), out.as_mut_ptr()),
            HETLB_ERR_INVALID
        );
        assert!(last().contains("auto"), "{}", last());
        assert_eq!(
            call(
                good.as_ptr(),
                bad_topology.as_ptr(),
                loads.as_ptr(),
                out.as_mut_ptr()
            ),
            HETLB_ERR_INVALID
        );
        // dem needs a hypercube: refused on a ring, with the core's reason.
        assert_eq!(
            call(
                good.as_ptr(),
                ring.as_ptr(),
                loads.as_ptr(),
                out.as_mut_ptr()
            ),
            HETLB_ERR_INVALID
        );
        assert!(last().contains("hypercube"), "{}", last());
        let diffusion = CString::new("diffusion").unwrap();
        assert_eq!(
            call(
                diffusion.as_ptr(),
                ring.as_ptr(),
                loads.as_ptr(),
                out.as_mut_ptr()
            ),
            HETLB_OK
        );
        assert_eq!(out.iter().sum::<u64>(), 10);
        assert_eq!(
            balance_loads("dem", None, &[], None).unwrap_err().code(),
            HETLB_ERR_INVALID
        );
        assert_eq!(
            balance_loads("dem", None, &[1, 2], Some(&[1.0, -1.0]))
                .unwrap_err()
                .code(),
            HETLB_ERR_INVALID
        );
    }
}
