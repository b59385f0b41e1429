//! `hetlb.Balancer`: the peer balancer (`hetlb_peer::Balancer`) over an mpi4py
//! communicator (feature `mpi`). Without the feature nothing is registered and the Python
//! side says that this build has no MPI.

use pyo3::prelude::*;

#[cfg(feature = "mpi")]
mod options;
#[cfg(feature = "mpi")]
mod packed;
#[cfg(feature = "mpi")]
mod peer;
#[cfg(feature = "mpi")]
mod rows;

/// Adds the balancer's classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    #[cfg(feature = "mpi")]
    {
        m.add_class::<peer::NativeBalancer>()?;
        m.add_function(wrap_pyfunction!(peer::mpi_library_version, m)?)?;
        m.add_function(wrap_pyfunction!(peer::comm_handle_size, m)?)?;
        m.add_function(wrap_pyfunction!(peer::mpi_compiler, m)?)?;
    }
    let _ = m;
    Ok(())
}
