//! Generators of the classic interconnection networks and of random connected graphs.
//!
//! Node numbering is row-major for meshes and tori and mixed-radix (coordinate 0 least
//! significant) for k-ary n-cubes, so `kary(k, 2)` is `torus(k, k)` and `kary(2, n)` is the
//! `n`-cube with the same addresses as [`Hypercube`](super::Hypercube).

use super::graph::{Graph, GraphError, check_arcs, check_nodes};
use rand::RngExt;
use rand_pcg::Pcg64;

fn at_least(name: &'static str, value: usize, min: usize) -> Result<(), GraphError> {
    if value < min {
        return Err(GraphError::Parameter {
            name,
            value: value.to_string(),
            reason: match min {
                1 => "must be at least 1",
                2 => "must be at least 2",
                _ => "must be at least 3",
            },
        });
    }
    Ok(())
}

fn product(factors: &[usize]) -> Result<usize, GraphError> {
    let total = factors
        .iter()
        .try_fold(1u128, |acc, &f| acc.checked_mul(f as u128))
        .unwrap_or(u128::MAX);
    check_nodes(total)?;
    Ok(total as usize)
}

/// The path `0 - 1 - … - (n−1)`.
///
/// # Errors
/// [`GraphError::Parameter`] for `n = 0`; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::path(4).unwrap();
/// assert_eq!((g.edge_count(), g.degree(0), g.degree(1)), (3, 1, 2));
/// ```
pub fn path(n: usize) -> Result<Graph, GraphError> {
    at_least("nodes", n, 1)?;
    check_nodes(n as u128)?;
    Graph::from_generated(n, (1..n).map(|i| (i - 1, i)))
}

/// The ring (cycle) of `n ≥ 3` nodes: `i` is joined to `i ± 1 mod n`.
///
/// # Errors
/// [`GraphError::Parameter`] below 3 nodes (use [`path`]); [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::ring(16).unwrap();
/// assert!((0..16).all(|u| g.degree(u) == 2));
/// assert!(g.contains_edge(15, 0));
/// assert!(generators::ring(2).is_err());
/// ```
pub fn ring(n: usize) -> Result<Graph, GraphError> {
    at_least("nodes", n, 3)?;
    check_nodes(n as u128)?;
    Graph::from_generated(n, (0..n).map(|i| (i, (i + 1) % n)))
}

/// The `rows × cols` 2-D mesh (grid without wrap-around); node `(r, c)` is `r·cols + c`.
///
/// # Errors
/// [`GraphError::Parameter`] for a zero side; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::mesh(4, 4).unwrap();
/// assert_eq!((g.node_count(), g.edge_count()), (16, 24));
/// ```
pub fn mesh(rows: usize, cols: usize) -> Result<Graph, GraphError> {
    at_least("rows", rows, 1)?;
    at_least("columns", cols, 1)?;
    let n = product(&[rows, cols])?;
    let horizontal = (0..n)
        .filter(move |u| u % cols + 1 < cols)
        .map(|u| (u, u + 1));
    let vertical = (0..n.saturating_sub(cols)).map(move |u| (u, u + cols));
    Graph::from_generated(n, horizontal.chain(vertical))
}

/// The `a × b × c` 3-D grid (mesh): node `(i, j, k)` is `(k·b + j)·a + i`, linked to its
/// neighbours along each axis, without wrap-around.
///
/// # Errors
/// [`GraphError::Parameter`] for a zero side; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::grid3(2, 2, 2).unwrap();
/// assert_eq!((g.node_count(), g.edge_count()), (8, 12));
/// ```
pub fn grid3(a: usize, b: usize, c: usize) -> Result<Graph, GraphError> {
    at_least("a", a, 1)?;
    at_least("b", b, 1)?;
    at_least("c", c, 1)?;
    let n = product(&[a, b, c])?;
    let along_a = (0..n).filter(move |u| u % a + 1 < a).map(|u| (u, u + 1));
    let along_b = (0..n)
        .filter(move |u| (u / a) % b + 1 < b)
        .map(move |u| (u, u + a));
    let along_c = (0..n.saturating_sub(a * b)).map(move |u| (u, u + a * b));
    Graph::from_generated(n, along_a.chain(along_b).chain(along_c))
}

/// The `rows × cols` 2-D torus: the mesh with wrap-around in both directions. A side of 2
/// gives a single link in that direction, a side of 1 none.
///
/// # Errors
/// [`GraphError::Parameter`] for a zero side; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::torus(8, 8).unwrap();
/// assert!((0..64).all(|u| g.degree(u) == 4));
/// assert!(g.contains_edge(7, 0) && g.contains_edge(56, 0));
/// ```
pub fn torus(rows: usize, cols: usize) -> Result<Graph, GraphError> {
    at_least("rows", rows, 1)?;
    at_least("columns", cols, 1)?;
    wrapped(&[cols, rows])
}

