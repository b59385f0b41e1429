//! One diffusion round and one DISHET round on a torus against one sparse matrix–vector
//! product over the same graph, on the same threads.

use crate::timing::{Case, Comparison, Machine, Progress, Report, interleave, timed, with_threads};
use crate::{BenchError, random_loads};
use hetlb_core::model::Capacities;
use hetlb_core::rounds::RoundEngine;
use hetlb_core::rules::diffusion::{Dishet, FirstOrder, NodeRule, Rounding};
use hetlb_core::topology::{Graph, Topology, generators};
use rayon::prelude::*;
use serde::Serialize;
use std::hint::black_box;

/// What [`run`] times.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct DiffusionConfig {
    /// Side of the square torus (SIDE × SIDE nodes), at least 3.
    pub side: usize,
    /// Capacities uniform on 1..=4 (seeded) instead of equal.
    pub capacities: bool,
    /// Timed repetitions of each case (interleaved, after one untimed).
    pub repeat: usize,
    /// Threads for the rounds and the floor (`None`: all).
    pub threads: Option<usize>,
}

impl Default for DiffusionConfig {
    fn default() -> Self {
        Self {
            side: 1000,
            capacities: false,
            repeat: 9,
            threads: None,
        }
    }
}

crate::setters!(DiffusionConfig { side: usize, capacities: bool, repeat: usize, threads: Option<usize> });

impl DiffusionConfig {
    /// An estimate of the bytes [`run`] holds at its peak, about 224 a node: the torus, the
    /// loads and capacities, the CSR matrix and its vectors, and a round engine.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::diffusion::DiffusionConfig;
    /// assert_eq!(DiffusionConfig::default().side(1000).memory_needed(), 224_000_000);
    /// ```
    pub fn memory_needed(&self) -> u128 {
        (self.side as u128).pow(2) * 224
    }
}

/// The parameters of a diffusion benchmark.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct DiffusionDetails {
    /// Side of the torus.
    pub side: usize,
    /// Its nodes.
    pub nodes: usize,
    /// Its edges.
    pub edges: usize,
    /// `1..=4` or `equal`.
    pub capacities: &'static str,
}

/// The graph as a weighted CSR matrix with a diagonal: what the floor multiplies.
#[derive(Debug, Clone)]
pub struct Csr {
    offsets: Vec<usize>,
    targets: Vec<usize>,
    weights: Vec<f64>,
    diagonal: Vec<f64>,
}

impl Csr {
    /// The diffusion matrix of `graph`: `1/(deg+1)` off the diagonal, the rest on it.
    ///
    /// # Complexity
    /// `O(V + E)`.
    pub fn of(graph: &Graph) -> Self {
        let n = graph.node_count();
        let mut offsets = Vec::with_capacity(n + 1);
        let mut targets = Vec::with_capacity(2 * graph.edge_count());
        let mut weights = Vec::with_capacity(2 * graph.edge_count());
        let mut diagonal = Vec::with_capacity(n);
        offsets.push(0);
        for u in 0..n {
            let adj = graph.adjacency(u);
            let w = 1.0 / (adj.len() + 1) as f64;
            targets.extend_from_slice(adj);
            weights.extend(std::iter::repeat_n(w, adj.len()));
            diagonal.push(w);
            offsets.push(targets.len());
        }
        Self {
            offsets,
            targets,
            weights,
            diagonal,
        }
    }

    /// `y = A·x`, rows split into ranges over the current rayon pool.
    ///
    /// # Panics
    /// When `x` or `y` is shorter than the matrix's order.
    ///
    /// # Example
    /// ```
    /// use hetlb_bench::diffusion::Csr;
    /// let ring = hetlb_core::topology::generators::ring(4).unwrap();
    /// let mut y = vec![0.0; 4];
    /// Csr::of(&ring).multiply(&[3.0, 0.0, 0.0, 0.0], &mut y);
    /// assert_eq!(y, [1.0, 1.0, 0.0, 1.0]); // diffusion keeps the sum
    /// ```
    pub fn multiply(&self, x: &[f64], y: &mut [f64]) {
        const ROWS: usize = 4096;
        y.par_chunks_mut(ROWS).enumerate().for_each(|(c, ys)| {
            let first = c * ROWS;
            for (i, yi) in ys.iter_mut().enumerate() {
                let u = first + i;
                let (s, e) = (self.offsets[u], self.offsets[u + 1]);
                let mut acc = self.diagonal[u] * x[u];
                for (&t, &w) in self.targets[s..e].iter().zip(&self.weights[s..e]) {
                    acc += w * x[t];
                }
                *yi = acc;
            }
        });
    }
}

