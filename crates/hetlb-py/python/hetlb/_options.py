"""A Balancer's options, from Python keywords to the text of the library's options table.

The table (``hetlb options`` prints it) holds every option's name, values, default, bounds
and documentation; nothing of those is repeated here. This module only says which Python
type each keyword takes and writes the value as the option's text: a bool as ``true`` or
``false``, a number as its ``repr``, a sequence comma-separated, capacities as
``fixed:C0,C1,...`` (one number for ``speeds``: this rank's own, ``own:C``). ``None`` leaves an option at its default. A keyword is the option's
name, with ``_`` after a name Python reserves (``lambda_`` for ``lambda``). An option the
table gains later is taken by its name with any of these values, without a change here.
"""

from __future__ import annotations

import keyword
import numbers
import os
from typing import Any, Dict, List, Mapping, Tuple

import numpy as np

from ._convert import capacities_list
from ._errors import InvalidTypeError

__all__ = ["option_name", "option_text", "option_pairs"]

_NUMBER = "a number"
_COUNT = "an integer"
_BOOL = "a bool"
_TEXT = "a string"
_NAMES = "a string or a sequence of strings"
_PAIR = "a pair of numbers"
_SPEEDS = "a string, this rank's own capacity, or one capacity per rank"
_ANY = "a string, a number, a bool or a sequence of them"
_PATH = "a path (a string or an os.PathLike)"

# The Python type each keyword takes (text only where the option's values are names or specs).
_KINDS: Dict[str, str] = {
    "topology": _TEXT,
    "speeds": _SPEEDS,
    "window": _COUNT,
    "schedule": _TEXT,
    "timeout": _NUMBER,
    "entry_timeout": _NUMBER,
    "procs_per_group": _COUNT,
    "max_rounds": _COUNT,
    "seed": _COUNT,
    "lambda_": _NUMBER,
    "trigger": _TEXT,
    "move_cost": _PAIR,
    "learn_cost": _BOOL,
    "routing": _TEXT,
    "candidates": _NAMES,
    "check_budget": _NUMBER,
    "count_bytes": _BOOL,
    "trace": _PATH,
    "trace_events": _COUNT,
}


def option_name(kw: str) -> str:
    """The table's name of the option the keyword ``kw`` sets (``lambda_`` -> ``lambda``)."""
    if kw.endswith("_") and keyword.iskeyword(kw[:-1]):
        return kw[:-1]
    return kw


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _is_number(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not _is_bool(v)


def _is_sequence(v: Any) -> bool:
    return isinstance(v, (list, tuple, np.ndarray))


def _scalar(v: Any) -> str:
    """A bool, a number or a string as text (``None`` when it is none of them)."""
    if _is_bool(v):
        return "true" if v else "false"
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if _is_number(v):
        return repr(float(v))
    if isinstance(v, str):
        return v
    raise TypeError


def _text(kind: str, v: Any) -> str:
    """``v`` as the text of an option of ``kind``; TypeError when it is not of that kind."""
    if kind == _NUMBER and _is_number(v):
        return _scalar(v)
    if kind == _COUNT and isinstance(v, numbers.Integral) and not _is_bool(v):
        return _scalar(v)
    if kind == _BOOL and _is_bool(v):
        return _scalar(v)
    if kind in (_TEXT, _NAMES, _SPEEDS, _ANY, _PATH) and isinstance(v, str):
        return v
    if kind == _PATH and isinstance(v, os.PathLike):
        return os.fsdecode(os.fspath(v))
    if kind == _NAMES and _is_sequence(v) and all(isinstance(x, str) for x in v):
        return ",".join(v)
    if kind == _PAIR and _is_sequence(v) and len(v) == 2 and all(_is_number(x) for x in v):
        return ",".join(_scalar(x) for x in v)
    if kind == _ANY and _is_sequence(v):
        return ",".join(_scalar(x) for x in v)
    if kind == _ANY:
        return _scalar(v)
    raise TypeError


def option_text(kw: str, value: Any) -> str:
    """The text of the value ``value`` given for the keyword ``kw``.

    Raises:
        InvalidTypeError: ``value`` is not of the type the keyword takes (naming it).
    """
    kind = _KINDS.get(kw, _ANY)
    if kind == _SPEEDS and _is_number(value):
        # This rank's own capacity: the ranks' values are gathered at each call.
        return "own:" + _scalar(value)
    if kind == _SPEEDS and not isinstance(value, str):
        caps = capacities_list(value, kw) or []
        return "fixed:" + ",".join(_scalar(c) for c in caps)
    try:
        return _text(kind, value)
    except TypeError:
        raise InvalidTypeError(f"{kw}: expected {kind}, not {type(value).__name__}") from None


def option_pairs(options: Mapping[str, Any]) -> List[Tuple[str, str]]:
    """``(name, text)`` of every option given (not ``None``), in order, for the native
    balancer, which sets them through the library's table."""
    return [(option_name(k), option_text(k, v)) for k, v in options.items() if v is not None]
