//! The native balancer: a `hetlb_peer::Balancer` of [`Packed`] items on hetlb's
//! duplicate of an mpi4py communicator. The Python class `hetlb.Balancer` checks the
//! communicator and the MPI library, converts the options to text, packs the items and calls
//! this one.

use super::options::configure;
use super::packed::{MAX_ITEMS, Packed, id_of, own_index};
use super::rows::{PackError, RowRecords};
use crate::errors::{Error, HetlbError, InvalidInputError, MPIError, Result};
use hetlb_peer::{Balancer, Bytes, ConfigError, PeerError, Records};
use hetlb_transport::mpi::Mpi;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use numpy::{PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use std::mem::ManuallyDrop;

/// The version string of the MPI library this extension is linked to
/// (`MPI_Get_library_version`, callable before MPI starts).
#[pyfunction]
pub fn mpi_library_version() -> String {
    mpi::environment::library_version().unwrap_or_default()
}

/// Bytes of an `MPI_Comm` handle in the MPI library this extension is linked to (4 under
/// MPICH, 8 under Open MPI).
#[pyfunction]
pub fn comm_handle_size() -> usize {
    std::mem::size_of::<mpi::ffi::MPI_Comm>()
}

/// The MPI C compiler wrapper this extension was built with (`MPICC` at build time, `mpicc`
/// when unset): the one to build mpi4py with.
#[pyfunction]
pub fn mpi_compiler() -> &'static str {
    option_env!("MPICC").unwrap_or("mpicc")
}

/// What a rebalance hands back: what this rank holds, and the report (JSON) or the error.
type Outcome<H> = (H, Option<String>, Option<PyErr>);

/// The balancer and the MPI it works on (kept alive for it); dropped together, the balancer
/// first.
struct Live {
    balancer: Balancer<Packed, Mpi<'static>>,
    records: Balancer<Bytes, Mpi<'static>>,
    _mpi: Mpi<'static>,
}

/// A value used inside `Python::detach` (the GIL let go while a call waits on MPI).
struct OnThisThread<T>(T);

// SAFETY: `Python::detach` runs its closure on the calling thread, so the value crosses no
// thread; the class is `unsendable`, so Python cannot hand the balancer to another thread
// either.
#[allow(unsafe_code)]
unsafe impl<T> Send for OnThisThread<T> {}

/// hetlb's balancer on one rank (the native half of `hetlb.Balancer`).
#[pyclass(module = "hetlb._hetlb", unsendable)]
pub struct NativeBalancer {
    live: Option<Live>,
    rank: usize,
    size: usize,
    topology: String,
}

/// This rank's items as the balancer carries them: `(bytes, load)` pairs, numbered in order.
fn packed(rank: usize, items: impl IntoIterator<Item = (Vec<u8>, u64)>) -> Vec<Packed> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, (data, load))| Packed {
            id: id_of(rank, i),
            load,
            data,
            at: None,
        })
        .collect()
}

/// A position of 1 to 3 coordinates, padded with zeros.
fn position_of(coords: &[f64]) -> [f64; 3] {
    let mut at = [0.0; 3];
    for (a, c) in at.iter_mut().zip(coords) {
        *a = *c;
    }
    at
}

/// Refuses more items than a rank can number (`what`: the argument, and what it holds).
fn check_count(count: usize, what: &str) -> Result<()> {
    if count >= MAX_ITEMS {
        return Err(InvalidInputError::new_err(format!("{what} on one rank")).into());
    }
    Ok(())
}

/// A call's report as JSON, or its error as the exception to raise (after the caller has
/// put back what this rank holds).
fn outcome<R: serde::Serialize>(
    result: std::result::Result<R, PeerError>,
) -> (Option<String>, Option<PyErr>) {
    match result
        .map_err(Error::from)
        .and_then(|r| Ok(serde_json::to_string(&r)?))
    {
        Ok(json) => (Some(json), None),
        Err(e) => (None, Some(e.into())),
    }
}

