//! A network of any kind, as named on the command line: `ring:16`, `mesh:4x4`, `hypercube:5`, …
//!
//! [`TopologySpec`] is the parsed name; [`Network`] the built topology, which remembers its
//! [`Shape`] so that the generalised dimension exchange can use the natural edge colouring and
//! the known optimal exchange parameter of rings, paths, meshes, tori and hypercubes.

use super::colouring::EdgeColouring;
use super::generators;
use super::graph::{Graph, GraphError};
use super::{Hypercube, Topology};
use std::f64::consts::PI;
use std::fmt;
use std::str::FromStr;

/// The structure a generated graph is known to have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A path of `n` nodes (a chain).
    Path(usize),
    /// A ring of `n` nodes.
    Ring(usize),
    /// A `rows × cols` mesh.
    Mesh {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// A `rows × cols` torus.
    Torus {
        /// Rows.
        rows: usize,
        /// Columns.
        cols: usize,
    },
    /// An `a × b × c` 3-D grid.
    Grid {
        /// Nodes along the first axis.
        a: usize,
        /// Along the second.
        b: usize,
        /// Along the third.
        c: usize,
    },
    /// A k-ary n-cube.
    Kary {
        /// Nodes per dimension.
        k: usize,
        /// Dimensions.
        n: usize,
    },
    /// A star of `n` nodes.
    Star(usize),
    /// The complete graph on `n` nodes.
    Complete(usize),
    /// A seeded random connected graph.
    Random,
    /// A graph read from a file.
    File,
}

/// A topology ready for the balancing engines: the implicit hypercube or a CSR graph.
///
/// # Example
/// ```
/// use hetlb_core::topology::{Network, Topology, TopologySpec};
/// let net: Network = "torus:4x4".parse::<TopologySpec>().unwrap().build().unwrap();
/// assert_eq!(net.node_count(), 16);
/// assert_eq!(net.edge_colouring().colours(), 4);
/// assert_eq!(net.gdem_lambda(), 0.5); // 1/(1 + sin(2π/4))
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum Network {
    /// The implicit hypercube.
    Hypercube(Hypercube),
    /// An explicit graph and what is known of its structure.
    Graph {
        /// The graph.
        graph: Graph,
        /// Its structure.
        shape: Shape,
    },
}

impl Network {
    /// The network the rules run on when none is named, with its spec: the hypercube of
    /// `nodes` nodes when `nodes` is a power of two; otherwise, when `hypercube_rules` (the
    /// rules include a hypercube one), the complete network `complete:N`, on which the
    /// hypercube rules run embedded in a cube ([`crate::embedding`]) and the diffusion rules
    /// diffuse between every pair.
    ///
    /// # Errors
    /// [`DefaultNetworkError`]: `nodes` is 0, or not a power of two and `hypercube_rules`
    /// is false (the diffusion rules need a named network then), or more than
    /// [`MAX_COMPLETE_DEFAULT`] (the complete network's edges grow as `N²`).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::Network;
    /// assert_eq!(Network::default_for(8, true).unwrap().1, "hypercube:3");
    /// assert_eq!(Network::default_for(6, true).unwrap().1, "complete:6");
    /// assert!(Network::default_for(6, false).is_err());
    /// assert!(Network::default_for(3000, true).is_err()); // refused before anything is built
    /// ```
    pub fn default_for(
        nodes: usize,
        hypercube_rules: bool,
    ) -> Result<(Network, String), DefaultNetworkError> {
        if nodes == 0 {
            return Err(crate::ModelError::Empty.into());
        }
        if !nodes.is_power_of_two() && hypercube_rules {
            if nodes > MAX_COMPLETE_DEFAULT {
                return Err(DefaultNetworkError::TooManyNodes {
                    nodes,
                    max: MAX_COMPLETE_DEFAULT,
                });
            }
            let graph = generators::complete(nodes)?;
            let network = Network::Graph {
                graph,
                shape: Shape::Complete(nodes),
            };
            return Ok((network, TopologySpec::Complete(nodes).to_string()));
        }
        let cube = Hypercube::for_nodes(nodes)?;
        Ok((
            Network::Hypercube(cube),
            TopologySpec::Hypercube(cube.dimensions()).to_string(),
        ))
    }

