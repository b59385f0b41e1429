"""Argument checks shared by the package's functions: integer load vectors and capacities
become contiguous NumPy arrays, or a clear error names the argument and the value."""

from __future__ import annotations

import math
import numbers
from typing import Any, List, Optional

import numpy as np

from ._errors import InvalidInputError, InvalidTypeError

_U64_MAX = (1 << 64) - 1


def _name(value: Any) -> str:
    return type(value).__name__


def loads_array(values: Any, what: str = "loads") -> np.ndarray:
    """``values`` (a sequence of non-negative integers, or an integer NumPy array) as a
    contiguous ``uint64`` array; refuses negative, fractional and too large values, and
    non-integer types, naming the first bad value (counted from 1, as the CLI)."""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InvalidTypeError(
            f"{what}: expected a sequence of integers or an integer NumPy array, "
            f"not {_name(values)}"
        )
    arr = values if isinstance(values, np.ndarray) else None
    if arr is None:
        try:
            arr = np.asarray(values)
        except (ValueError, TypeError, OverflowError) as e:
            raise InvalidTypeError(f"{what}: not a sequence of integers ({e})") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{what}: expected one dimension, not {arr.ndim}")
    if arr.size == 0:
        raise InvalidInputError(f"{what}: no values given")
    kind = arr.dtype.kind
    if kind == "u":
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if kind == "i":
        negative = np.flatnonzero(arr < 0)
        if negative.size:
            i = int(negative[0])
            raise InvalidInputError(f"{what}: value {i + 1} ({arr[i]}) is negative")
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if kind == "O" or (kind not in "iu" and not isinstance(values, np.ndarray)):
        # Python ints beyond int64 (NumPy makes them objects or floats), or a mixed list:
        # one value at a time, exactly.
        items = values.tolist() if isinstance(values, np.ndarray) else list(values)
        out = np.empty(len(items), dtype=np.uint64)
        for i, v in enumerate(items):
            out[i] = _one_load(v, i, what)
        return out
    if kind == "f":
        # Whole-valued floats are loads; the first value that is not one is named.
        for i, v in enumerate(arr.tolist()):
            _one_load(v, i, what)
        return np.ascontiguousarray(arr, dtype=np.uint64)
    if kind == "b":
        raise InvalidTypeError(f"{what}: expected integers, not booleans")
    raise InvalidTypeError(f"{what}: expected integers, not {arr.dtype}")


def _one_load(v: Any, i: int, what: str) -> int:
    if isinstance(v, (bool, np.bool_)):
        raise InvalidTypeError(f"{what}: value {i + 1} ({v!r}) is not an integer")
    if not isinstance(v, numbers.Integral):
        if isinstance(v, numbers.Real):
            return _whole(float(v), f"value {i + 1}", what)
        raise InvalidTypeError(f"{what}: value {i + 1} ({v!r}) is not an integer")
    n = int(v)
    return _in_range(n, f"value {i + 1} ({n})", what)


def _in_range(n: int, label: str, what: str) -> int:
    """``n`` when it is a load (from 0 to 2^64 - 1); ``label`` names it in the error."""
    if n < 0:
        raise InvalidInputError(f"{what}: {label} is negative")
    if n > _U64_MAX:
        raise InvalidInputError(f"{what}: {label} is larger than {_U64_MAX}")
    return n


def _whole(v: float, label: str, what: str) -> int:
    """A float that is a whole number of units (``3.0``), as an int; otherwise the error
    that says how to give fractional costs."""
    if v < 0:
        raise InvalidInputError(f"{what}: {label} ({v}) is negative")
    if not math.isfinite(v) or not v.is_integer():
        raise InvalidInputError(
            f"{what}: {label} ({v}) is not a whole number of units; for costs in seconds, "
            f"make the balancer with quantum=SECONDS_PER_UNIT"
        )
    return _in_range(int(v), f"{label} ({v})", what)


def one_load(v: Any, what: str = "load") -> int:
    """One item's load: a non-negative integer below 2^64, or a float of a whole value."""
    if isinstance(v, (bool, np.bool_)):
        raise InvalidTypeError(f"{what}: {v!r} is not an integer")
    if isinstance(v, numbers.Integral):
        n = int(v)
        return _in_range(n, str(n), what)
    if isinstance(v, numbers.Real):
        return _whole(float(v), repr(v), what)
    raise InvalidTypeError(f"{what}: {v!r} is not an integer")


