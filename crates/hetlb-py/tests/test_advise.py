"""`hetlb.advise` against `hetlb advise --format json`: the same document for the same
arguments, and every bad argument named."""

from __future__ import annotations

import pytest

import hetlb


@pytest.mark.parametrize(
    "loads, speeds, kwargs, flags",
    [
        ([900, 0, 0, 0, 0, 0, 0, 0], 100.0, {"algorithms": ["cwa", "dishet"], "seconds_per_message": 1e-3},
         ["--loads", "900,0,0,0,0,0,0,0", "--speeds", "100", "--algorithm", "cwa,dishet", "--seconds-per-message", "1e-3"]),
        ([40, 10, 10, 0], [1.0, 2.0, 2.0, 4.0], {"algorithms": ["cwa", "dem-hetero"], "trigger": "auto:5:2"},
         ["--loads", "40,10,10,0", "--speeds", "1,2,2,4", "--algorithm", "cwa,dem-hetero", "--trigger", "auto:5:2"]),
        ([5, 5, 5, 5], 1.0, {}, ["--loads", "5,5,5,5", "--speeds", "1"]),
        ([7, 0, 3, 0, 9, 1], [1.0, 1.0, 2.0, 2.0, 1.0, 3.0],
         {"topology": "ring:6", "routing": "direct", "bytes_per_unit": 64},
         ["--loads", "7,0,3,0,9,1", "--speeds", "1,1,2,2,1,3", "--topology", "ring:6", "--routing", "direct", "--bytes-per-unit", "64"]),
    ],
)
def test_advise_equals_the_cli(cli, loads, speeds, kwargs, flags):
    ours = hetlb.advise(loads, speeds, **kwargs)
    theirs = cli("advise", *flags)
    assert ours == theirs


def test_advise_picks_nothing_on_a_balanced_vector():
    a = hetlb.advise([5, 5, 5, 5], 1.0, algorithms=["cwa"])
    assert a["choice"] is None
    assert all(not c["moves"] for c in a["candidates"])


@pytest.mark.parametrize(
    "kwargs, error, needle",
    [
        ({"speeds": [1.0, 2.0, 3.0]}, hetlb.InvalidInputError, "speeds: 3 values for 4 loads"),
        ({"speeds": [1.0, 0.0, 1.0, 1.0]}, hetlb.InvalidInputError, "value 2"),
        ({"algorithms": ["nope"]}, hetlb.UnknownAlgorithmError, "algorithms"),
        ({"routing": "sideways"}, hetlb.InvalidInputError, "routing"),
        ({"trigger": "soon"}, hetlb.InvalidInputError, "trigger"),
        ({"seconds_per_message": -1.0}, hetlb.InvalidInputError, "seconds_per_message"),
        ({"seconds_per_byte": "x"}, hetlb.InvalidTypeError, "seconds_per_byte"),
        ({"max_memory_bytes": 10}, hetlb.LimitError, "max_memory_bytes"),
    ],
)
def test_bad_arguments_are_named(kwargs, error, needle):
    args = {"speeds": 1.0, **kwargs}
    speeds = args.pop("speeds")
    with pytest.raises(error, match=needle):
        hetlb.advise([8, 0, 0, 0], speeds, **args)
