"""Type stubs of the hetlb package."""

import os
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from ._errors import (
    HetlbError as HetlbError,
    HetlbFileError as HetlbFileError,
    InvalidInputError as InvalidInputError,
    InvalidTypeError as InvalidTypeError,
    LimitError as LimitError,
    MPIError as MPIError,
    PeerError as PeerError,
    PeerTimeoutError as PeerTimeoutError,
    ScenarioError as ScenarioError,
    UnknownAlgorithmError as UnknownAlgorithmError,
)

__version__: str

Loads = Union[Sequence[int], npt.NDArray[np.integer[Any]]]

def algorithms() -> List[str]:
    """The rule names, as `hetlb balance --help` lists them."""

def algorithm_info(name: str) -> Dict[str, Any]:
    """One rule's name, family, summary, source, bound, uses_capacities, needs_hypercube."""

def has_mpi() -> bool:
    """True when this build includes the MPI Balancer."""

class BalanceResult:
    """The result of `balance`: the plan, its metrics, the JSON document of the CLI."""

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
        """The loads after (the JSON's `final`)."""
    @property
    def metrics(self) -> Dict[str, Any]:
        """The JSON's `metrics`; with a schedule also `t_comm`: {schedule: steps}."""
    @property
    def phases(self) -> List[Dict[str, Any]]:
        """Per phase or round: `dimension` and arrays `from`, `to`, `units`."""
    @property
    def rounds(self) -> int:
        """Rounds to convergence."""
    @property
    def converged(self) -> bool:
        """True when the rule reached its fixed point or ran its schedule."""
    @property
    def transmission(self) -> List[Dict[str, Any]]:
        """One entry per schedule asked for (the JSON's `transmission`)."""
    def to_json(self) -> str:
        """The document `hetlb balance --format json` prints."""
    def as_dict(self) -> Dict[str, Any]:
        """The document `hetlb balance --format json` prints, as a dict."""

def balance(
    loads: Loads,
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
    max_memory_bytes: int = ...,
) -> BalanceResult:
    """Balances `loads` with `algorithm`, as `hetlb balance`."""

def advise(
    loads: Loads,
    speeds: Union[float, Sequence[float]] = 1.0,
    *,
    algorithms: Optional[Sequence[str]] = None,
    routing: Union[str, Sequence[str]] = ...,
    topology: Optional[str] = None,
    bytes_per_unit: int = 8,
    seconds_per_message: float = 1e-5,
    seconds_per_byte: float = 1e-9,
    trigger: str = "auto",
    max_memory_bytes: int = ...,
) -> Dict[str, Any]:
    """Whether a move pays, as `hetlb advise --format json`."""

def simulate(
    scenario: Union[str, "os.PathLike[str]"],
    *,
    seed: Optional[int] = None,
    check: bool = False,
    series: bool = False,
    max_memory_bytes: int = ...,
) -> Dict[str, Any]:
    """Runs one scenario, as `hetlb simulate FILE --format json`."""

class RebalanceReport:
    """One rank's account of a rebalance."""

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
    loads_before: npt.NDArray[np.uint64]
    planned_after: npt.NDArray[np.uint64]
    loads_after: npt.NDArray[np.uint64]
    items_after_all: npt.NDArray[np.uint64]
    implausible_speeds: List[Dict[str, Any]]
    prediction: Optional[Dict[str, Any]]
    held_back: bool
    alternatives: List[Dict[str, Any]]
    routing: str
    cost_model: Dict[str, float]
    outcome: Optional[Dict[str, Any]]
    def __init__(self, fields: Dict[str, Any]) -> None: ...
    def as_dict(self) -> Dict[str, Any]:
        """Every field, the vectors as lists."""

class Balancer:
    """hetlb's peer balancer on one rank of an mpi4py communicator."""

    def __init__(
        self,
        comm: Any,
        rule: str = "cwa",
        *,
        speeds: Union[str, Sequence[float]] = "equal",
        timeout: float = 10.0,
        topology: Optional[str] = None,
        schedule: str = "phased",
        entry_timeout: Optional[float] = None,
        procs_per_group: Optional[int] = None,
        max_rounds: Optional[int] = None,
        seed: int = 0,
        lambda_: Optional[float] = None,
        window: int = 5,
        fault: Optional[str] = None,
        trigger: str = "always",
        move_cost: Tuple[float, float] = (0.0, 0.0),
        learn_cost: bool = False,
        routing: str = "paper",
        candidates: Optional[Sequence[str]] = None,
    ) -> None: ...
    @property
    def rank(self) -> int:
        """This rank."""
    @property
    def size(self) -> int:
        """The number of ranks."""
    @property
    def topology(self) -> str:
        """The ranks' network as a spec."""
    @property
    def closed(self) -> bool:
        """True once closed."""
    def record(self, units: int, seconds: float) -> None:
        """Reports `units` of work done in `seconds` (measured speeds)."""
    def speed(self) -> Optional[float]:
        """This rank's measured speed, once it has one."""
    def advise(
        self, items: List[Any], load: Optional[Callable[[Any], int]] = None
    ) -> Dict[str, Any]:
        """What `rebalance` would do now (every candidate's prediction and `choice`),
        moving nothing. Collective."""
    def rebalance(
        self, items: List[Any], load: Optional[Callable[[Any], int]] = None
    ) -> RebalanceReport:
        """Moves picklable items between ranks; `items` is changed in place. Collective."""
    def rebalance_array(
        self,
        arr: npt.NDArray[Any],
        load: Union[None, npt.NDArray[np.integer[Any]], Callable[[npt.NDArray[Any]], Any]] = None,
    ) -> Tuple[npt.NDArray[Any], RebalanceReport]:
        """Moves the rows of `arr` as bytes; returns the rows held now. Collective."""
    def resolve(self, items: List[Any]) -> None:
        """Settles a call whose outcome was in doubt."""
    def barrier(self) -> None:
        """A timed barrier that names a rank that stopped."""
    def close(self) -> None:
        """Ends hetlb's use of the communicator. Collective."""
    def __enter__(self) -> "Balancer": ...
    def __exit__(self, *exc: Any) -> None: ...
