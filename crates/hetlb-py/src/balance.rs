//! `hetlb.balance(...)`: `hetlb balance` as a function. The decisions, the metrics and the
//! report are the library's (`hetlb_core::balance_on_within`, `Metrics::of`,
//! `BalanceReport`); this module builds the network and the options as the CLI does, names
//! the argument an error is about, and hands the result to Python.

use crate::errors::{
    Error, HetlbFileError, InvalidInputError, LimitError, Result, UnknownAlgorithmError,
};
use hetlb_core::algorithm::{Algorithm, BalanceOptions, balance_on_within};
use hetlb_core::report::{BalanceReport, ReportDetail};
use hetlb_core::rounds::RoundRun;
use hetlb_core::topology::{Network, Topology, TopologySpec};
use hetlb_core::transmission::{Schedule, Transmission, transmit};
use hetlb_core::{Capacities, Metrics};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

/// Transfers listed in full in `as_dict()` / `to_json()` unless `rounds=True` (as the CLI).
const SHOWN_TRANSFERS: usize = 10_000;
/// The largest topology file read (64 MiB, as the peer balancer's).
const MAX_TOPOLOGY_FILE_BYTES: u64 = 64 << 20;

/// The result of `hetlb.balance(...)`.
///
/// `final_loads`, `initial` are NumPy `uint64` arrays; `metrics` is the dict of the CLI's
/// JSON `metrics` (with `t_comm`, steps of each schedule asked for); `phases` lists each
/// phase (hypercube dimension) or round (diffusion) with its transfers as arrays;
/// `as_dict()` is the whole document `hetlb balance --format json` prints.
#[pyclass(module = "hetlb", frozen)]
pub struct BalanceResult {
    algorithm: Algorithm,
    topology: String,
    network: Network,
    run: RoundRun,
    metrics: Metrics,
    capacities: Option<Capacities>,
    transmission: Vec<Transmission>,
    rounds: bool,
}

impl BalanceResult {
    fn report(&self) -> BalanceReport<'_> {
        BalanceReport::new(
            self.algorithm,
            &self.topology,
            &self.network,
            &self.run,
            &self.metrics,
            self.capacities.as_ref().map(Capacities::as_slice),
            self.transmission.clone(),
            ReportDetail::for_plan(&self.run.plan, self.rounds, SHOWN_TRANSFERS),
        )
    }
}

