"""The keyword ``trace``: every rank writes its part of a trace in the Trace Event format when
its balancer closes. Collective: run under `mpiexec -n N python -m pytest tests/mpi`."""

from __future__ import annotations

import json
import pathlib
import shutil
import tempfile

import pytest

import hetlb

if not hetlb.has_mpi():
    pytest.skip("this build of hetlb has no MPI", allow_module_level=True)
MPI = pytest.importorskip("mpi4py.MPI")

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
RULE = "cwa" if SIZE & (SIZE - 1) == 0 else "dishet"


def test_every_rank_writes_its_part_when_the_balancer_closes():
    where = COMM.bcast(tempfile.mkdtemp(prefix="hetlb-py-trace-") if RANK == 0 else None)
    path = pathlib.Path(where) / "run.json"
    items = list(range(100 * SIZE)) if RANK == 0 else []
    with hetlb.Balancer(COMM, RULE, trace=path, speeds="measured", timeout=20.0) as b:
        b.record(units=len(items) + 1, seconds=0.001)
        b.rebalance(items)
    COMM.Barrier()
    part = json.loads((pathlib.Path(where) / f"run.rank{RANK}.json").read_text())
    names = [e["name"] for e in part["traceEvents"]]
    assert "rebalance" in names and "compute" in names
    assert {"ph", "ts", "pid", "tid", "name"} <= set(part["traceEvents"][0])
    assert part["otherData"]["backend"] == "mpi"
    COMM.Barrier()
    if RANK == 0:
        shutil.rmtree(where)


def test_a_directory_is_refused_when_the_balancer_is_built():
    with pytest.raises(hetlb.InvalidInputError, match="^trace: .*directory"):
        hetlb.Balancer(COMM, RULE, trace=tempfile.gettempdir())
