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

/// Refuses `n` values of `T` that no array can hold: more than `isize::MAX` bytes, or an array
/// at `p` that would run past the end of the address space. Checked before any slice is made
/// of a caller's pointer, so that an absurd count is [`CapiError::Invalid`], never a panic or
/// a read past the array.
pub(crate) fn check_count<T>(p: *const T, n: usize, what: &str) -> Result<(), CapiError> {
    let each = std::mem::size_of::<T>().max(1);
    let fits = n
        .checked_mul(each)
        .filter(|&bytes| isize::try_from(bytes).is_ok())
        .filter(|&bytes| (p as usize).checked_add(bytes).is_some());
    if fits.is_none() {
        return Err(CapiError::Invalid(format!(
            "{what}: {n} values of {each} bytes are more than an array can hold"
        )));
    }
    Ok(())
}

/// The `n` values behind `p`; `None` for NULL. An empty slice for `n == 0` (whatever `p`).
///
/// # Errors
/// [`CapiError::Invalid`] when `n` values cannot be an array ([`check_count`]).
///
/// # Safety
/// `p` is NULL or points to `n` initialised values that live for `'a`.
pub(crate) unsafe fn opt_slice<'a, T>(
    p: *const T,
    n: usize,
    what: &str,
) -> Result<Option<&'a [T]>, CapiError> {
    if p.is_null() {
        Ok(None)
    } else if n == 0 {
        Ok(Some(&[]))
    } else {
        check_count(p, n, what)?;
        // SAFETY: the caller's contract; the size fits (checked).
        Ok(Some(unsafe { std::slice::from_raw_parts(p, n) }))
    }
}

/// The `n` values behind `p`, which must not be NULL (unless `n == 0`).
///
/// # Errors
/// [`CapiError::Null`] for NULL with `n > 0`; [`CapiError::Invalid`] as [`opt_slice`].
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
    unsafe { opt_slice(p, n, what) }?.ok_or(CapiError::Null(what))
}

/// The `n` values behind `p` to write, which must not be NULL (unless `n == 0`).
///
/// # Errors
/// As [`req_slice`].
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
    check_count(p.cast_const(), n, what)?;
    // SAFETY: the caller's contract; the size fits (checked).
    Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
}