    /// True when the hypercube rules run on this network: a hypercube, or a complete network
    /// (every node reaches every other, so the rules run embedded in a cube of any size,
    /// [`crate::embedding`]).
    pub fn runs_hypercube_rules(&self) -> bool {
        matches!(
            self,
            Network::Hypercube(_)
                | Network::Graph {
                    shape: Shape::Complete(_),
                    ..
                }
        )
    }

    /// A graph of unknown structure (read from a file).
    pub fn from_graph(graph: Graph) -> Self {
        Network::Graph {
            graph,
            shape: Shape::File,
        }
    }

    /// The edge colouring that schedules a dimension exchange: dimensions on a hypercube, the
    /// natural 2- or 4-colouring on paths, even rings, meshes and tori and k-ary n-cubes of
    /// even `k` (`2·d + parity of the coordinate` for an edge along dimension `d`), greedy
    /// otherwise.
    pub fn edge_colouring(&self) -> EdgeColouring {
        let (graph, shape) = match self {
            Network::Hypercube(c) => return EdgeColouring::hypercube(*c),
            Network::Graph { graph, shape } => (graph, shape),
        };
        let sides: Vec<usize> = match *shape {
            Shape::Path(n) | Shape::Ring(n) => vec![n],
            Shape::Mesh { rows, cols } | Shape::Torus { rows, cols } => vec![cols, rows],
            Shape::Kary { k, n } => vec![k; n],
            _ => Vec::new(),
        };
        let wraps = matches!(
            shape,
            Shape::Ring(_) | Shape::Torus { .. } | Shape::Kary { .. }
        );
        if !sides.is_empty() && (!wraps || sides.iter().all(|s| s % 2 == 0 || *s == 1)) {
            let colour = |a: usize, b: usize| {
                let mut stride = 1;
                for (d, &k) in sides.iter().enumerate() {
                    let (xa, xb) = ((a / stride) % k, (b / stride) % k);
                    if xa != xb {
                        // the lower end of the link, going +1 (mod k) from it
                        let low = if (xa + 1) % k == xb { xa } else { xb };
                        return 2 * d + low % 2;
                    }
                    stride *= k;
                }
                0
            };
            if let Some(c) = EdgeColouring::from_fn(graph, colour) {
                return c;
            }
        }
        EdgeColouring::greedy(graph)
    }

    /// The exchange parameter λ of the generalised dimension exchange: Xu & Lau's optimum
    /// for the natural colouring where one is known, `1/2` otherwise.
    ///
    /// | network | λ |
    /// |---|---|
    /// | hypercube | 1/2 |
    /// | path (chain) of `k` nodes, `k×l` mesh (`k ≥ l`) | `1/(1 + sin(π/k))` |
    /// | ring of even `k`, torus `k×l` and k-ary n-cube with even sides (`k ≥ l`) | `1/(1 + sin(2π/k))` |
    /// | anything else | 1/2 |
    ///
    /// Sources: C.-Z. Xu & F. C. M. Lau, "Analysis of the generalized dimension exchange
    /// method for dynamic load balancing", JPDC 16 (1992); Xu, Monien, Lüling & Lau,
    /// "Nearest-neighbor algorithms for load-balancing in parallel computers" (1995). These
    /// papers are not among the sources shipped with hetlb; the formulas are the published
    /// ones, not re-derived here.
    pub fn gdem_lambda(&self) -> f64 {
        let shape = match self {
            Network::Hypercube(_) => return 0.5,
            Network::Graph { shape, .. } => *shape,
        };
        // A side of 2 is a single link (a hypercube dimension), of 1 no link at all.
        let chain = |k: usize| {
            if k >= 2 {
                1.0 / (1.0 + (PI / k as f64).sin())
            } else {
                0.5
            }
        };
        let cycle = |k: usize| {
            if k >= 3 {
                1.0 / (1.0 + (2.0 * PI / k as f64).sin())
            } else {
                0.5
            }
        };
        let lambda = match shape {
            Shape::Path(k) => chain(k),
            Shape::Mesh { rows, cols } => chain(rows.max(cols)),
            Shape::Ring(k) if k % 2 == 0 => cycle(k),
            Shape::Torus { rows, cols } if rows % 2 == 0 && cols % 2 == 0 => cycle(rows.max(cols)),
            Shape::Kary { k, .. } if k % 2 == 0 => cycle(k),
            _ => 0.5,
        };
        if lambda.is_finite() && lambda > 0.0 && lambda < 1.0 {
            lambda
        } else {
            0.5
        }
    }

