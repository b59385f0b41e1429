//! Arbitrary undirected graphs in compressed sparse row (CSR) form.
//!
//! A [`Graph`] stores, for every node, its sorted neighbour list in one contiguous array
//! (`targets`), indexed by `offsets`: the neighbours of `u` are
//! `targets[offsets[u]..offsets[u + 1]]`. A torus of a million nodes then costs 40 MB and a
//! neighbour visit is one slice walk.
//!
//! Every graph is validated when built: at least one node, no self loop, no duplicate edge,
//! every id in range, connected. The same checks guard [`Graph::from_edges`], the edge-list
//! parser [`Graph::parse_edge_list`] and the JSON parser [`Graph::parse_json`]; parse errors
//! name the line (or the edge) at fault.

use super::Topology;
use serde::Deserialize;
use std::fmt;
use thiserror::Error;

/// The largest number of nodes a graph may have (2^24, about 16.7 million).
pub const MAX_NODES: usize = 1 << 24;
/// The largest number of directed adjacency entries (twice the edges), 2^27.
pub const MAX_ARCS: usize = 1 << 27;

/// Where in the input an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// A line of an edge-list text (from 1).
    Line(usize),
    /// An edge of a JSON document or an edge iterator (from 0).
    Edge(usize),
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::Line(l) => write!(f, "line {l}"),
            Location::Edge(e) => write!(f, "edge {e}"),
        }
    }
}

/// What is wrong with a graph, a generator's parameters or a graph file.
///
/// Every message is one line that names the offending value.
#[derive(Debug, Clone, PartialEq, Error)]
#[non_exhaustive]
pub enum GraphError {
    /// A graph with no node.
    #[error("the graph has no nodes")]
    Empty,
    /// A graph file (edge list or JSON) with no edge: an empty file, only comments, or an
    /// empty edge array.
    #[error("the graph file has no edges (an empty graph)")]
    NoEdges,
    /// An edge from a node to itself.
    #[error("self loop at node {node}")]
    SelfLoop {
        /// The node.
        node: usize,
    },
    /// The same undirected edge given twice.
    #[error("duplicate edge {a} - {b}")]
    DuplicateEdge {
        /// Smaller endpoint.
        a: usize,
        /// Larger endpoint.
        b: usize,
    },
    /// A node id that is not below the number of nodes.
    #[error("node id {node} is out of range (the graph has nodes 0..{nodes})")]
    NodeOutOfRange {
        /// The id given.
        node: usize,
        /// Number of nodes.
        nodes: usize,
    },
    /// Not every node can reach every other.
    #[error(
        "the graph is disconnected: {components} components; node {unreachable} cannot be reached from node 0"
    )]
    Disconnected {
        /// Number of connected components.
        components: usize,
        /// The smallest node not reachable from node 0.
        unreachable: usize,
    },
    /// More nodes or edges than the graph type holds.
    #[error("{what} is too large: {value} (at most {max})")]
    TooLarge {
        /// What was counted: "node count" or "edge count".
        what: &'static str,
        /// The requested value.
        value: u128,
        /// The limit.
        max: usize,
    },
    /// A generator parameter out of its domain.
    #[error("{name} = {value} is invalid: {reason}")]
    Parameter {
        /// The parameter.
        name: &'static str,
        /// Its value, as text.
        value: String,
        /// What it must be.
        reason: &'static str,
    },
    /// A line or document that cannot be read.
    #[error("{0}")]
    Syntax(String),
    /// An error at a given place of the input.
    #[error("{at}: {error}")]
    At {
        /// The line or edge.
        at: Location,
        /// The error found there.
        error: Box<GraphError>,
    },
}

impl GraphError {
    fn at(self, at: Location) -> Self {
        GraphError::At {
            at,
            error: Box::new(self),
        }
    }

    /// The error without its location.
    pub fn kind(&self) -> &GraphError {
        match self {
            GraphError::At { error, .. } => error.kind(),
            other => other,
        }
    }
}