fn round_case<'a, R: NodeRule>(
    name: &str,
    rule: &'a R,
    torus: &'a Graph,
    loads: &'a [u64],
    caps: Option<&'a Capacities>,
) -> Case<'a> {
    Case::new(name, move || {
        let mut engine = RoundEngine::new(rule, torus, loads, caps, 0)
            .map_err(|e| BenchError::Kernel(Box::new(e)))?;
        Ok(timed(|| black_box(engine.step(None))).1)
    })
}

/// Times one diffusion round and one DISHET round on a `side × side` torus (loads uniform on
/// 0..=200, seeded) against one CSR product over the same graph; `progress(done, total)` is
/// told after every timed run.
///
/// # Errors
/// [`BenchError::Setting`] for a side below 3, no repetition or no thread;
/// [`BenchError::Refused`] (`side`) for a torus that cannot be built.
///
/// # Complexity
/// `O(repeat × side²)`.
///
/// # Example
/// ```
/// use hetlb_bench::diffusion::{self, DiffusionConfig};
/// let cfg = DiffusionConfig::default().side(8).repeat(1);
/// let r = diffusion::run(&cfg, &mut |_, _| {}).unwrap();
/// assert_eq!(r.details.nodes, 64);
/// assert_eq!(r.comparisons.len(), 2);
/// ```
pub fn run(
    cfg: &DiffusionConfig,
    progress: Progress<'_>,
) -> Result<Report<DiffusionDetails>, BenchError> {
    if cfg.side < 3 {
        return Err(BenchError::setting("side", "at least 3"));
    }
    let torus =
        generators::torus(cfg.side, cfg.side).map_err(|e| BenchError::refused("side", e))?;
    let n = torus.node_count();
    // seeded: the same loads (and capacities) every run
    let bits = usize::BITS - (n - 1).leading_zeros();
    let loads: Vec<u64> = random_loads(bits, 201)[..n].to_vec();
    let caps = cfg
        .capacities
        .then(|| {
            let draws = random_loads(bits, 4);
            Capacities::new(draws[..n].iter().rev().map(|&c| (c + 1) as f64).collect())
        })
        .transpose()
        .map_err(|e| BenchError::Kernel(Box::new(e)))?;
    let csr = Csr::of(&torus);
    let x: Vec<f64> = loads.iter().map(|&w| w as f64).collect();
    let diffusion = FirstOrder::new(Rounding::Nearest);
    with_threads(cfg.threads, |threads| {
        let mut y = vec![0.0; n];
        let cases = vec![
            Case::new("spmv", || {
                Ok(timed(|| {
                    csr.multiply(&x, &mut y);
                    black_box(y[0])
                })
                .1)
            }),
            round_case("diffusion", &diffusion, &torus, &loads, caps.as_ref()),
            round_case("dishet", &Dishet, &torus, &loads, caps.as_ref()),
        ];
        let samples = interleave(cfg.repeat, 1, cases, progress)?;
        let floor = ("spmv", "one CSR SpMV (f64)");
        let comparisons = vec![
            Comparison::of(
                &samples,
                "diffusion",
                ("diffusion", "diffusion round"),
                floor,
                Some(3.0),
            ),
            Comparison::of(
                &samples,
                "dishet",
                ("dishet", "DISHET round"),
                floor,
                Some(3.0),
            ),
        ];
        Ok(Report::new(
            "diffusion",
            Machine::here(threads),
            cfg.repeat,
            DiffusionDetails {
                side: cfg.side,
                nodes: n,
                edges: torus.edge_count(),
                capacities: if cfg.capacities { "1..=4" } else { "equal" },
            },
            comparisons,
        ))
    })
}