/// The k-ary n-cube: `k^n` nodes with coordinates in `0..k`, each joined to the nodes that
/// differ by ±1 mod `k` in one coordinate. `kary(k, 1)` is a ring, `kary(2, n)` the
/// hypercube.
///
/// # Errors
/// [`GraphError::Parameter`] for `k < 2` or `n < 1`; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::kary(4, 3).unwrap();
/// assert_eq!(g.node_count(), 64);
/// assert!((0..64).all(|u| g.degree(u) == 6));
/// ```
pub fn kary(k: usize, n: usize) -> Result<Graph, GraphError> {
    at_least("k", k, 2)?;
    at_least("n", n, 1)?;
    if n > 64 {
        return Err(GraphError::Parameter {
            name: "n",
            value: n.to_string(),
            reason: "must be at most 64",
        });
    }
    wrapped(&vec![k; n])
}

/// A torus with the given side lengths, coordinate 0 least significant.
fn wrapped(sides: &[usize]) -> Result<Graph, GraphError> {
    let n = product(sides)?;
    let arcs: u128 = sides.iter().map(|&k| (k.min(3) - 1) as u128).sum::<u128>() * n as u128;
    check_arcs(arcs)?;
    let mut edges = Vec::new();
    let mut stride = 1;
    for &k in sides {
        if k >= 2 {
            for u in 0..n {
                let x = (u / stride) % k;
                let v = u - x * stride + ((x + 1) % k) * stride;
                if k > 2 || x == 0 {
                    edges.push((u, v));
                }
            }
        }
        stride *= k;
    }
    Graph::from_generated(n, edges)
}

/// The star of `n` nodes: node 0 is joined to every other.
///
/// # Errors
/// [`GraphError::Parameter`] for `n = 0`; [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::star(9).unwrap();
/// assert_eq!((g.degree(0), g.degree(5)), (8, 1));
/// ```
pub fn star(n: usize) -> Result<Graph, GraphError> {
    at_least("nodes", n, 1)?;
    check_nodes(n as u128)?;
    Graph::from_generated(n, (1..n).map(|i| (0, i)))
}

/// The complete graph on `n` nodes.
///
/// # Errors
/// [`GraphError::Parameter`] for `n = 0`; [`GraphError::TooLarge`] beyond 2^26 edges.
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// assert_eq!(generators::complete(8).unwrap().edge_count(), 28);
/// ```
pub fn complete(n: usize) -> Result<Graph, GraphError> {
    at_least("nodes", n, 1)?;
    check_nodes(n as u128)?;
    check_arcs(n as u128 * (n as u128 - 1))?;
    Graph::from_generated(n, (0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))))
}

/// The `d`-dimensional hypercube as an explicit graph (node `u`'s neighbours are
/// `u ^ 2^k`). The implicit [`Hypercube`](super::Hypercube) needs no memory; this form is
/// for code that wants a [`Graph`].
///
/// # Errors
/// [`GraphError::TooLarge`].
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::hypercube(3).unwrap();
/// assert_eq!(g.neighbors(5).collect::<Vec<_>>(), vec![1, 4, 7]);
/// ```
pub fn hypercube(d: u32) -> Result<Graph, GraphError> {
    if d >= 64 {
        return Err(GraphError::TooLarge {
            what: "node count",
            value: 1u128 << d.min(127),
            max: super::graph::MAX_NODES,
        });
    }
    if d == 0 {
        return Graph::from_generated(1, []);
    }
    wrapped(&vec![2; d as usize])
}

/// A seeded random connected graph: Erdős–Rényi G(n, p), then *repaired*: while there is
/// more than one component, the components are joined in order of their smallest node, each
/// by one edge between a uniformly random node of it and a uniformly random node of the part
/// already joined. Sampling skips geometrically over absent edges (Batagelj & Brandes 2005),
/// so the cost is `O(N + M)`.
///
/// # Errors
/// [`GraphError::Parameter`] for `n = 0` or `p` outside `[0, 1]`; [`GraphError::TooLarge`]
/// when the expected edge count exceeds the limit.
///
/// # Example
/// ```
/// use hetlb_core::topology::{generators, Topology};
/// let g = generators::random_connected(32, 0.2, 7).unwrap();
/// assert_eq!(g, generators::random_connected(32, 0.2, 7).unwrap()); // same seed, same graph
/// let sparse = generators::random_connected(40, 0.0, 1).unwrap();
/// assert_eq!(sparse.edge_count(), 39); // a random tree: only repair edges
/// ```
pub fn random_connected(n: usize, p: f64, seed: u64) -> Result<Graph, GraphError> {
    at_least("nodes", n, 1)?;
    check_nodes(n as u128)?;
    if !(0.0..=1.0).contains(&p) {
        return Err(GraphError::Parameter {
            name: "p",
            value: p.to_string(),
            reason: "must be a probability between 0 and 1",
        });
    }
    let pairs = n as u128 * (n as u128 - 1) / 2;
    check_arcs(((pairs as f64 * p) * 2.0) as u128)?;
    let mut rng = Pcg64::new(
        u128::from(seed) ^ 0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c834,
        0x5851_f42d_4c95_7f2d,
    );
    let mut edges: Vec<(usize, usize)> = Vec::new();
    if p >= 1.0 {
        edges.extend((0..n).flat_map(|a| (a + 1..n).map(move |b| (a, b))));
    } else if p > 0.0 {
        // Batagelj & Brandes: walk the lower triangle (v, w), w < v, skipping absent edges.
        let log_q = (1.0 - p).ln();
        let (mut v, mut w): (usize, i128) = (1, -1);
        while v < n {
            let r: f64 = rng.random();
            let skip = ((1.0 - r).ln() / log_q).floor();
            w += 1 + if skip.is_finite() {
                skip.min(1e18) as i128
            } else {
                i128::MAX / 4
            };
            while v < n && w >= v as i128 {
                w -= v as i128;
                v += 1;
            }
            if v < n {
                edges.push((w as usize, v));
                check_arcs(2 * edges.len() as u128)?;
            }
        }
    }
    // Repair: join the components.
    let labels = edge_components(n, &edges);
    let count = labels.iter().copied().max().map_or(0, |m| m + 1);
    if count > 1 {
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); count];
        for (u, &l) in labels.iter().enumerate() {
            members[l].push(u);
        }
        let mut joined: Vec<usize> = members[0].clone();
        for part in &members[1..] {
            let a = part[rng.random_range(0..part.len())];
            let b = joined[rng.random_range(0..joined.len())];
            edges.push((a.min(b), a.max(b)));
            joined.extend_from_slice(part);
        }
    }
    Graph::from_generated(n, edges)
}

