"""Stub of the native module ``hetlb._hetlb`` (``crates/hetlb-py/src``). The package's
Python modules check and convert the arguments and call these; the MPI part
(``NativeBalancer``, ``mpi_library_version``, ``comm_handle_size``, ``mpi_compiler``) exists
only in a build with the ``mpi`` feature (``has_mpi()``)."""

from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, final

import numpy as np
import numpy.typing as npt

from ._errors import HetlbError

__all__ = [
    "__version__",
    "algorithms",
    "algorithm_info",
    "has_mpi",
    "has_fault_injection",
    "balance",
    "advise",
    "BalanceResult",
    "simulate",
    "NativeBalancer",
    "mpi_library_version",
    "comm_handle_size",
    "mpi_compiler",
]

__version__: str

def algorithms() -> List[str]:
    """The rule names, as ``hetlb balance --help`` lists them."""

def algorithm_info(name: str) -> Dict[str, Any]:
    """One rule's name, family, summary, source, bound, uses_capacities, needs_hypercube."""

def has_mpi() -> bool:
    """True when this build has the MPI balancer (feature ``mpi``)."""

def has_fault_injection() -> bool:
    """True when this build injects faults on request (feature ``fault-injection``, tests
    only): the option ``fault`` of ``NativeBalancer``."""

@final
class BalanceResult:
    """The result of ``balance``: the plan, its metrics, the JSON document of the CLI."""

    @property
    def algorithm(self) -> str:
        """The rule's name."""
    @property
    def topology(self) -> str:
        """The network as a spec."""
    @property
    def initial(self) -> npt.NDArray[np.uint64]:
        """The loads before."""
    @property
    def final_loads(self) -> npt.NDArray[np.uint64]:
        """The loads after (the JSON's ``final``)."""
    @property
    def metrics(self) -> Dict[str, Any]:
        """The JSON's ``metrics``; with a schedule also ``t_comm``: {schedule: steps}."""
    @property
    def phases(self) -> List[Dict[str, Any]]:
        """Per phase or round: ``dimension`` and arrays ``from``, ``to``, ``units``."""
    @property
    def rounds(self) -> int:
        """Rounds to convergence."""
    @property
    def converged(self) -> bool:
        """True when the rule reached its fixed point or ran its schedule."""
    @property
    def transmission(self) -> List[Dict[str, Any]]:
        """One entry per schedule asked for (the JSON's ``transmission``)."""
    def to_json(self) -> str:
        """The document ``hetlb balance --format json`` prints."""
    def as_dict(self) -> Dict[str, Any]:
        """The document ``hetlb balance --format json`` prints, as a dict."""

def balance(
    loads: npt.NDArray[np.uint64],
    algorithm: str,
    topology: Optional[str] = None,
    capacities: Optional[List[float]] = None,
    procs_per_group: Optional[int] = None,
    max_rounds: Optional[int] = None,
    seed: Optional[int] = None,
    lambda_: Optional[float] = None,
    schedule: List[str] = ...,
    rounds: bool = False,
    max_memory_bytes: int = ...,
) -> BalanceResult:
    """``hetlb balance``: ``loads`` (checked by the caller) balanced by ``algorithm``."""

def advise(
    loads: npt.NDArray[np.uint64],
    speeds: List[float],
    algorithms: Optional[List[str]] = None,
    routing: List[str] = ...,
    topology: Optional[str] = None,
    bytes_per_unit: int = 8,
    seconds_per_message: float = 1e-5,
    seconds_per_byte: float = 1e-9,
    trigger: str = "auto",
    max_memory_bytes: int = ...,
) -> Dict[str, Any]:
    """``hetlb advise --format json``, as a dict."""

def simulate(
    path: Optional[str] = None,
    text: Optional[str] = None,
    seed: Optional[int] = None,
    check: bool = False,
    series: bool = False,
    max_memory_bytes: int = ...,
) -> str:
    """Runs one scenario (a file or its TOML text); the report as JSON."""

def mpi_library_version() -> str:
    """The version string of the MPI library this extension is linked to."""

def comm_handle_size() -> int:
    """Bytes of an ``MPI_Comm`` handle in that library."""

def mpi_compiler() -> str:
    """The MPI C compiler wrapper the extension was built with (``MPICC``, or ``mpicc``)."""

@final
class NativeBalancer:
    """hetlb's balancer on one rank (the native half of ``hetlb.Balancer``)."""

    def __new__(
        cls,
        handle: int,
        rule: str,
        options: Union[Sequence[Tuple[str, str]], Mapping[str, str], None] = None,
    ) -> "NativeBalancer":
        """A balancer on hetlb's duplicate of the communicator whose Fortran handle
        (``Comm.py2f()``) is ``handle``, for ``rule`` with
        ``options``: ``(name, text)`` pairs of the library's options table, set in order.
        Collective."""
    @property
    def rank(self) -> int:
        """This rank."""
    @property
    def size(self) -> int:
        """The number of ranks."""
    @property
    def topology(self) -> str:
        """The ranks' topology as a spec."""
    @property
    def closed(self) -> bool:
        """True once closed."""
    def record(self, units: int, seconds: float) -> None:
        """Reports ``units`` of work done in ``seconds``."""
    def speed(self) -> Optional[float]:
        """This rank's measured speed, once it has one."""
    def advise(self, loads: List[int]) -> str:
        """What a rebalance would do now, as JSON; moves nothing. Collective."""
    def rebalance_packed(
        self,
        items: List[Tuple[bytes, int]],
        positions: Optional[List[List[float]]] = None,
    ) -> Tuple[List[Union[int, bytes]], Optional[str], Optional[HetlbError]]:
        """Rebalances pickled items: ``(layout, report_json, error)``. Collective."""
    def rebalance_rows(
        self,
        rows: npt.NDArray[np.uint8],
        loads: Optional[npt.NDArray[np.uint64]] = None,
        coords: Optional[npt.NDArray[np.float64]] = None,
    ) -> Tuple[npt.NDArray[np.uint8], Optional[str], Optional[HetlbError]]:
        """Rebalances the rows of a 2-D ``uint8`` array: ``(rows, report_json, error)``.
        Collective."""
    def refuse(self, reason: str, rows: bool) -> None:
        """Refuses the next call (``rows``: of ``rebalance_rows``), because this rank's own
        arguments failed a check: the others' calls raise at once naming this rank."""
    def resolve(self) -> List[bytes]:
        """Settles a call whose outcome was in doubt; the bytes of the items put back."""
    def all_gather_values(self, values: List[float], rows: bool) -> List[List[float]]:
        """Every rank's ``values`` in rank order, timed as a call."""
        ...
    def barrier(self) -> None:
        """A timed barrier that names a rank that stopped."""
    def close(self) -> None:
        """Ends hetlb's use of the communicator. Collective; idempotent."""
