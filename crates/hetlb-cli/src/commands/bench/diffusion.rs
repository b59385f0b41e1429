//! `hetlb bench diffusion`: one diffusion round on a torus against one sparse matrix–vector
//! product over the same graph.

use super::exchange::random_loads;
use super::timing::{Case, Comparison, Machine, Report, interleave, timed, with_threads};
use crate::input::whole;
use crate::output::Format;
use anyhow::{Result, anyhow, bail};
use hetlb_core::model::Capacities;
use hetlb_core::rounds::RoundEngine;
use hetlb_core::rules::diffusion::{Dishet, FirstOrder, NodeRule, Rounding};
use hetlb_core::topology::{Graph, Topology, generators};
use rayon::prelude::*;
use serde::Serialize;
use std::hint::black_box;

/// Arguments of `hetlb bench diffusion`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Side of the square torus (SIDE × SIDE nodes).
    #[arg(long, default_value_t = 1000, value_parser = crate::input::whole::<usize>(2, 4096))]
    side: usize,
    /// Capacities uniform on 1..=4 (seeded) instead of equal.
    #[arg(long)]
    capacities: bool,
    /// Timed repetitions of each case (interleaved); medians are reported.
    #[arg(long = "runs", visible_alias = "repeat", value_name = "N", default_value_t = 9, value_parser = whole::<usize>(1, 1_000_000))]
    repeat: usize,
    /// Threads for the rounds and the floor (default: all).
    #[arg(long, value_parser = crate::input::whole::<usize>(1, 1024))]
    threads: Option<usize>,
    /// Output format.
    #[arg(long, short, value_enum, default_value_t)]
    format: Format,
}

#[derive(Serialize)]
struct Details {
    side: usize,
    nodes: usize,
    edges: usize,
    capacities: &'static str,
}

/// The graph as a weighted CSR matrix with a diagonal: what the floor multiplies.
pub(super) struct Csr {
    offsets: Vec<usize>,
    targets: Vec<usize>,
    weights: Vec<f64>,
    diagonal: Vec<f64>,
}

impl Csr {
    /// The diffusion matrix of `graph`: `1/(deg+1)` off the diagonal, the rest on it.
    pub(super) fn of(graph: &Graph) -> Self {
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
    pub(super) fn multiply(&self, x: &[f64], y: &mut [f64]) {
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
        let mut engine =
            RoundEngine::new(rule, torus, loads, caps, 0).map_err(|e| anyhow!("{e}"))?;
        Ok(timed(|| black_box(engine.step(None))).1)
    })
}

/// Runs `hetlb bench diffusion`.
pub fn run(a: Args) -> Result<()> {
    if a.side < 3 {
        bail!("--side: at least 3");
    }
    let torus = generators::torus(a.side, a.side).map_err(|e| anyhow!("--side: {e}"))?;
    let n = torus.node_count();
    // seeded: the same loads (and capacities) every run
    let bits = usize::BITS - (n - 1).leading_zeros();
    let loads: Vec<u64> = random_loads(bits, 201)[..n].to_vec();
    let caps = a
        .capacities
        .then(|| {
            let draws = random_loads(bits, 4);
            Capacities::new(draws[..n].iter().rev().map(|&c| (c + 1) as f64).collect())
        })
        .transpose()
        .map_err(|e| anyhow!("{e}"))?;
    let csr = Csr::of(&torus);
    let x: Vec<f64> = loads.iter().map(|&w| w as f64).collect();
    let diffusion = FirstOrder::new(Rounding::Nearest);
    let report = with_threads(a.threads, |threads| {
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
        let samples = interleave(a.repeat, 1, cases)?;
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
            a.repeat,
            Details {
                side: a.side,
                nodes: n,
                edges: torus.edge_count(),
                capacities: if a.capacities { "1..=4" } else { "equal" },
            },
            comparisons,
        ))
    })?;
    let title = format!(
        "One round on a {0} × {0} torus ({1} nodes, loads uniform on 0..=200, {2} capacities)",
        a.side, n, report.details.capacities
    );
    report.print(a.format, &title, &[])
}
