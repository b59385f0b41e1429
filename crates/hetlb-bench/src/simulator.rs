//! Events per second of the discrete-event engine as the system grows, for every policy kind,
//! against the same system without balancing.

use crate::BenchError;
use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed};
use hetlb_core::Algorithm;
use hetlb_core::rules::delay_aware::Compensation;
use hetlb_core::topology::TopologySpec;
use hetlb_sim::engine::{Arrivals, Injection, Setup};
use hetlb_sim::model::{Distribution, LinkParams, Links, Nodes};
use hetlb_sim::policy::DiffusionSettings;
use hetlb_sim::scenario::{PolicySpec, Scenario};
use serde::Serialize;
use std::collections::BTreeMap;
use std::hint::black_box;

/// The largest cube simulated.
pub const MAX_DIMS: u32 = 22;

/// Simulated seconds after which a diffusion run stops (rounds every second until then).
pub const DIFFUSION_END: f64 = 30.0;

/// The policy kinds timed, the floor first.
pub const KINDS: [&str; 4] = ["none", "delay-aware", "diffusion", "threshold"];

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimulatorConfig {
    /// Hypercube sizes, as powers of two (10 ≈ 10^3 nodes, 20 ≈ 10^6), each 1 to
    /// [`MAX_DIMS`].
    pub dims: Vec<u32>,
    /// Poisson arrivals per node (rate 0.55 tasks/s, service 1 task/s), at most: see
    /// `max_events`.
    pub arrivals: u64,
    /// The threshold policy is run up to this dimension only.
    pub threshold_max_dims: u32,
    /// Timed repetitions of each case (interleaved, no warm-up).
    pub repeat: usize,
    /// A bound on the arrivals of a run, `nodes × arrivals per node`: a large cube gets fewer
    /// arrivals per node (at least one), so that every size runs about as many events.
    pub max_arrivals: u64,
    /// The policy kinds timed, a subset of [`KINDS`] (all by default); a balancing kind is
    /// compared with `none` only when `none` is timed too.
    pub kinds: Vec<&'static str>,
}

impl Default for SimulatorConfig {
    fn default() -> Self {
        Self {
            dims: vec![10, 13, 17, 20],
            arrivals: 20,
            threshold_max_dims: MAX_DIMS,
            repeat: 3,
            max_arrivals: 1 << 21,
            kinds: KINDS.to_vec(),
        }
    }
}

crate::setters!(SimulatorConfig { dims: Vec<u32>, arrivals: u64, threshold_max_dims: u32, repeat: usize, max_arrivals: u64, kinds: Vec<&'static str> });

impl SimulatorConfig {
    /// An estimate of the bytes [`run`] holds at its peak: every scenario it times is kept
    /// (its nodes, links and setup, about `24 + 40·d` bytes a node of a `d`-cube), and one
    /// run at a time holds its tasks, nodes and links ([`Scenario::memory_estimate`]'s
    /// count: 16 bytes a task, 400 a node, 64 a link).
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::simulator::SimulatorConfig;
    /// let small = SimulatorConfig::default().dims(vec![10]).memory_needed();
    /// let large = SimulatorConfig::default().dims(vec![10, 20]).memory_needed();
    /// assert!(small < 32 << 20 && large > 1 << 30);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        let mut kept = 0u128;
        let mut run = 0u128;
        for &d in &self.dims {
            let d = d.min(40);
            let n = 1u128 << d;
            let links = n * u128::from(d);
            let kinds = if d > self.threshold_max_dims { 3 } else { 4 };
            kept += kinds * n * (24 + 40 * u128::from(d));
            // the delay-aware and diffusion kinds start with 5 tasks a node and inject 2
            let tasks = n * u128::from(self.arrivals_at(d)) + n * 7 + 200;
            run = run.max(tasks * 16 + n * 400 + links * 64);
        }
        kept + run
    }

    /// The Poisson arrivals per node of a `2^dims`-node run: `arrivals`, or fewer (at least
    /// one) to keep the run within `max_arrivals`.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::simulator::SimulatorConfig;
    /// let cfg = SimulatorConfig::default().arrivals(20).max_arrivals(1 << 21);
    /// assert_eq!(cfg.arrivals_at(10), 20);
    /// assert_eq!(cfg.arrivals_at(20), 2);
    /// assert_eq!(cfg.arrivals_at(22), 1);
    /// ```
    pub fn arrivals_at(&self, dims: u32) -> u64 {
        let nodes = 1u64 << dims;
        (self.max_arrivals / nodes).clamp(1, self.arrivals.max(1))
    }
}

/// A timed sample lasts at least this long: shorter runs are repeated within the sample.
pub const MIN_SAMPLE_SECONDS: f64 = 0.05;

/// The most runs one sample repeats.
const MAX_RUNS_PER_SAMPLE: usize = 64;

/// Runs per sample for a run that took `seconds` once: enough to fill
/// [`MIN_SAMPLE_SECONDS`], between 1 and 64.
fn runs_per_sample(seconds: f64) -> usize {
    let runs = (MIN_SAMPLE_SECONDS / seconds.max(1e-9)).ceil();
    (runs as usize).clamp(1, MAX_RUNS_PER_SAMPLE)
}

/// One policy kind at one size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimulatorRow {
    /// One of [`KINDS`].
    pub policy: &'static str,
    /// Nodes of the cube.
    pub nodes: usize,
    /// Poisson arrivals per node in this run ([`SimulatorConfig::arrivals_at`]).
    pub arrivals_per_node: u64,
    /// Events the run processed.
    pub events: u64,
    /// Median over the samples of the seconds of one run's event loop
    /// ([`hetlb_sim::Engine::run`]; the engine is built before the clock starts).
    pub median_seconds: f64,
    /// Seconds to build the engine (copy the network and links, allocate and seed every
    /// node's state), once: `O(N + links)`, paid before the first event.
    pub setup_seconds: f64,
    /// Runs of the event loop per timed sample: a run shorter than
    /// [`MIN_SAMPLE_SECONDS`] is repeated, each time on a new engine, and the sample is the
    /// mean of its runs, so that a small cube's few milliseconds are not one clock reading.
    pub runs_per_sample: usize,
    /// `events / median_seconds`.
    pub events_per_second: f64,
    /// `median_seconds / events`, in nanoseconds.
    pub nanoseconds_per_event: f64,
    /// `d log(seconds per event) / d log N` from the previous size.
    pub per_event_growth_exponent: Option<f64>,
    /// The simulator's memory estimate for the run, per node (tasks, events, node and link
    /// state: [`Scenario::memory_estimate`]).
    pub bytes_per_node: f64,
}

