//! `malloc` and `free` for callers that cannot call C's own (Fortran): the record arrays of
//! `hetlb_rebalance` must come from `malloc`, since the call may `realloc` them.
#![allow(unsafe_code)]

use std::ffi::c_void;

/// `malloc(bytes)`: an array `hetlb_rebalance` may `realloc`. NULL when it cannot be had
/// (or `bytes` is 0).
#[unsafe(no_mangle)]
pub extern "C" fn hetlb_alloc(bytes: usize) -> *mut c_void {
    if bytes == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: plain allocation.
    unsafe { libc::malloc(bytes) }
}

/// `free(p)`: frees an array from `hetlb_alloc` or `hetlb_rebalance`. NULL is ignored.
///
/// # Safety
/// `p` is NULL or from `malloc`/`realloc`/`hetlb_alloc`, not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hetlb_free(p: *mut c_void) {
    // SAFETY: the contract.
    unsafe { libc::free(p) }
}