/// hetlb's duplicate of the communicator whose Fortran handle is `handle` (mpi4py's
/// `Comm.py2f()`, an `int` under every MPI, whatever its C handles are: `int`s in MPICH,
/// pointers in Open MPI), in the MPI library this extension is linked to (checked by the
/// caller). Collective.
fn adopt(handle: i64) -> Result<Mpi<'static>> {
    let fint = mpi::ffi::RSMPI_Fint::try_from(handle).map_err(|_| {
        InvalidInputError::new_err(format!(
            "communicator handle {handle} is not a Fortran handle (Comm.py2f())"
        ))
    })?;
    if !mpi::environment::is_initialized() || mpi::environment::is_finalized() {
        return Err(MPIError::new_err(
            "MPI is not initialised in the MPI library hetlb is linked to (is mpi4py on another \
             MPI library?)",
        )
        .into());
    }
    // SAFETY: MPI is initialised; the conversion reads a handle table.
    #[allow(unsafe_code)]
    let raw = unsafe { mpi::ffi::RSMPI_Comm_f2c(fint) };
    // SAFETY: a constant of the library.
    #[allow(unsafe_code)]
    if raw == unsafe { mpi::ffi::RSMPI_COMM_NULL } {
        return Err(MPIError::new_err(format!(
            "communicator handle {handle} is MPI_COMM_NULL (freed, or never created)"
        ))
        .into());
    }
    // SAFETY: `raw` is a live intra-communicator of this process's MPI (checked by the
    // Python side: not MPI_COMM_NULL, not an intercommunicator, the same library). The
    // wrapper is never dropped, so the application's communicator is not freed; hetlb
    // works on its own duplicate. The Python side closes every balancer before MPI is
    // finalised.
    #[allow(unsafe_code)]
    let mpi = unsafe {
        let comm = ManuallyDrop::new(wrap(raw));
        Mpi::adopt_foreign(&*comm)
    };
    mpi.map_err(|e| MPIError::new_err(e.to_string()).into())
}

impl NativeBalancer {
    /// The balancer, unless closed.
    fn live(&mut self) -> Result<&mut Live> {
        self.live
            .as_mut()
            .ok_or_else(|| MPIError::new_err("the balancer is closed").into())
    }

    /// Refuses the call this rank was making (`rows`: of the row balancer), because of its
    /// own argument error `error`, which is returned: the others hear of it at once.
    fn refusing<T>(&mut self, py: Python<'_>, rows: bool, error: Error) -> Result<T> {
        let reason = PyErr::from(error);
        let text = reason.to_string();
        let _ = self.refuse(py, &text, rows);
        Err(reason.into())
    }

    /// Runs `f` on the live balancer with the GIL let go, on this thread. `f` must not touch
    /// a Python object: nothing checks it (its captures cross `detach` as [`OnThisThread`]).
    fn detached<T, F>(&mut self, py: Python<'_>, f: F) -> Result<T>
    where
        F: FnOnce(&mut Live) -> T,
    {
        let live = OnThisThread((self.live()?, f));
        Ok(py
            .detach(move || {
                let live = live;
                let (live, f) = live.0;
                OnThisThread(f(live))
            })
            .0)
    }
}

#[pymethods]
impl NativeBalancer {
    /// A balancer on hetlb's duplicate of the communicator whose Fortran handle is `handle`
    /// (`Comm.py2f()`, in the MPI library this extension is linked to, checked by the
    /// caller), for `rule` with
    /// `options`: `(name, text)` pairs (or a dict) of the library's options table, set in
    /// order. Collective.
    #[new]
    #[pyo3(signature = (handle, rule, options=None))]
    fn new(handle: i64, rule: &str, options: Option<&Bound<'_, PyAny>>) -> Result<Self> {
        let config = configure(rule, options)?;
        let mpi = adopt(handle)?;
        // Two endpoints, opened in the same order on every rank: pickled objects, and rows.
        let balancer = Balancer::new(&mpi, config.clone())?;
        let records = Balancer::new(&mpi, config)?;
        Ok(Self {
            rank: balancer.rank(),
            size: balancer.size(),
            topology: balancer.topology().to_string(),
            live: Some(Live {
                balancer,
                records,
                _mpi: mpi,
            }),
        })
    }

    /// This rank.
    #[getter]
    fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks.
    #[getter]
    fn size(&self) -> usize {
        self.size
    }

    /// The ranks' topology as a spec.
    #[getter]
    fn topology(&self) -> &str {
        &self.topology
    }

    /// Reports `units` of work done in `seconds` (measured speeds).
    fn record(&mut self, units: u64, seconds: f64) -> Result<()> {
        let live = self.live()?;
        live.balancer
            .try_record(units, seconds)
            .map_err(|e| InvalidInputError::new_err(e.to_string()))?;
        live.records.record(units, seconds);
        Ok(())
    }

