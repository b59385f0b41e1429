//! The raw MPI calls that the safe wrapper lacks or makes unchecked, shared by the engine and
//! by hetlb's C interface:
//!
//! * [`send_buffer`] and [`recv_buffer`] build every buffer argument of hetlb's MPI calls. An
//!   empty Rust slice has a dangling address (`align_of::<T>()`), which is Open MPI's
//!   `MPI_IN_PLACE` for bytes: an all-to-all handed it fails with `MPI_ERR_ARG`. These give an
//!   empty slice the address of a static word instead, and check that the count fits an
//!   `int`.
//! * [`duplicate`] makes hetlb's duplicate of a communicator, with `MPI_ERRORS_RETURN`: an MPI
//!   error on it is returned, never fatal, and [`check`] turns every return code into a
//!   [`TransportError::Mpi`] with MPI's own description.
//! * Non-blocking sends whose buffers the engine owns, and matched receives, every return
//!   code checked.
//!
//! The handles are the MPI library's own (`int` under MPICH, pointers under Open MPI): nothing
//! here depends on which.
#![allow(unsafe_code)]

use crate::TransportError;
use mpi::ffi;
use mpi::raw::{AsRaw, FromRaw};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::ffi::{c_char, c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::AtomicU64;

/// What an empty buffer argument points to: a real address, never read or written (the
/// count is 0), and never `MPI_IN_PLACE` or `MPI_BOTTOM`.
static EMPTY: AtomicU64 = AtomicU64::new(0);

/// The one function behind every buffer argument: `len` elements at `ptr`, or the address of
/// [`EMPTY`] when there are none; the count as MPI takes it.
fn buffer_argument(ptr: *mut c_void, len: usize) -> Result<(*mut c_void, c_int), TransportError> {
    let count = c_int::try_from(len).map_err(|_| {
        TransportError::Mpi(format!(
            "{len} elements are more than one MPI call takes (at most {})",
            c_int::MAX
        ))
    })?;
    if len == 0 {
        return Ok((EMPTY.as_ptr().cast(), 0));
    }
    Ok((ptr, count))
}

/// The address and count to hand MPI for sending `data` (an empty slice gets a valid address,
/// never the dangling one).
///
/// # Errors
/// [`TransportError::Mpi`] when `data` has more than `i32::MAX` elements.
pub fn send_buffer<T>(data: &[T]) -> Result<(*const c_void, c_int), TransportError> {
    buffer_argument(data.as_ptr().cast_mut().cast(), data.len()).map(|(p, n)| (p.cast_const(), n))
}

/// The address and count to hand MPI for receiving into `data` (an empty slice gets a valid
/// address, never the dangling one).
///
/// # Errors
/// [`TransportError::Mpi`] when `data` has more than `i32::MAX` elements.
pub fn recv_buffer<T>(data: &mut [T]) -> Result<(*mut c_void, c_int), TransportError> {
    buffer_argument(data.as_mut_ptr().cast(), data.len())
}

/// `Ok` for `MPI_SUCCESS`; otherwise [`TransportError::Mpi`] naming `call` and giving MPI's
/// description of the code (`MPI_Error_string`).
///
/// # Errors
/// When `rc` is not `MPI_SUCCESS`.
pub fn check(rc: c_int, call: &str) -> Result<(), TransportError> {
    if rc == ffi::MPI_SUCCESS as c_int {
        return Ok(());
    }
    // MPI_MAX_ERROR_STRING is 512 in MPICH and 256 in Open MPI: room for either.
    let mut text = [0 as c_char; 1024];
    let mut len: c_int = 0;
    // SAFETY: `text` has room for MPI_MAX_ERROR_STRING characters; `len` is writable.
    let described = unsafe { ffi::MPI_Error_string(rc, text.as_mut_ptr(), &mut len) };
    let len = usize::try_from(len).unwrap_or(0).min(text.len());
    let what: String = if described == ffi::MPI_SUCCESS as c_int && len > 0 {
        text[..len]
            .iter()
            .map(|&c| char::from(c as u8))
            .collect::<String>()
            .trim()
            .to_string()
    } else {
        "no description".into()
    };
    Err(TransportError::Mpi(format!(
        "{call} failed with error code {rc}: {what}"
    )))
}

/// hetlb's duplicate of `comm` (collective over `comm`), with `MPI_ERRORS_RETURN`: an error of
/// any call on it is returned to hetlb, which makes it a [`TransportError::Mpi`], rather than
/// ending the job. Freed when dropped.
///
/// # Errors
/// [`TransportError::Mpi`] when `MPI_Comm_dup` or `MPI_Comm_set_errhandler` fails (under the
/// error handler of `comm`, which is the application's).
pub fn duplicate<C: Communicator>(comm: &C) -> Result<SimpleCommunicator, TransportError> {
    // SAFETY: `comm` is a live communicator (it is borrowed).
    unsafe { duplicate_raw(comm.as_raw()) }
}

/// [`duplicate`] of a raw handle (a C, Fortran or Python application's communicator).
///
/// # Errors
/// As [`duplicate`].
///
/// # Safety
/// `comm` is a live intra-communicator of this process's MPI library.
pub unsafe fn duplicate_raw(comm: ffi::MPI_Comm) -> Result<SimpleCommunicator, TransportError> {
    // SAFETY: RSMPI_COMM_NULL is a constant of the MPI library.
    let null = unsafe { ffi::RSMPI_COMM_NULL };
    let mut dup = null;
    // SAFETY: `comm` is live (the contract); `dup` is writable.
    check(unsafe { ffi::MPI_Comm_dup(comm, &mut dup) }, "MPI_Comm_dup")?;
    if dup == null {
        return Err(TransportError::Mpi(
            "MPI_Comm_dup gave MPI_COMM_NULL".into(),
        ));
    }
    // SAFETY: `dup` is the live communicator just made; the handler is the library's.
    let set = check(
        unsafe { ffi::MPI_Comm_set_errhandler(dup, ffi::RSMPI_ERRORS_RETURN) },
        "MPI_Comm_set_errhandler",
    );
    if let Err(e) = set {
        // SAFETY: `dup` is live and owned here; freed once.
        unsafe { ffi::MPI_Comm_free(&mut dup) };
        return Err(e);
    }
    // SAFETY: `dup` is a live intra-communicator that nothing else owns (freed on drop).
    Ok(unsafe { SimpleCommunicator::from_raw(dup) })
}

/// This process's rank in `comm`, the size of `comm`, how many of its processes share this
/// node, and how many cores they may run on between them (`MPI_Comm_split_type` with
/// `MPI_COMM_TYPE_SHARED`, then the union of their allowed CPUs; collective).
pub(super) fn rank_size_local(
    comm: &SimpleCommunicator,
) -> Result<(usize, usize, NodeShare), TransportError> {
    let raw = comm.as_raw();
    let (mut rank, mut size, mut local): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: `comm` is live; the outputs are writable.
    unsafe {
        check(ffi::MPI_Comm_rank(raw, &mut rank), "MPI_Comm_rank")?;
        check(ffi::MPI_Comm_size(raw, &mut size), "MPI_Comm_size")?;
    }
    // SAFETY: a constant of the library.
    let mut node = unsafe { ffi::RSMPI_COMM_NULL };
    // SAFETY: `comm` is live; `node` is writable; the constants are the library's.
    check(
        unsafe {
            ffi::MPI_Comm_split_type(
                raw,
                ffi::RSMPI_COMM_TYPE_SHARED,
                0,
                ffi::RSMPI_INFO_NULL,
                &mut node,
            )
        },
        "MPI_Comm_split_type",
    )?;
    let mine = super::cpus::allowed().unwrap_or_else(super::cpus::unknown);
    let mut union = [0u64; super::cpus::WORDS];
    // SAFETY: `node` is the live communicator just made (inheriting MPI_ERRORS_RETURN from
    // `comm`), freed once; both buffers hold `WORDS` u64s.
    unsafe {
        let counted = check(ffi::MPI_Comm_size(node, &mut local), "MPI_Comm_size");
        let reduced = check(
            ffi::MPI_Allreduce(
                mine.as_ptr().cast(),
                union.as_mut_ptr().cast(),
                super::cpus::WORDS as c_int,
                ffi::RSMPI_UINT64_T,
                ffi::RSMPI_BOR,
                node,
            ),
            "MPI_Allreduce",
        );
        check(ffi::MPI_Comm_free(&mut node), "MPI_Comm_free")?;
        counted?;
        reduced?;
    }
    let whole = |x: c_int| {
        usize::try_from(x)
            .map_err(|_| TransportError::Mpi(format!("MPI gave {x} as a rank or size")))
    };
    let processes = whole(local)?.max(1);
    let cores = super::cpus::count(&union).unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    Ok((whole(rank)?, whole(size)?, NodeShare { processes, cores }))
}

/// What the job has of this process's node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct NodeShare {
    /// The job's processes on the node.
    pub processes: usize,
    /// The cores they may run on between them.
    pub cores: usize,
}