/// The parameters of a simulator benchmark and one row per policy kind and size.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct SimulatorDetails {
    /// Poisson arrivals per node, at most (the rows give each run's).
    pub arrivals_per_node: u64,
    /// The bound on the arrivals of one run.
    pub max_arrivals: u64,
    /// Every policy kind at every size, kind by kind.
    pub rows: Vec<SimulatorRow>,
}

/// Links of 100 tasks/s after an exponential delay of mean 0.05 s (the balancing kinds that
/// move tasks over links).
fn delayed_links(network: hetlb_core::topology::Network) -> Links {
    Links::uniform(
        network,
        LinkParams {
            rate: 100.0,
            delay: 0.05,
            distribution: Distribution::Exponential,
        },
    )
}

/// One injection of 200 tasks per 100 nodes, spread over nodes and time.
fn spread_injections(n: usize) -> Vec<Injection> {
    (0..n / 100 + 1)
        .map(|i| Injection {
            node: (i * 7919) % n,
            time: 0.25 * i as f64,
            tasks: 200,
        })
        .collect()
}

/// The benchmark's system: a `2^dims`-node cube with Poisson arrivals and the policy `kind`
/// (one of [`KINDS`]).
///
/// # Errors
/// [`BenchError::Refused`] (`dims`) when the cube cannot be built.
pub fn scenario(kind: &str, dims: u32, arrivals: u64) -> Result<Scenario, BenchError> {
    let n = 1usize << dims;
    let network = TopologySpec::Hypercube(dims)
        .build()
        .map_err(|e| BenchError::refused("dims", e))?;
    let (links, initial, injections, policy) = match kind {
        "delay-aware" => (
            delayed_links(network),
            vec![5; n],
            spread_injections(n),
            PolicySpec::DelayAware {
                compensation: Compensation::Factor,
                carry: hetlb_sim::policy::CarryOut::Centre,
            },
        ),
        "diffusion" => (
            delayed_links(network),
            vec![5; n],
            spread_injections(n),
            PolicySpec::Diffusion(
                DiffusionSettings::new(Algorithm::Dishet, 1.0, None)
                    .map_err(|e| BenchError::refused("dims", e))?,
            ),
        ),
        "threshold" => (
            Links::uniform(network, LinkParams::INSTANT),
            vec![0; n],
            Vec::new(),
            PolicySpec::Hypercube {
                algorithm: Algorithm::Oem,
                threshold: 3,
            },
        ),
        _ => (
            Links::uniform(network, LinkParams::INSTANT),
            vec![0; n],
            Vec::new(),
            PolicySpec::None,
        ),
    };
    Ok(Scenario {
        name: Some(format!("bench-{kind}-{n}")),
        description: None,
        nodes: Nodes::new(vec![1.0; n], Distribution::Exponential),
        links,
        setup: Setup {
            injections,
            arrivals: Some(Arrivals {
                rates: vec![0.55; n],
                per_node: Some(arrivals),
            }),
            seed: 1,
            // a diffusion round visits every node: rounds are bounded by the time simulated
            end_time: (kind == "diffusion").then_some(DIFFUSION_END),
            status_interval: (kind == "delay-aware").then_some(5.0),
            ..Setup::new(initial)
        },
        policy,
    })
}