    /// The graph, when the network is one.
    pub fn graph(&self) -> Option<&Graph> {
        match self {
            Network::Hypercube(_) => None,
            Network::Graph { graph, .. } => Some(graph),
        }
    }
}

/// Iterator over either kind of network's neighbours.
#[derive(Debug, Clone)]
pub enum EitherIter<A, B> {
    /// From the first kind.
    A(A),
    /// From the second kind.
    B(B),
}

impl<A: Iterator<Item = usize>, B: Iterator<Item = usize>> Iterator for EitherIter<A, B> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        match self {
            EitherIter::A(a) => a.next(),
            EitherIter::B(b) => b.next(),
        }
    }
}

impl Topology for Network {
    fn node_count(&self) -> usize {
        match self {
            Network::Hypercube(c) => c.node_count(),
            Network::Graph { graph, .. } => graph.node_count(),
        }
    }

    fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        match self {
            Network::Hypercube(c) => EitherIter::A(c.neighbors(node)),
            Network::Graph { graph, .. } => EitherIter::B(graph.neighbors(node)),
        }
    }

    fn degree(&self, node: usize) -> usize {
        match self {
            Network::Hypercube(c) => c.degree(node),
            Network::Graph { graph, .. } => graph.degree(node),
        }
    }

    fn edge_count(&self) -> usize {
        match self {
            Network::Hypercube(c) => c.edge_count(),
            Network::Graph { graph, .. } => graph.edge_count(),
        }
    }

    fn contains_edge(&self, a: usize, b: usize) -> bool {
        match self {
            Network::Hypercube(c) => c.contains_edge(a, b),
            Network::Graph { graph, .. } => graph.contains_edge(a, b),
        }
    }
}

/// A topology named as on the command line.
///
/// | spec | network |
/// |---|---|
/// | `path:N` | path of `N` nodes |
/// | `ring:N` | ring of `N ≥ 3` nodes |
/// | `mesh:RxC` | `R × C` mesh |
/// | `torus:RxC` | `R × C` torus |
/// | `grid:AxB[xC]` | a Cartesian grid of ranks: `mesh:AxB`, or the `A × B × C` 3-D grid |
/// | `kary:K:N` | k-ary n-cube, `K^N` nodes |
/// | `star:N` | star of `N` nodes, centre 0 |
/// | `complete:N` | complete graph |
/// | `hypercube:D` | the implicit `D`-cube, `2^D` nodes |
/// | `random:N:P[:SEED]` | seeded connected G(N, P) (seed 0 by default) |
/// | `file:PATH` | edge list or JSON file (read by [`TopologySpec::build_reading`], bounded in size) |
///
/// # Example
/// ```
/// use hetlb_core::topology::{Topology, TopologySpec};
/// let spec: TopologySpec = "random:32:0.2:7".parse().unwrap();
/// assert_eq!(spec.to_string(), "random:32:0.2:7");
/// assert_eq!(spec.build().unwrap().node_count(), 32);
/// assert!("mesh:4".parse::<TopologySpec>().is_err());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub enum TopologySpec {
    /// `path:N`.
    Path(usize),
    /// `ring:N`.
    Ring(usize),
    /// `mesh:RxC`.
    Mesh(usize, usize),
    /// `torus:RxC`.
    Torus(usize, usize),
    /// `grid:AxBxC`, a 3-D Cartesian grid of ranks (`grid:AxB` is `mesh:AxB`).
    Grid(usize, usize, usize),
    /// `kary:K:N`.
    Kary(usize, usize),
    /// `star:N`.
    Star(usize),
    /// `complete:N`.
    Complete(usize),
    /// `hypercube:D`.
    Hypercube(u32),
    /// `random:N:P[:SEED]`.
    Random {
        /// Nodes.
        nodes: usize,
        /// Edge probability.
        p: f64,
        /// Seed.
        seed: u64,
    },
    /// `file:PATH`.
    File(String),
}