/// The first message with `tag` waiting from any rank, received whole (`MPI_Improbe` +
/// `MPI_Mrecv`): its source and bytes. `None` when nothing is waiting.
pub(super) fn try_receive(
    comm: &SimpleCommunicator,
    tag: c_int,
) -> Result<Option<(usize, Vec<u8>)>, TransportError> {
    let mut flag: c_int = 0;
    let mut message = MaybeUninit::<ffi::MPI_Message>::uninit();
    let mut status = MaybeUninit::<ffi::MPI_Status>::uninit();
    // SAFETY: `comm` is live; every output is writable.
    check(
        unsafe {
            ffi::MPI_Improbe(
                ffi::RSMPI_ANY_SOURCE,
                tag,
                comm.as_raw(),
                &mut flag,
                message.as_mut_ptr(),
                status.as_mut_ptr(),
            )
        },
        "MPI_Improbe",
    )?;
    if flag == 0 {
        return Ok(None);
    }
    // SAFETY: a successful probe that found a message wrote both.
    let (mut message, status) = unsafe { (message.assume_init(), status.assume_init()) };
    let mut count: c_int = 0;
    // SAFETY: `status` is the probe's; `count` is writable.
    check(
        unsafe { ffi::MPI_Get_count(&status, ffi::RSMPI_UINT8_T, &mut count) },
        "MPI_Get_count",
    )?;
    let len = usize::try_from(count)
        .map_err(|_| TransportError::Mpi(format!("MPI_Get_count gave {count} bytes")))?;
    let from = usize::try_from(status.MPI_SOURCE)
        .map_err(|_| TransportError::Mpi(format!("a message from rank {}", status.MPI_SOURCE)))?;
    // a kept buffer when one is large enough: its pages are already mapped
    let mut bytes = super::pool::take(len);
    bytes.resize(len, 0);
    let (ptr, n) = recv_buffer(&mut bytes)?;
    // SAFETY: `ptr` has room for `n` bytes (or is the empty word, with `n == 0`); `message` is
    // the matched message; the status is ignored.
    check(
        unsafe {
            ffi::MPI_Mrecv(
                ptr,
                n,
                ffi::RSMPI_UINT8_T,
                &mut message,
                ffi::RSMPI_STATUS_IGNORE,
            )
        },
        "MPI_Mrecv",
    )?;
    Ok(Some((from, bytes)))
}

