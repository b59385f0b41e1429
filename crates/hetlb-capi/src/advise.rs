//! `hetlb_advise`: whether a move pays, with which rule and which routing, before anything
//! moves (`hetlb advise`), no MPI. The checks and the decision are the library's
//! (`hetlb_core::advice_request::answer`).
#![allow(unsafe_code)]

use crate::error::{CapiError, guard};
use crate::ffi_util::{opt_str, req_slice};
use crate::options::key_values;
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::advice_request::{Request, RequestError, answer};
use hetlb_core::algorithm::Algorithm;
use hetlb_core::routing::Routing;
use std::ffi::{c_char, c_int};

/// The options of [`hetlb_advise`], parsed.
struct AdviseOptions<'a> {
    topology: Option<&'a str>,
    routings: Vec<Routing>,
    bytes_per_unit: u64,
    model: CostModel,
    trigger: Trigger,
    max_memory_bytes: u64,
}

fn parse_options(options: Option<&str>) -> Result<AdviseOptions<'_>, CapiError> {
    let invalid = |m: String| CapiError::Invalid(m);
    let defaults = Request::new(&[], &[]);
    let mut out = AdviseOptions {
        topology: None,
        routings: defaults.routings,
        bytes_per_unit: defaults.bytes_per_unit,
        model: defaults.model,
        trigger: defaults.trigger,
        max_memory_bytes: defaults.max_memory_bytes,
    };
    for (key, value) in key_values(options)? {
        let bad = |why: &str| invalid(format!("options: {key}={value}: {why}"));
        let number = || {
            value
                .parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| bad("expected a finite number, not negative"))
        };
        let whole = || {
            value
                .parse::<u64>()
                .map_err(|_| bad("expected a whole number"))
        };
        match key {
            "topology" => out.topology = Some(value),
            "routing" => {
                out.routings = value
                    .split(',')
                    .map(|r| r.trim().parse::<Routing>().map_err(|e| bad(&e)))
                    .collect::<Result<_, _>>()?;
            }
            "bytes_per_unit" => out.bytes_per_unit = whole()?,
            "seconds_per_message" => out.model.seconds_per_message = number()?,
            "seconds_per_byte" => out.model.seconds_per_byte = number()?,
            "trigger" => out.trigger = value.parse().map_err(|e: String| bad(&e))?,
            "max_memory_bytes" => out.max_memory_bytes = whole()?,
            _ => {
                return Err(invalid(format!(
                    "options: unknown key '{key}' (known: topology, routing, bytes_per_unit, \
                     seconds_per_message, seconds_per_byte, trigger, max_memory_bytes)"
                )));
            }
        }
    }
    Ok(out)
}

