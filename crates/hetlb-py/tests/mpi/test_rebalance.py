"""The peer Balancer over mpi4py keeps every item exactly once. Collective: run under
`mpiexec -n N python -m pytest tests/mpi` (N = 2, 4, 8; one process works too). Every rank
runs the same tests in the same order."""

from __future__ import annotations

import numpy as np
import pytest

import hetlb
from hetlb import _hetlb

if not hetlb.has_mpi():
    pytest.skip("this build of hetlb has no MPI", allow_module_level=True)
MPI = pytest.importorskip("mpi4py.MPI")

COMM = MPI.COMM_WORLD
RANK, SIZE = COMM.Get_rank(), COMM.Get_size()
RULES = ["cwa", "oem", "dishet"] if SIZE & (SIZE - 1) == 0 else ["dishet", "gdem"]


def _every_id_once(mine):
    everyone = [i for part in COMM.allgather(sorted(mine)) for i in part]
    return sorted(everyone)


class Particle:
    """A picklable item with a cost."""

    def __init__(self, ident: int, cost: int) -> None:
        self.ident, self.cost = ident, cost
        self.payload = [float(ident)] * 3


@pytest.fixture(scope="module")
def balancers():
    made = {rule: hetlb.Balancer(COMM, rule, timeout=20.0) for rule in RULES}
    yield made
    for b in made.values():
        b.close()


@pytest.mark.parametrize("rule", RULES)
def test_unit_items_exactly_once(balancers, rule):
    b = balancers[rule]
    count = 40 * (RANK + 1) ** 2
    base = sum(40 * (r + 1) ** 2 for r in range(RANK))
    items = [Particle(base + i, 1) for i in range(count)]
    total = sum(40 * (r + 1) ** 2 for r in range(SIZE))
    report = b.rebalance(items)
    assert _every_id_once([p.ident for p in items]) == list(range(total))
    assert all(p.payload == [float(p.ident)] * 3 for p in items)
    assert len(items) == report.items_after
    assert report.loads_after.tolist() == report.planned_after.tolist()
    assert int(report.loads_after.sum()) == total
    assert report.imbalance_after <= report.imbalance_before
    assert report.items_moved == report.items_sent
    loads = hetlb.balance(report.loads_before, rule, topology=b.topology).final_loads
    assert report.planned_after.tolist() == loads.tolist()


@pytest.mark.parametrize("rule", RULES)
def test_weighted_items_exactly_once(balancers, rule):
    b = balancers[rule]
    rng = np.random.default_rng(RANK)
    count = 30 if RANK == 0 else 5
    ids = [RANK * 1000 + i for i in range(count)]
    items = [Particle(i, int(rng.integers(1, 6))) for i in ids]
    units = sum(p.cost for p in items)
    report = b.rebalance(items, load=lambda p: p.cost)
    every = _every_id_once([p.ident for p in items])
    assert every == sorted(r * 1000 + i for r in range(SIZE) for i in range(30 if r == 0 else 5))
    assert sum(p.cost for p in items) == report.units_after
    assert int(report.loads_after.sum()) == COMM.allreduce(units)


@pytest.mark.parametrize("rule", RULES[:1])
def test_array_rows_exactly_once(balancers, rule):
    b = balancers[rule]
    row = np.dtype([("id", np.int64), ("x", np.float64, (3,)), ("cost", np.int32)])
    n = 100 * (RANK + 1)
    arr = np.zeros(n, dtype=row)
    arr["id"] = RANK * 100_000 + np.arange(n)
    arr["x"] = arr["id"][:, None] * 0.5
    arr["cost"] = 1 + arr["id"] % 3
    units = int(arr["cost"].sum())
    out, report = b.rebalance_array(arr, load=lambda a: a["cost"])
    assert out.dtype == row
    ids = _every_id_once(out["id"].tolist())
    assert ids == sorted(r * 100_000 + i for r in range(SIZE) for i in range(100 * (r + 1)))
    assert np.array_equal(out["x"], np.repeat(out["id"][:, None] * 0.5, 3, axis=1))
    assert int(report.loads_after.sum()) == COMM.allreduce(units)
    flat = np.arange(RANK * 64, RANK * 64 + 8 * (RANK + 1), dtype=np.float64).reshape(-1, 8)
    out2, _ = b.rebalance_array(flat)
    assert out2.shape[1:] == (8,)
    assert _every_id_once(out2[:, 0].tolist()) == sorted(
        COMM.allreduce(flat[:, 0].tolist())
    )


