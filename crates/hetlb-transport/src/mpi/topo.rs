//! The topology the application attached to its communicator (`MPI_Topo_test`), read into a
//! [`RankGraph`] that every rank holds whole: a Cartesian grid and an (old-style) graph are
//! known to every rank locally; a distributed graph's lists are gathered (collective).
#![allow(unsafe_code)]

use super::raw::{check, recv_buffer, send_buffer};
use crate::{RankGraph, TransportError};
use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use std::ffi::c_int;

/// The neighbourhood declared on `comm` (`size` ranks), or `None` when it has no topology.
/// Collective over `comm` when it carries a distributed graph.
///
/// # Errors
/// [`TransportError::Mpi`] for a failed MPI call or a graph naming a rank outside `comm`.
pub(super) fn rank_graph(
    comm: &SimpleCommunicator,
    size: usize,
) -> Result<Option<RankGraph>, TransportError> {
    let raw = comm.as_raw();
    let mut status: c_int = 0;
    // SAFETY: `comm` is live; `status` is writable.
    check(
        unsafe { ffi::MPI_Topo_test(raw, &mut status) },
        "MPI_Topo_test",
    )?;
    // SAFETY: constants of the library.
    let (cart, graph, dist) = unsafe { (ffi::RSMPI_CART, ffi::RSMPI_GRAPH, ffi::RSMPI_DIST_GRAPH) };
    let invalid = |e: String| TransportError::Mpi(format!("the communicator's topology: {e}"));
    if status == cart {
        let (dims, lists) = cartesian(raw, size)?;
        let g = RankGraph::from_lists("cart", lists).map_err(invalid)?;
        Ok(Some(g.with_cartesian_dims(dims)))
    } else if status == graph {
        let lists = old_graph(raw, size)?;
        RankGraph::from_lists("graph", lists)
            .map(Some)
            .map_err(invalid)
    } else if status == dist {
        let mine = distributed_neighbours(raw)?;
        let lists = all_gather_lists(raw, size, &mine)?;
        RankGraph::from_lists("dist_graph", lists)
            .map(Some)
            .map_err(invalid)
    } else {
        Ok(None)
    }
}

fn to_usize(v: c_int, what: &str) -> Result<usize, TransportError> {
    usize::try_from(v).map_err(|_| TransportError::Mpi(format!("{what}: {v} is negative")))
}

/// The sides and periods of a Cartesian communicator and every rank's neighbours (one step
/// along each axis, wrapping where periodic), all computed locally.
type Sides = Vec<(usize, bool)>;
fn cartesian(raw: ffi::MPI_Comm, size: usize) -> Result<(Sides, Vec<Vec<usize>>), TransportError> {
    let mut ndims: c_int = 0;
    // SAFETY: `raw` is a live Cartesian communicator; `ndims` is writable.
    check(
        unsafe { ffi::MPI_Cartdim_get(raw, &mut ndims) },
        "MPI_Cartdim_get",
    )?;
    let n = to_usize(ndims, "MPI_Cartdim_get")?;
    let (mut dims, mut periods, mut coords) = (
        vec![0 as c_int; n],
        vec![0 as c_int; n],
        vec![0 as c_int; n],
    );
    if n > 0 {
        // SAFETY: each array has room for `ndims` values.
        check(
            unsafe {
                ffi::MPI_Cart_get(
                    raw,
                    ndims,
                    dims.as_mut_ptr(),
                    periods.as_mut_ptr(),
                    coords.as_mut_ptr(),
                )
            },
            "MPI_Cart_get",
        )?;
    }
    let sides: Sides = dims
        .iter()
        .zip(&periods)
        .map(|(&d, &p)| Ok((to_usize(d, "MPI_Cart_get")?, p != 0)))
        .collect::<Result<_, TransportError>>()?;
    let mut lists = vec![Vec::new(); size];
    for (rank, list) in lists.iter_mut().enumerate() {
        let r = c_int::try_from(rank).map_err(|_| TransportError::Mpi("rank overflow".into()))?;
        if n > 0 {
            // SAFETY: `coords` has room for `ndims` values.
            check(
                unsafe { ffi::MPI_Cart_coords(raw, r, ndims, coords.as_mut_ptr()) },
                "MPI_Cart_coords",
            )?;
        }
        for axis in 0..n {
            let (side, periodic) = (dims[axis], periods[axis] != 0);
            for step in [-1, 1] {
                let mut at = coords.clone();
                at[axis] += step;
                if at[axis] < 0 || at[axis] >= side {
                    if !periodic || side < 2 {
                        continue;
                    }
                    at[axis] = at[axis].rem_euclid(side);
                }
                let mut other: c_int = 0;
                // SAFETY: `at` holds `ndims` in-range coordinates; `other` is writable.
                check(
                    unsafe { ffi::MPI_Cart_rank(raw, at.as_ptr(), &mut other) },
                    "MPI_Cart_rank",
                )?;
                list.push(to_usize(other, "MPI_Cart_rank")?);
            }
        }
    }
    Ok((sides, lists))
}

