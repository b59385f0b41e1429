//! The network of `topology=mpi`: the neighbourhood the application declared on its
//! communicator, as the balancing rules' [`Network`].

use hetlb_core::topology::{Graph, GraphError, Network, TopologySpec};
use hetlb_transport::RankGraph;

/// The network of the application's neighbourhood, with its label (`mpi:cart:2x4`,
/// `mpi:dist_graph:8`, …). A Cartesian grid that is one of hetlb's own shapes (a path, ring,
/// mesh, torus or 3-D grid, numbered row-major as MPI numbers it) keeps that shape, and so its
/// natural edge colouring; any other graph is taken as it is.
///
/// # Errors
/// [`GraphError`] when the graph is not connected (load could never reach some ranks).
///
/// # Example
/// ```
/// use hetlb_transport::RankGraph;
/// let ring = RankGraph::from_lists("cart", vec![vec![1, 3], vec![2], vec![3], vec![]])
///     .unwrap()
///     .with_cartesian_dims(vec![(4, true)]);
/// let (label, network) = hetlb_peer::rank_graph::network_of(&ring).unwrap();
/// assert_eq!(label, "mpi:cart:4(periodic)");
/// use hetlb_core::topology::Topology;
/// assert_eq!(network.node_count(), 4);
/// ```
pub fn network_of(graph: &RankGraph) -> Result<(String, Network), GraphError> {
    let n = graph.size();
    let dims = graph.cartesian_dims();
    let label = if dims.is_empty() {
        format!("mpi:{}:{n}", graph.kind())
    } else {
        let sides: Vec<String> = dims
            .iter()
            .map(|&(side, periodic)| {
                if periodic {
                    format!("{side}(periodic)")
                } else {
                    side.to_string()
                }
            })
            .collect();
        format!("mpi:{}:{}", graph.kind(), sides.join("x"))
    };
    let built = Graph::from_edges(n, graph.edges())?;
    if let Some(spec) = same_shape(dims)
        && let Ok(Network::Graph { graph: g, shape }) = spec.build()
        && g == built
    {
        return Ok((label, Network::Graph { graph: g, shape }));
    }
    Ok((label, Network::from_graph(built)))
}

/// hetlb's spec of the same Cartesian grid, when it has one.
fn same_shape(dims: &[(usize, bool)]) -> Option<TopologySpec> {
    let all_periodic = dims.iter().all(|d| d.1);
    let none_periodic = dims.iter().all(|d| !d.1);
    match *dims {
        [(n, false)] => Some(TopologySpec::Path(n)),
        [(n, true)] => Some(TopologySpec::Ring(n)),
        [(r, _), (c, _)] if none_periodic => Some(TopologySpec::Mesh(r, c)),
        [(r, _), (c, _)] if all_periodic => Some(TopologySpec::Torus(r, c)),
        // hetlb's 3-D grid runs its first axis fastest; MPI runs the last one fastest.
        [(a, _), (b, _), (c, _)] if none_periodic => Some(TopologySpec::Grid(c, b, a)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::topology::Topology;

    fn cart(dims: &[(usize, bool)]) -> RankGraph {
        // Row-major numbering, as MPI_Cart_create gives it.
        let n: usize = dims.iter().map(|d| d.0).product();
        let mut lists = vec![Vec::new(); n];
        for (rank, list) in lists.iter_mut().enumerate() {
            let mut coords = Vec::new();
            let mut rest = rank;
            for &(side, _) in dims.iter().rev() {
                coords.push(rest % side);
                rest /= side;
            }
            coords.reverse();
            for (axis, &(side, periodic)) in dims.iter().enumerate() {
                for step in [-1i64, 1] {
                    let mut at: Vec<i64> = coords.iter().map(|&c| c as i64).collect();
                    at[axis] += step;
                    if at[axis] < 0 || at[axis] >= side as i64 {
                        if !periodic || side < 2 {
                            continue;
                        }
                        at[axis] = at[axis].rem_euclid(side as i64);
                    }
                    let other = at
                        .iter()
                        .zip(dims)
                        .fold(0, |acc, (&c, d)| acc * d.0 + c as usize);
                    list.push(other);
                }
            }
        }
        RankGraph::from_lists("cart", lists)
            .unwrap()
            .with_cartesian_dims(dims.to_vec())
    }

    #[test]
    fn cartesian_grids_keep_their_shape() {
        for (dims, spec) in [
            (vec![(6, false)], "path:6"),
            (vec![(6, true)], "ring:6"),
            (vec![(2, false), (4, false)], "mesh:2x4"),
            (vec![(3, true), (4, true)], "torus:3x4"),
            (vec![(2, false), (2, false), (3, false)], "grid:3x2x2"),
        ] {
            let (_, network) = network_of(&cart(&dims)).unwrap();
            let expected = spec.parse::<TopologySpec>().unwrap().build().unwrap();
            assert_eq!(network, expected, "{spec}");
        }
    }

    #[test]
    fn other_graphs_are_taken_as_declared() {
        // A mixed-periodic grid and a distributed graph: a plain graph with the same edges.
        let (label, network) = network_of(&cart(&[(3, true), (2, false)])).unwrap();
        assert_eq!(label, "mpi:cart:3(periodic)x2");
        assert_eq!(network.node_count(), 6);
        let star =
            RankGraph::from_lists("dist_graph", vec![vec![1, 2, 3], vec![0], vec![], vec![]])
                .unwrap();
        let (label, network) = network_of(&star).unwrap();
        assert_eq!(label, "mpi:dist_graph:4");
        let Network::Graph { graph, .. } = network else {
            panic!("a graph");
        };
        assert_eq!(graph.degree(0), 3);
    }

    #[test]
    fn a_disconnected_neighbourhood_is_refused() {
        let two =
            RankGraph::from_lists("dist_graph", vec![vec![1], vec![], vec![3], vec![]]).unwrap();
        assert!(network_of(&two).is_err());
    }
}