/// Component label of every node (numbered by smallest member) by union–find.
fn edge_components(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    fn find(parent: &mut [usize], mut u: usize) -> usize {
        while parent[u] != u {
            parent[u] = parent[parent[u]];
            u = parent[u];
        }
        u
    }
    let mut parent: Vec<usize> = (0..n).collect();
    for &(a, b) in edges {
        let (ra, rb) = (find(&mut parent, a), find(&mut parent, b));
        if ra != rb {
            parent[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut label = vec![usize::MAX; n];
    let mut next = 0;
    for u in 0..n {
        let r = find(&mut parent, u);
        if label[r] == usize::MAX {
            label[r] = next;
            next += 1;
        }
        label[u] = label[r];
    }
    label
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{Hypercube, Topology};

    #[test]
    fn sizes_and_degrees() {
        assert_eq!(mesh(3, 5).unwrap().edge_count(), 3 * 4 + 2 * 5);
        assert_eq!(torus(4, 6).unwrap().edge_count(), 2 * 24);
        assert_eq!(torus(2, 4).unwrap().edge_count(), 4 + 8);
        assert_eq!(torus(1, 5).unwrap().edge_count(), 5);
        assert_eq!(kary(3, 3).unwrap().edge_count(), 27 * 3);
        assert_eq!(kary(4, 2).unwrap(), torus(4, 4).unwrap());
        assert_eq!(path(1).unwrap().node_count(), 1);
        assert_eq!(star(1).unwrap().edge_count(), 0);
        assert_eq!(complete(1).unwrap().edge_count(), 0);
    }

    #[test]
    fn explicit_hypercube_matches_the_implicit_one() {
        for d in 0..7 {
            let g = hypercube(d).unwrap();
            let cube = Hypercube::new(d).unwrap();
            assert_eq!(g.node_count(), cube.node_count());
            for u in 0..g.node_count() {
                let mut want: Vec<usize> = cube.neighbors(u).collect();
                want.sort_unstable();
                assert_eq!(g.adjacency(u), want.as_slice());
            }
            assert_eq!(
                kary(2, d.max(1) as usize).unwrap().node_count(),
                1 << d.max(1)
            );
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(ring(2).is_err());
        assert!(mesh(0, 3).is_err());
        assert!(kary(1, 3).is_err());
        assert!(path(0).is_err());
        assert!(random_connected(8, 1.5, 0).is_err());
        assert!(random_connected(8, f64::NAN, 0).is_err());
        assert!(matches!(
            mesh(1 << 20, 1 << 20),
            Err(GraphError::TooLarge { .. })
        ));
        assert!(matches!(complete(20_000), Err(GraphError::TooLarge { .. })));
        assert!(matches!(kary(10, 40), Err(GraphError::TooLarge { .. })));
    }

    #[test]
    fn random_graphs_are_connected_and_have_about_the_expected_density() {
        let n = 400;
        let g = random_connected(n, 0.05, 3).unwrap();
        let expected = 0.05 * (n * (n - 1) / 2) as f64;
        let m = g.edge_count() as f64;
        assert!((m - expected).abs() < 0.1 * expected, "{m} vs {expected}");
        assert_eq!(random_connected(10, 1.0, 0).unwrap(), complete(10).unwrap());
        assert_ne!(
            random_connected(30, 0.1, 1).unwrap(),
            random_connected(30, 0.1, 2).unwrap()
        );
    }
}
