//! Reading C arguments: strings and arrays behind raw pointers, checked for NULL.
#![allow(unsafe_code)]

use crate::error::CapiError;
use std::ffi::{CStr, c_char};

/// The UTF-8 string behind `p`; `None` for NULL.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that lives for `'a`.
pub(crate) unsafe fn opt_str<'a>(
    p: *const c_char,
    what: &str,
) -> Result<Option<&'a str>, CapiError> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let s = unsafe { CStr::from_ptr(p) };
    s.to_str()
        .map(Some)
        .map_err(|e| CapiError::Invalid(format!("{what}: not UTF-8 ({e})")))
}

/// The UTF-8 string behind `p`, which must not be NULL.
///
/// # Safety
/// As [`opt_str`].
pub(crate) unsafe fn req_str<'a>(
    p: *const c_char,
    what: &'static str,
) -> Result<&'a str, CapiError> {
    // SAFETY: the caller's contract.
    unsafe { opt_str(p, what) }?.ok_or(CapiError::Null(what))
}

/// The `n` values behind `p`; `None` for NULL. An empty slice for `n == 0` (whatever `p`).
///
/// # Safety
/// `p` is NULL or points to `n` initialised values that live for `'a`.
pub(crate) unsafe fn opt_slice<'a, T>(p: *const T, n: usize) -> Option<&'a [T]> {
    if p.is_null() {
        None
    } else if n == 0 {
        Some(&[])
    } else {
        // SAFETY: the caller's contract.
        Some(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

/// The `n` values behind `p`, which must not be NULL (unless `n == 0`).
///
/// # Safety
/// As [`opt_slice`].
pub(crate) unsafe fn req_slice<'a, T>(
    p: *const T,
    n: usize,
    what: &'static str,
) -> Result<&'a [T], CapiError> {
    if n == 0 {
        return Ok(&[]);
    }
    // SAFETY: the caller's contract.
    unsafe { opt_slice(p, n) }.ok_or(CapiError::Null(what))
}

/// The `n` values behind `p` to write, which must not be NULL (unless `n == 0`).
///
/// # Safety
/// `p` is NULL or points to `n` writable values that live for `'a`, not aliased.
pub(crate) unsafe fn req_slice_mut<'a, T>(
    p: *mut T,
    n: usize,
    what: &'static str,
) -> Result<&'a mut [T], CapiError> {
    if n == 0 {
        return Ok(&mut []);
    }
    if p.is_null() {
        return Err(CapiError::Null(what));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}
