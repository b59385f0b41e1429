"""rebalance_array of 10^6 rows of 64 bytes under mpiexec, the same run as hetlb-bench's
rebalance_mpi example (cwa; the lower half of the ranks hold every row, half of which move
across the cube's highest dimension), timed between hetlb's timed barriers.

    mpiexec -n 8 python bench/rebalance_array_speed.py [ROWS] [RUNS]

Compare with `mpiexec -n 8 target/release/examples/rebalance_mpi ROWS RUNS` (its `cwa` line).
Prints the median of the slowest rank's time. Nothing is asserted."""

from __future__ import annotations

import statistics
import sys
import time

import numpy as np
from mpi4py import MPI

import hetlb


def main() -> None:
    moved = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    half = size // 2
    per_sender = moved // half
    b = hetlb.Balancer(comm, "cwa", timeout=60.0)
    times = []
    for _ in range(runs):
        if rank < half:
            lo = rank * 2 * per_sender
            ids = np.arange(lo, lo + 2 * per_sender, dtype=np.uint64)
            arr = np.repeat(ids[:, None], 8, axis=1)  # 8 × u64 = 64 bytes a row
        else:
            arr = np.zeros((0, 8), dtype=np.uint64)
        b.barrier()
        t = time.perf_counter()
        arr, report = b.rebalance_array(arr)
        b.barrier()
        times.append(time.perf_counter() - t)
        assert arr.shape[0] == per_sender, arr.shape
        assert np.array_equal(arr[:, 0], arr[:, 7])
    slowest = comm.allreduce(statistics.median(times), op=MPI.MAX)
    if rank == 0:
        print(
            f"rebalance_array: {moved} rows of 64 bytes on {size} ranks: "
            f"median {slowest:.4f} s ({runs} runs; {report.items_moved} rows sent by rank 0)"
        )
    b.close()


if __name__ == "__main__":
    main()