/// Why a spec's network could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// The graph file could not be read.
    #[error("cannot read '{path}': {source}")]
    Read {
        /// The file, as given.
        path: String,
        /// Why.
        source: crate::text_file::ReadError,
    },
    /// The graph is malformed or too large.
    #[error("{spec}: {source}")]
    Graph {
        /// The spec.
        spec: String,
        /// Why.
        source: GraphError,
    },
}

/// The most nodes of the complete network [`Network::default_for`] builds for a count that
/// is not a power of two: 2,048 nodes make about 4.2 million arcs (33 MB).
pub const MAX_COMPLETE_DEFAULT: usize = 2048;

/// Why [`Network::default_for`] has no network for a node count.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DefaultNetworkError {
    /// No nodes, or a count that is not a power of two for the diffusion rules.
    #[error(transparent)]
    Model(#[from] crate::ModelError),
    /// Too many nodes for the complete network.
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// More nodes than the complete network is built for by default.
    #[error(
        "{nodes} nodes: off a power of two the hypercube rules run on complete:N, built for at \
         most {max} nodes (its edges grow as N²); use a power of two"
    )]
    TooManyNodes {
        /// The node count.
        nodes: usize,
        /// The most nodes.
        max: usize,
    },
}

/// A topology spec that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0} (expected path:N, ring:N, mesh:RxC, torus:RxC, grid:AxB[xC], kary:K:N, star:N, complete:N, hypercube:D, random:N:P[:SEED] or file:PATH)"
)]
#[non_exhaustive]
pub struct SpecError(pub String);