/// A connected, simple, undirected graph in CSR form.
///
/// # Example
/// ```
/// use hetlb_core::topology::{Graph, Topology};
/// let g = Graph::from_edges(4, [(0, 1), (1, 2), (2, 3), (3, 0)]).unwrap();
/// assert_eq!(g.node_count(), 4);
/// assert_eq!(g.edge_count(), 4);
/// assert_eq!(g.neighbors(0).collect::<Vec<_>>(), vec![1, 3]);
/// assert!(Graph::from_edges(3, [(0, 1)]).is_err()); // node 2 is unreachable
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    offsets: Vec<usize>,
    targets: Vec<usize>,
}

impl Graph {
    /// Builds and validates a graph of `nodes` nodes from undirected edges.
    ///
    /// # Errors
    /// [`GraphError::Empty`], [`GraphError::TooLarge`], and, located at the offending edge
    /// (numbered from 0), [`GraphError::NodeOutOfRange`], [`GraphError::SelfLoop`],
    /// [`GraphError::DuplicateEdge`]; [`GraphError::Disconnected`] at the end.
    ///
    /// # Complexity
    /// `O(N + M log Δ)` for `M` edges and maximum degree `Δ`.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::{Graph, GraphError};
    /// assert!(Graph::from_edges(2, [(0, 1)]).is_ok());
    /// let err = Graph::from_edges(2, [(0, 1), (1, 0)]).unwrap_err();
    /// assert_eq!(err.to_string(), "edge 1: duplicate edge 0 - 1");
    /// assert_eq!(*err.kind(), GraphError::DuplicateEdge { a: 0, b: 1 });
    /// ```
    pub fn from_edges<I>(nodes: usize, edges: I) -> Result<Self, GraphError>
    where
        I: IntoIterator<Item = (usize, usize)>,
    {
        Self::build(
            nodes,
            edges
                .into_iter()
                .enumerate()
                .map(|(i, e)| (Location::Edge(i), e)),
            true,
        )
    }

    /// Builds a graph from edges that a generator knows to be valid, merging duplicates (a
    /// ring of two nodes has one edge, not two). Connectivity is still checked.
    pub(crate) fn from_generated<I>(nodes: usize, edges: I) -> Result<Self, GraphError>
    where
        I: IntoIterator<Item = (usize, usize)>,
    {
        Self::build(
            nodes,
            edges
                .into_iter()
                .enumerate()
                .map(|(i, e)| (Location::Edge(i), e)),
            false,
        )
    }

    fn build<I>(nodes: usize, edges: I, strict: bool) -> Result<Self, GraphError>
    where
        I: IntoIterator<Item = (Location, (usize, usize))>,
    {
        if nodes == 0 {
            return Err(GraphError::Empty);
        }
        check_nodes(nodes as u128)?;
        let mut list: Vec<(usize, usize, Location)> = Vec::new();
        for (at, (a, b)) in edges {
            for node in [a, b] {
                if node >= nodes {
                    return Err(GraphError::NodeOutOfRange { node, nodes }.at(at));
                }
            }
            if a == b {
                return Err(GraphError::SelfLoop { node: a }.at(at));
            }
            check_arcs(2 * (list.len() as u128 + 1))?;
            list.push((a.min(b), a.max(b), at));
        }
        // Stable sort: the first occurrence of a duplicate comes first, the second is blamed.
        list.sort_by_key(|&(a, b, _)| (a, b));
        let before = list.len();
        let mut duplicate = None;
        list.dedup_by(|later, first| {
            let same = (later.0, later.1) == (first.0, first.1);
            if same && duplicate.is_none() {
                duplicate = Some(*later);
            }
            same
        });
        if strict && let Some((a, b, at)) = duplicate {
            return Err(GraphError::DuplicateEdge { a, b }.at(at));
        }
        debug_assert!(list.len() <= before);
        let mut degree = vec![0usize; nodes];
        for &(a, b, _) in &list {
            degree[a] += 1;
            degree[b] += 1;
        }
        let mut offsets = Vec::with_capacity(nodes + 1);
        offsets.push(0);
        for d in &degree {
            offsets.push(offsets.last().copied().unwrap_or(0) + d);
        }
        let mut fill = offsets[..nodes].to_vec();
        let mut targets = vec![0usize; 2 * list.len()];
        // Edges are sorted by (a, b): every adjacency list comes out sorted.
        for &(a, b, _) in &list {
            targets[fill[a]] = b;
            fill[a] += 1;
        }
        for &(a, b, _) in &list {
            targets[fill[b]] = a;
            fill[b] += 1;
        }
        for u in 0..nodes {
            targets[offsets[u]..offsets[u + 1]].sort_unstable();
        }
        let graph = Graph { offsets, targets };
        graph.check_connected()?;
        Ok(graph)
    }

