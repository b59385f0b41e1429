"""hetlb: exact integer load balancing for heterogeneous clusters, from Python.

* :func:`balance` — one load vector balanced by one rule on one network (``hetlb balance``).
* :func:`simulate` — one discrete-event scenario (``hetlb simulate``).
* :func:`advise` — whether a move pays, with which rule and routing (``hetlb advise``).
* :class:`Balancer` — the peer balancer of an mpi4py application: moves the application's
  own items (picklable objects, or the rows of a NumPy array) between ranks.
* :func:`algorithms`, :func:`algorithm_info` — the rules.

Every error is a :class:`HetlbError`; see :mod:`hetlb._errors`.
"""

from __future__ import annotations

import json as _json
import os as _os
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _hetlb
from ._balancer import Balancer, RebalanceReport
from ._convert import (
    capacities_list as _capacities,
    loads_array as _loads,
    names_list as _names,
    one_load as _whole,
    optional_int as _int,
)
from ._errors import (
    HetlbError,
    HetlbFileError,
    InvalidInputError,
    InvalidTypeError,
    LimitError,
    MPIError,
    PeerError,
    PeerTimeoutError,
    ScenarioError,
    UnknownAlgorithmError,
)

BalanceResult = _hetlb.BalanceResult

__version__: str = _hetlb.__version__

__all__ = [
    "__version__",
    "algorithms",
    "algorithm_info",
    "balance",
    "advise",
    "simulate",
    "has_mpi",
    "Balancer",
    "BalanceResult",
    "RebalanceReport",
    "HetlbError",
    "HetlbFileError",
    "InvalidInputError",
    "InvalidTypeError",
    "LimitError",
    "MPIError",
    "PeerError",
    "PeerTimeoutError",
    "ScenarioError",
    "UnknownAlgorithmError",
]

_DEFAULT_MEMORY = 8 << 30


def algorithms() -> List[str]:
    """The rule names, as ``hetlb balance --help`` lists them: the hypercube rules (dem,
    dem-fixed, dem-improved, dem-hetero, oem, cwa, hybrid), then the diffusion rules, which
    run on any network (dishet, dishet-tight, diffusion, random-biasing, dynamic-biasing,
    gdem).

    >>> "oem" in hetlb.algorithms()
    True
    """
    return list(_hetlb.algorithms())


def algorithm_info(name: str) -> Dict[str, Any]:
    """One rule's description: ``name``, ``family`` (pairwise-hypercube, whole-vector,
    diffusion), ``summary``, ``source`` (the paper), ``bound`` (its final max difference,
    hypercube rules), ``uses_capacities``, ``needs_hypercube``.

    Raises:
        UnknownAlgorithmError: ``name`` is not one of :func:`algorithms`.
    """
    _check_str(name, "algorithm")
    return _hetlb.algorithm_info(name)


def has_mpi() -> bool:
    """True when this build includes the MPI :class:`Balancer` (built with the ``mpi``
    feature: ``MATURIN_PEP517_ARGS="--features mpi" pip install ./crates/hetlb-py``)."""
    return bool(_hetlb.has_mpi())


def _check_str(v: Any, what: str) -> None:
    if not isinstance(v, str):
        raise InvalidTypeError(f"{what}: expected a string, not {type(v).__name__}")