impl FromStr for TopologySpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let (kind, rest) = s
            .split_once(':')
            .ok_or_else(|| SpecError(format!("'{s}' has no parameters")))?;
        let int = |v: &str, what: &str| {
            v.trim().parse::<usize>().map_err(|_| {
                SpecError(format!("'{s}': {what} '{v}' is not a non-negative integer"))
            })
        };
        let pair = |v: &str| -> Result<(usize, usize), SpecError> {
            let (r, c) = v
                .split_once(['x', 'X'])
                .ok_or_else(|| SpecError(format!("'{s}': expected ROWSxCOLS")))?;
            Ok((int(r, "rows")?, int(c, "columns")?))
        };
        let fields: Vec<&str> = rest.split(':').collect();
        let spec = match (kind, fields.as_slice()) {
            ("file", _) => TopologySpec::File(rest.to_string()),
            ("path", [n]) => TopologySpec::Path(int(n, "node count")?),
            ("ring", [n]) => TopologySpec::Ring(int(n, "node count")?),
            ("star", [n]) => TopologySpec::Star(int(n, "node count")?),
            ("complete", [n]) => TopologySpec::Complete(int(n, "node count")?),
            ("mesh", [v]) => {
                let (r, c) = pair(v)?;
                TopologySpec::Mesh(r, c)
            }
            ("torus", [v]) => {
                let (r, c) = pair(v)?;
                TopologySpec::Torus(r, c)
            }
            ("grid", [v]) => {
                let sides: Vec<&str> = v.split(['x', 'X']).collect();
                match sides[..] {
                    [a, b] => TopologySpec::Mesh(int(a, "side")?, int(b, "side")?),
                    [a, b, c] => {
                        TopologySpec::Grid(int(a, "side")?, int(b, "side")?, int(c, "side")?)
                    }
                    _ => return Err(SpecError(format!("'{s}': expected AxB or AxBxC"))),
                }
            }
            ("kary", [k, n]) => TopologySpec::Kary(int(k, "k")?, int(n, "n")?),
            ("hypercube", [d]) => {
                let d = int(d, "dimension")?;
                TopologySpec::Hypercube(u32::try_from(d).unwrap_or(u32::MAX))
            }
            ("random", [n, p, seed @ ..]) if seed.len() <= 1 => {
                let nodes = int(n, "node count")?;
                let p: f64 = p
                    .trim()
                    .parse()
                    .map_err(|_| SpecError(format!("'{s}': probability '{p}' is not a number")))?;
                let seed = match seed {
                    [x] => x.trim().parse::<u64>().map_err(|_| {
                        SpecError(format!("'{s}': seed '{x}' is not a non-negative integer"))
                    })?,
                    _ => 0,
                };
                TopologySpec::Random { nodes, p, seed }
            }
            (
                "path" | "ring" | "star" | "complete" | "mesh" | "torus" | "grid" | "kary"
                | "hypercube" | "random",
                _,
            ) => {
                return Err(SpecError(format!(
                    "'{s}' has the wrong number of parameters"
                )));
            }
            _ => return Err(SpecError(format!("unknown topology '{kind}'"))),
        };
        Ok(spec)
    }
}

impl fmt::Display for TopologySpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TopologySpec::Path(n) => write!(f, "path:{n}"),
            TopologySpec::Ring(n) => write!(f, "ring:{n}"),
            TopologySpec::Mesh(r, c) => write!(f, "mesh:{r}x{c}"),
            TopologySpec::Grid(a, b, c) => write!(f, "grid:{a}x{b}x{c}"),
            TopologySpec::Torus(r, c) => write!(f, "torus:{r}x{c}"),
            TopologySpec::Kary(k, n) => write!(f, "kary:{k}:{n}"),
            TopologySpec::Star(n) => write!(f, "star:{n}"),
            TopologySpec::Complete(n) => write!(f, "complete:{n}"),
            TopologySpec::Hypercube(d) => write!(f, "hypercube:{d}"),
            TopologySpec::Random { nodes, p, seed } => write!(f, "random:{nodes}:{p}:{seed}"),
            TopologySpec::File(path) => write!(f, "file:{path}"),
        }
    }
}

