#!/usr/bin/python3
"""The scenario of scripts/simgrid-compare.sh in SimGrid (Debian's python3-simgrid).

N hosts of 1 flop/s, each executing K tasks one after another, each task an exponential
number of flops with mean 1 (so an exponential service time of mean 1 s): N*K task
completions, the events counted on the hetlb side. No communication, no balancing: the
common ground of both simulators, timing the event machinery.

Usage: simgrid_equivalent.py N K SEED
Prints one line: `simgrid hosts=N tasks=N*K sim_time=... wall=... events_per_second=...`.
"""

import random
import sys
import time

from simgrid import Actor, Engine, NetZone, this_actor


def worker(tasks, seed):
    rng = random.Random(seed)
    for _ in range(tasks):
        this_actor.execute(rng.expovariate(1.0))


def main():
    n, k, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    e = Engine(["simgrid", "--log=root.thres:critical", "--cfg=contexts/stack-size:64"])
    zone = NetZone.create_star_zone("zone")
    hosts = [zone.create_host(f"h{i}", 1.0) for i in range(n)]
    zone.seal()
    for i, h in enumerate(hosts):
        Actor.create(f"w{i}", h, worker, k, seed * 1_000_003 + i)
    start = time.perf_counter()
    e.run()
    wall = time.perf_counter() - start
    events = n * k
    print(
        f"simgrid hosts={n} tasks={events} sim_time={e.clock:.3f} "
        f"wall={wall:.3f} events_per_second={events / wall:.0f}"
    )


if __name__ == "__main__":
    main()