#[pymethods]
impl BalanceResult {
    /// The rule's name.
    #[getter]
    fn algorithm(&self) -> &'static str {
        self.algorithm.name()
    }

    /// The network as a spec (`hypercube:3`, `ring:8`, …).
    #[getter]
    fn topology(&self) -> &str {
        &self.topology
    }

    /// The loads before (NumPy `uint64`).
    #[getter]
    fn initial<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.run.plan.initial)
    }

    /// The loads after (NumPy `uint64`): the JSON's `final`.
    #[getter]
    fn final_loads<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u64>> {
        PyArray1::from_slice(py, &self.run.plan.final_loads)
    }

    /// The metrics, with the same keys and values as the CLI's JSON `metrics`; with a
    /// `schedule`, also `t_comm`: `{schedule: steps of T_comm}`.
    #[getter]
    fn metrics(&self, py: Python<'_>) -> Result<Py<PyAny>> {
        let m = crate::convert::to_py(py, &self.metrics)?;
        if !self.transmission.is_empty() {
            let t = PyDict::new(py);
            for x in &self.transmission {
                t.set_item(x.schedule.name(), x.steps)?;
            }
            m.bind(py).set_item("t_comm", t)?;
        }
        Ok(m)
    }

    /// Every phase (a hypercube dimension) or round (diffusion), in order: a dict with
    /// `dimension` (`None` for a round) and the transfers as NumPy arrays `from`, `to`,
    /// `units`.
    #[getter]
    fn phases<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for p in &self.run.plan.phases {
            let d = PyDict::new(py);
            d.set_item("dimension", p.dimension)?;
            let from: Vec<u64> = p.transfers.iter().map(|t| t.from as u64).collect();
            let to: Vec<u64> = p.transfers.iter().map(|t| t.to as u64).collect();
            let units: Vec<u64> = p.transfers.iter().map(|t| t.units).collect();
            d.set_item("from", PyArray1::from_vec(py, from))?;
            d.set_item("to", PyArray1::from_vec(py, to))?;
            d.set_item("units", PyArray1::from_vec(py, units))?;
            list.append(d)?;
        }
        Ok(list)
    }

    /// Rounds to convergence (phases of a hypercube rule).
    #[getter]
    fn rounds(&self) -> u64 {
        self.run.rounds
    }

    /// True when the rule reached its fixed point or ran its schedule.
    #[getter]
    fn converged(&self) -> bool {
        self.run.converged
    }

    /// One dict per schedule asked for: the JSON's `transmission`.
    #[getter]
    fn transmission(&self, py: Python<'_>) -> Result<Py<PyAny>> {
        crate::convert::to_py(py, &self.transmission)
    }

    /// The document `hetlb balance --format json` prints, as text.
    fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string_pretty(&self.report())?)
    }

    /// The document `hetlb balance --format json` prints, as a dict.
    fn as_dict(&self, py: Python<'_>) -> Result<Py<PyAny>> {
        crate::convert::to_py(py, &self.report())
    }

    fn __repr__(&self) -> String {
        format!(
            "BalanceResult({} on {}, {} nodes, max_difference {}, {} phases)",
            self.algorithm,
            self.topology,
            self.run.plan.nodes(),
            self.metrics.max_difference,
            self.run.plan.phases.len()
        )
    }
}

/// The network of `spec`, or the default for the loads (`Network::default_for`), with its
/// label (as the CLI).
fn network(spec: Option<&str>, nodes: usize, algorithm: Algorithm) -> Result<(Network, String)> {
    let Some(spec) = spec else {
        return Network::default_for(nodes, algorithm.needs_hypercube()).map_err(|e| {
            let hint = if algorithm.needs_hypercube() {
                ""
            } else {
                "; give topology for other networks"
            };
            InvalidInputError::new_err(format!("loads: {e}{hint}")).into()
        });
    };
    let parsed: TopologySpec = spec
        .parse()
        .map_err(|e| InvalidInputError::new_err(format!("topology: {e}")))?;
    let network = parsed
        .build_reading(None, Some(nodes), MAX_TOPOLOGY_FILE_BYTES)
        .map_err(|e| {
            let message = format!("topology: {e}");
            match &parsed {
                TopologySpec::File(path) if !std::path::Path::new(path).is_file() => {
                    HetlbFileError::new_err(message)
                }
                _ => InvalidInputError::new_err(message),
            }
        })?;
    if network.node_count() != nodes {
        return Err(InvalidInputError::new_err(format!(
            "loads: {nodes} loads given for a network of {} nodes ({parsed})",
            network.node_count()
        ))
        .into());
    }
    Ok((network, parsed.to_string()))
}

/// `hetlb balance`: `loads` (uint64, checked by the caller) balanced by `algorithm`.
#[pyfunction]
#[pyo3(signature = (loads, algorithm, topology=None, capacities=None, procs_per_group=None,
    max_rounds=None, seed=None, lambda_=None, schedule=Vec::new(), rounds=false,
    max_memory_bytes=8u64 << 30))]