impl TopologySpec {
    /// The nodes and directed adjacency entries (twice the edges) the spec builds, computed
    /// without building it, so that a caller can refuse a size before allocating anything.
    /// `random:N:P` gives its expected entries, `p·N·(N−1)` plus the repair; `file:` gives
    /// `None` (its size is the file's).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::TopologySpec;
    /// let s: TopologySpec = "torus:4x8".parse().unwrap();
    /// assert_eq!(s.size_estimate(), Some((32, 128)));
    /// let s: TopologySpec = "hypercube:24".parse().unwrap();
    /// assert_eq!(s.size_estimate(), Some((1 << 24, 24 << 24)));
    /// ```
    pub fn size_estimate(&self) -> Option<(u128, u128)> {
        let n = |x: usize| x as u128;
        Some(match *self {
            TopologySpec::Path(k) => (n(k), 2 * n(k).saturating_sub(1)),
            TopologySpec::Ring(k) => (n(k), 2 * n(k)),
            TopologySpec::Mesh(r, c) => {
                let (r, c) = (n(r), n(c));
                (
                    r * c,
                    2 * (r * c.saturating_sub(1) + c * r.saturating_sub(1)),
                )
            }
            TopologySpec::Torus(r, c) => (n(r) * n(c), 4 * n(r) * n(c)),
            TopologySpec::Grid(a, b, c) => {
                let nodes = n(a).saturating_mul(n(b)).saturating_mul(n(c));
                (nodes, nodes.saturating_mul(6))
            }
            TopologySpec::Kary(k, d) => {
                let nodes = n(k).checked_pow(d as u32).unwrap_or(u128::MAX);
                (nodes, nodes.saturating_mul(2 * n(d)))
            }
            TopologySpec::Star(k) => (n(k), 2 * n(k).saturating_sub(1)),
            TopologySpec::Complete(k) => (n(k), n(k) * n(k).saturating_sub(1)),
            TopologySpec::Hypercube(d) => {
                let nodes = 1u128.checked_shl(d).unwrap_or(u128::MAX);
                (nodes, nodes.saturating_mul(u128::from(d)))
            }
            TopologySpec::Random { nodes, p, .. } => {
                let k = n(nodes);
                let expected = (p.clamp(0.0, 1.0) * (k * k.saturating_sub(1)) as f64) as u128;
                (k, expected + 2 * k)
            }
            TopologySpec::File(_) => return None,
        })
    }

    /// Builds the network, reading a `file:` spec's graph (relative to `dir` when given) with
    /// the one bounded reader ([`crate::text_file::read_text`], at most `max_bytes`); `nodes`,
    /// when given, is the node count the graph must have.
    ///
    /// # Errors
    /// [`BuildError`]: the file cannot be read, or the graph is malformed or too large.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::{Topology, TopologySpec};
    /// let spec: TopologySpec = "ring:6".parse().unwrap();
    /// assert_eq!(spec.build_reading(None, Some(6), 1 << 20).unwrap().node_count(), 6);
    /// let fifo: TopologySpec = "file:/dev/zero".parse().unwrap();
    /// assert!(fifo.build_reading(None, None, 1 << 20).is_err()); // a device: refused, not read
    /// ```
    pub fn build_reading(
        &self,
        dir: Option<&std::path::Path>,
        nodes: Option<usize>,
        max_bytes: u64,
    ) -> Result<Network, BuildError> {
        match self {
            TopologySpec::File(path) => {
                let full = dir.map_or_else(|| std::path::PathBuf::from(path), |d| d.join(path));
                let text = crate::text_file::read_text(&full, max_bytes).map_err(|source| {
                    BuildError::Read {
                        path: path.clone(),
                        source,
                    }
                })?;
                let graph = Graph::parse(&text, nodes).map_err(|source| BuildError::Graph {
                    spec: self.to_string(),
                    source,
                })?;
                Ok(Network::from_graph(graph))
            }
            other => other.build().map_err(|source| BuildError::Graph {
                spec: other.to_string(),
                source,
            }),
        }
    }

