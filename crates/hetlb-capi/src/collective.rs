//! The collectives of the two-step form on hetlb's duplicate (which has `MPI_ERRORS_RETURN`),
//! every return code checked and every buffer argument built by the transport's
//! [`send_buffer`] / [`recv_buffer`]: an empty buffer is never passed as the dangling address
//! of an empty slice, which is Open MPI's `MPI_IN_PLACE` (`MPI_ERR_ARG` in `MPI_Alltoallv`
//! on a rank that sends or receives nothing).
#![allow(unsafe_code)]

use crate::error::CapiError;
use hetlb_transport::TransportError;
use hetlb_transport::mpi::{check, recv_buffer, send_buffer};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use std::ffi::c_int;

fn mpi_error(e: TransportError) -> CapiError {
    CapiError::Mpi(e.to_string())
}

/// `MPI_Allreduce` of one `i32` with `MPI_MAX`: the largest of every rank's `mine`.
pub(crate) fn max_i32(comm: &SimpleCommunicator, mine: i32) -> Result<i32, CapiError> {
    let (mine, mut out) = ([mine], [0i32]);
    let (send, n) = send_buffer(&mine[..]).map_err(mpi_error)?;
    let (recv, _) = recv_buffer(&mut out[..]).map_err(mpi_error)?;
    // SAFETY: the library's constant datatype and operation; `n` values at `send` and room
    // for them at `recv`; the communicator is live.
    let rc = unsafe {
        ffi::MPI_Allreduce(
            send,
            recv,
            n,
            ffi::RSMPI_INT32_T,
            ffi::RSMPI_MAX,
            comm.as_raw(),
        )
    };
    check(rc, "MPI_Allreduce").map_err(mpi_error)?;
    Ok(out[0])
}

/// `MPI_Alltoall` of one `i32` per rank: `mine[r]` goes to rank `r`; the result's `[r]` came
/// from rank `r`.
pub(crate) fn all_to_all_i32(
    comm: &SimpleCommunicator,
    mine: &[i32],
) -> Result<Vec<i32>, CapiError> {
    let mut out = vec![0i32; mine.len()];
    let (send, _) = send_buffer(mine).map_err(mpi_error)?;
    let (recv, _) = recv_buffer(&mut out).map_err(mpi_error)?;
    // SAFETY: the library's constant datatype.
    let datatype = unsafe { ffi::RSMPI_INT32_T };
    // SAFETY: one value per rank at `send`, room for one per rank at `recv` (`mine` has one
    // per rank: the caller's); the communicator is live.
    let rc = unsafe { ffi::MPI_Alltoall(send, 1, datatype, recv, 1, datatype, comm.as_raw()) };
    check(rc, "MPI_Alltoall").map_err(mpi_error)?;
    Ok(out)
}

/// `MPI_Alltoallv` of bytes: `send_counts[r]` bytes of `send` from `send_displs[r]` go to rank
/// `r`, `recv_counts[r]` bytes from rank `r` land at `recv_displs[r]` of `recv`. A rank that
/// sends or receives nothing passes empty buffers, as any other.
pub(crate) fn all_to_all_bytes(
    comm: &SimpleCommunicator,
    send: &[u8],
    send_counts: &[c_int],
    send_displs: &[c_int],
    recv: &mut [u8],
    recv_counts: &[c_int],
    recv_displs: &[c_int],
) -> Result<(), CapiError> {
    let within = |counts: &[c_int], displs: &[c_int], len: usize| {
        counts.iter().zip(displs).all(|(&c, &d)| {
            usize::try_from(c)
                .ok()
                .zip(usize::try_from(d).ok())
                .and_then(|(c, d)| c.checked_add(d))
                .is_some_and(|end| end <= len)
        })
    };
    if !within(send_counts, send_displs, send.len())
        || !within(recv_counts, recv_displs, recv.len())
    {
        return Err(CapiError::Internal(
            "an all-to-all's counts run past its buffers".into(),
        ));
    }
    let (sp, _) = send_buffer(send).map_err(mpi_error)?;
    let (rp, _) = recv_buffer(recv).map_err(mpi_error)?;
    let (sc, _) = send_buffer(send_counts).map_err(mpi_error)?;
    let (sd, _) = send_buffer(send_displs).map_err(mpi_error)?;
    let (rc, _) = send_buffer(recv_counts).map_err(mpi_error)?;
    let (rd, _) = send_buffer(recv_displs).map_err(mpi_error)?;
    // SAFETY: the library's constant datatype.
    let bytes = unsafe { ffi::RSMPI_UINT8_T };
    // SAFETY: the counts and displacements lie within the buffers (checked above), one of
    // each per rank (the caller's); the communicator is live.
    let code = unsafe {
        ffi::MPI_Alltoallv(
            sp,
            sc.cast(),
            sd.cast(),
            bytes,
            rp,
            rc.cast(),
            rd.cast(),
            bytes,
            comm.as_raw(),
        )
    };
    check(code, "MPI_Alltoallv").map_err(mpi_error)
}
