//! The native balancer: a `hetlb_peer::Balancer` of [`Packed`] items on hetlb's
//! duplicate of an mpi4py communicator. The Python class `hetlb.Balancer` checks the
//! communicator and the MPI library, packs the items and calls this one.

use super::packed::{MAX_ITEMS, Packed, id_of, own_index};
use crate::errors::{Kind, raise, raise_with};
use hetlb_core::advice::{CostModel, Trigger};
use hetlb_core::transmission::Schedule;
use hetlb_peer::{
    Balancer, BalancerConfig, Bytes, ConfigError, Fault, Holding, PeerError, PeerFailure, Records,
    Speeds,
};
use hetlb_transport::mpi::Mpi;
use mpi::raw::FromRaw;
use mpi::topology::SimpleCommunicator;
use numpy::{PyArray2, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::mem::ManuallyDrop;
use std::time::Duration;

/// The version string of the MPI library this extension is linked to
/// (`MPI_Get_library_version`, callable before MPI starts).
#[pyfunction]
pub fn mpi_library_version() -> String {
    mpi::environment::library_version().unwrap_or_default()
}

/// Bytes of an `MPI_Comm` handle in the MPI library this extension is linked to.
#[pyfunction]
pub fn comm_handle_size() -> usize {
    std::mem::size_of::<mpi::ffi::MPI_Comm>()
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
        })
        .collect()
}

fn config_error(py: Python<'_>, e: &PeerError) -> PyErr {
    raise(py, Kind::InvalidInput, e.to_string())
}

/// The exception of a failed call, with the failed rank and what this rank holds.
fn peer_error(py: Python<'_>, e: &PeerError) -> PyErr {
    let kind = match e {
        PeerError::Config(_) => return config_error(py, e),
        PeerError::Transport(_) => Kind::Mpi,
        PeerError::PeerFailed {
            failure: PeerFailure::Silent { .. },
            ..
        } => Kind::PeerTimeout,
        _ => Kind::Peer,
    };
    let attrs = PyDict::new(py);
    let (holding, aside) = match e.holding() {
        Holding::Before => ("before", 0),
        Holding::InDoubt { items_aside } => ("in_doubt", items_aside),
        _ => ("unknown", 0),
    };
    let filled = attrs
        .set_item("failed_rank", e.culprit())
        .and_then(|()| attrs.set_item("holding", holding))
        .and_then(|()| attrs.set_item("items_aside", aside));
    if let Err(err) = filled {
        return err;
    }
    raise_with(py, kind, e.to_string(), Some(&attrs))
}

impl NativeBalancer {
    fn live(&mut self, py: Python<'_>) -> PyResult<&mut Live> {
        self.live
            .as_mut()
            .ok_or_else(|| raise(py, Kind::Mpi, "the balancer is closed".to_string()))
    }

    /// Runs `rebalance` on `items`; returns the layout of what this rank holds afterwards
    /// (each entry an index into the items given, or the bytes of an item received), the
    /// report as JSON or the error.
    fn run(
        &mut self,
        py: Python<'_>,
        mut items: Vec<Packed>,
    ) -> PyResult<(Vec<Packed>, Result<String, PyErr>)> {
        let live = OnThisThread(self.live(py)?);
        let outcome = py.detach(move || {
            let live = live;
            let r = live.0.balancer.rebalance(&mut items);
            (items, r)
        });
        let (items, result) = outcome;
        let result = match result {
            Ok(report) => serde_json::to_string(&report)
                .map_err(|e| raise(py, Kind::Other, format!("serialising: {e}"))),
            Err(e) => Err(peer_error(py, &e)),
        };
        Ok((items, result))
    }
}

fn schedule(py: Python<'_>, name: &str) -> PyResult<Schedule> {
    name.parse()
        .map_err(|e| raise(py, Kind::InvalidInput, format!("schedule: {e}")))
}