/// The advice as the document `hetlb advise --format json` prints, and the index of the
/// candidate to follow (`None`: stay).
pub(crate) fn advise_json(
    algorithms: Option<&str>,
    loads: &[u64],
    speeds: &[f64],
    options: Option<&str>,
) -> Result<(String, Option<usize>), CapiError> {
    let o = parse_options(options)?;
    let algorithms = algorithms
        .map(|list| {
            list.split(',')
                .map(|a| {
                    a.trim()
                        .parse::<Algorithm>()
                        .map_err(|e| CapiError::Invalid(format!("algorithms: {e}")))
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    let mut request = Request::new(loads, speeds);
    request.algorithms = algorithms;
    request.routings = o.routings;
    request.topology = o.topology;
    request.bytes_per_unit = o.bytes_per_unit;
    request.model = o.model;
    request.trigger = o.trigger;
    request.max_memory_bytes = o.max_memory_bytes;
    let document = answer(&request).map_err(|e| match e {
        RequestError::Memory { .. } => {
            CapiError::NoMem(format!("{e} (raise it with max_memory_bytes)"))
        }
        RequestError::Advise(_) => CapiError::Plan(e.to_string()),
        other => CapiError::Invalid(other.to_string()),
    })?;
    let json =
        serde_json::to_string_pretty(&document).map_err(|e| CapiError::Internal(e.to_string()))?;
    Ok((json, document.advice.choice))
}

/// Whether moving pays, with which rule and which routing, before anything moves: every
/// candidate rule (`algorithms`, comma-separated; NULL for every rule that fits the network)
/// with every routing is planned on the `n` `loads` at the measured `speeds` (`n_speeds`
/// values: 1 for all nodes, or `n`), and predicted. `*choice` (when not NULL) receives the
/// index of the candidate to follow in the document's `candidates`, or -1 to stay;
/// `*json` (when not NULL) receives the whole document `hetlb advise --format json` prints,
/// a NUL-terminated string from `malloc` that the caller frees (`free` or `hetlb_free`).
///
/// `options` (`"key=value;..."`, NULL for the defaults): `topology` (a spec; default the
/// hypercube of `n` nodes), `routing` (`paper`, `direct` or `paper,direct`, the default),
/// `bytes_per_unit` (8), `seconds_per_message` (1e-5), `seconds_per_byte` (1e-9), `trigger`
/// (`always` or `auto[:HORIZON[:MARGIN]]`, default `auto`), `max_memory_bytes` (8 GiB).
///
/// Returns 0, or a negative `HETLB_ERR_*` code with the message in `hetlb_last_error()`:
/// `HETLB_ERR_INVALID` for `n` or `n_speeds` above 2^24 (a network's limit), checked before
/// any array is read.
///
/// # Safety
/// `algorithms` and `options` are NULL or NUL-terminated strings; `loads` points to `n`
/// values and `speeds` to `n_speeds`; `choice` and `json` are NULL or point to writable
/// values.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn hetlb_advise(
    algorithms: *const c_char,
    n: usize,
    loads: *const u64,
    speeds: *const f64,
    n_speeds: usize,
    options: *const c_char,
    choice: *mut i64,
    json: *mut *mut c_char,
) -> c_int {
    guard(|| {
        crate::balance::check_nodes(n, "n")?;
        crate::balance::check_nodes(n_speeds, "n_speeds")?;
        // SAFETY: the caller's contract, for every pointer.
        let (algorithms, loads, speeds, options) = unsafe {
            (
                opt_str(algorithms, "algorithms")?,
                req_slice(loads, n, "loads")?,
                req_slice(speeds, n_speeds, "speeds")?,
                opt_str(options, "options")?,
            )
        };
        let (text, picked) = advise_json(algorithms, loads, speeds, options)?;
        if !choice.is_null() {
            let index = picked.map_or(-1, |i| i64::try_from(i).unwrap_or(i64::MAX));
            // SAFETY: writable, by the contract.
            unsafe { *choice = index };
        }
        // SAFETY: `json` is NULL or writable, by the contract.
        unsafe { write_json(&text, json) }?;
        Ok(())
    })
}

/// Writes `text` to `*json` (when `json` is not NULL) as a NUL-terminated string from
/// `malloc`.
///
/// # Safety
/// `json` is NULL or points to a writable pointer.
pub(crate) unsafe fn write_json(text: &str, json: *mut *mut c_char) -> Result<(), CapiError> {
    if json.is_null() {
        return Ok(());
    }
    let bytes = text.as_bytes();
    // SAFETY: plain allocation of the text and its NUL.
    let p = unsafe { libc::malloc(bytes.len() + 1) }.cast::<u8>();
    if p.is_null() {
        return Err(CapiError::NoMem(format!(
            "json: cannot allocate {} bytes",
            bytes.len() + 1
        )));
    }
    // SAFETY: `p` holds `len + 1` bytes; `json` is writable by the contract.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
        *p.add(bytes.len()) = 0;
        *json = p.cast();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{HETLB_ERR_INVALID, HETLB_OK};
    use std::ffi::{CStr, CString};

    #[test]
    fn the_document_is_the_library_answer_and_the_choice_its_index() {
        let loads = [900u64, 0, 0, 0, 0, 0, 0, 0];
        let speeds = [100.0];
        let rules = CString::new("cwa,dishet").unwrap();
        let options = CString::new("seconds_per_message=1e-3; routing=paper,direct").unwrap();
        let mut choice = -2i64;
        let mut json: *mut c_char = std::ptr::null_mut();
        // SAFETY: valid pointers and lengths.
        let rc = unsafe {
            hetlb_advise(
                rules.as_ptr(),
                8,
                loads.as_ptr(),
                speeds.as_ptr(),
                1,
                options.as_ptr(),
                &mut choice,
                &mut json,
            )
        };
        assert_eq!(rc, HETLB_OK);
        // SAFETY: a NUL-terminated string from malloc.
        let text = unsafe { CStr::from_ptr(json) }
            .to_str()
            .unwrap()
            .to_string();
        // SAFETY: from malloc, freed once.
        unsafe { libc::free(json.cast()) };
        let mut r = Request::new(&loads, &speeds);
        r.algorithms = Some(vec![Algorithm::Cwa, Algorithm::Dishet]);
        r.model.seconds_per_message = 1e-3;
        let doc = answer(&r).unwrap();
        assert_eq!(text, serde_json::to_string_pretty(&doc).unwrap());
        assert_eq!(choice, doc.advice.choice.map_or(-1, |i| i as i64));
    }

    #[test]
    fn bad_options_are_refused_with_the_reason() {
        for (options, needle) in [
            ("routing=sideways", "routing"),
            ("trigger=soon", "trigger"),
            ("seconds_per_byte=-1", "not negative"),
            ("colour=blue", "unknown key"),
            ("bytes_per_unit", "key=value"),
            ("trigger=always;trigger=always", "twice"),
        ] {
            let e = advise_json(None, &[1, 2, 3, 4], &[1.0], Some(options)).unwrap_err();
            assert_eq!(e.code(), HETLB_ERR_INVALID, "{options}");
            assert!(e.to_string().contains(needle), "{options}: {e}");
        }
        let e = advise_json(None, &[1, 2, 3, 4], &[1.0, 2.0], None).unwrap_err();
        assert!(e.to_string().contains("speeds"), "{e}");
        let e = advise_json(Some("cwa,nope"), &[1, 2, 3, 4], &[1.0], None).unwrap_err();
        assert!(e.to_string().contains("nope"), "{e}");
    }
}