/// Times a run of each policy kind at each size (the threshold policy up to
/// `threshold_max_dims`), with [`SimulatorConfig::arrivals_at`] arrivals per node; compares the time per event of each balancing policy with that of
/// the same system without balancing; `progress(done, total)` is told after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for no size, a size outside 1 to [`MAX_DIMS`], no arrival or no
/// repetition; [`BenchError::Simulation`] when a run fails.
///
/// # Example
/// ```
/// use hetlb_bench::simulator::{self, SimulatorConfig};
/// let cfg = SimulatorConfig::default().dims(vec![4, 5]).arrivals(3).repeat(1);
/// let r = simulator::run(&cfg, &mut |_, _| {}).unwrap();
/// assert_eq!(r.details.rows.len(), 8); // four kinds at two sizes
/// assert_eq!(r.comparisons.len(), 6); // three balancing kinds at two sizes
/// ```
pub fn run(
    cfg: &SimulatorConfig,
    progress: Progress<'_>,
) -> Result<Report<SimulatorDetails>, BenchError> {
    if cfg.dims.is_empty() || cfg.dims.iter().any(|&d| !(1..=MAX_DIMS).contains(&d)) {
        return Err(BenchError::setting("dims", "each between 1 and 22"));
    }
    if cfg.arrivals == 0 {
        return Err(BenchError::setting("arrivals", "must be at least 1"));
    }
    if cfg.max_arrivals == 0 {
        return Err(BenchError::setting("max_arrivals", "must be at least 1"));
    }
    let mut scenarios = BTreeMap::new();
    let mut events = BTreeMap::new();
    let mut bytes = BTreeMap::new();
    let mut setup = BTreeMap::new();
    let mut runs = BTreeMap::new();
    for &d in &cfg.dims {
        for kind in KINDS.into_iter().filter(|k| cfg.kinds.contains(k)) {
            if kind == "threshold" && d > cfg.threshold_max_dims {
                continue;
            }
            let s = scenario(kind, d, cfg.arrivals_at(d))?;
            let (engine, seconds) = timed(|| s.engine());
            let engine = engine?;
            let (report, once) = timed(|| engine.run());
            let report = report?;
            setup.insert((kind, d), seconds);
            runs.insert((kind, d), runs_per_sample(once));
            events.insert((kind, d), report.events);
            bytes.insert((kind, d), s.memory_estimate() as f64 / (1u64 << d) as f64);
            scenarios.insert((kind, d), s);
        }
    }
    let cases = scenarios
        .iter()
        .map(|(&(kind, d), s)| {
            let runs = runs[&(kind, d)];
            Case::new(format!("{kind}/{d}"), move || {
                let mut total = 0.0;
                for _ in 0..runs {
                    let engine = s.engine()?;
                    let (r, secs) = timed(|| black_box(engine.run()));
                    r?;
                    total += secs;
                }
                Ok(total / runs as f64)
            })
        })
        .collect();
    let samples = interleave(cfg.repeat, 0, cases, progress)?;
    let mut rows = Vec::new();
    let mut comparisons = Vec::new();
    for kind in KINDS {
        let mut previous: Option<(usize, f64)> = None;
        for &d in &cfg.dims {
            let Some(&ev) = events.get(&(kind, d)) else {
                continue;
            };
            let name = format!("{kind}/{d}");
            let secs = samples.median(&name);
            let nodes = 1usize << d;
            let per_event = secs / ev as f64;
            let growth =
                previous.map(|(n0, p0)| (per_event / p0).ln() / (nodes as f64 / n0 as f64).ln());
            previous = Some((nodes, per_event));
            rows.push(SimulatorRow {
                policy: kind,
                nodes,
                arrivals_per_node: cfg.arrivals_at(d),
                events: ev,
                median_seconds: secs,
                setup_seconds: setup[&(kind, d)],
                runs_per_sample: runs[&(kind, d)],
                events_per_second: ev as f64 / secs,
                nanoseconds_per_event: per_event * 1e9,
                per_event_growth_exponent: growth,
                bytes_per_node: bytes[&(kind, d)],
            });
            if kind != "none"
                && let Some(&none) = events.get(&("none", d))
            {
                // per event, so that the ratio compares costs of one event
                let c = Comparison::new(
                    &format!("{}_{d}", kind.replace('-', "_")),
                    (
                        &format!("{kind}, 2^{d} nodes ({ev} events)"),
                        secs / ev as f64,
                    ),
                    (
                        &format!("no balancing ({none} events)"),
                        samples.median(&format!("none/{d}")) / none as f64,
                    ),
                    None,
                );
                comparisons.push(c.per(1));
            }
        }
    }
    Ok(Report::new(
        "simulator",
        Machine::here(1),
        cfg.repeat,
        SimulatorDetails {
            arrivals_per_node: cfg.arrivals,
            max_arrivals: cfg.max_arrivals,
            rows,
        },
        comparisons,
    ))
}