/// Every rank's neighbours in an `MPI_Graph_create` communicator (known to every rank).
fn old_graph(raw: ffi::MPI_Comm, size: usize) -> Result<Vec<Vec<usize>>, TransportError> {
    let (mut nnodes, mut nedges): (c_int, c_int) = (0, 0);
    // SAFETY: `raw` is a live graph communicator; outputs writable.
    check(
        unsafe { ffi::MPI_Graphdims_get(raw, &mut nnodes, &mut nedges) },
        "MPI_Graphdims_get",
    )?;
    let nodes = to_usize(nnodes, "MPI_Graphdims_get")?;
    let (mut index, mut edges) = (
        vec![0 as c_int; nodes.max(1)],
        vec![0 as c_int; to_usize(nedges, "MPI_Graphdims_get")?.max(1)],
    );
    // SAFETY: the arrays have room for `nnodes` and `nedges` values.
    check(
        unsafe { ffi::MPI_Graph_get(raw, nnodes, nedges, index.as_mut_ptr(), edges.as_mut_ptr()) },
        "MPI_Graph_get",
    )?;
    let mut lists = vec![Vec::new(); size];
    let mut start = 0usize;
    for (rank, list) in lists.iter_mut().enumerate().take(nodes) {
        let end = to_usize(index[rank], "MPI_Graph_get")?.min(edges.len());
        for &e in &edges[start.min(end)..end] {
            list.push(to_usize(e, "MPI_Graph_get")?);
        }
        start = end;
    }
    Ok(lists)
}

/// This rank's sources and destinations in a distributed graph.
fn distributed_neighbours(raw: ffi::MPI_Comm) -> Result<Vec<c_int>, TransportError> {
    let (mut indeg, mut outdeg, mut weighted): (c_int, c_int, c_int) = (0, 0, 0);
    // SAFETY: `raw` is a live distributed-graph communicator; outputs writable.
    check(
        unsafe { ffi::MPI_Dist_graph_neighbors_count(raw, &mut indeg, &mut outdeg, &mut weighted) },
        "MPI_Dist_graph_neighbors_count",
    )?;
    let (i, o) = (to_usize(indeg, "indegree")?, to_usize(outdeg, "outdegree")?);
    let (mut sources, mut source_w) = (vec![0 as c_int; i.max(1)], vec![0 as c_int; i.max(1)]);
    let (mut dests, mut dest_w) = (vec![0 as c_int; o.max(1)], vec![0 as c_int; o.max(1)]);
    // SAFETY: each array has room for its degree (at least one value).
    check(
        unsafe {
            ffi::MPI_Dist_graph_neighbors(
                raw,
                indeg,
                sources.as_mut_ptr(),
                source_w.as_mut_ptr(),
                outdeg,
                dests.as_mut_ptr(),
                dest_w.as_mut_ptr(),
            )
        },
        "MPI_Dist_graph_neighbors",
    )?;
    sources.truncate(i);
    dests.truncate(o);
    sources.extend(dests);
    Ok(sources)
}

/// Every rank's list, gathered to every rank (`MPI_Allgather` of the lengths, then
/// `MPI_Allgatherv`).
fn all_gather_lists(
    raw: ffi::MPI_Comm,
    size: usize,
    mine: &[c_int],
) -> Result<Vec<Vec<usize>>, TransportError> {
    let len = [
        c_int::try_from(mine.len()).map_err(|_| TransportError::Mpi("degree overflow".into()))?
    ];
    let mut lens = vec![0 as c_int; size];
    let (send, n) = send_buffer(&len)?;
    let (recv, _) = recv_buffer(&mut lens)?;
    // SAFETY: one int from every rank into `lens` (room for `size`).
    check(
        unsafe {
            ffi::MPI_Allgather(
                send,
                n,
                ffi::RSMPI_INT32_T,
                recv,
                1,
                ffi::RSMPI_INT32_T,
                raw,
            )
        },
        "MPI_Allgather",
    )?;
    let mut displs = Vec::with_capacity(size);
    let mut total: c_int = 0;
    for &l in &lens {
        displs.push(total);
        total = total.checked_add(l).ok_or_else(|| {
            TransportError::Mpi("the distributed graph has too many edges".into())
        })?;
    }
    let mut all = vec![0 as c_int; to_usize(total, "edges")?];
    let (send, n) = send_buffer(mine)?;
    let (recv, _) = recv_buffer(&mut all)?;
    // SAFETY: `all` has room for the sum of `lens`; `displs` and `lens` have `size` values.
    check(
        unsafe {
            ffi::MPI_Allgatherv(
                send,
                n,
                ffi::RSMPI_INT32_T,
                recv,
                lens.as_ptr(),
                displs.as_ptr(),
                ffi::RSMPI_INT32_T,
                raw,
            )
        },
        "MPI_Allgatherv",
    )?;
    let mut lists = Vec::with_capacity(size);
    for (r, &l) in lens.iter().enumerate() {
        let start = to_usize(displs[r], "displacement")?;
        let end = start + to_usize(l, "degree")?;
        lists.push(
            all[start..end]
                .iter()
                .map(|&v| to_usize(v, "neighbour"))
                .collect::<Result<_, _>>()?,
        );
    }
    Ok(lists)
}