def test_measured_speeds_and_fixed_capacities():
    caps = [1.0 + r for r in range(SIZE)]
    with hetlb.Balancer(COMM, RULES[0], speeds=caps) as b:
        items = list(range(RANK * 1000, RANK * 1000 + 50))
        report = b.rebalance(items)
        assert report.capacities == caps
        assert _every_id_once(items) == sorted(r * 1000 + i for r in range(SIZE) for i in range(50))
    with hetlb.Balancer(COMM, RULES[0], speeds="measured", window=3) as b:
        b.record(units=100 * (RANK + 1), seconds=1.0)
        items = list(range(RANK * 1000, RANK * 1000 + 50))
        report = b.rebalance(items)
        assert report.measured_speeds is not None
        assert _every_id_once(items) == sorted(r * 1000 + i for r in range(SIZE) for i in range(50))


def test_errors():
    with pytest.raises(hetlb.UnknownAlgorithmError):
        hetlb.Balancer(COMM, "oem2")
    with pytest.raises(hetlb.InvalidInputError, match="capacities"):
        hetlb.Balancer(COMM, RULES[0], speeds=[1.0] * (SIZE + 1))
    with pytest.raises(hetlb.InvalidTypeError):
        hetlb.Balancer("world", RULES[0])
    with pytest.raises(hetlb.MPIError, match="null"):
        hetlb.Balancer(MPI.COMM_NULL, RULES[0])
    dup = COMM.Dup()
    dup.Free()
    with pytest.raises(hetlb.MPIError, match="null"):
        hetlb.Balancer(dup, RULES[0])
    b = hetlb.Balancer(COMM, RULES[0])
    with pytest.raises(hetlb.InvalidInputError, match="negative"):
        b.rebalance([1, 2, 3], load=lambda x: -x)
    with pytest.raises(hetlb.InvalidTypeError):
        b.rebalance((1, 2, 3))
    with pytest.raises(hetlb.InvalidInputError, match="pickled"):
        b.rebalance([lambda: 0])
    with pytest.raises(hetlb.InvalidInputError, match="2 loads given for 3 rows"):
        b.rebalance_array(np.zeros((3, 2)), load=np.array([1, 2]))
    b.close()
    assert b.closed
    with pytest.raises(hetlb.MPIError, match="closed"):
        b.rebalance([1])


def test_sizes_that_overflow_are_invalid_input_not_a_panic():
    with hetlb.Balancer(COMM, RULES[0]) as b:
        native = b._n()
        # Broadcast views: shapes that claim more bytes than memory holds, at no cost.
        # 2**20 rows of 2**43 - 1 bytes: NumPy's limit, but with their ids more than 2**63.
        wide = np.broadcast_to(np.zeros((1, 1), np.uint8), (2**20, 2**43 - 1))
        with pytest.raises(hetlb.InvalidInputError, match="more than an array can hold"):
            native.rebalance_rows(wide, None)
        with pytest.raises(hetlb.InvalidInputError, match="more than an array can hold"):
            native.rebalance_rows(wide, np.zeros(2**20, np.uint64))
        # One row of 2**62 bytes fits the arithmetic but not the memory.
        one = np.broadcast_to(np.zeros((1, 1), np.uint8), (1, 2**62))
        with pytest.raises(MemoryError, match="cannot be allocated"):
            native.rebalance_rows(one, None)
        tall = np.broadcast_to(np.zeros((1, 1), np.uint8), (2**62, 1))
        with pytest.raises(hetlb.InvalidInputError, match="too many rows"):
            native.rebalance_rows(tall, None)
        b.record(units=2**64 - 1, seconds=1e-300)
        b.record(units=0, seconds=1e300)
        with pytest.raises(hetlb.InvalidInputError):
            b.record(units=1, seconds=float("inf"))
        # The balancer still works after the refusals (every rank refused alike).
        items = list(range(RANK * 10, RANK * 10 + 10))
        b.rebalance(items)
        assert _every_id_once(items) == list(range(10 * SIZE))