def balance(
    loads: Any,
    algorithm: str = "oem",
    *,
    topology: Optional[str] = None,
    capacities: Optional[Sequence[float]] = None,
    procs_per_group: Optional[int] = None,
    max_rounds: Optional[int] = None,
    seed: Optional[int] = None,
    lambda_: Optional[float] = None,
    schedule: Union[str, Sequence[str], None] = None,
    rounds: bool = False,
    max_memory_bytes: int = _DEFAULT_MEMORY,
) -> "BalanceResult":
    """Balances ``loads`` with ``algorithm``, as ``hetlb balance``; returns a
    :class:`BalanceResult`.

    Args:
        loads: one non-negative integer load per node (a sequence, or an integer NumPy
            array; a ``uint64`` array is used without conversion). Without ``topology``,
            a power of two of them are the nodes of a hypercube; on another count the
            hypercube rules run embedded in a cube (``complete:N``).
        algorithm: a name from :func:`algorithms`.
        topology: the network, as ``hetlb balance --topology`` takes it: ``ring:16``,
            ``path:8``, ``mesh:4x4``, ``torus:8x8``, ``kary:4:3``, ``star:9``,
            ``complete:8``, ``hypercube:5``, ``random:32:0.2[:seed]``, ``file:PATH``.
            Default: the hypercube of the loads (``complete:N`` on another count).
        capacities: node capacities (positive speeds), one per node.
        procs_per_group: ``P`` of ``hybrid``.
        max_rounds: round limit of the diffusion rules (default 100000).
        seed: seed of ``random-biasing``.
        lambda_: exchange parameter of ``gdem``, 0 < λ < 1.
        schedule: transmission schedule(s) of a hypercube plan: ``phased``, ``overlap``,
            ``pipeline``, ``pipeline-per-processor``; their time in steps of ``T_comm``
            is ``metrics["t_comm"][name]``, the detail ``result.transmission``.
        rounds: list every transfer and the loads after every round in
            :meth:`BalanceResult.as_dict` (as ``--rounds``); otherwise a plan of more than
            10,000 transfers is summarised there (``result.phases`` always has them).
        max_memory_bytes: refuse a run that would need more memory (default 8 GiB, as the
            CLI's ``--max-memory``).

    Returns:
        ``final_loads`` (NumPy ``uint64``, the JSON's ``final``), ``metrics`` (the JSON's
        ``metrics``), ``phases`` (per phase or round: ``dimension`` and the transfers as
        arrays ``from``, ``to``, ``units``), ``as_dict()`` (the whole JSON document).

    Raises:
        UnknownAlgorithmError: an unknown rule.
        InvalidInputError: negative or fractional loads, lengths that do not match, a bad
            topology, an option the rule does not have.
        InvalidTypeError: arguments of the wrong type.
        HetlbFileError: a ``file:`` topology that cannot be read.
        LimitError: above ``max_memory_bytes``.

    Example:
        >>> r = hetlb.balance([4, 7, 0, 9, 2, 2, 8, 1], algorithm="oem")
        >>> r.final_loads.sum()
        33
        >>> r.metrics["max_difference"] <= 2
        True
    """
    _check_str(algorithm, "algorithm")
    if topology is not None:
        _check_str(topology, "topology")
    arr = _loads(loads, "loads")
    schedules = [] if schedule is None else _names(schedule, "schedule")
    if lambda_ is not None and not isinstance(lambda_, (int, float)):
        raise InvalidTypeError(f"lambda_: expected a number, not {type(lambda_).__name__}")
    return _hetlb.balance(
        arr,
        algorithm,
        topology=topology,
        capacities=_capacities(capacities),
        procs_per_group=_int(procs_per_group, "procs_per_group"),
        max_rounds=_int(max_rounds, "max_rounds"),
        seed=_int(seed, "seed"),
        lambda_=None if lambda_ is None else float(lambda_),
        schedule=schedules,
        rounds=bool(rounds),
        max_memory_bytes=_whole(max_memory_bytes, "max_memory_bytes"),
    )


