//! The application's own neighbourhood of ranks, when its communicator carries one.

/// The neighbours of every rank, as the application declared them on its communicator
/// (`MPI_Cart_create`, `MPI_Graph_create`, `MPI_Dist_graph_create_adjacent`): what a balancer
/// built with `topology=mpi` diffuses along, so that load only moves between neighbouring
/// subdomains.
///
/// The lists are symmetric (an edge declared one way is taken both ways), without self-loops
/// or repeats, and every rank of the group has the same copy.
///
/// # Example
/// ```
/// use hetlb_transport::RankGraph;
/// let g = RankGraph::from_lists("ring", vec![vec![1, 2], vec![2], vec![]]).unwrap();
/// assert_eq!(g.neighbours(2), &[0, 1]);
/// assert_eq!(g.edges().count(), 3);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RankGraph {
    kind: String,
    dims: Vec<(usize, bool)>,
    neighbours: Vec<Vec<usize>>,
}

impl RankGraph {
    /// A graph of `lists.len()` ranks from each rank's declared neighbours (in either
    /// direction), named `kind` (`cart`, `graph`, `dist_graph`, …).
    ///
    /// # Errors
    /// A message naming the rank whose list names a rank outside the group.
    pub fn from_lists(kind: &str, lists: Vec<Vec<usize>>) -> Result<Self, String> {
        let n = lists.len();
        let mut neighbours = vec![Vec::new(); n];
        for (rank, list) in lists.into_iter().enumerate() {
            for other in list {
                if other >= n {
                    return Err(format!(
                        "rank {rank} names rank {other} as a neighbour, but the group has {n} ranks"
                    ));
                }
                if other != rank {
                    neighbours[rank].push(other);
                    neighbours[other].push(rank);
                }
            }
        }
        for list in &mut neighbours {
            list.sort_unstable();
            list.dedup();
        }
        Ok(Self {
            kind: kind.to_string(),
            dims: Vec::new(),
            neighbours,
        })
    }

    /// The same graph, recorded as a Cartesian grid of `dims` (sides, periodic or not) in
    /// row-major rank order, as `MPI_Cart_create` numbers it.
    pub fn with_cartesian_dims(mut self, dims: Vec<(usize, bool)>) -> Self {
        self.dims = dims;
        self
    }

    /// How the application declared it: `cart`, `graph` or `dist_graph`.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The sides of a Cartesian grid and whether each wraps around (empty for other graphs).
    pub fn cartesian_dims(&self) -> &[(usize, bool)] {
        &self.dims
    }

    /// The number of ranks.
    pub fn size(&self) -> usize {
        self.neighbours.len()
    }

    /// The neighbours of `rank`, in increasing order.
    ///
    /// # Panics
    /// When `rank` is not below [`RankGraph::size`].
    pub fn neighbours(&self, rank: usize) -> &[usize] {
        &self.neighbours[rank]
    }

    /// Every edge once, as `(a, b)` with `a < b`, in increasing order.
    pub fn edges(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.neighbours
            .iter()
            .enumerate()
            .flat_map(|(a, list)| list.iter().filter(move |&&b| b > a).map(move |&b| (a, b)))
    }
}