    /// Parses an edge list: one edge `a b` per line, node ids from 0; blank lines and text
    /// after `#` are ignored. The number of nodes is `nodes` when given (ids must be below it),
    /// otherwise one more than the largest id.
    ///
    /// # Errors
    /// As [`Graph::from_edges`], located by line (from 1), plus [`GraphError::Syntax`] for a
    /// line that is not two non-negative integers and [`GraphError::NoEdges`] for a text
    /// without any edge (empty, or only comments).
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::{Graph, Topology};
    /// let g = Graph::parse_edge_list("# a triangle\n0 1\n1 2\n2 0\n", None).unwrap();
    /// assert_eq!(g.edge_count(), 3);
    /// let err = Graph::parse_edge_list("0 1\n1 1\n", None).unwrap_err();
    /// assert_eq!(err.to_string(), "line 2: self loop at node 1");
    /// let err = Graph::parse_edge_list("0 1\n1 7\n", Some(4)).unwrap_err();
    /// assert_eq!(err.to_string(), "line 2: node id 7 is out of range (the graph has nodes 0..4)");
    /// ```
    pub fn parse_edge_list(text: &str, nodes: Option<usize>) -> Result<Self, GraphError> {
        let mut edges = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let at = Location::Line(i + 1);
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line
                .split([' ', '\t', ','])
                .filter(|s| !s.is_empty())
                .collect();
            let [a, b] = fields.as_slice() else {
                return Err(GraphError::Syntax(format!(
                    "expected two node ids 'a b', found '{}'",
                    shorten(line)
                ))
                .at(at));
            };
            let id = |s: &str| {
                s.parse::<usize>().map_err(|_| {
                    GraphError::Syntax(format!(
                        "'{}' is not a node id (a non-negative integer)",
                        shorten(s)
                    ))
                    .at(at)
                })
            };
            edges.push((at, (id(a)?, id(b)?)));
        }
        if edges.is_empty() {
            return Err(GraphError::NoEdges);
        }
        let nodes = nodes.unwrap_or_else(|| {
            edges
                .iter()
                .map(|(_, (a, b))| a.max(b).saturating_add(1))
                .max()
                .unwrap_or(0)
        });
        Self::build(nodes, edges, true)
    }

    /// Parses a JSON graph: `{"nodes": N, "edges": [[a, b], …]}`, or just the array of edges.
    /// `nodes` (the argument) is the expected node count: when both are given they must agree;
    /// when neither is, the count is one more than the largest id.
    ///
    /// # Errors
    /// As [`Graph::from_edges`], plus [`GraphError::Syntax`] for malformed JSON or a node
    /// count that differs from `nodes`, and [`GraphError::NoEdges`] for an empty edge array.
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::{Graph, Topology};
    /// let g = Graph::parse_json(r#"{"nodes": 3, "edges": [[0, 1], [1, 2]]}"#, None).unwrap();
    /// assert_eq!(g.degree(1), 2);
    /// assert!(Graph::parse_json("[[0, 1], [1, 2]]", Some(3)).is_ok());
    /// let err = Graph::parse_json("[[0, 1], [2, 3]]", None).unwrap_err();
    /// assert!(err.to_string().contains("disconnected"));
    /// ```
    pub fn parse_json(text: &str, nodes: Option<usize>) -> Result<Self, GraphError> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Doc {
            Full {
                nodes: Option<usize>,
                edges: Vec<(usize, usize)>,
            },
            Edges(Vec<(usize, usize)>),
        }
        let doc: Doc = serde_json::from_str(text).map_err(|e| {
            GraphError::Syntax(format!(
                "not a JSON graph ({{\"nodes\": N, \"edges\": [[a, b], ...]}} or [[a, b], ...]): {e}"
            ))
        })?;
        let (declared, edges) = match doc {
            Doc::Full { nodes, edges } => (nodes, edges),
            Doc::Edges(edges) => (None, edges),
        };
        if edges.is_empty() {
            return Err(GraphError::NoEdges);
        }
        if let (Some(d), Some(n)) = (declared, nodes)
            && d != n
        {
            return Err(GraphError::Syntax(format!(
                "the file declares {d} nodes but {n} are expected"
            )));
        }
        let nodes = declared.or(nodes).unwrap_or_else(|| {
            edges
                .iter()
                .map(|&(a, b)| a.max(b).saturating_add(1))
                .max()
                .unwrap_or(0)
        });
        Self::from_edges(nodes, edges)
    }

    /// Parses either format: JSON when the text starts with `{` or `[`, an edge list
    /// otherwise.
    ///
    /// # Errors
    /// As [`Graph::parse_json`] or [`Graph::parse_edge_list`].
    ///
    /// # Example
    /// ```
    /// use hetlb_core::topology::Graph;
    /// assert_eq!(Graph::parse("0 1\n", None), Graph::parse("[[0, 1]]", None));
    /// ```
    pub fn parse(text: &str, nodes: Option<usize>) -> Result<Self, GraphError> {
        match text.trim_start().chars().next() {
            Some('{' | '[') => Self::parse_json(text, nodes),
            _ => Self::parse_edge_list(text, nodes),
        }
    }

    /// The neighbours of `node`, sorted.
    #[inline]
    pub fn adjacency(&self, node: usize) -> &[usize] {
        &self.targets[self.offsets[node]..self.offsets[node + 1]]
    }

    /// The largest degree.
    pub fn max_degree(&self) -> usize {
        self.offsets
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap_or(0)
    }

    /// Every undirected edge once, as `(a, b)` with `a < b`, in increasing order.
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.node_count()).flat_map(move |a| {
            self.adjacency(a)
                .iter()
                .copied()
                .filter(move |&b| b > a)
                .map(move |b| (a, b))
        })
    }

    fn check_connected(&self) -> Result<(), GraphError> {
        let labels = components(self);
        let count = labels.iter().copied().max().map_or(0, |m| m + 1);
        if count > 1 {
            let unreachable = labels.iter().position(|&l| l != 0).unwrap_or(0);
            return Err(GraphError::Disconnected {
                components: count,
                unreachable,
            });
        }
        Ok(())
    }
}

