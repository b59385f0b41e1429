"""hetlb.Balancer: the peer balancer of an mpi4py application.

Every rank builds a Balancer on the same communicator with the same options and calls
:meth:`Balancer.rebalance` (or :meth:`Balancer.rebalance_array`) at the same point of its
loop. hetlb works on its own duplicate of the communicator, so its messages never mix with
the application's.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import pickle
import weakref
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _hetlb
from ._convert import (
    auto_quantum,
    costs_array,
    one_load,
    quantised,
    quantised_array,
    units_of,
)
from ._errors import InvalidInputError, InvalidTypeError, MPIError, PeerError
from ._options import option_pairs

__all__ = ["Balancer", "RebalanceReport"]

_VECTORS = ("loads_before", "planned_after", "loads_after", "items_after_all")

_live: "weakref.WeakSet[Balancer]" = weakref.WeakSet()


@atexit.register
def _close_all() -> None:
    # Before mpi4py finalises MPI (it does so after the interpreter's exit handlers).
    for b in list(_live):
        try:
            b.close()
        except Exception:  # noqa: BLE001 - leaving anyway
            pass


class RebalanceReport:
    """One rank's account of a rebalance (the Rust ``peer::Report``).

    Attributes (the vectors are the whole group's, NumPy ``uint64``, equal on every rank):
        epoch, rank, backend, algorithm, topology, schedule,
        items_before, items_after, units_before, units_after,
        items_sent, items_received, units_sent, units_received, bytes_sent, bytes_received,
        items_moved (= items_sent: items that left this rank, a forwarded item at every hop),
        messages_sent, messages_received, phases, imbalance_before, imbalance_after,
        planned_imbalance_after,
        balanced, converged, residual, decide_seconds, move_seconds, slowest_move_seconds,
        predicted_steps, seconds_per_unit, predicted_move_seconds, capacities,
        measured_speeds, loads_before, planned_after, loads_after, items_after_all,
        implausible_speeds, prediction (a dict: iteration_seconds_before/after,
        gain_per_iteration, move_seconds, units_moved, bytes_moved, messages; None until
        every speed is measured), held_back (True when the trigger kept the move back),
        alternatives (rule ``auto``: every candidate's ``algorithm`` and ``prediction``),
        routing (``paper`` or ``direct``), cost_model (the ``seconds_per_message`` and
        ``seconds_per_byte`` the prediction used: configured, or learned), outcome (how
        the previous move's prediction turned out, measured at this call: predicted and
        measured gain per iteration, iteration seconds before and after, predicted and
        measured move seconds; None when there is none), spread_before and spread_after
        (with ``coords``: each rank's RMS distance of its items from their centroid over that
        of all items, 1 for a random assignment; None without positions), quantum (the
        cost of one unit this call used: the balancer's ``quantum``, the one ``"auto"``
        chose from the group's costs, or None when loads are whole units).
    """

    epoch: int
    rank: int
    backend: str
    algorithm: str
    topology: str
    schedule: str
    items_before: int
    items_after: int
    units_before: int
    units_after: int
    items_sent: int
    items_received: int
    items_moved: int
    units_sent: int
    units_received: int
    bytes_sent: int
    bytes_received: int
    messages_sent: int
    messages_received: int
    phases: int
    imbalance_before: float
    imbalance_after: float
    planned_imbalance_after: float
    balanced: bool
    converged: bool
    residual: int
    decide_seconds: float
    move_seconds: float
    slowest_move_seconds: float
    predicted_steps: Optional[int]
    seconds_per_unit: Optional[float]
    predicted_move_seconds: Optional[float]
    capacities: Optional[List[float]]
    measured_speeds: Optional[List[float]]
    loads_before: np.ndarray
    planned_after: np.ndarray
    loads_after: np.ndarray
    items_after_all: np.ndarray
    implausible_speeds: List[Dict[str, Any]]
    prediction: Optional[Dict[str, Any]]
    held_back: bool
    alternatives: List[Dict[str, Any]]
    routing: str
    cost_model: Dict[str, float]
    outcome: Optional[Dict[str, Any]]
    spread_before: Optional[float]
    spread_after: Optional[float]
    quantum: Optional[float]

    def __init__(self, fields: Dict[str, Any]) -> None:
        self._fields = dict(fields)
        self._fields["items_moved"] = self._fields.get("items_sent", 0)
        for k in _VECTORS:
            if k in self._fields:
                self._fields[k] = np.asarray(self._fields[k], dtype=np.uint64)

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    def as_dict(self) -> Dict[str, Any]:
        """Every field, the vectors as lists."""
        return {
            k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self._fields.items()
        }

    def __repr__(self) -> str:
        f = self._fields
        return (
            f"RebalanceReport(rank {f.get('rank')}, {f.get('algorithm')} on {f.get('topology')}, "
            f"imbalance {f.get('imbalance_before'):.3f} -> {f.get('imbalance_after'):.3f}, "
            f"{f.get('items_moved')} items sent)"
        )


def _our_libmpi() -> Optional[str]:
    """The path of the MPI library this extension is linked to, from the process's memory map
    (Linux), while it is the only MPI library loaded; None elsewhere."""
    import re

    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            paths = {
                line.split(None, 5)[5].strip()
                for line in maps
                if len(line.split(None, 5)) == 6
            }
    except OSError:
        return None
    mpi = sorted(p for p in paths if re.search(r"/lib(mpi|mpich)\.so(\.\d+)*$", p))
    return mpi[0] if len(mpi) == 1 else None


def _steer_mpi4py_wheel() -> None:
    """Points a binary wheel of mpi4py imported after hetlb at the MPI library hetlb is linked
    to (``MPI4PY_LIBMPI``, read by the wheel when it picks its MPI): an mpi4py wheel then runs
    on hetlb's MPI wherever its ABI allows (Open MPI's ``libmpi.so.40``; Debian's MPICH names
    its library ``libmpich.so.12``, which the wheel cannot use). A source build of mpi4py
    ignores the variable; one set by the user, or an mpi4py already imported, is left alone."""
    import os
    import sys

    if not _hetlb.has_mpi() or "mpi4py.MPI" in sys.modules or "MPI4PY_LIBMPI" in os.environ:
        return
    path = _our_libmpi()
    if path is not None and "/libmpi.so" in path:
        os.environ["MPI4PY_LIBMPI"] = path


_steer_mpi4py_wheel()


def _first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0].strip(" \t\x00") if lines else "(unknown)"


def _mpi4py_is_binary_wheel() -> bool:
    """True when mpi4py was installed from a binary wheel: its ``MPI`` module then comes in
    one build per MPI ABI (``MPI.mpich.*.so``, ``MPI.openmpi.*.so``), which loads whichever
    MPI library it finds at run time rather than the one hetlb is linked to."""
    import importlib.util
    import os
    import re

    spec = importlib.util.find_spec("mpi4py")
    if spec is None or not spec.submodule_search_locations:
        return False
    abi = re.compile(r"^MPI\.(mpich|openmpi|impi|msmpi|mpiabi)\.")
    for where in spec.submodule_search_locations:
        try:
            if any(abi.match(f) for f in os.listdir(where)):
                return True
        except OSError:
            pass
    return False


def _mpi4py_fix() -> str:
    """The one command that builds mpi4py against the MPI library hetlb is linked to."""
    return (
        f"MPICC={_hetlb.mpi_compiler()} python3 -m pip install --force-reinstall "
        "--no-cache-dir --no-binary mpi4py mpi4py"
    )


def _check_comm(comm: Any) -> int:
    """The Fortran handle of ``comm`` (``Comm.py2f()``, an ``int`` under every MPI) after
    checking that hetlb can use it: mpi4py must run on the MPI library hetlb is linked to."""
    if not _hetlb.has_mpi():
        raise MPIError(
            "this build of hetlb has no MPI: reinstall it with the mpi feature "
            '(MATURIN_PEP517_ARGS="--features mpi" pip install ./crates/hetlb-py)'
        )
    ours = _first_line(_hetlb.mpi_library_version())
    try:
        from mpi4py import MPI
    except ImportError as e:
        if _mpi4py_is_binary_wheel():
            raise MPIError(
                f"mpi4py is a binary wheel that cannot load an MPI library here ({e}); "
                f"build it against hetlb's MPI ({ours}): {_mpi4py_fix()}"
            ) from None
        raise MPIError(f"Balancer needs mpi4py ({e}): {_mpi4py_fix()}") from None
    if not isinstance(comm, MPI.Comm):
        raise InvalidTypeError(
            f"comm: expected an mpi4py communicator, not {type(comm).__name__}"
        )
    theirs = MPI.Get_library_version().strip()
    if (
        ours != _first_line(theirs)
        or _hetlb.mpi_library_version().strip() != theirs
        or MPI._sizeof(MPI.Comm) != _hetlb.comm_handle_size()
    ):
        wheel = " (a binary wheel)" if _mpi4py_is_binary_wheel() else ""
        raise MPIError(
            f"mpi4py{wheel} uses {_first_line(theirs)} but hetlb is linked to {ours}: "
            f"build mpi4py against hetlb's MPI: {_mpi4py_fix()}"
        )
    if MPI.Is_finalized():
        raise MPIError("MPI is already finalised")
    if not MPI.Is_initialized():
        raise MPIError("MPI is not initialised")
    if comm == MPI.COMM_NULL:
        raise MPIError("comm: the communicator is null (freed, or never created)")
    if comm.Is_inter():
        raise MPIError("comm: an intercommunicator; hetlb balances within one group")
    # The Fortran handle: an int in MPICH and in Open MPI alike (their C handles differ).
    return int(comm.py2f())


class Balancer:
    """hetlb's peer balancer on one rank of an mpi4py communicator.

    Args:
        comm: an mpi4py intra-communicator (``MPI.COMM_WORLD``, or one the application
            made). Collective: every rank of ``comm`` builds its balancer, in the same
            order. hetlb duplicates it for its own messages.
        rule: a name from :func:`hetlb.algorithms`, or ``"auto"``: at every call each
            candidate rule is planned and predicted at the measured speeds and the one with
            the best predicted net gain, less its earlier moves' shortfall, is followed
            (needs ``speeds="measured"``).
        quantum: ``None`` (loads are whole units; whole-valued floats such as ``3.0`` are
            accepted), or the cost of one unit when ``load=`` gives costs as floats (seconds,
            say): each item's cost becomes ``round(cost / quantum)`` units, halves to even,
            so an item costing under half a quantum weighs 0. Every rank must use the same
            quantum. Pick it so that a rank's total is thousands of units or more (e.g. a
            thousandth of a step's mean seconds per rank): the imbalance left by rounding is
            then below a thousandth. ``"auto"``: at every call the ranks first gather their
            total cost and item count (a timed collective, on the same balancer) and take
            the mean item's cost over 1,000 as the quantum, so a mean item weighs 1,000
            units and rounding changes a rank's total by at most 1/2000 of a mean item per
            item; the report's ``quantum`` (and ``advise``'s) gives the value used.
        **options: the balancer's options, by name: ``speeds``, ``timeout``, ``topology``,
            ``schedule``, ``entry_timeout``, ``procs_per_group``, ``max_rounds``, ``seed``,
            ``lambda_``, ``window``, ``trigger``, ``move_cost``, ``learn_cost``,
            ``routing``, ``candidates``, ``check_budget``, ``count_bytes``, ``trace`` (a
            path: a trace of every call in the Trace Event format, docs/observe.md),
            ``trace_events``, and any option the
            library's table has (``hetlb options`` prints every option with its values,
            default and bounds; a name Python reserves takes a ``_``: ``lambda_``). Seconds,
            counts and shares are numbers, switches bools; ``speeds`` is ``"equal"``,
            ``"measured"``, ``"measured:WINDOW"`` or one capacity per rank; ``move_cost``
            is a pair ``(alpha, beta)``; ``candidates`` a list of rule names (or one string,
            comma-separated); the others are strings as the table writes them. ``None``
            leaves an option at its default.

    Raises:
        MPIError: no MPI in this build, mpi4py on another MPI library, a null (freed)
            communicator, MPI finalised.
        InvalidInputError / UnknownAlgorithmError: a value the table refuses, or options
            that do not fit the rule or the rank count (a hypercube rule needs a power of two
            of ranks); the message names the option by its keyword.
        InvalidTypeError: an option that is not of its type, or not an option.

    Example:
        >>> from mpi4py import MPI
        >>> b = hetlb.Balancer(MPI.COMM_WORLD, "cwa", speeds="measured", timeout=10.0)
        >>> b.record(units=1000, seconds=0.5)
        >>> report = b.rebalance(items)            # items: a list, changed in place
        >>> arr, report = b.rebalance_array(arr)   # rows move as bytes
    """

    def __init__(
        self,
        comm: Any,
        rule: str = "cwa",
        quantum: Union[None, float, str] = None,
        **options: Any,
    ) -> None:
        self._native: Optional[_hetlb.NativeBalancer] = None
        if not isinstance(rule, str):
            raise InvalidTypeError(f"rule: expected a string, not {type(rule).__name__}")
        self._quantum = _check_quantum(quantum)
        self._last_quantum: Optional[float] = None
        pairs = option_pairs(options)
        handle = _check_comm(comm)
        self._native = _hetlb.NativeBalancer(handle, rule, pairs)
        _live.add(self)

    @property
    def rank(self) -> int:
        """This rank."""
        return self._n().rank

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._n().size

    @property
    def topology(self) -> str:
        """The ranks' network as a spec (``hypercube:3``, ``ring:6``, …)."""
        return self._n().topology

    @property
    def quantum(self) -> Union[None, float, str]:
        """The cost of one unit of load when ``load=`` gives costs (seconds, say),
        ``"auto"`` when each call chooses it (see :attr:`last_quantum`), or ``None`` when
        loads are whole units."""
        return self._quantum

    @property
    def last_quantum(self) -> Optional[float]:
        """The quantum the last call used (the one ``"auto"`` chose), or ``None``."""
        if self._quantum == "auto":
            return self._last_quantum
        return self._quantum if isinstance(self._quantum, float) else None

    def _auto(self) -> bool:
        return self._quantum == "auto"

    def _units(self, value: Any, what: str) -> int:
        """One item's load in units: a cost rounded to whole quanta, or a whole number."""
        if isinstance(self._quantum, float):
            return quantised(value, self._quantum, what)
        return one_load(value, what)

    def _auto_units(self, costs: np.ndarray, rows: bool) -> np.ndarray:
        """``quantum="auto"``: gathers the group's total cost and item count (a timed
        collective on the balancer of the coming call), chooses the quantum, and returns
        ``costs`` in its units (a rank whose units overflow refuses the coming call)."""
        gathered = self._n().all_gather_values([math.fsum(costs), float(costs.shape[0])], rows)
        q = auto_quantum(math.fsum(v[0] for v in gathered), math.fsum(v[1] for v in gathered))
        self._last_quantum = q
        with self._refusing(rows=rows):
            return units_of(costs, q, "load")

    def _report(self, report_json: str) -> "RebalanceReport":
        fields = _json_loads(report_json)
        fields["quantum"] = self.last_quantum
        return RebalanceReport(fields)

    def _n(self) -> _hetlb.NativeBalancer:
        if self._native is None:
            raise MPIError("the balancer was not created")
        return self._native

    def record(self, units: int, seconds: float) -> None:
        """Reports that this rank processed ``units`` units of work in ``seconds`` (measured
        speeds; ignored otherwise). Call it once per step of the loop."""
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
            raise InvalidTypeError(f"seconds: expected a number, not {type(seconds).__name__}")
        self._n().record(one_load(units, "units"), float(seconds))

    def speed(self) -> Optional[float]:
        """This rank's measured speed (units per second), once it has one."""
        return self._n().speed()

    def advise(
        self, items: List[Any], load: Optional[Callable[[Any], int]] = None
    ) -> Dict[str, Any]:
        """What :meth:`rebalance` would do now, moving nothing. Collective: every rank
        calls it, and every rank gets the same advice.

        Every candidate rule (the configured one, or rule ``"auto"``'s candidates) is
        planned on the ranks' loads and predicted at the measured speeds with the cost model
        in force (``move_cost``, or the learned one): ``candidates[i]`` has ``algorithm``,
        ``routing``, ``final_loads``, ``prediction`` (seconds per iteration before and
        after, ``gain_per_iteration``, ``move_seconds``, ``units_moved``, ``messages``) and
        ``moves`` (whether the trigger lets it move); ``choice`` is the index of the
        candidate ``rebalance`` would follow, or ``None`` when it would move nothing;
        ``horizon`` the iterations the net gains are ranked over; ``skips`` the calls the
        trigger ``auto`` will skip after a check that held a move back (``choice`` is
        ``None`` while it is above 0: the next :meth:`rebalance` moves nothing);
        ``quantum`` the quantum used (see the constructor).

        Args:
            items: this rank's items (only their loads are read; nothing is pickled).
            load: ``None`` (one unit each) or a callable giving an item's load.

        Raises:
            PeerError: a peer failed, or a speed is not measured yet (needs
                ``speeds="measured"`` and a :meth:`record` on every rank).

        Example:
            >>> b = hetlb.Balancer(MPI.COMM_WORLD, "auto", speeds="measured")
            >>> b.record(units=1000, seconds=0.5)
            >>> a = b.advise(items)
            >>> if a["choice"] is not None:
            ...     b.rebalance(items)
        """
        with self._refusing(rows=False):
            if not isinstance(items, list):
                raise InvalidTypeError(f"items: expected a list, not {type(items).__name__}")
            if self._auto():
                costs = costs_array([1.0 if load is None else load(it) for it in items])
            else:
                loads = [
                    1 if load is None else self._units(load(it), f"load of item {i}")
                    for i, it in enumerate(items)
                ]
        if self._auto():
            loads = [int(u) for u in self._auto_units(costs, rows=False)]
        advice = _json_loads(self._n().advise(loads))
        advice["quantum"] = self.last_quantum
        return advice

    def rebalance(
        self,
        items: List[Any],
        load: Optional[Callable[[Any], int]] = None,
        coords: Optional[Callable[[Any], Sequence[float]]] = None,
    ) -> RebalanceReport:
        """Moves picklable ``items`` between ranks so that every rank's load follows the
        rule. Collective. ``items`` is changed in place: this rank's kept items in their
        order, then the ones received (unpickled).

        Args:
            items: a list of picklable objects.
            load: ``None`` (one unit each) or a callable giving an item's load, a
                non-negative integer.
            coords: ``None``, or a callable giving an item's position: 1 to 3 finite floats
                (the same count for every item). Items then move as regions: a rank sends
                the items lying furthest towards the receiver's region, so each rank's items
                stay compact (the report's ``spread_before`` and ``spread_after``).

        Raises:
            PeerError / PeerTimeoutError: a peer failed; ``failed_rank`` names it and
                ``holding`` says what this rank holds (``"before"``: exactly its items before
                the call, the list unchanged).
            InvalidInputError, InvalidTypeError: a bad load or position, or not a list.

        Example:
            >>> b = hetlb.Balancer(MPI.COMM_WORLD, "dishet", routing="direct")
            >>> b.rebalance(particles, coords=lambda p: (p.x, p.y))
        """
        with self._refusing(rows=False):
            if not isinstance(items, list):
                raise InvalidTypeError(f"items: expected a list, not {type(items).__name__}")
            auto = self._auto()
            costs = (
                costs_array([1.0 if load is None else load(it) for it in items])
                if auto
                else None
            )
            packed = []
            for i, it in enumerate(items):
                if auto:
                    w = 0  # set once the group has chosen the quantum
                elif load is None:
                    w = 1
                else:
                    w = self._units(load(it), f"load of item {i}")
                try:
                    data = pickle.dumps(it, protocol=pickle.HIGHEST_PROTOCOL)
                except Exception as e:  # noqa: BLE001 - any pickling failure
                    raise InvalidInputError(
                        f"items: item {i} cannot be pickled ({e})"
                    ) from None
                packed.append((data, w))
            positions = None
            if coords is not None:
                positions = [_position(coords(it), i) for i, it in enumerate(items)]
                dims = {len(p) for p in positions}
                if len(dims) > 1:
                    raise InvalidInputError(
                        f"coords: items give {sorted(dims)} coordinates; every item the same"
                    )
        if costs is not None:
            units = self._auto_units(costs, rows=False)
            packed = [(d, int(u)) for (d, _), u in zip(packed, units)]
        layout, report, error = self._n().rebalance_packed(packed, positions)
        if error is None or _in_doubt(error):
            items[:] = [items[x] if isinstance(x, int) else pickle.loads(x) for x in layout]
        if error is not None:
            raise error
        assert report is not None
        return self._report(report)

    def rebalance_array(
        self,
        arr: np.ndarray,
        load: Union[None, np.ndarray, Callable[[np.ndarray], Any]] = None,
        coords: Union[None, np.ndarray, Callable[[np.ndarray], Any]] = None,
    ) -> Tuple[np.ndarray, RebalanceReport]:
        """Moves the rows of ``arr`` between ranks as bytes. Collective. Returns the rows this
        rank holds now (a new array of the same dtype and row shape: kept rows in their
        order, then the received ones) and the report.

        Args:
            arr: a NumPy array of at least one dimension (structured, or 2-D, …); each
                ``arr[i]`` is one item. Every rank must use the same dtype and row shape.
            load: ``None`` (one unit per row), an integer array of one load per row, or a
                callable taking ``arr`` and returning that array.
            coords: ``None``, an ``(n, d)`` float array of the rows' positions (``d`` = 1, 2
                or 3; a 1-D array is ``d`` = 1), or a callable taking ``arr`` and returning
                it. Rows then move as regions, keeping each rank's rows compact.

        Raises:
            As :meth:`rebalance`. On a failure with ``holding == "before"`` this rank holds
            exactly ``arr``.

        Example:
            >>> rows, report = b.rebalance_array(particles, coords=lambda a: a[["x", "y"]])
            >>> report.spread_after <= report.spread_before
            True
        """
        with self._refusing(rows=True):
            if not isinstance(arr, np.ndarray):
                raise InvalidTypeError(
                    f"arr: expected a NumPy array, not {type(arr).__name__}"
                )
            if arr.ndim == 0:
                raise InvalidInputError("arr: a 0-dimensional array has no rows")
            if arr.dtype.hasobject:
                raise InvalidInputError("arr: rows holding Python objects cannot move as bytes")
            n = arr.shape[0]
            loads = None
            costs = None
            if self._auto():
                costs = (
                    np.ones(n)
                    if load is None
                    else costs_array(load(arr) if callable(load) else load)
                )
                if costs.shape[0] != n:
                    raise InvalidInputError(f"load: {costs.shape[0]} loads given for {n} rows")
            elif load is not None:
                values = load(arr) if callable(load) else load
                from ._convert import loads_array

                if n == 0:
                    loads = np.zeros(0, dtype=np.uint64)
                elif isinstance(self._quantum, float):
                    loads = quantised_array(values, self._quantum, "load")
                else:
                    loads = loads_array(values, "load")
                if loads.shape[0] != n:
                    raise InvalidInputError(f"load: {loads.shape[0]} loads given for {n} rows")
            positions = None
            if coords is not None:
                positions = _positions_array(coords(arr) if callable(coords) else coords, n)
        row_shape = arr.shape[1:]
        flat = np.ascontiguousarray(arr).reshape(n, -1).view(np.uint8).reshape(n, -1) if n else np.zeros(
            (0, arr.dtype.itemsize * int(np.prod(row_shape, dtype=np.int64))), dtype=np.uint8
        )
        if costs is not None:
            loads = self._auto_units(costs, rows=True)
        rows, report, error = self._n().rebalance_rows(flat, loads, positions)
        if error is not None:
            if isinstance(error, PeerError) and _in_doubt(error):
                error.held = _unflatten(rows, arr.dtype, row_shape)
            raise error
        assert report is not None
        return _unflatten(rows, arr.dtype, row_shape), self._report(report)

    @contextlib.contextmanager
    def _refusing(self, rows: bool) -> Iterator[None]:
        """Checks this rank's arguments of a collective call: an error among them (a bad load,
        a load callable that raises, an item that cannot be pickled …) is raised here as
        usual, after this rank has refused the call, so that every other rank's call raises
        at once a :class:`PeerError` naming this rank instead of waiting for it."""
        try:
            yield
        except Exception as e:
            native = self._native
            if native is not None and not native.closed:
                try:
                    native.refuse(f"{type(e).__name__}: {e}", rows)
                except Exception:  # noqa: BLE001 - the argument's own error is the news
                    pass
            raise

    def resolve(self, items: List[Any]) -> None:
        """Settles a call whose outcome was in doubt (``PeerError.holding == "in_doubt"``):
        waits up to the timeout for the outcome, then appends to ``items`` the items it gives
        this rank."""
        items.extend(pickle.loads(b) for b in self._n().resolve())

    def barrier(self) -> None:
        """A timed barrier: returns when every rank has called it, or raises
        :class:`PeerError` naming the rank that stopped."""
        self._n().barrier()

    def close(self) -> None:
        """Ends hetlb's use of the communicator (frees its duplicate). Collective; called
        for every open balancer when the interpreter exits, before mpi4py finalises MPI."""
        if self._native is not None:
            self._native.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._native is None or self._native.closed

    def __enter__(self) -> "Balancer":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.closed:
            return "Balancer(closed)"
        return f"Balancer(rank {self.rank} of {self.size}, {self.topology})"