/// hetlb's duplicate of a communicator, freed when dropped.
pub(super) struct OwnedComm(SimpleCommunicator);

impl OwnedComm {
    /// Duplicates `comm` (collective) on the calling thread, with `MPI_ERRORS_RETURN`.
    pub(super) fn duplicate_on_this_thread<C: Communicator>(
        comm: &C,
    ) -> Result<Self, TransportError> {
        duplicate(comm).map(Self)
    }

    pub(super) fn get(&self) -> &SimpleCommunicator {
        &self.0
    }
}

// SAFETY: an MPI communicator handle is a process-wide value. The engine that owns the
// duplicate is used by one thread at a time (under a mutex, or on hetlb's own thread);
// it is used from several threads only under MPI_THREAD_MULTIPLE (`Mpi::init` and
// `Mpi::adopt` check the level before they share it), and below that level only from the
// thread that made it (`Mode::Shared::only`, checked on every call).
unsafe impl Send for OwnedComm {}

/// A send in flight on a buffer it owns. rsmpi ties a request's buffer to a lexical scope,
/// which cannot outlive a failed call; here the buffer lives with the request, and a
/// request abandoned before completion (its receiver fell silent) is freed and its buffer
/// leaked, as MPI requires (`MPI_Request_free` lets the send finish in the background,
/// reading the buffer).
pub(super) struct PendingSend {
    request: ffi::MPI_Request,
    buffer: Vec<u8>,
    done: bool,
}

