"""hetlb.balance equals `hetlb balance ... --format json` on every rule and every topology
family, with and without capacities and schedules."""

from __future__ import annotations

import random

import numpy as np
import pytest

import hetlb

HYPERCUBE_RULES = ["dem", "dem-fixed", "dem-improved", "dem-hetero", "oem", "cwa", "hybrid"]
DIFFUSION_RULES = ["dishet", "dishet-tight", "diffusion", "random-biasing", "dynamic-biasing", "gdem"]

# One network of every family the CLI knows, with its node count.
TOPOLOGIES = [
    (None, 16),
    ("hypercube:4", 16),
    ("ring:12", 12),
    ("path:9", 9),
    ("mesh:3x4", 12),
    ("torus:4x4", 16),
    ("kary:3:2", 9),
    ("star:7", 7),
    ("complete:6", 6),
    ("random:10:0.4:3", 10),
    ("file:examples/graph.txt", 16),
]


def _loads(n: int, seed: int) -> list:
    rng = random.Random(seed)
    return [rng.randrange(0, 60) for _ in range(n)]


def _caps(n: int, seed: int) -> list:
    rng = random.Random(seed + 1000)
    return [float(rng.choice([1, 2, 3, 4])) for _ in range(n)]


def _cli_args(algorithm, loads, topology=None, capacities=None, extra=()):
    args = ["balance", "--algorithm", algorithm, "--loads", ",".join(map(str, loads))]
    if topology is not None:
        args += ["--topology", topology]
    if capacities is not None:
        args += ["--capacities", ",".join(repr(c) for c in capacities)]
    return args + list(extra)


def _same(r, doc):
    assert r.as_dict() == doc
    assert r.final_loads.dtype == np.uint64
    assert r.final_loads.tolist() == doc["final"]
    assert r.initial.tolist() == doc["initial"]
    metrics = r.metrics
    metrics.pop("t_comm", None)
    assert metrics == doc["metrics"]
    assert r.rounds == doc["rounds"]
    assert r.converged == doc["converged"]
    if "phases" in doc:
        assert len(r.phases) == len(doc["phases"])
        for mine, theirs, dim in zip(r.phases, doc["phases"], doc["phase_dimensions"]):
            assert mine["dimension"] == dim
            assert mine["from"].tolist() == [t["from"] for t in theirs]
            assert mine["to"].tolist() == [t["to"] for t in theirs]
            assert mine["units"].tolist() == [t["units"] for t in theirs]


@pytest.mark.parametrize("algorithm", HYPERCUBE_RULES + DIFFUSION_RULES)
@pytest.mark.parametrize("topology,n", TOPOLOGIES)
def test_equals_the_cli(cli, root, monkeypatch, algorithm, topology, n):
    monkeypatch.chdir(root)
    # the hypercube rules run on a hypercube, or embedded in one on a complete network
    on_cube = topology is None or topology.startswith(("hypercube", "complete"))
    if algorithm in HYPERCUBE_RULES and not on_cube:
        with pytest.raises(hetlb.InvalidInputError, match="hypercube"):
            hetlb.balance(_loads(n, 1), algorithm, topology=topology)
        return
    loads = _loads(n, n)
    _same(hetlb.balance(loads, algorithm, topology=topology), cli(*_cli_args(algorithm, loads, topology)))


@pytest.mark.parametrize("algorithm", HYPERCUBE_RULES + DIFFUSION_RULES)
def test_capacities_equal_the_cli(cli, algorithm):
    loads, caps = _loads(8, 5), _caps(8, 5)
    doc = cli(*_cli_args(algorithm, loads, capacities=caps))
    _same(hetlb.balance(np.array(loads, dtype=np.int64), algorithm, capacities=caps), doc)


def test_the_issue_example_on_a_ring(cli):
    loads = [80, 0, 0, 0, 0, 0, 0, 0]
    caps = [1, 2, 1, 1, 3, 1, 1, 2]
    r = hetlb.balance(loads, algorithm="dishet", topology="ring:8", capacities=caps)
    _same(r, cli(*_cli_args("dishet", loads, "ring:8", [float(c) for c in caps])))


@pytest.mark.parametrize("schedule", ["phased", "overlap", "pipeline", "pipeline-per-processor"])
def test_schedules_equal_the_cli(cli, schedule):
    loads = _loads(16, 9)
    doc = cli(*_cli_args("cwa", loads, extra=["--schedule", schedule]))
    r = hetlb.balance(loads, algorithm="cwa", schedule=schedule)
    _same(r, doc)
    assert r.transmission == doc["transmission"]
    assert r.metrics["t_comm"] == {schedule: doc["transmission"][0]["steps"]}


def test_options_equal_the_cli(cli):
    loads = _loads(16, 11)
    _same(
        hetlb.balance(loads, "hybrid", procs_per_group=4),
        cli(*_cli_args("hybrid", loads, extra=["--procs-per-group", "4"])),
    )
    _same(
        hetlb.balance(loads, "random-biasing", topology="ring:16", seed=7),
        cli(*_cli_args("random-biasing", loads, "ring:16", extra=["--seed", "7"])),
    )
    _same(
        hetlb.balance(loads, "gdem", topology="torus:4x4", lambda_=0.3, max_rounds=50),
        cli(*_cli_args("gdem", loads, "torus:4x4", extra=["--lambda", "0.3", "--max-rounds", "50"])),
    )


def test_large_plans_are_summarised_as_the_cli(cli, tmp_path):
    rng = np.random.default_rng(3)
    loads = rng.integers(0, 1000, size=1 << 12, dtype=np.uint64)
    path = tmp_path / "loads.txt"
    path.write_text("\n".join(map(str, loads.tolist())))
    doc = cli("balance", "--algorithm", "dishet", "--loads", f"@{path}", "--topology", "ring:4096")
    r = hetlb.balance(loads, "dishet", topology="ring:4096")
    assert "phases" in doc.get("omitted", []) or "phases" in doc
    _same(r, doc)
    assert sum(len(p["units"]) for p in r.phases) == sum(
        1 for p in r.phases for _ in p["units"]
    )


def test_rounds_lists_every_round_as_the_cli(cli):
    loads = _loads(8, 21)
    doc = cli(*_cli_args("diffusion", loads, "ring:8", extra=["--rounds"]))
    r = hetlb.balance(loads, "diffusion", topology="ring:8", rounds=True)
    _same(r, doc)
    assert "loads_per_round" in r.as_dict()


def test_inputs_of_every_integer_kind_agree():
    loads = [4, 7, 0, 9, 2, 2, 8, 1]
    expected = hetlb.balance(loads, "oem").final_loads.tolist()
    for dtype in (np.uint8, np.int16, np.int32, np.int64, np.uint32, np.uint64):
        assert hetlb.balance(np.array(loads, dtype=dtype), "oem").final_loads.tolist() == expected
    assert hetlb.balance(tuple(loads), "oem").final_loads.tolist() == expected
    big = [2**63 + 5, 0]
    assert hetlb.balance(big, "cwa").final_loads.sum(dtype=np.uint64) == np.uint64(2**63 + 5)


def test_algorithms_and_their_descriptions():
    names = hetlb.algorithms()
    assert names == HYPERCUBE_RULES + DIFFUSION_RULES
    for name in names:
        info = hetlb.algorithm_info(name)
        assert info["name"] == name
        assert info["needs_hypercube"] == (name in HYPERCUBE_RULES)
    assert isinstance(hetlb.__version__, str) and hetlb.__version__.count(".") == 2