def quantised(v: Any, quantum: float, what: str = "load") -> int:
    """A cost ``v`` (seconds, or any unit) in units of ``quantum``: rounded to the nearest
    whole number of units, halves to even (Python's ``round``); a cost below half a quantum
    is 0 units."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise InvalidTypeError(f"{what}: {v!r} is not a number")
    x = float(v)
    if not math.isfinite(x) or x < 0:
        raise InvalidInputError(f"{what}: {v!r} is not a finite, non-negative cost")
    return _in_range(round(x / quantum), f"{v!r} / quantum {quantum}", what)


def costs_array(values: Any, what: str = "load") -> np.ndarray:
    """Costs as a ``float64`` array: one dimension, every value finite and non-negative."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (ValueError, TypeError) as e:
        raise InvalidTypeError(f"{what}: not a sequence of numbers ({e})") from None
    if arr.ndim != 1:
        raise InvalidInputError(f"{what}: expected one dimension, not {arr.ndim}")
    bad = np.flatnonzero(~np.isfinite(arr) | (arr < 0))
    if bad.size:
        i = int(bad[0])
        raise InvalidInputError(f"{what}: value {i + 1} ({arr[i]}) is not a finite, non-negative cost")
    return arr


def units_of(costs: np.ndarray, quantum: float, what: str = "load") -> np.ndarray:
    """Checked costs (:func:`costs_array`) in units of ``quantum``: each rounded to the
    nearest whole unit, halves to even; a ``uint64`` array."""
    units = np.rint(costs / quantum)
    if units.size and units.max() > _U64_MAX:
        raise InvalidInputError(f"{what}: costs over quantum {quantum} exceed {_U64_MAX} units")
    return np.ascontiguousarray(units, dtype=np.uint64)


def quantised_array(values: Any, quantum: float, what: str = "load") -> np.ndarray:
    """Costs as units of ``quantum`` (see :func:`quantised`), as a ``uint64`` array."""
    return units_of(costs_array(values, what), quantum, what)


#: ``quantum="auto"``: a mean item weighs this many units, so that rounding each item to a
#: whole unit changes a rank's total by at most 1/2000 of a mean item per item.
AUTO_UNITS_PER_ITEM = 1000.0


def auto_quantum(total: float, count: float) -> float:
    """The quantum ``"auto"`` takes from the whole group's total cost and item count: the
    mean item's cost over :data:`AUTO_UNITS_PER_ITEM`; 1.0 when there is no cost at all."""
    if count <= 0 or not total > 0 or not math.isfinite(total):
        return 1.0
    return total / (count * AUTO_UNITS_PER_ITEM)


def capacities_list(values: Any, what: str = "capacities") -> Optional[List[float]]:
    """``values`` as a list of floats (checked positive and finite by the library)."""
    if values is None:
        return None
    if isinstance(values, (str, bytes)) or not hasattr(values, "__len__"):
        raise InvalidTypeError(
            f"{what}: expected a sequence of numbers, not {_name(values)}"
        )
    out: List[float] = []
    for i, v in enumerate(np.asarray(values).ravel().tolist() if isinstance(values, np.ndarray) else values):
        if isinstance(v, bool) or not isinstance(v, numbers.Real):
            raise InvalidTypeError(f"{what}: value {i + 1} ({v!r}) is not a number")
        out.append(float(v))
    return out


def optional_int(v: Any, what: str) -> Optional[int]:
    """``None``, or a non-negative integer."""
    if v is None:
        return None
    return one_load(v, what)


def names_list(values: Any, what: str) -> List[str]:
    """Names given as one comma-separated string or as a sequence of strings, as a list."""
    if isinstance(values, str):
        return [v for v in values.split(",") if v]
    if isinstance(values, bytes) or not hasattr(values, "__iter__"):
        raise InvalidTypeError(f"{what}: expected a string or strings, not {_name(values)}")
    out = list(values)
    for v in out:
        if not isinstance(v, str):
            raise InvalidTypeError(f"{what}: expected a string, not {_name(v)}")
    return out