def _check_quantum(quantum: Any) -> Union[None, float, str]:
    """``quantum``: ``None``, ``"auto"``, or a positive, finite number (the cost of one
    unit)."""
    if quantum is None:
        return None
    if quantum == "auto":
        return "auto"
    if isinstance(quantum, str):
        raise InvalidInputError(f'quantum: {quantum!r} is not "auto" or a number')
    if isinstance(quantum, bool) or not isinstance(quantum, (int, float)):
        raise InvalidTypeError(f"quantum: expected a number, not {type(quantum).__name__}")
    q = float(quantum)
    if not (math.isfinite(q) and q > 0):
        raise InvalidInputError(f"quantum: {quantum} is not a positive, finite cost per unit")
    return q


def _position(value: Any, i: int) -> List[float]:
    """One item's position from a ``coords`` callable: 1 to 3 finite floats."""
    try:
        at = [float(x) for x in value]
    except TypeError:
        raise InvalidTypeError(
            f"coords of item {i}: expected 1 to 3 numbers, not {type(value).__name__}"
        ) from None
    except ValueError as e:
        raise InvalidInputError(f"coords of item {i}: {e}") from None
    if not 1 <= len(at) <= 3:
        raise InvalidInputError(f"coords of item {i}: {len(at)} coordinates (1, 2 or 3)")
    if not all(math.isfinite(x) for x in at):
        raise InvalidInputError(f"coords of item {i}: {at} is not finite")
    return at