#[pymethods]
impl NativeBalancer {
    /// A balancer on hetlb's duplicate of the communicator `handle` (an `MPI_Comm` of the
    /// MPI library this extension is linked to, checked by the caller). Collective.
    #[new]
    #[pyo3(signature = (handle, rule, speeds, capacities, window, topology, schedule_name,
        timeout, entry_timeout, procs_per_group, max_rounds, seed, lambda_, fault=None,
        trigger=None, move_cost=None, learn_cost=false, routing="paper", candidates=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        handle: i64,
        rule: &str,
        speeds: &str,
        capacities: Option<Vec<f64>>,
        window: usize,
        topology: Option<&str>,
        schedule_name: &str,
        timeout: f64,
        entry_timeout: Option<f64>,
        procs_per_group: Option<usize>,
        max_rounds: Option<u64>,
        seed: u64,
        lambda_: Option<f64>,
        fault: Option<&str>,
        trigger: Option<&str>,
        move_cost: Option<(f64, f64)>,
        learn_cost: bool,
        routing: &str,
        candidates: Option<Vec<String>>,
    ) -> PyResult<Self> {
        let bad = |m: String| raise(py, Kind::InvalidInput, m);
        let mut config = BalancerConfig::new(rule)
            .map_err(|e| raise(py, Kind::UnknownAlgorithm, format!("rule: {e}")))?;
        if let Some(t) = topology {
            config = config.topology(t).map_err(|e| config_error(py, &e))?;
        }
        let speeds = match (speeds, capacities) {
            ("equal", None) => Speeds::Equal,
            ("measured", None) => Speeds::Measured { window },
            ("fixed", Some(c)) => Speeds::Fixed(c),
            (other, _) => {
                return Err(bad(format!(
                    "speeds: '{other}' is not one of 'equal', 'measured' or a list of capacities"
                )));
            }
        };
        let seconds = |name: &str, s: f64| {
            if s.is_finite() && s > 0.0 && s < 1e9 {
                Ok(Duration::from_secs_f64(s))
            } else {
                Err(bad(format!(
                    "{name}: {s} is not a positive number of seconds"
                )))
            }
        };
        config = config
            .speeds(speeds)
            .schedule(schedule(py, schedule_name)?)
            .timeout(seconds("timeout", timeout)?)
            .entry_timeout(
                entry_timeout
                    .map(|s| seconds("entry_timeout", s))
                    .transpose()?,
            )
            .procs_per_group(procs_per_group)
            .max_rounds(max_rounds)
            .seed(seed)
            .lambda(lambda_)
            .fault(parse_fault(py, fault)?);
        if let Some(t) = trigger {
            config = config.trigger(
                t.parse::<Trigger>()
                    .map_err(|e| bad(format!("trigger: {e}")))?,
            );
        }
        if let Some((alpha, beta)) = move_cost {
            let model = CostModel {
                seconds_per_message: alpha,
                seconds_per_byte: beta,
            };
            model
                .validate()
                .map_err(|e| bad(format!("move_cost: {e}")))?;
            config = config.cost_model(model);
        }
        config = config
            .learn_cost(learn_cost)
            .routing(routing.parse().map_err(|e| bad(format!("routing: {e}")))?);
        if let Some(names) = candidates {
            if rule != hetlb_peer::AUTO {
                return Err(bad(format!(
                    "candidates: only rule auto has candidates, not {rule}"
                )));
            }
            let list = names
                .iter()
                .map(|n| {
                    n.parse::<hetlb_core::algorithm::Algorithm>()
                        .map_err(|e| raise(py, Kind::UnknownAlgorithm, format!("candidates: {e}")))
                })
                .collect::<PyResult<Vec<_>>>()?;
            if list.is_empty() {
                return Err(bad("candidates: name at least one rule".into()));
            }
            config = config.candidates(list);
        }
        // MPICH's handles are C ints.
        let raw = std::os::raw::c_int::try_from(handle)
            .map(mpi::ffi::MPI_Comm)
            .map_err(|_| {
                raise(
                    py,
                    Kind::Mpi,
                    format!("communicator handle {handle} is not an MPICH handle"),
                )
            })?;
        // SAFETY: `raw` is a live intra-communicator of this process's MPI (checked by the
        // Python side: not MPI_COMM_NULL, not an intercommunicator, the same library). The
        // wrapper is never dropped, so the application's communicator is not freed; hetlb
        // works on its own duplicate. The Python side closes every balancer before MPI is
        // finalised.
        #[allow(unsafe_code)]
        let mpi = unsafe {
            let comm = ManuallyDrop::new(wrap(raw));
            Mpi::adopt_foreign(&*comm)
        }
        .map_err(|e| raise(py, Kind::Mpi, e.to_string()))?;
        // Two endpoints, opened in the same order on every rank: pickled objects, and rows.
        let balancer = Balancer::new(&mpi, config.clone()).map_err(|e| peer_error(py, &e))?;
        let records = Balancer::new(&mpi, config).map_err(|e| peer_error(py, &e))?;
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
    fn record(&mut self, py: Python<'_>, units: u64, seconds: f64) -> PyResult<()> {
        if !(seconds.is_finite() && seconds >= 0.0) {
            return Err(raise(
                py,
                Kind::InvalidInput,
                format!("seconds: {seconds} is not a non-negative number"),
            ));
        }
        let live = self.live(py)?;
        live.balancer.record(units, seconds);
        live.records.record(units, seconds);
        Ok(())
    }

    /// This rank's measured speed, once it has one.
    fn speed(&mut self, py: Python<'_>) -> PyResult<Option<f64>> {
        Ok(self.live(py)?.balancer.speed())
    }

    /// What a rebalance would do now, moving nothing (collective): `loads` gives this
    /// rank's items' loads. Returns the advice as JSON (`hetlb_core::advice::Advice`).
    fn advise(&mut self, py: Python<'_>, loads: Vec<u64>) -> PyResult<String> {
        if loads.len() >= MAX_ITEMS {
            return Err(raise(
                py,
                Kind::InvalidInput,
                "items: too many items on one rank".into(),
            ));
        }
        let items = packed(self.rank, loads.into_iter().map(|load| (Vec::new(), load)));
        let live = OnThisThread(self.live(py)?);
        let result = py.detach(move || {
            let live = live;
            live.0.balancer.advise(&items)
        });
        match result {
            Ok(advice) => serde_json::to_string(&advice)
                .map_err(|e| raise(py, Kind::Other, format!("serialising: {e}"))),
            Err(e) => Err(peer_error(py, &e)),
        }
    }

    /// Rebalances pickled items: `items` are `(bytes, load)` pairs. Returns
    /// `(layout, report_json, error)`: what this rank holds now (an index into `items` for
    /// an item it kept, the bytes of an item it received), and the report or the error.
    fn rebalance_packed<'py>(
        &mut self,
        py: Python<'py>,
        items: Vec<(Vec<u8>, u64)>,
    ) -> PyResult<Outcome<Bound<'py, PyList>>> {
        if items.len() >= MAX_ITEMS {
            return Err(raise(
                py,
                Kind::InvalidInput,
                "items: too many items on one rank".into(),
            ));
        }
        let rank = self.rank;
        let (held, result) = self.run(py, packed(rank, items))?;
        let layout = PyList::empty(py);
        for p in held {
            match own_index(rank, p.id) {
                Some(i) => layout.append(i)?,
                None => layout.append(PyBytes::new(py, &p.data))?,
            }
        }
        let (report, error) = match result {
            Ok(r) => (Some(r), None),
            Err(e) => (None, Some(e)),
        };
        Ok((layout, report, error))
    }

    /// Rebalances the rows of `rows` (a 2-D `uint8` array, one row per item) weighing
    /// `loads` (one per row, or `None` for one unit each). The rows move as byte records
    /// (`peer::Records`): each row with an 8-byte id (and its load) appended, one copy into a
    /// message and one out. Returns `(rows, report_json, error)`: the rows this rank holds
    /// now (its kept rows in order, then the received ones), and the report or the error.
    #[pyo3(signature = (rows, loads=None))]
    fn rebalance_rows<'py>(
        &mut self,
        py: Python<'py>,
        rows: PyReadonlyArray2<'py, u8>,
        loads: Option<PyReadonlyArray1<'py, u64>>,
    ) -> PyResult<Outcome<Bound<'py, PyArray2<u8>>>> {
        let view = rows.as_array();
        let (n, width) = view.dim();
        if n >= MAX_ITEMS {
            return Err(raise(
                py,
                Kind::InvalidInput,
                "arr: too many rows on one rank".into(),
            ));
        }
        let loads = loads.map(|l| l.as_array().to_vec());
        if let Some(l) = &loads
            && l.len() != n
        {
            return Err(raise(
                py,
                Kind::InvalidInput,
                format!("load: {} loads given for {n} rows", l.len()),
            ));
        }
        let weighted = loads.is_some();
        let size = width + if weighted { 16 } else { 8 };
        let rank = self.rank;
        let mut buffer: Vec<u8> = vec![0; n * size];
        let append = |i: usize, record: &mut [u8]| {
            record[width..width + 8].copy_from_slice(&id_of(rank, i).to_ne_bytes());
            if let Some(l) = &loads {
                record[width + 8..].copy_from_slice(&l[i].to_ne_bytes());
            }
        };
        match view.as_slice() {
            // The usual case (the caller passes a C-contiguous array): one slice per row.
            Some(all) if width > 0 => {
                for (i, (record, row)) in buffer
                    .chunks_exact_mut(size)
                    .zip(all.chunks_exact(width))
                    .enumerate()
                {
                    record[..width].copy_from_slice(row);
                    append(i, record);
                }
            }
            _ => {
                for (i, (record, row)) in buffer
                    .chunks_exact_mut(size)
                    .zip(view.outer_iter())
                    .enumerate()
                {
                    for (b, x) in record[..width].iter_mut().zip(row.iter()) {
                        *b = *x;
                    }
                    append(i, record);
                }
            }
        }
        drop(rows);
        let live = OnThisThread(self.live(py)?);
        let (buffer, result) = py.detach(move || {
            let live = live;
            let mut buffer = buffer;
            let weigh = move |r: &[u8]| {
                r.get(width + 8..width + 16)
                    .and_then(|b| <[u8; 8]>::try_from(b).ok())
                    .map_or(0, u64::from_ne_bytes)
            };
            let result = Records::new(&mut buffer, size, width)
                .map_err(|source| {
                    PeerError::from(ConfigError::Records {
                        argument: Some("arr"),
                        source,
                    })
                })
                .and_then(|records| {
                    let mut records = if weighted {
                        records.with_loads(&weigh)
                    } else {
                        records
                    };
                    live.0.records.rebalance(&mut records)
                });
            (buffer, result)
        });
        let held = buffer.len() / size;
        let mut flat = vec![0u8; held * width];
        if width > 0 {
            for (row, record) in flat.chunks_exact_mut(width).zip(buffer.chunks_exact(size)) {
                row.copy_from_slice(&record[..width]);
            }
        }
        let out = numpy::ndarray::Array2::from_shape_vec((held, width), flat)
            .map_err(|e| raise(py, Kind::Other, format!("rows: {e}")))?;
        let (report, error) = match result {
            Ok(r) => match serde_json::to_string(&r) {
                Ok(json) => (Some(json), None),
                Err(e) => (
                    None,
                    Some(raise(py, Kind::Other, format!("serialising: {e}"))),
                ),
            },
            Err(e) => (None, Some(peer_error(py, &e))),
        };
        Ok((PyArray2::from_owned_array(py, out), report, error))
    }

    /// Settles a call whose outcome was in doubt; returns the bytes of the items put back.
    fn resolve<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let live = OnThisThread(self.live(py)?);
        let (back, result) = py.detach(move || {
            let live = live;
            let mut back: Vec<Packed> = Vec::new();
            let r = live.0.balancer.resolve(&mut back);
            (back, r)
        });
        result.map_err(|e| peer_error(py, &e))?;
        let list = PyList::empty(py);
        for p in back {
            list.append(PyBytes::new(py, &p.data))?;
        }
        Ok(list)
    }

    /// A timed barrier that names a rank that stopped.
    fn barrier(&mut self, py: Python<'_>) -> PyResult<()> {
        let live = OnThisThread(self.live(py)?);
        let r = py.detach(move || {
            let live = live;
            live.0.balancer.barrier()
        });
        r.map_err(|e| peer_error(py, &e))
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

/// A fault to inject (tests and demonstrations): `leave-after-sends:K` (give the call up
/// after sending `K` item messages, as a rank that hits an error of its own) or
/// `leave-after-vote`.
fn parse_fault(py: Python<'_>, fault: Option<&str>) -> PyResult<Fault> {
    let Some(f) = fault else {
        return Ok(Fault::None);
    };
    if f == "leave-after-vote" {
        return Ok(Fault::LeaveAfterVote);
    }
    f.strip_prefix("leave-after-sends:")
        .and_then(|k| k.parse().ok())
        .map(Fault::LeaveAfterSends)
        .ok_or_else(|| {
            raise(
                py,
                Kind::InvalidInput,
                format!("fault: '{f}' is not leave-after-sends:K or leave-after-vote"),
            )
        })
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