    /// This rank's measured speed, once it has one.
    fn speed(&mut self) -> Result<Option<f64>> {
        Ok(self.live()?.balancer.speed())
    }

    /// What a rebalance would do now, moving nothing (collective): `loads` gives this
    /// rank's items' loads. Returns the advice as JSON (`hetlb_core::advice::Advice`).
    fn advise(&mut self, py: Python<'_>, loads: Vec<u64>) -> Result<String> {
        if let Err(e) = check_count(loads.len(), "items: too many items") {
            return self.refusing(py, false, e);
        }
        let items = packed(self.rank, loads.into_iter().map(|load| (Vec::new(), load)));
        let advice = self.detached(py, move |live| live.balancer.advise(&items))??;
        Ok(serde_json::to_string(&advice)?)
    }

    /// Rebalances pickled items: `items` are `(bytes, load)` pairs. Returns
    /// `(layout, report_json, error)`: what this rank holds now (an index into `items` for
    /// an item it kept, the bytes of an item it received), and the report or the error.
    #[pyo3(signature = (items, positions=None))]
    fn rebalance_packed<'py>(
        &mut self,
        py: Python<'py>,
        items: Vec<(Vec<u8>, u64)>,
        positions: Option<Vec<Vec<f64>>>,
    ) -> Result<Outcome<Bound<'py, PyList>>> {
        if let Err(e) = check_count(items.len(), "items: too many items") {
            return self.refusing(py, false, e);
        }
        if let Some(p) = &positions
            && p.len() != items.len()
        {
            let e = InvalidInputError::new_err(format!(
                "coords: {} positions given for {} items",
                p.len(),
                items.len()
            ));
            return self.refusing(py, false, e.into());
        }
        let rank = self.rank;
        let mut items = packed(rank, items);
        if let Some(p) = positions {
            for (item, at) in items.iter_mut().zip(p) {
                item.at = Some(position_of(&at));
            }
        }
        let result = self.detached(py, |live| live.balancer.rebalance(&mut items))?;
        let layout = PyList::empty(py);
        for p in items {
            match own_index(rank, p.id) {
                Some(i) => layout.append(i)?,
                None => layout.append(PyBytes::new(py, &p.data))?,
            }
        }
        let (report, error) = outcome(result);
        Ok((layout, report, error))
    }

    /// Rebalances the rows of `rows` (a 2-D `uint8` array, one row per item) weighing
    /// `loads` (one per row, or `None` for one unit each). The rows move as byte records
    /// (`peer::Records`): each row with an 8-byte id (and its load) appended, one copy into a
    /// message and one out. Returns `(rows, report_json, error)`: the rows this rank holds
    /// now (its kept rows in order, then the received ones), and the report or the error.
    #[pyo3(signature = (rows, loads=None, coords=None))]
    fn rebalance_rows<'py>(
        &mut self,
        py: Python<'py>,
        rows: PyReadonlyArray2<'py, u8>,
        loads: Option<PyReadonlyArray1<'py, u64>>,
        coords: Option<PyReadonlyArray2<'py, f64>>,
    ) -> Result<Outcome<Bound<'py, PyArray2<u8>>>> {
        let n = rows.as_array().nrows();
        if let Err(e) = check_count(n, "arr: too many rows") {
            return self.refusing(py, true, e);
        }
        let loads = loads.map(|l| l.as_array().to_vec());
        if let Some(l) = &loads
            && l.len() != n
        {
            let e =
                InvalidInputError::new_err(format!("load: {} loads given for {n} rows", l.len()));
            return self.refusing(py, true, e.into());
        }
        let coords = coords.map(|c| c.as_array().to_owned());
        if let Some(c) = &coords
            && (c.nrows() != n || !(1..=3).contains(&c.ncols()))
        {
            let e = InvalidInputError::new_err(format!(
                "coords: an array of shape ({}, {}) for {n} rows (expected ({n}, 1), ({n}, 2) \
                 or ({n}, 3))",
                c.nrows(),
                c.ncols()
            ));
            return self.refusing(py, true, e.into());
        }
        let mut packed = RowRecords::pack(
            rows.as_array(),
            loads.as_deref(),
            coords.as_ref().map(|c| c.view()),
            self.rank,
        )
        .map_err(|e| match e {
            PackError::Overflow { .. } => InvalidInputError::new_err(e.to_string()),
            PackError::NoMemory { .. } => pyo3::exceptions::PyMemoryError::new_err(e.to_string()),
        })?;
        drop(rows);
        let result = self.detached(py, |live| {
            let (size, width) = (packed.size, packed.width);
            let weigh = RowRecords::load_of(width);
            Records::new(&mut packed.buffer, size, width)
                .and_then(|records| match packed.positions {
                    Some((offset, dim)) => records.with_positions(offset, dim),
                    None => Ok(records),
                })
                .map_err(|source| {
                    let e = PeerError::from(ConfigError::Records {
                        argument: Some("arr"),
                        source,
                    });
                    // The others are in the call: this rank refuses it.
                    let _ = live.records.refuse(&e.to_string());
                    e
                })
                .and_then(|records| {
                    let mut records = if packed.weighted {
                        records.with_loads(&weigh)
                    } else {
                        records
                    };
                    live.records.rebalance(&mut records)
                })
        })?;
        let (flat, held) = packed.unpack();
        let out = numpy::ndarray::Array2::from_shape_vec((held, packed.width), flat)
            .map_err(|e| HetlbError::new_err(format!("rows: {e}")))?;
        let (report, error) = outcome(result);
        Ok((PyArray2::from_owned_array(py, out), report, error))
    }

    /// Refuses the next call, because this rank's own arguments failed a check (`reason`):
    /// the others' calls return at once naming this rank. `rows`: the call of
    /// `rebalance_rows` (otherwise of `rebalance_packed` or `advise`).
    fn refuse(&mut self, py: Python<'_>, reason: &str, rows: bool) -> Result<()> {
        let reason = reason.to_string();
        Ok(self.detached(py, move |live| {
            if rows {
                live.records.refuse(&reason)
            } else {
                live.balancer.refuse(&reason)
            }
        })??)
    }

    /// Settles a call whose outcome was in doubt; returns the bytes of the items put back.
    fn resolve<'py>(&mut self, py: Python<'py>) -> Result<Bound<'py, PyList>> {
        let mut back: Vec<Packed> = Vec::new();
        self.detached(py, |live| live.balancer.resolve(&mut back))??;
        let list = PyList::empty(py);
        for p in back {
            list.append(PyBytes::new(py, &p.data))?;
        }
        Ok(list)
    }

    /// Every rank's `values` (as many on every rank), in rank order, the same on every rank;
    /// timed as a call. `rows`: on the balancer of `rebalance_rows` (otherwise of
    /// `rebalance_packed` and `advise`), so that a refusal of that call is seen here.
    fn all_gather_values(
        &mut self,
        py: Python<'_>,
        values: Vec<f64>,
        rows: bool,
    ) -> Result<Vec<Vec<f64>>> {
        Ok(self.detached(py, move |live| {
            if rows {
                live.records.all_gather_values(&values)
            } else {
                live.balancer.all_gather_values(&values)
            }
        })??)
    }

    /// A timed barrier that names a rank that stopped.
    fn barrier(&mut self, py: Python<'_>) -> Result<()> {
        Ok(self.detached(py, |live| live.balancer.barrier())??)
    }

    /// Ends hetlb's use of the communicator (frees its duplicate after a farewell to every
    /// peer). Collective; idempotent.
    fn close(&mut self, py: Python<'_>) {
        if let Some(live) = self.live.take() {
            let live = OnThisThread(live);
            py.detach(move || {
                let live = live;
                drop(live);
            });
        }
    }

    /// True once closed.
    #[getter]
    fn closed(&self) -> bool {
        self.live.is_none()
    }
}

/// Wraps a raw communicator handle (world and self by their own constructors).
///
/// # Safety
/// `raw` must be a live intra-communicator; the result must not be dropped unless it owns
/// `raw`.
#[allow(unsafe_code)]
unsafe fn wrap(raw: mpi::ffi::MPI_Comm) -> SimpleCommunicator {
    // SAFETY: reading the library's constant handles.
    let (world, me) = unsafe { (mpi::ffi::RSMPI_COMM_WORLD, mpi::ffi::RSMPI_COMM_SELF) };
    if raw == world {
        SimpleCommunicator::world()
    } else if raw == me {
        SimpleCommunicator::self_comm()
    } else {
        // SAFETY: as this function's contract.
        unsafe { SimpleCommunicator::from_raw(raw) }
    }
}
