"""The exceptions hetlb raises. Every one is a :class:`HetlbError`; most also derive from
the built-in class that fits, so ``except ValueError`` catches bad input as usual."""

from __future__ import annotations

from typing import Any, Optional

__all__ = [
    "HetlbError",
    "InvalidInputError",
    "InvalidTypeError",
    "UnknownAlgorithmError",
    "ScenarioError",
    "HetlbFileError",
    "LimitError",
    "MPIError",
    "PeerError",
    "PeerTimeoutError",
]


class HetlbError(Exception):
    """Base class of every hetlb error. The message is the one the ``hetlb`` command would
    print, with the argument it is about first (``loads: value 3 (-4) is negative``)."""


class InvalidInputError(HetlbError, ValueError):
    """A value the library refuses: negative loads, mismatched lengths, a bad topology or
    option. Nothing was computed or moved."""


class InvalidTypeError(HetlbError, TypeError):
    """An argument of the wrong type (a float load, a string where a sequence belongs)."""


class UnknownAlgorithmError(InvalidInputError):
    """A rule name that is not one of :func:`hetlb.algorithms`."""


class ScenarioError(HetlbError, ValueError):
    """A simulator scenario that does not parse or validate; the message names the field
    and the line."""


class HetlbFileError(HetlbError, OSError):
    """A file (scenario, topology) that cannot be read."""


class LimitError(HetlbError, MemoryError):
    """A run that would need more memory than ``max_memory_bytes`` allows; refused before
    anything is allocated."""


class MPIError(HetlbError, RuntimeError):
    """MPI cannot be used: this build has no MPI, mpi4py uses another MPI library than the
    one hetlb is linked to, the communicator is null (freed) or MPI is finalised, or the
    balancer is closed."""


class PeerError(HetlbError):
    """A collective rebalance failed.

    Attributes:
        failed_rank: the rank that failed or stopped the call, when known.
        holding: what this rank holds now: ``"before"`` (exactly the items it held before
            the call; the call was rolled back on every rank) or ``"in_doubt"`` (the items
            the move involves are kept aside until :meth:`hetlb.Balancer.resolve`).
        items_aside: items kept aside (``"in_doubt"`` only).
        held: after :meth:`hetlb.Balancer.rebalance_array` in doubt, the rows this rank
            holds (``None`` otherwise).
    """

    held: Optional[Any] = None

    def __init__(
        self,
        message: str,
        failed_rank: Optional[int] = None,
        holding: str = "before",
        items_aside: int = 0,
    ) -> None:
        super().__init__(message)
        self.failed_rank = failed_rank
        self.holding = holding
        self.items_aside = items_aside


class PeerTimeoutError(PeerError, TimeoutError):
    """A peer stopped answering for longer than the balancer's timeout."""