def test_mpi4py_on_another_mpi_is_refused_in_one_line(monkeypatch):
    from hetlb import _balancer

    monkeypatch.setattr(_balancer._hetlb, "mpi_library_version", lambda: "Another MPI 9.9\nmore")
    with pytest.raises(hetlb.MPIError) as refused:
        hetlb.Balancer(COMM, RULES[0])
    message = str(refused.value)
    assert "\n" not in message, message
    assert "Another MPI 9.9" in message and MPI.Get_library_version().split("\n")[0].strip("\x00 \t\r") in message
    assert "--no-binary mpi4py mpi4py" in message and "MPICC=" in message, message


def test_a_communicator_of_the_application_is_duplicated():
    sub = COMM.Split(0, SIZE - 1 - RANK)
    with hetlb.Balancer(sub, "dishet" if SIZE > 2 and SIZE & (SIZE - 1) else RULES[0]) as b:
        assert b.rank == SIZE - 1 - RANK and b.size == SIZE
        items = [RANK] * (10 if RANK == 0 else 0)
        b.rebalance(items)
        # The application's own messages on its communicator are untouched by hetlb's.
        assert sub.allreduce(len(items)) == 10
    sub.Free()


@pytest.mark.skipif(SIZE < 2, reason="a peer failure needs two ranks")
@pytest.mark.skipif(
    not _hetlb.has_fault_injection(),
    reason="a build without fault injection (feature fault-injection) has no fault= option",
)
def test_a_peer_failure_leaves_every_item_where_it_was():
    rule = RULES[0]
    fault = "leave-after-sends:1" if RANK == 0 else None
    with hetlb.Balancer(COMM, rule, timeout=20.0, fault=fault) as b:
        items = [RANK * 1000 + i for i in range(300 if RANK == 0 else 0)]
        before = list(items)
        with pytest.raises(hetlb.PeerError) as e:
            b.rebalance(items)
        assert e.value.holding == "before"
        assert e.value.failed_rank == 0, str(e.value)
        assert items == before
        assert _every_id_once(items) == list(range(300))
        arr = np.arange(300 if RANK == 0 else 0, dtype=np.int64)
        with pytest.raises(hetlb.PeerError):
            b.rebalance_array(arr)


def test_the_trigger_holds_back_a_move_that_does_not_pay():
    # Every item on rank 0 at 100 units/s; moving is priced at 10 s per unit, so no horizon
    # of 10 iterations repays it: every rank keeps its items and says so. With free moves
    # the same call goes ahead.
    for move_cost, held in (((0.0, 10.0), True), ((0.0, 0.0), False)):
        b = hetlb.Balancer(
            COMM, "dishet", speeds="measured", window=1, timeout=20.0,
            trigger="auto:10:1", move_cost=move_cost,
        )
        b.record(100, 1.0)
        items = list(range(40 * SIZE)) if RANK == 0 else []
        before = len(items)
        report = b.rebalance(items)
        b.close()
        assert _every_id_once(items) == list(range(40 * SIZE))
        if SIZE == 1:
            continue
        assert report.prediction is not None
        assert report.held_back is held
        if held:
            assert len(items) == before
        else:
            assert report.loads_after.tolist() == report.planned_after.tolist()


def test_trigger_errors_are_value_errors():
    with pytest.raises(ValueError, match="trigger"):
        hetlb.Balancer(COMM, "cwa", speeds="measured", trigger="soon")
    with pytest.raises(ValueError, match="move_cost"):
        hetlb.Balancer(COMM, "cwa", speeds="measured", trigger="auto", move_cost=(-1.0, 0.0))
    with pytest.raises(ValueError, match="trigger"):
        hetlb.Balancer(COMM, "cwa", trigger="auto")  # auto needs measured speeds
    with pytest.raises(TypeError, match="move_cost"):
        hetlb.Balancer(COMM, "cwa", speeds="measured", move_cost=3)


