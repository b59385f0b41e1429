//! Error codes, the errors behind them, this thread's last message, and the guard that keeps
//! panics from crossing the C boundary.

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};
use thiserror::Error;

/// Success.
pub const HETLB_OK: c_int = 0;
/// A pointer argument that must not be NULL was NULL.
pub const HETLB_ERR_NULL: c_int = -1;
/// An invalid argument: an unknown rule, a bad options string or topology, zero-size records,
/// an id offset out of range, a string that is not UTF-8, sizes that overflow.
pub const HETLB_ERR_INVALID: c_int = -2;
/// The ranks disagree: different rules, options or record sizes, or a plan of another call.
pub const HETLB_ERR_MISMATCH: c_int = -3;
/// The rule refused the loads (a total that overflows, say).
pub const HETLB_ERR_PLAN: c_int = -4;
/// A peer failed (stopped answering, or gave the call up): the call was rolled back and this
/// rank holds exactly the items it held before (the message says how many).
pub const HETLB_ERR_PEER: c_int = -5;
/// The call's outcome is not known on this rank yet: the items it involves are kept aside
/// until `hetlb_resolve` settles it (the message says how many are aside).
pub const HETLB_ERR_IN_DOUBT: c_int = -6;
/// Memory could not be had (a `realloc` of the records failed): the call was rolled back.
pub const HETLB_ERR_NOMEM: c_int = -7;
/// MPI refused, or is not initialised, or the transport failed.
pub const HETLB_ERR_MPI: c_int = -8;
/// An application callback returned non-zero (the two-step form).
pub const HETLB_ERR_CALLBACK: c_int = -9;
/// A bug in hetlb (a panic caught at the boundary); the message says where.
pub const HETLB_ERR_INTERNAL: c_int = -10;

/// Why a call of the C interface failed.
#[derive(Debug, Error)]
pub enum CapiError {
    /// A NULL pointer argument.
    #[error("{0} is NULL")]
    Null(&'static str),
    /// An invalid argument.
    #[error("{0}")]
    Invalid(String),
    /// The ranks disagree.
    #[error("{0}")]
    Mismatch(String),
    /// The rule refused the loads.
    #[error("{0}")]
    Plan(String),
    /// A peer failed; rolled back.
    #[error("{0}")]
    Peer(String),
    /// The outcome is not known here yet.
    #[error("{0}")]
    InDoubt(String),
    /// Memory ran out.
    #[error("{0}")]
    NoMem(String),
    /// MPI or the transport failed.
    #[error("{0}")]
    Mpi(String),
    /// An application callback failed.
    #[error("{0}")]
    Callback(String),
    /// A panic, caught.
    #[error("internal error: {0}")]
    Internal(String),
}

impl CapiError {
    /// The error's code (one of the `HETLB_ERR_*` constants).
    pub fn code(&self) -> c_int {
        match self {
            CapiError::Null(_) => HETLB_ERR_NULL,
            CapiError::Invalid(_) => HETLB_ERR_INVALID,
            CapiError::Mismatch(_) => HETLB_ERR_MISMATCH,
            CapiError::Plan(_) => HETLB_ERR_PLAN,
            CapiError::Peer(_) => HETLB_ERR_PEER,
            CapiError::InDoubt(_) => HETLB_ERR_IN_DOUBT,
            CapiError::NoMem(_) => HETLB_ERR_NOMEM,
            CapiError::Mpi(_) => HETLB_ERR_MPI,
            CapiError::Callback(_) => HETLB_ERR_CALLBACK,
            CapiError::Internal(_) => HETLB_ERR_INTERNAL,
        }
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Sets this thread's last error message (interior NUL bytes are dropped).
pub(crate) fn set_last_error(message: &str) {
    let text = CString::new(message.replace('\0', "")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = text);
}

/// This thread's last error message, as a pointer valid until the next hetlb call on this
/// thread.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs `f`: `HETLB_OK` when it succeeds (and the last error is cleared), its code when it
/// fails (and the message becomes this thread's last error), `HETLB_ERR_INTERNAL` when it
/// panics. No panic leaves this function.
pub(crate) fn guard(f: impl FnOnce() -> Result<(), CapiError>) -> c_int {
    let outcome = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic".into());
        Err(CapiError::Internal(what))
    });
    match outcome {
        Ok(()) => {
            set_last_error("");
            HETLB_OK
        }
        Err(e) => {
            // Formatting the message cannot panic for these variants (plain strings).
            set_last_error(&e.to_string());
            e.code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: the pointer is this thread's live message.
        #[allow(unsafe_code)]
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn errors_set_the_message_and_success_clears_it() {
        assert_eq!(guard(|| Err(CapiError::Null("items"))), HETLB_ERR_NULL);
        assert_eq!(last(), "items is NULL");
        assert_eq!(guard(|| Ok(())), HETLB_OK);
        assert_eq!(last(), "");
    }

    #[test]
    fn a_panic_becomes_an_internal_error() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let code = guard(|| panic!("boom"));
        std::panic::set_hook(prev);
        assert_eq!(code, HETLB_ERR_INTERNAL);
        assert_eq!(last(), "internal error: boom");
    }

    #[test]
    fn codes_are_distinct_and_negative() {
        let all = [
            CapiError::Null("x"),
            CapiError::Invalid(String::new()),
            CapiError::Mismatch(String::new()),
            CapiError::Plan(String::new()),
            CapiError::Peer(String::new()),
            CapiError::InDoubt(String::new()),
            CapiError::NoMem(String::new()),
            CapiError::Mpi(String::new()),
            CapiError::Callback(String::new()),
            CapiError::Internal(String::new()),
        ];
        let mut codes: Vec<c_int> = all.iter().map(CapiError::code).collect();
        assert!(codes.iter().all(|&c| c < 0));
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len());
    }
}