def _positions_array(value: Any, n: int) -> np.ndarray:
    """The rows' positions as a C-contiguous ``(n, d)`` float64 array, checked."""
    if isinstance(value, np.ndarray) and value.dtype.names is not None:
        # A structured selection such as arr[["x", "y"]]: its fields side by side.
        value = np.stack([value[f].astype(np.float64) for f in value.dtype.names], axis=-1)
    try:
        at = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidTypeError(f"coords: not an array of floats ({e})") from None
    if at.ndim == 1:
        at = at.reshape(-1, 1)
    if at.ndim != 2 or at.shape[0] != n or not 1 <= at.shape[1] <= 3:
        raise InvalidInputError(
            f"coords: an array of shape {at.shape} for {n} rows (expected ({n}, d), d = 1, 2 or 3)"
        )
    finite = np.isfinite(at).all(axis=1)
    if not finite.all():
        bad = int(np.argmin(finite))
        raise InvalidInputError(f"coords: row {bad} ({at[bad].tolist()}) is not finite")
    return np.ascontiguousarray(at)


def _in_doubt(error: BaseException) -> bool:
    """True when a call failed with this rank's items in doubt (not all held as before)."""
    return getattr(error, "holding", "before") != "before"


def _unflatten(rows: np.ndarray, dtype: np.dtype, row_shape: Tuple[int, ...]) -> np.ndarray:
    n = rows.shape[0]
    return rows.reshape(-1).view(dtype).reshape((n,) + tuple(row_shape))


def _json_loads(text: str) -> Dict[str, Any]:
    import json

    fields: Dict[str, Any] = json.loads(text)
    return fields