// SAFETY: the request and the buffer are only touched by the engine that owns them; the
// engine moves between threads only under MPI_THREAD_MULTIPLE or before MPI is used.
unsafe impl Send for PendingSend {}

impl PendingSend {
    /// Starts `MPI_Isend` of `buffer` to `to` with `tag` on `comm`.
    pub(super) fn start(
        comm: &OwnedComm,
        to: i32,
        tag: i32,
        buffer: Vec<u8>,
    ) -> Result<Self, TransportError> {
        let (ptr, count) = send_buffer(&buffer)?;
        // SAFETY: RSMPI_REQUEST_NULL is a constant initialised by the MPI library.
        let mut request = unsafe { ffi::RSMPI_REQUEST_NULL };
        // SAFETY: `ptr` is heap memory owned by the returned value, which keeps it alive (or
        // leaks it) until the request completes (or the empty word); `count` bytes of it are
        // readable; the communicator is live for this call.
        check(
            unsafe {
                ffi::MPI_Isend(
                    ptr,
                    count,
                    ffi::RSMPI_UINT8_T,
                    to,
                    tag,
                    comm.0.as_raw(),
                    &mut request,
                )
            },
            "MPI_Isend",
        )?;
        Ok(Self {
            request,
            buffer,
            done: false,
        })
    }

    /// `Ok(true)` once the send has completed (its buffer may then be dropped). An error
    /// of `MPI_Test` (the duplicate has `MPI_ERRORS_RETURN`) leaves the send pending: its
    /// buffer is then never freed while MPI may still read it.
    pub(super) fn test(&mut self) -> Result<bool, TransportError> {
        if self.done {
            return Ok(true);
        }
        let mut flag = 0;
        // SAFETY: `request` is the live request of this send; the status is ignored.
        check(
            unsafe { ffi::MPI_Test(&mut self.request, &mut flag, ffi::RSMPI_STATUS_IGNORE) },
            "MPI_Test",
        )?;
        self.done = flag != 0;
        Ok(self.done)
    }

    /// The buffer of a completed send, for another message (empty while the send is
    /// pending: MPI may still read it).
    pub(super) fn take_buffer(&mut self) -> Vec<u8> {
        if self.done {
            std::mem::take(&mut self.buffer)
        } else {
            Vec::new()
        }
    }
}

impl Drop for PendingSend {
    fn drop(&mut self) {
        if !self.done && !matches!(self.test(), Ok(true)) {
            // SAFETY: the request is live (or null after a failed test, which
            // MPI_Request_free rejects harmlessly under MPI_ERRORS_RETURN); freeing it lets
            // the send complete in the background, so the buffer must outlive it: it is
            // leaked on purpose.
            unsafe {
                ffi::MPI_Request_free(&mut self.request);
            }
            std::mem::forget(std::mem::take(&mut self.buffer));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_buffer_has_a_real_address_and_no_count() {
        let empty: Vec<u8> = Vec::new();
        let (p, n) = send_buffer(&empty).unwrap();
        assert_eq!(n, 0);
        assert_eq!(p, EMPTY.as_ptr().cast_const().cast());
        assert_ne!(p as usize, 1, "Open MPI's MPI_IN_PLACE");
        assert_ne!(p as usize, 0, "MPI_BOTTOM");
        let mut none: [u64; 0] = [];
        let (q, m) = recv_buffer(&mut none).unwrap();
        assert_eq!((q.cast_const(), m), (p, 0));
        let mut some = [1u32, 2, 3];
        let (r, k) = recv_buffer(&mut some).unwrap();
        assert_eq!((r, k), (some.as_mut_ptr().cast(), 3));
        // More elements than an int counts (zero-sized: nothing is allocated).
        let huge = vec![(); c_int::MAX as usize + 1];
        assert!(send_buffer(&huge).is_err());
    }
}
