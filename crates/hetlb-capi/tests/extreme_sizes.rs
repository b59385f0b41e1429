//! Every C entry point that needs no MPI, called with extreme counts and sizes (0, 1,
//! `usize::MAX`, `1 << 62`, more nodes than a network has, NULL where it is allowed, values
//! at the ends of their types): none may panic (`HETLB_ERR_INTERNAL`), and counts that
//! overflow are `HETLB_ERR_INVALID`. The MPI entry points get the same sweep in
//! `tests/c/test_api.c`, run under mpiexec.
#![allow(unsafe_code)]

use hetlb::memory::{hetlb_alloc, hetlb_free};
use hetlb::*;
use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

const COUNTS: [usize; 7] = [0, 1, 8, 1 << 24, (1 << 24) + 1, 1 << 62, usize::MAX];

fn last() -> String {
    // SAFETY: this thread's live message.
    unsafe { CStr::from_ptr(hetlb_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// Fails on `HETLB_ERR_INTERNAL` (a panic caught at the boundary).
fn no_panic(rc: i32, what: &str) -> i32 {
    assert_ne!(rc, HETLB_ERR_INTERNAL, "{what}: {}", last());
    rc
}

#[test]
fn balance_with_extreme_counts_and_values_never_panics() {
    let loads = [5u64, 0, 3, 9, 2, 2, 8, 1];
    let extreme = [u64::MAX, u64::MAX, 0, 1, u64::MAX / 2, 7, 0, 0];
    let mut out = [0u64; 8];
    let caps = [1.0f64, 2.0, 1e308, 1e-308, 1.0, 1.0, 1.0, 1.0];
    let bad_caps = [f64::NAN, f64::INFINITY, 0.0, -1.0, 1.0, 1.0, 1.0, 1.0];
    let rules: Vec<CString> = [
        "dem",
        "oem",
        "cwa",
        "dishet",
        "diffusion",
        "gdem",
        "auto",
        "",
    ]
    .iter()
    .map(|r| CString::new(*r).unwrap())
    .collect();
    let topologies: Vec<Option<CString>> = [
        None,
        Some("ring:8"),
        Some("ring:4611686018427387904"),
        Some("torus:4294967296x4294967296"),
        Some("hypercube:63"),
        Some("hypercube:64"),
    ]
    .into_iter()
    .map(|t| t.map(|t| CString::new(t).unwrap()))
    .collect();
    for rule in &rules {
        for topology in &topologies {
            let topo = topology.as_ref().map_or(null(), |t| t.as_ptr());
            for &n in &COUNTS {
                let what = format!("hetlb_balance({rule:?}, {topology:?}, {n})");
                // The arrays hold 8 values: larger counts must be refused before reading.
                let fits = n <= 8;
                for (l, c) in [
                    (loads.as_ptr(), null()),
                    (extreme.as_ptr(), caps.as_ptr()),
                    (loads.as_ptr(), bad_caps.as_ptr()),
                ] {
                    if !fits && n <= 1 << 24 {
                        continue; // a count the caller would have to back with memory
                    }
                    // SAFETY: arrays of 8 values; larger counts are refused unread.
                    let rc = no_panic(
                        unsafe { hetlb_balance(rule.as_ptr(), topo, n, l, c, out.as_mut_ptr()) },
                        &what,
                    );
                    if n > 1 << 24 {
                        assert_eq!(rc, HETLB_ERR_INVALID, "{what}: {}", last());
                    }
                }
                // NULL arrays: refused, whatever the count.
                // SAFETY: NULL pointers are allowed arguments.
                let rc = no_panic(
                    unsafe { hetlb_balance(rule.as_ptr(), topo, n, null(), null(), null_mut()) },
                    &what,
                );
                assert_ne!(rc, HETLB_OK, "{what}");
            }
        }
    }
    // The call: refused as invalid, not a panic.
    let oem = CString::new("oem").unwrap();
    // SAFETY: the count is refused before anything is read.
    let rc = unsafe {
        hetlb_balance(
            oem.as_ptr(),
            null(),
            1 << 62,
            loads.as_ptr(),
            null(),
            out.as_mut_ptr(),
        )
    };
    assert_eq!(rc, HETLB_ERR_INVALID, "{}", last());
    assert!(last().contains("nodes"), "{}", last());
}

#[test]
fn advise_with_extreme_counts_and_options_never_panics() {
    let loads = [900u64, 0, 0, 0, 0, 0, 0, 0];
    let extreme = [u64::MAX; 8];
    let speeds = [100.0f64; 8];
    let odd_speeds = [
        1e308,
        1e-308,
        f64::MAX,
        f64::MIN_POSITIVE,
        0.0,
        -1.0,
        f64::NAN,
        1.0,
    ];
    let options: Vec<Option<CString>> = [
        None,
        Some("bytes_per_unit=18446744073709551615"),
        Some("max_memory_bytes=0"),
        Some("max_memory_bytes=18446744073709551615"),
        Some("seconds_per_byte=1e308;seconds_per_message=1e308"),
        Some("trigger=auto:18446744073709551615:1e308"),
        Some("topology=ring:4611686018427387904"),
    ]
    .into_iter()
    .map(|o| o.map(|o| CString::new(o).unwrap()))
    .collect();
    let rules = [None, Some(CString::new("cwa,dishet").unwrap())];
    let mut choice = 0i64;
    for option in &options {
        let opt = option.as_ref().map_or(null(), |o| o.as_ptr());
        for rule in &rules {
            let r = rule.as_ref().map_or(null(), |r| r.as_ptr());
            for &n in &COUNTS {
                for &n_speeds in &[0usize, 1, 8, usize::MAX, 1 << 62] {
                    if (n > 8 && n <= 1 << 24) || (n_speeds > 8 && n_speeds <= 1 << 24) {
                        continue;
                    }
                    for (l, s) in [
                        (loads.as_ptr(), speeds.as_ptr()),
                        (extreme.as_ptr(), odd_speeds.as_ptr()),
                    ] {
                        let what = format!("hetlb_advise({rule:?}, {n}, {n_speeds}, {option:?})");
                        let mut json: *mut c_char = null_mut();
                        // SAFETY: arrays of 8 values; larger counts are refused unread.
                        let rc = no_panic(
                            unsafe {
                                hetlb_advise(r, n, l, s, n_speeds, opt, &mut choice, &mut json)
                            },
                            &what,
                        );
                        if n > 1 << 24 || n_speeds > 1 << 24 {
                            assert_eq!(rc, HETLB_ERR_INVALID, "{what}: {}", last());
                        }
                        // SAFETY: NULL or a string from malloc.
                        unsafe { hetlb_free(json.cast()) };
                    }
                }
            }
        }
    }
}

#[test]
fn memory_and_strings_at_the_extremes() {
    assert!(hetlb_alloc(usize::MAX).is_null());
    assert!(hetlb_alloc(1 << 62).is_null());
    assert!(hetlb_alloc(0).is_null());
    // SAFETY: NULL is allowed.
    unsafe { hetlb_free(null_mut()) };
    // SAFETY: a static string.
    assert!(
        !unsafe { CStr::from_ptr(hetlb_version()) }
            .to_bytes()
            .is_empty()
    );
    let _ = hetlb_last_error();
}