/// Component label of every node (0 for node 0's component), by breadth-first search.
pub(crate) fn components<T: Topology>(topology: &T) -> Vec<usize> {
    let n = topology.node_count();
    let mut label = vec![usize::MAX; n];
    let mut queue = Vec::new();
    let mut next = 0;
    for start in 0..n {
        if label[start] != usize::MAX {
            continue;
        }
        label[start] = next;
        queue.clear();
        queue.push(start);
        while let Some(u) = queue.pop() {
            for v in topology.neighbors(u) {
                if label[v] == usize::MAX {
                    label[v] = next;
                    queue.push(v);
                }
            }
        }
        next += 1;
    }
    label
}

pub(crate) fn check_nodes(nodes: u128) -> Result<(), GraphError> {
    if nodes > MAX_NODES as u128 {
        return Err(GraphError::TooLarge {
            what: "node count",
            value: nodes,
            max: MAX_NODES,
        });
    }
    Ok(())
}

pub(crate) fn check_arcs(arcs: u128) -> Result<(), GraphError> {
    if arcs > MAX_ARCS as u128 {
        return Err(GraphError::TooLarge {
            what: "edge count",
            value: arcs / 2,
            max: MAX_ARCS / 2,
        });
    }
    Ok(())
}

impl Topology for Graph {
    #[inline]
    fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    #[inline]
    fn neighbors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        self.adjacency(node).iter().copied()
    }

    #[inline]
    fn degree(&self, node: usize) -> usize {
        self.offsets[node + 1] - self.offsets[node]
    }

    fn edge_count(&self) -> usize {
        self.targets.len() / 2
    }

    fn contains_edge(&self, a: usize, b: usize) -> bool {
        a < self.node_count() && self.adjacency(a).binary_search(&b).is_ok()
    }
}