#[allow(clippy::too_many_arguments)]
pub fn balance(
    py: Python<'_>,
    loads: PyReadonlyArray1<'_, u64>,
    algorithm: &str,
    topology: Option<&str>,
    capacities: Option<Vec<f64>>,
    procs_per_group: Option<usize>,
    max_rounds: Option<u64>,
    seed: Option<u64>,
    lambda_: Option<f64>,
    schedule: Vec<String>,
    rounds: bool,
    max_memory_bytes: u64,
) -> Result<BalanceResult> {
    let algorithm: Algorithm = algorithm
        .parse()
        .map_err(|e| UnknownAlgorithmError::new_err(format!("algorithm: {e}")))?;
    let loads: Vec<u64> = loads.as_array().iter().copied().collect();
    if loads.is_empty() {
        return Err(InvalidInputError::new_err("loads: no values given").into());
    }
    let (network, label) = network(topology, loads.len(), algorithm)?;
    let limit = u128::from(max_memory_bytes);
    let fixed = fixed_memory(&network, loads.len(), limit)?;
    let capacities = capacities
        .map(|c| {
            if c.is_empty() {
                return Err(InvalidInputError::new_err("capacities: no values given"));
            }
            Capacities::for_nodes(c, loads.len())
                .map_err(|e| InvalidInputError::new_err(format!("capacities: {e}")))
        })
        .transpose()?;
    if seed.is_some() && algorithm != Algorithm::RandomBiasing {
        return Err(InvalidInputError::new_err(format!(
            "seed: only random-biasing draws random numbers, not {algorithm}"
        ))
        .into());
    }
    let schedules = schedules(&schedule, &network)?;
    let options = BalanceOptions::new()
        .capacities(capacities)
        .procs_per_group(procs_per_group)
        .max_rounds(max_rounds)
        .seed(seed.unwrap_or(0))
        .lambda(lambda_);
    let max_transfers = hetlb_core::limit::transfers_within(limit, fixed);
    let computed = py.detach(|| {
        let run = balance_on_within(&network, algorithm, &loads, &options, max_transfers)?;
        let metrics = Metrics::of(&run.plan, options.capacities.as_ref());
        let transmission: std::result::Result<Vec<Transmission>, _> =
            schedules.iter().map(|&s| transmit(&run.plan, s)).collect();
        Ok::<_, hetlb_core::BalanceError>((run, metrics, transmission))
    });
    let (run, metrics, transmission) = computed.map_err(|error| Error::Balance {
        run: format!("{algorithm} on {label}"),
        error,
    })?;
    let transmission =
        transmission.map_err(|e| InvalidInputError::new_err(format!("schedule: {e}")))?;
    Ok(BalanceResult {
        algorithm,
        topology: label,
        network,
        run,
        metrics,
        capacities: options.capacities,
        transmission,
        rounds,
    })
}

/// The memory every run holds (the loads, the network, a round engine's vectors), refused
/// above `limit`; the plan's transfers get the rest of the limit, as in the CLI.
fn fixed_memory(network: &Network, nodes: usize, limit: u128) -> Result<u128> {
    let arcs: u128 = (0..network.node_count())
        .map(|i| network.degree(i) as u128)
        .sum();
    let fixed = nodes as u128 * 64 + arcs * 8;
    if fixed > limit {
        return Err(LimitError::new_err(format!(
            "loads: balancing {nodes} nodes needs about {fixed} bytes of memory, above the limit \
             of {limit} (raise it with max_memory_bytes)"
        ))
        .into());
    }
    Ok(fixed)
}

/// The schedules named, each once; refused on a network that is not a hypercube.
fn schedules(names: &[String], network: &Network) -> Result<Vec<Schedule>> {
    let mut out: Vec<Schedule> = Vec::new();
    for name in names {
        let s: Schedule = name
            .parse()
            .map_err(|e| InvalidInputError::new_err(format!("schedule: {e}")))?;
        if !out.contains(&s) {
            out.push(s);
        }
    }
    if !out.is_empty() && !matches!(network, Network::Hypercube(_)) {
        return Err(InvalidInputError::new_err(
            "schedule: transmission schedules move hypercube plans; this network is not a \
             hypercube",
        )
        .into());
    }
    Ok(out)
}
