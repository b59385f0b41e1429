"""An mpi4py application that rebalances particles whose cost drifts.

Every rank starts with a share of particles; each step every particle's cost (the work it
takes) drifts, the ranks "compute" (sleep in proportion to their cost), report their work
to hetlb, and rebalance by cost. At the end every particle id must be held exactly once.

    mpiexec -n 4 python examples/python/particles_mpi.py [STEPS] [PARTICLES_PER_RANK] [TRACE.json]
"""

from __future__ import annotations

import random
import sys
import time

from mpi4py import MPI

import hetlb


class Particle:
    """A particle: an id, a position, and the work it costs this step."""

    def __init__(self, ident: int, x: float, cost: int) -> None:
        self.ident = ident
        self.x = x
        self.cost = cost


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    per_rank = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    # A trace of every call: each rank writes NAME.rankR.json (hetlb trace merge joins them).
    trace = sys.argv[3] if len(sys.argv) > 3 else None
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    rng = random.Random(rank)
    # Rank 0 starts with most of the particles: the balancer has work to do.
    count = per_rank * size // 2 if rank == 0 else per_rank // 2
    first = comm.exscan(count) or 0
    particles = [Particle(first + i, rng.random(), rng.randint(1, 4)) for i in range(count)]
    total = comm.allreduce(count)
    rule = "cwa" if size & (size - 1) == 0 else "dishet"
    with hetlb.Balancer(comm, rule, speeds="measured", timeout=30.0, trace=trace) as balancer:
        for step in range(steps):
            for p in particles:  # the cost of a particle drifts as it moves
                p.x = (p.x + 0.1 * rng.random()) % 1.0
                p.cost = max(1, p.cost + rng.choice([-1, 0, 1]))
            work = sum(p.cost for p in particles)
            t = time.perf_counter()
            time.sleep(work * 2e-5)  # the computation
            balancer.record(units=work, seconds=time.perf_counter() - t)
            report = balancer.rebalance(particles, load=lambda p: p.cost)
            if rank == 0:
                print(
                    f"step {step}: imbalance {report.imbalance_before:.3f} -> "
                    f"{report.imbalance_after:.3f}, loads {report.loads_after.tolist()}"
                )
    ids = sorted(i for part in comm.allgather([p.ident for p in particles]) for i in part)
    if ids != list(range(total)):
        raise SystemExit(f"rank {rank}: particles lost or duplicated")
    if rank == 0:
        print(f"every one of the {total} particles is held exactly once")


if __name__ == "__main__":
    main()
