//! A rank graph that follows the geometry (`topology=geometric`, and the diffusion rules'
//! default when items give positions): built at each call from the centroids every rank
//! gathered, so that diffusion moves load only between ranks whose regions are near.
//!
//! Each rank with items links to its nearest ranks by centroid that pass the Gabriel test
//! among them (no other candidate lies inside the sphere whose diameter is the link), at most
//! [`NEAREST`] candidates: in a decomposition of the plane these are the regions it borders.
//! Ranks without items (no centroid) join in a chain in rank order, linked to the first rank
//! with items; components are then joined by their nearest pair, so the graph is connected.
//! Every rank builds the same graph from the same gathered centroids.
//!
//! Cost: `O(P² + P·k²)` for `P` ranks and `k` = [`NEAREST`], on every rank at each call;
//! used up to [`MAX_RANKS`] ranks.

use crate::locality::{Position, distance};
use hetlb_core::topology::{Graph, Network};

/// The candidates each rank considers (the nearest ranks by centroid).
pub const NEAREST: usize = 8;

/// The most ranks the geometric graph is built for (its cost grows as `P²`).
pub const MAX_RANKS: usize = 4096;

/// The label of the geometric graph in reports.
pub const LABEL: &str = "geometric";

/// The rank graph of `centroids` (one per rank, `None` for a rank without items), or `None`
/// when fewer than two ranks have items (nothing to follow) or there are too many ranks.
pub(crate) fn network_from_centroids(centroids: &[Option<Position>]) -> Option<Network> {
    let n = centroids.len();
    let located: Vec<usize> = (0..n).filter(|&r| centroids[r].is_some()).collect();
    if !(2..=MAX_RANKS).contains(&n) || located.len() < 2 {
        return None;
    }
    let d = |a: usize, b: usize| distance(centroids[a], centroids[b]);
    let mut edges: Vec<(usize, usize)> = Vec::new();
    for &a in &located {
        let mut near: Vec<usize> = located.iter().copied().filter(|&b| b != a).collect();
        near.sort_by(|&x, &y| d(a, x).total_cmp(&d(a, y)).then(x.cmp(&y)));
        near.truncate(NEAREST);
        for &b in &near {
            let ab = d(a, b);
            // Gabriel: no other candidate c with |ac|² + |bc|² < |ab|².
            let blocked = near
                .iter()
                .any(|&c| c != b && d(a, c).powi(2) + d(b, c).powi(2) < ab * ab);
            if !blocked {
                edges.push((a.min(b), a.max(b)));
            }
        }
    }
    // Ranks without items: a chain in rank order, hooked to the first rank with items.
    let empty: Vec<usize> = (0..n).filter(|&r| centroids[r].is_none()).collect();
    if let Some(&first) = empty.first() {
        edges.push((first.min(located[0]), first.max(located[0])));
        for w in empty.windows(2) {
            edges.push((w[0], w[1]));
        }
    }
    connect(n, &located, &d, &mut edges);
    edges.sort_unstable();
    edges.dedup();
    Graph::from_edges(n, edges).ok().map(Network::from_graph)
}

/// Joins the components of `edges` by the nearest pair of located ranks between a component
/// and the rest, until one remains.
fn connect(
    n: usize,
    located: &[usize],
    d: &impl Fn(usize, usize) -> f64,
    edges: &mut Vec<(usize, usize)>,
) {
    loop {
        let component = components(n, edges);
        if component.iter().all(|&c| c == component[0]) {
            return;
        }
        // The nearest located pair between the first rank's component and the others.
        let home = component[located[0]];
        let mut best: Option<(f64, usize, usize)> = None;
        for &a in located.iter().filter(|&&a| component[a] == home) {
            for &b in located.iter().filter(|&&b| component[b] != home) {
                let x = d(a, b);
                if best.is_none_or(|(y, _, _)| x < y) {
                    best = Some((x, a, b));
                }
            }
        }
        match best {
            Some((_, a, b)) => edges.push((a.min(b), a.max(b))),
            // A component without located ranks: cannot happen (empties hook to located[0]).
            None => return,
        }
    }
}

/// The component of every node (union–find).
fn components(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for &(a, b) in edges {
        let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
        if ra != rb {
            parent[ra] = rb;
        }
    }
    (0..n).map(|x| root(&mut parent, x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hetlb_core::topology::Topology;

    fn at(x: f64, y: f64) -> Option<Position> {
        Some([x, y, 0.0])
    }

    fn neighbours(net: &Network, r: usize) -> Vec<usize> {
        let Network::Graph { graph, .. } = net else {
            panic!("a graph")
        };
        let mut v: Vec<usize> = graph.neighbors(r).collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn strips_link_only_their_neighbours() {
        // Four vertical strips: a path 0-1-2-3, no shortcut.
        let c: Vec<_> = (0..4).map(|r| at(r as f64 + 0.5, 0.5)).collect();
        let net = network_from_centroids(&c).unwrap();
        assert_eq!(neighbours(&net, 0), vec![1]);
        assert_eq!(neighbours(&net, 1), vec![0, 2]);
        assert_eq!(neighbours(&net, 3), vec![2]);
    }

    #[test]
    fn a_grid_of_regions_links_its_sides() {
        // 3 x 3 squares: the centre borders four.
        let c: Vec<_> = (0..9).map(|r| at((r % 3) as f64, (r / 3) as f64)).collect();
        let net = network_from_centroids(&c).unwrap();
        assert_eq!(neighbours(&net, 4), vec![1, 3, 5, 7]);
        assert_eq!(neighbours(&net, 0), vec![1, 3]);
    }

    #[test]
    fn ranks_without_items_are_joined_and_the_graph_is_connected() {
        let c = vec![at(0.0, 0.0), None, at(5.0, 0.0), None, at(9.0, 9.0)];
        let net = network_from_centroids(&c).unwrap();
        assert_eq!(net.node_count(), 5);
        // Graph::from_edges refuses a graph that is not connected.
        assert!(matches!(net, Network::Graph { .. }));
        assert!(network_from_centroids(&[at(0.0, 0.0), None]).is_none());
    }

    #[test]
    fn the_same_centroids_give_the_same_graph() {
        let c: Vec<_> = (0..50)
            .map(|r| at(((r * 37) % 11) as f64, ((r * 13) % 7) as f64))
            .collect();
        assert_eq!(network_from_centroids(&c), network_from_centroids(&c));
    }
}