def advise(
    loads: Any,
    speeds: Union[float, Sequence[float]] = 1.0,
    *,
    algorithms: Optional[Sequence[str]] = None,
    routing: Union[str, Sequence[str]] = ("paper", "direct"),
    topology: Optional[str] = None,
    bytes_per_unit: int = 8,
    seconds_per_message: float = 1e-5,
    seconds_per_byte: float = 1e-9,
    trigger: str = "auto",
    max_memory_bytes: int = _DEFAULT_MEMORY,
) -> Dict[str, Any]:
    """Whether moving pays, with which rule and which routing, before anything moves, as
    ``hetlb advise --format json``; returns that document as a dict.

    Every candidate ``(rule, routing)`` is planned on ``loads`` with capacities equal to the
    measured ``speeds`` (for the rules that use capacities) and predicted: seconds per
    iteration before and after (the slowest node's ``load ÷ speed``), the gain per
    iteration, units, bytes and messages moved, and the move's seconds under Hockney's
    cost (``seconds_per_message`` + ``seconds_per_byte`` × bytes at each end). ``choice``
    is the index of the candidate with the best net gain over the trigger's horizon, or
    ``None`` when no move pays.

    Args:
        loads: units each node holds now (as :func:`balance`).
        speeds: units each node processes per second: one number for all, or one per node.
        algorithms: candidate rules (default: every rule that fits the network).
        routing: ``"paper"`` (hop by hop, as the rule moves), ``"direct"`` (each unit once,
            straight to its end), or both.
        topology: the network (default: the hypercube of the loads).
        bytes_per_unit: bytes of one unit on the wire.
        seconds_per_message: Hockney's α.
        seconds_per_byte: Hockney's β.
        trigger: ``"always"`` or ``"auto[:HORIZON[:MARGIN]]"`` (defaults 10 and 1.5).
        max_memory_bytes: refuse an advice that would need more memory.

    Raises:
        UnknownAlgorithmError, InvalidInputError, InvalidTypeError, LimitError: as
        :func:`balance`.

    Example:
        >>> a = hetlb.advise([900, 0, 0, 0, 0, 0, 0, 0], 100.0, algorithms=["cwa"])
        >>> [c["routing"] for c in a["candidates"]]
        ['paper', 'direct']
        >>> a["candidates"][1]["prediction"]["units_moved"]
        787
    """
    arr = _loads(loads, "loads")
    if isinstance(speeds, (int, float)) and not isinstance(speeds, bool):
        speed_list = [float(speeds)]
    else:
        speed_list = _capacities(speeds, "speeds") or []
    routings = _names(routing, "routing")
    names = None if algorithms is None else _names(algorithms, "algorithms")
    if topology is not None:
        _check_str(topology, "topology")
    _check_str(trigger, "trigger")
    for v, what in ((seconds_per_message, "seconds_per_message"), (seconds_per_byte, "seconds_per_byte")):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise InvalidTypeError(f"{what}: expected a number, not {type(v).__name__}")
    return _hetlb.advise(
        arr,
        speed_list,
        algorithms=names,
        routing=routings,
        topology=topology,
        bytes_per_unit=_whole(bytes_per_unit, "bytes_per_unit"),
        seconds_per_message=float(seconds_per_message),
        seconds_per_byte=float(seconds_per_byte),
        trigger=trigger,
        max_memory_bytes=_whole(max_memory_bytes, "max_memory_bytes"),
    )


def simulate(
    scenario: Union[str, "_os.PathLike[str]"],
    *,
    seed: Optional[int] = None,
    check: bool = False,
    series: bool = False,
    max_memory_bytes: int = _DEFAULT_MEMORY,
) -> Dict[str, Any]:
    """Runs one simulator scenario, as ``hetlb simulate FILE --format json``; returns the
    report as a dict equal to that JSON.

    Args:
        scenario: a path to a TOML scenario (a :class:`os.PathLike`, or a string without a
            newline), or the TOML text itself (a string with a newline).
        seed: overrides the scenario's seed.
        check: recount every task after every event (slow on large scenarios).
        series: keep every node's queue-length series in the report (``--series``).
        max_memory_bytes: refuse a run that would need more memory (default 8 GiB).

    Raises:
        ScenarioError: the scenario does not parse or validate (the message names the field
            and the line).
        HetlbFileError: the file cannot be read.
        LimitError: above ``max_memory_bytes``.

    Example:
        >>> rep = hetlb.simulate("examples/scenarios/mirtaheri-balanced.toml")
        >>> rep["executed"] > 0
        True
    """
    path: Optional[str]
    text: Optional[str]
    if isinstance(scenario, _os.PathLike):
        path, text = _os.fspath(scenario), None
    elif isinstance(scenario, str):
        path, text = (None, scenario) if "\n" in scenario else (scenario, None)
    else:
        raise InvalidTypeError(
            f"scenario: expected a path or the TOML text, not {type(scenario).__name__}"
        )
    out = _hetlb.simulate(
        path=path,
        text=text,
        seed=_int(seed, "seed"),
        check=bool(check),
        series=bool(series),
        max_memory_bytes=_whole(max_memory_bytes, "max_memory_bytes"),
    )
    report: Dict[str, Any] = _json.loads(out)
    return report