/// At most 32 characters of `text` for an error message, `…` marking a cut: a malformed
/// line of a large file is named, not echoed whole.
fn shorten(text: &str) -> String {
    const SHOWN: usize = 32;
    match text.char_indices().nth(SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_bad_input_is_named() {
        let kind = |r: Result<Graph, GraphError>| r.unwrap_err().kind().clone();
        assert_eq!(kind(Graph::from_edges(0, [])), GraphError::Empty);
        assert_eq!(
            kind(Graph::from_edges(3, [(0, 1), (2, 2)])),
            GraphError::SelfLoop { node: 2 }
        );
        assert_eq!(
            kind(Graph::from_edges(3, [(0, 1), (1, 2), (2, 1)])),
            GraphError::DuplicateEdge { a: 1, b: 2 }
        );
        assert_eq!(
            kind(Graph::from_edges(3, [(0, 1), (1, 3)])),
            GraphError::NodeOutOfRange { node: 3, nodes: 3 }
        );
        assert_eq!(
            kind(Graph::from_edges(5, [(0, 1), (2, 3)])),
            GraphError::Disconnected {
                components: 3,
                unreachable: 2
            }
        );
        assert_eq!(kind(Graph::parse_edge_list("", None)), GraphError::NoEdges);
        for empty in [
            "",
            "\n\n",
            "# only a comment\n",
            "  # x\n#y",
            "[]",
            "{\"nodes\": 1, \"edges\": []}",
        ] {
            for nodes in [None, Some(1), Some(4)] {
                assert_eq!(
                    kind(Graph::parse(empty, nodes)),
                    GraphError::NoEdges,
                    "{empty:?}"
                );
            }
        }
        assert!(matches!(
            kind(Graph::parse_edge_list("0 18446744073709551615\n", None)),
            GraphError::TooLarge { .. }
        ));
        assert!(matches!(
            kind(Graph::parse_json("[[0, 18446744073709551615]]", None)),
            GraphError::TooLarge { .. }
        ));
        assert!(matches!(
            kind(Graph::parse_edge_list("0 1 2\n", None)),
            GraphError::Syntax(_)
        ));
        assert!(matches!(
            kind(Graph::parse_edge_list("0 -1\n", None)),
            GraphError::Syntax(_)
        ));
        assert!(matches!(
            kind(Graph::parse_json("{\"edges\": 3}", None)),
            GraphError::Syntax(_)
        ));
        assert!(matches!(
            kind(Graph::parse_json(
                "{\"nodes\": 2, \"edges\": [[0, 1]]}",
                Some(3)
            )),
            GraphError::Syntax(_)
        ));
        assert_eq!(
            Graph::parse_edge_list("0 1\n\n# x\n1 2\n2 1\n", None)
                .unwrap_err()
                .to_string(),
            "line 5: duplicate edge 1 - 2"
        );
    }

    #[test]
    fn a_single_node_is_a_graph() {
        let g = Graph::from_edges(1, []).unwrap();
        assert_eq!(g.node_count(), 1);
        assert_eq!(g.edge_count(), 0);
        // A file with nothing in it is not a one-node graph.
        assert!(Graph::parse_edge_list("# nothing\n", Some(1)).is_err());
    }

    #[test]
    fn adjacency_is_sorted_and_symmetric() {
        let g = Graph::from_edges(5, [(4, 0), (0, 2), (3, 1), (1, 0), (2, 3)]).unwrap();
        for u in 0..5 {
            let adj = g.adjacency(u);
            assert!(adj.windows(2).all(|w| w[0] < w[1]));
            for &v in adj {
                assert!(g.contains_edge(v, u));
            }
        }
        assert_eq!(g.edges().count(), 5);
        assert_eq!(g.max_degree(), 3);
    }

    #[test]
    fn generated_edges_may_repeat() {
        let g = Graph::from_generated(2, [(0, 1), (1, 0)]).unwrap();
        assert_eq!(g.edge_count(), 1);
    }
}