def test_rule_auto_direct_routing_and_the_learned_cost():
    with hetlb.Balancer(
        COMM, "auto", speeds="measured", window=1, learn_cost=True, routing="direct",
        timeout=20.0,
    ) as b:
        items = list(range(RANK * 1000, RANK * 1000 + 10 * (RANK + 1)))
        for call in range(2):
            b.record(units=100 * (RANK + 1), seconds=1.0)
            report = b.rebalance(items)
            assert report.routing == "direct"
            assert report.checked
            if SIZE > 1:
                assert report.algorithm in [c["algorithm"] for c in report.alternatives]
            if call == 1:
                assert report.outcome is None or report.outcome["epoch"] == 1
        assert _every_id_once(items) == sorted(
            r * 1000 + i for r in range(SIZE) for i in range(10 * (r + 1))
        )
    with pytest.raises(hetlb.InvalidInputError, match="measured speeds"):
        hetlb.Balancer(COMM, "auto")
    with pytest.raises(hetlb.InvalidInputError, match="only rule auto"):
        hetlb.Balancer(COMM, RULES[0], candidates=["cwa"])
    with pytest.raises(hetlb.InvalidInputError, match="routing"):
        hetlb.Balancer(COMM, RULES[0], routing="sideways")


def test_advise_moves_nothing_and_names_what_rebalance_does():
    with hetlb.Balancer(COMM, "auto", speeds="measured", window=1, trigger="auto:10:1") as b:
        items = list(range(RANK * 1000, RANK * 1000 + 10 * (RANK + 1)))
        before = list(items)
        b.record(units=100, seconds=1.0)  # equal speeds: the larger ranks' loads pay to move
        advice = b.advise(items)
        assert items == before, "advice moves nothing"
        assert advice == COMM.bcast(advice, root=0), "every rank gets the same advice"
        assert advice["horizon"] == 10
        report = b.rebalance(items)
        names = [c["algorithm"] for c in advice["candidates"]]
        choice = advice["choice"]
        if SIZE == 1:
            assert choice is None
        else:
            assert names == [c["algorithm"] for c in report.alternatives]
            assert choice is not None
            assert report.algorithm == names[choice]
            assert list(report.planned_after) == advice["candidates"][choice]["final_loads"]
        assert _every_id_once(items) == sorted(
            r * 1000 + i for r in range(SIZE) for i in range(10 * (r + 1))
        )
    with hetlb.Balancer(COMM, RULES[0]) as b:
        with pytest.raises(hetlb.PeerError, match="measured speed"):
            b.advise([1, 2, 3])


def test_options_are_the_tables_and_errors_name_the_keyword():
    with hetlb.Balancer(
        COMM, RULES[0], check_budget=0.5, count_bytes=False, entry_timeout=30, seed=None
    ) as b:
        items = list(range(RANK * 1000, RANK * 1000 + 5 * (RANK + 1)))
        b.rebalance(items)
        assert _every_id_once(items) == sorted(
            r * 1000 + i for r in range(SIZE) for i in range(5 * (r + 1))
        )
    with pytest.raises(hetlb.InvalidInputError, match="^lambda_: "):
        hetlb.Balancer(COMM, "gdem", lambda_=2.0)
    with pytest.raises(hetlb.InvalidInputError, match="^timeout: -1 is not positive seconds"):
        hetlb.Balancer(COMM, RULES[0], timeout=-1)
    with pytest.raises(hetlb.InvalidInputError, match="^window: "):
        hetlb.Balancer(COMM, RULES[0], speeds="measured", window=0)
    with pytest.raises(hetlb.InvalidTypeError, match="^colour: not an option .*lambda_"):
        hetlb.Balancer(COMM, RULES[0], colour="blue")
    with pytest.raises(hetlb.InvalidTypeError, match="^timeout:"):
        hetlb.Balancer(COMM, RULES[0], timeout="5")
    with pytest.raises(hetlb.HetlbFileError, match="^topology:"):
        hetlb.Balancer(COMM, RULES[0], topology="file:/nonexistent/hetlb-graph")


