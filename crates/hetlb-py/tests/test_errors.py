"""Bad input raises a HetlbError (also the built-in class that fits) with the CLI's
message; nothing crashes."""

from __future__ import annotations

import numpy as np
import pytest

import hetlb


def test_the_hierarchy():
    assert issubclass(hetlb.InvalidInputError, ValueError)
    assert issubclass(hetlb.UnknownAlgorithmError, hetlb.InvalidInputError)
    assert issubclass(hetlb.InvalidTypeError, TypeError)
    assert issubclass(hetlb.HetlbFileError, OSError)
    assert issubclass(hetlb.ScenarioError, ValueError)
    assert issubclass(hetlb.PeerTimeoutError, TimeoutError)
    assert issubclass(hetlb.PeerTimeoutError, hetlb.PeerError)
    for cls in (hetlb.InvalidInputError, hetlb.ScenarioError, hetlb.MPIError, hetlb.LimitError):
        assert issubclass(cls, hetlb.HetlbError)


@pytest.mark.parametrize(
    "loads,cls,message",
    [
        ([4, -7, 0, 9], hetlb.InvalidInputError, r"loads: value 2 \(-7\) is negative"),
        (np.array([4, 7, -1, 9]), hetlb.InvalidInputError, r"loads: value 3 \(-1\) is negative"),
        ([4, 7.5, 0, 9], hetlb.InvalidInputError, "not a whole number.*quantum"),
        (np.array([1.0, 2.5]), hetlb.InvalidInputError, r"value 2 \(2.5\) is not a whole"),
        ([1.0, float("nan")], hetlb.InvalidInputError, "not a whole number"),
        ([1, 2**64], hetlb.InvalidInputError, "larger than"),
        ([1, "2"], hetlb.InvalidTypeError, "not an integer"),
        ("1,2,3,4", hetlb.InvalidTypeError, "expected a sequence"),
        (17, hetlb.InvalidTypeError, "expected a sequence"),
        ([], hetlb.InvalidInputError, "no values given"),
        ([[1, 2], [3, 4]], hetlb.InvalidInputError, "one dimension"),
        ([True, False], hetlb.InvalidTypeError, "not an integer|booleans"),
    ],
)
def test_bad_loads(loads, cls, message):
    with pytest.raises(cls, match=message):
        hetlb.balance(loads, "oem")


def test_whole_valued_floats_are_loads():
    # Costs that are whole numbers, as floats (NumPy's default dtype), are loads as they are.
    ints = hetlb.balance([4, 7, 0, 9], "oem").final_loads.tolist()
    assert hetlb.balance([4.0, 7.0, 0.0, 9.0], "oem").final_loads.tolist() == ints
    assert hetlb.balance(np.array([4.0, 7.0, 0.0, 9.0]), "oem").final_loads.tolist() == ints


def test_any_count_for_the_hypercube_rules():
    # three loads: oem runs folded onto the 2-cube; a diffusion rule needs a topology
    assert list(hetlb.balance([1, 2, 3], "oem").final_loads) == [2, 2, 2]
    with pytest.raises(hetlb.InvalidInputError, match="power of two"):
        hetlb.balance([1, 2, 3], "dishet")


def test_unknown_algorithm():
    with pytest.raises(hetlb.UnknownAlgorithmError, match="unknown algorithm 'oem2'"):
        hetlb.balance([1, 2], "oem2")
    with pytest.raises(ValueError):
        hetlb.algorithm_info("nope")
    with pytest.raises(hetlb.InvalidTypeError):
        hetlb.balance([1, 2], 3)


def test_mismatched_lengths():
    with pytest.raises(hetlb.InvalidInputError, match="capacities"):
        hetlb.balance([1, 2, 3, 4], "cwa", capacities=[1, 2])
    with pytest.raises(hetlb.InvalidInputError, match="loads: 4 loads given for a network of 8 nodes"):
        hetlb.balance([1, 2, 3, 4], "dishet", topology="ring:8")


def test_bad_options_name_their_argument():
    with pytest.raises(hetlb.InvalidInputError, match="^capacities:"):
        hetlb.balance([1, 2], "cwa", capacities=[1, -2])
    with pytest.raises(hetlb.InvalidInputError, match="^procs_per_group:"):
        hetlb.balance([1, 2, 3, 4], "oem", procs_per_group=2)
    with pytest.raises(hetlb.InvalidInputError, match="^lambda:"):
        hetlb.balance([1, 2, 3, 4], "gdem", topology="ring:4", lambda_=1.5)
    with pytest.raises(hetlb.InvalidInputError, match="^max_rounds:"):
        hetlb.balance([1, 2, 3, 4], "oem", max_rounds=3)
    with pytest.raises(hetlb.InvalidInputError, match="^seed: only random-biasing"):
        hetlb.balance([1, 2, 3, 4], "oem", seed=3)
    with pytest.raises(hetlb.InvalidInputError, match="^topology:"):
        hetlb.balance([1, 2, 3, 4], "dishet", topology="ring")
    with pytest.raises(hetlb.InvalidInputError, match="^schedule:"):
        hetlb.balance([1, 2, 3, 4], "cwa", schedule="warp")
    with pytest.raises(hetlb.InvalidInputError, match="not a hypercube"):
        hetlb.balance([1, 2, 3, 4], "dishet", topology="ring:4", schedule="phased")
    with pytest.raises(hetlb.InvalidInputError, match="^procs_per_group: .* is negative"):
        hetlb.balance([1, 2, 3, 4], "hybrid", procs_per_group=-1)


def test_files_and_limits():
    with pytest.raises(hetlb.HetlbFileError):
        hetlb.balance([1, 2, 3, 4], "dishet", topology="file:/nonexistent/graph.txt")
    with pytest.raises(hetlb.LimitError, match="max_memory_bytes"):
        hetlb.balance([1] * 1024, "cwa", max_memory_bytes=1000)


def test_bad_scenarios():
    with pytest.raises(hetlb.ScenarioError, match=r"nodes.rate: 0 must be positive and finite \(line 3\)"):
        hetlb.simulate('[nodes]\ncount = 2\nrate = 0.0\n[topology]\nkind = "ring"\n')
    with pytest.raises(hetlb.HetlbFileError) as e:
        hetlb.simulate("/nonexistent/scenario.toml")
    assert isinstance(e.value, OSError)
    with pytest.raises(hetlb.InvalidTypeError):
        hetlb.simulate(42)
    with pytest.raises(hetlb.InvalidInputError, match="negative"):
        hetlb.simulate("x.toml", seed=-1)


def test_a_balancer_without_a_communicator():
    if not hetlb.has_mpi():
        with pytest.raises(hetlb.MPIError, match="no MPI"):
            hetlb.Balancer(object(), "cwa")
        return
    pytest.importorskip("mpi4py")
    with pytest.raises(hetlb.InvalidTypeError, match="mpi4py communicator"):
        hetlb.Balancer(object(), "cwa")