    /// Builds the network of a generated spec.
    ///
    /// # Errors
    /// The generator's [`GraphError`]; for `file:` specs a [`GraphError::Syntax`] saying that
    /// the file must be read ([`TopologySpec::build_reading`]).
    pub fn build(&self) -> Result<Network, GraphError> {
        let graph = |graph: Graph, shape: Shape| Ok(Network::Graph { graph, shape });
        match *self {
            TopologySpec::Path(n) => graph(generators::path(n)?, Shape::Path(n)),
            TopologySpec::Ring(n) => graph(generators::ring(n)?, Shape::Ring(n)),
            TopologySpec::Mesh(rows, cols) => {
                graph(generators::mesh(rows, cols)?, Shape::Mesh { rows, cols })
            }
            TopologySpec::Torus(rows, cols) => {
                graph(generators::torus(rows, cols)?, Shape::Torus { rows, cols })
            }
            TopologySpec::Grid(a, b, c) => {
                graph(generators::grid3(a, b, c)?, Shape::Grid { a, b, c })
            }
            TopologySpec::Kary(k, n) => graph(generators::kary(k, n)?, Shape::Kary { k, n }),
            TopologySpec::Star(n) => graph(generators::star(n)?, Shape::Star(n)),
            TopologySpec::Complete(n) => graph(generators::complete(n)?, Shape::Complete(n)),
            TopologySpec::Hypercube(d) => {
                if d >= 64 {
                    return Err(GraphError::TooLarge {
                        what: "node count",
                        value: 1u128 << d.min(127),
                        max: super::graph::MAX_NODES,
                    });
                }
                super::graph::check_nodes(1u128 << d)?;
                Hypercube::new(d)
                    .map(Network::Hypercube)
                    .map_err(|e| GraphError::Syntax(e.to_string()))
            }
            TopologySpec::Random { nodes, p, seed } => {
                graph(generators::random_connected(nodes, p, seed)?, Shape::Random)
            }
            TopologySpec::File(ref path) => Err(GraphError::Syntax(format!(
                "file:{path} must be read by the caller and parsed with Graph::parse"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_round_trip() {
        for s in [
            "path:5",
            "ring:16",
            "mesh:4x4",
            "torus:8x8",
            "kary:4:3",
            "star:9",
            "complete:8",
            "hypercube:5",
            "random:32:0.2:9",
            "file:/tmp/x.txt",
        ] {
            let spec: TopologySpec = s.parse().unwrap();
            assert_eq!(spec.to_string(), s);
        }
        assert_eq!(
            "random:32:0.2".parse::<TopologySpec>().unwrap(),
            TopologySpec::Random {
                nodes: 32,
                p: 0.2,
                seed: 0
            }
        );
        for bad in [
            "ring",
            "ring:x",
            "ring:4:5",
            "mesh:4",
            "torus:4x",
            "kary:4",
            "moebius:3",
            "random:8",
            "random:8:0.1:2:3",
            "random:8:p",
            "hypercube:-1",
        ] {
            assert!(bad.parse::<TopologySpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn natural_colourings_have_two_colours_per_dimension() {
        for (spec, colours) in [
            ("path:9", 2),
            ("ring:16", 2),
            ("mesh:4x5", 4),
            ("torus:8x8", 4),
            ("torus:6x2", 3),
            ("kary:4:3", 6),
            ("hypercube:5", 5),
        ] {
            let net = spec.parse::<TopologySpec>().unwrap().build().unwrap();
            let c = net.edge_colouring();
            assert_eq!(c.colours(), colours, "{spec}");
            assert!(c.is_proper_for(&net), "{spec}");
        }
        let odd = "ring:7".parse::<TopologySpec>().unwrap().build().unwrap();
        let c = odd.edge_colouring();
        assert_eq!(c.colours(), 3);
        assert!(c.is_proper_for(&odd));
    }

    #[test]
    fn lambda_is_the_published_optimum_or_one_half() {
        let lambda = |s: &str| {
            s.parse::<TopologySpec>()
                .unwrap()
                .build()
                .unwrap()
                .gdem_lambda()
        };
        assert_eq!(lambda("hypercube:4"), 0.5);
        assert!((lambda("ring:4") - 0.5).abs() < 1e-12);
        assert!((lambda("ring:16") - 1.0 / (1.0 + (PI / 8.0).sin())).abs() < 1e-12);
        assert!((lambda("path:8") - 1.0 / (1.0 + (PI / 8.0).sin())).abs() < 1e-12);
        assert_eq!(lambda("ring:7"), 0.5);
        assert_eq!(lambda("star:5"), 0.5);
        assert_eq!(lambda("kary:2:3"), 0.5);
        assert!(lambda("torus:8x8") > 0.5 && lambda("torus:8x8") < 1.0);
    }
}