@pytest.mark.skipif(_hetlb.has_fault_injection(), reason="this build injects faults")
def test_a_build_without_fault_injection_has_no_fault_option():
    with pytest.raises(hetlb.InvalidTypeError, match="^fault: not an option"):
        hetlb.Balancer(COMM, RULES[0], fault="leave-after-vote")


@pytest.mark.skipif(SIZE < 2, reason="a missing rank needs two")
def test_a_rank_that_skips_the_call_is_named_by_every_other():
    # Rank 1 does something else (sleeps, then the application's own collective); the
    # others' rebalance raises within a few timeouts naming it, and leaves every item where
    # it was; rank 1, when it calls later, learns it was left out; the group is lost.
    import time

    with hetlb.Balancer(COMM, RULES[0], timeout=1.0) as b:
        items = list(range(RANK * 100, RANK * 100 + (100 if RANK == 0 else 0)))
        before = list(items)
        if RANK == 1:
            time.sleep(3.0)
        else:
            start = time.monotonic()
            with pytest.raises(hetlb.PeerError) as e:
                b.rebalance(items)
            assert time.monotonic() - start < 3 * 1.0 + 1.0, str(e.value)
            assert e.value.failed_rank == 1, str(e.value)
            assert e.value.holding == "before"
            assert items == before
        COMM.allreduce(1)
        with pytest.raises(hetlb.PeerError) as later:
            b.rebalance(items)
        assert later.value.failed_rank in (1, None), str(later.value)
        assert items == before


@pytest.mark.skipif(SIZE < 2, reason="a bad argument on one rank needs two")
def test_a_bad_argument_on_one_rank_is_an_error_on_every_rank():
    # Rank 0's load callable gives a negative load: rank 0 gets its own InvalidInputError,
    # every other rank a PeerError naming rank 0, at once; the next call goes ahead.
    with hetlb.Balancer(COMM, RULES[0], timeout=20.0) as b:
        items = list(range(RANK * 50, RANK * 50 + 50))
        if RANK == 0:
            with pytest.raises(hetlb.InvalidInputError):
                b.rebalance(items, load=lambda x: -1)
        else:
            with pytest.raises(hetlb.PeerError) as e:
                b.rebalance(items)
            assert e.value.failed_rank == 0, str(e.value)
            assert "refused" in str(e.value)
        arr = np.arange(50, dtype=np.int64) + RANK * 50
        if RANK == 0:
            with pytest.raises(hetlb.InvalidInputError):
                b.rebalance_array(arr, load=np.full(49, 1))
        else:
            with pytest.raises(hetlb.PeerError):
                b.rebalance_array(arr)
        b.rebalance(items)
        assert _every_id_once(items) == list(range(50 * SIZE))


def test_rows_with_coordinates_move_as_regions():
    # Rank 0 holds a segment of the line; every rank ends with one compact piece of it.
    if SIZE < 2:
        pytest.skip("needs two ranks")
    rule = "dishet"
    n = 400 * SIZE
    dtype = np.dtype([("id", np.uint64), ("x", np.float64), ("y", np.float64)])
    arr = np.zeros(n if RANK == 0 else 0, dtype=dtype)
    arr["id"] = np.arange(arr.shape[0])
    arr["x"] = arr["id"] / n
    with hetlb.Balancer(COMM, rule, routing="direct", timeout=20.0) as b:
        rows, report = b.rebalance_array(arr, coords=lambda a: a[["x", "y"]])
        assert _every_id_once(rows["id"].tolist()) == list(range(n))
        assert report.spread_before == pytest.approx(1.0)
        # The regions are compact: far less scattered than one rank holding the segment.
        assert report.spread_after < 0.7, report.spread_after
        # Without coordinates the report has no spread.
        rows, report = b.rebalance_array(rows)
        assert report.spread_before is None
        # A 1-D array is one coordinate per row; bad shapes name the argument on this rank
        # and every other rank's call fails at once naming it.
        rows, report = b.rebalance_array(rows, coords=rows["x"])
        assert _every_id_once(rows["id"].tolist()) == list(range(n))
        if RANK == 0:
            with pytest.raises(hetlb.InvalidInputError, match="coords"):
                b.rebalance_array(rows, coords=np.zeros((rows.shape[0], 4)))
        else:
            with pytest.raises(hetlb.PeerError, match="rank 0"):
                b.rebalance_array(rows, coords=rows["x"])


def test_items_with_coordinates_move_as_regions():
    if SIZE < 2:
        pytest.skip("needs two ranks")
    n = 300 * SIZE
    items = [Particle(i, 1) for i in range(n)] if RANK == 0 else []
    with hetlb.Balancer(COMM, "dishet", routing="direct", timeout=20.0) as b:
        report = b.rebalance(items, coords=lambda p: (p.ident / n,))
        assert _every_id_once([p.ident for p in items]) == list(range(n))
        assert report.spread_after < 0.7, report.spread_after
        mine = sorted(p.ident for p in items)
        # One contiguous piece per rank.
        assert mine == list(range(mine[0], mine[0] + len(mine))) if mine else True
        if RANK == 1:
            with pytest.raises(hetlb.InvalidInputError, match="not finite"):
                b.rebalance(items, coords=lambda p: (float("nan"),))
        else:
            with pytest.raises(hetlb.PeerError, match="rank 1"):
                b.rebalance(items, coords=lambda p: (p.ident / n,))


def test_the_communicators_own_topology():
    dims = MPI.Compute_dims(SIZE, 2)
    cart = COMM.Create_cart(dims, periods=[False, False], reorder=False)
    try:
        with hetlb.Balancer(cart, "dishet", topology="mpi", timeout=20.0) as b:
            assert b.topology == f"mpi:cart:{dims[0]}x{dims[1]}"
            items = list(range(100 * SIZE)) if RANK == 0 else []
            b.rebalance(items)
            assert _every_id_once(items) == list(range(100 * SIZE))
    finally:
        cart.Free()
    with pytest.raises(hetlb.InvalidInputError, match="MPI_Cart_create"):
        hetlb.Balancer(COMM, "dishet", topology="mpi")


def test_each_rank_gives_its_own_capacity():
    n = 1000 * SIZE
    items = list(range(n)) if RANK == 0 else []
    with hetlb.Balancer(COMM, "cwa", speeds=float(RANK + 1), timeout=20.0) as b:
        report = b.rebalance(items)
    assert report.capacities == [float(r + 1) for r in range(SIZE)]
    target = n * (RANK + 1) / (SIZE * (SIZE + 1) / 2)
    assert abs(len(items) - target) <= 0.01 * target + 1
    assert _every_id_once(items) == list(range(n))
    with pytest.raises(hetlb.InvalidInputError, match="capacity-blind"):
        hetlb.Balancer(COMM, "oem", speeds=2.0)


def test_a_measurement_of_no_time_is_refused_as_in_c():
    with hetlb.Balancer(COMM, "cwa", speeds="measured") as b:
        with pytest.raises(hetlb.InvalidInputError, match="seconds"):
            b.record(units=1, seconds=0)
        b.record(units=1, seconds=0.5)


def test_float_costs_with_a_quantum():
    # Costs in seconds (floats): with quantum=1e-4 each item weighs round(cost / 1e-4) units.
    rng = np.random.default_rng(7 + RANK)
    costs = rng.uniform(1e-3, 5e-3, size=200 * (RANK + 1))
    items = [(RANK, i, float(c)) for i, c in enumerate(costs)]
    with hetlb.Balancer(COMM, "cwa" if SIZE & (SIZE - 1) == 0 else "dishet", quantum=1e-4) as b:
        assert b.quantum == 1e-4
        report = b.rebalance(items, load=lambda it: it[2])
        units = sum(round(it[2] / 1e-4) for it in items)
        assert units == report.units_after
        # Rows with a float cost column.
        arr = np.zeros(len(costs), dtype=[("cost", np.float64)])
        arr["cost"] = costs
        rows, report = b.rebalance_array(arr, load=arr["cost"])
        assert int(np.rint(rows["cost"] / 1e-4).sum()) == report.units_after
        with pytest.raises(hetlb.InvalidInputError, match="quantum"):
            hetlb.Balancer(COMM, "cwa", quantum=0.0)
        # Without a quantum a fractional cost says how to give one, on this rank; the
        # others learn it as a refusal.
    with hetlb.Balancer(COMM, "dishet" if SIZE & (SIZE - 1) else "cwa") as plain:
        if RANK == 0:
            with pytest.raises(hetlb.InvalidInputError, match="quantum=SECONDS_PER_UNIT"):
                plain.rebalance(items, load=lambda it: it[2])
        else:
            with pytest.raises(hetlb.PeerError, match="rank 0"):
                plain.rebalance(items, load=lambda it: round(it[2] * 1e4))


def test_float_costs_with_an_automatic_quantum():
    # A particle code whose costs are seconds: quantum="auto" gathers the group's total cost
    # and item count at each call and makes a mean item weigh 1,000 units.
    rng = np.random.default_rng(11 + RANK)
    costs = rng.uniform(1e-6, 9e-6, size=300 * (RANK + 1))
    items = [(RANK, i, float(c)) for i, c in enumerate(costs)]
    ids = sorted((r, i) for r, i, _ in items)
    everyone = COMM.allgather((float(costs.sum()), len(costs)))
    want = sum(t for t, _ in everyone) / (sum(n for _, n in everyone) * 1000.0)
    rule = "cwa" if SIZE & (SIZE - 1) == 0 else "dishet"
    with hetlb.Balancer(COMM, rule, quantum="auto", timeout=20.0) as b:
        assert b.quantum == "auto" and b.last_quantum is None
        report = b.rebalance(items, load=lambda it: it[2])
        assert report.quantum == pytest.approx(want, rel=1e-9) == b.last_quantum
        assert sum(round(it[2] / report.quantum) for it in items) == report.units_after
        mine = sorted((r, i) for r, i, _ in items)
        everyone_ids = sorted(x for part in COMM.allgather(mine) for x in part)
        assert everyone_ids == sorted(x for part in COMM.allgather(ids) for x in part)
        # The costs are balanced to within a few items of the mean.
        spent = COMM.allgather(sum(it[2] for it in items))
        mean = sum(spent) / SIZE
        assert max(spent) <= mean + 2 * 9e-6 * (1 + np.log2(SIZE)), spent
        # Rows, with a cost column.
        arr = np.zeros(len(items), dtype=[("cost", np.float64)])
        arr["cost"] = [it[2] for it in items]
        rows, report = b.rebalance_array(arr, load=lambda a: a["cost"])
        assert int(np.rint(rows["cost"] / report.quantum).sum()) == report.units_after
        # A bad cost on rank 0 refuses the gather: rank 0 names its argument, the others it.
        if RANK == 0:
            with pytest.raises(hetlb.InvalidInputError, match="finite, non-negative"):
                b.rebalance(items, load=lambda it: float("nan"))
        else:
            with pytest.raises(hetlb.PeerError, match="rank 0"):
                b.rebalance(items, load=lambda it: it[2])
        b.rebalance(items, load=lambda it: it[2])
    with hetlb.Balancer(COMM, rule, quantum="auto", speeds="measured", timeout=20.0) as b:
        b.record(units=1000, seconds=0.5)
        advice = b.advise(items, load=lambda it: it[2])
        assert advice["quantum"] == pytest.approx(want, rel=1e-9)
    with pytest.raises(hetlb.InvalidInputError, match="quantum"):
        hetlb.Balancer(COMM, "cwa", quantum="automatic")
