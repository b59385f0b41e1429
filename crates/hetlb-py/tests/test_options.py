"""A Balancer's keywords become the text of the library's options table in one place
(hetlb._options); no default or bound is checked in Python. Needs no MPI."""

from __future__ import annotations

import numpy as np
import pytest

import hetlb
from hetlb._options import option_name, option_pairs, option_text


def test_keywords_become_the_tables_text():
    pairs = option_pairs(
        {
            "speeds": [1, 2.5, np.float64(4)],
            "timeout": 2.5,
            "entry_timeout": 7,
            "window": np.int64(3),
            "lambda_": 0.25,
            "move_cost": (1e-5, 0),
            "learn_cost": True,
            "count_bytes": np.bool_(False),
            "candidates": ["cwa", "dishet"],
            "topology": None,
            "schedule": "pipeline",
        }
    )
    assert pairs == [
        ("speeds", "fixed:1.0,2.5,4.0"),
        ("timeout", "2.5"),
        ("entry_timeout", "7"),
        ("window", "3"),
        ("lambda", "0.25"),
        ("move_cost", "1e-05,0"),
        ("learn_cost", "true"),
        ("count_bytes", "false"),
        ("candidates", "cwa,dishet"),
        ("schedule", "pipeline"),
    ]
    assert option_text("speeds", "measured:3") == "measured:3"
    assert option_text("speeds", 2.5) == "own:2.5"
    assert option_text("speeds", 3) == "own:3"
    assert option_text("candidates", "cwa,oem") == "cwa,oem"


def test_a_trace_takes_a_path():
    import pathlib

    assert option_pairs({"trace": pathlib.Path("out") / "run.json", "trace_events": 5000}) == [
        ("trace", "out/run.json"),
        ("trace_events", "5000"),
    ]
    assert option_text("trace", "t.json") == "t.json"
    with pytest.raises(hetlb.InvalidTypeError, match="trace: expected a path"):
        option_text("trace", 3)


def test_a_reserved_name_takes_an_underscore():
    assert option_name("lambda_") == "lambda"
    assert option_name("max_rounds") == "max_rounds"
    assert option_name("seed_") == "seed_"


def test_an_option_the_table_gains_later_is_passed_by_its_name():
    assert option_pairs({"future_ratio": 0.5}) == [("future_ratio", "0.5")]
    assert option_pairs({"future_list": [1, "a", False]}) == [("future_list", "1,a,false")]
    with pytest.raises(hetlb.InvalidTypeError, match="^future_map:"):
        option_pairs({"future_map": {"a": 1}})


@pytest.mark.parametrize(
    "kw,value",
    [
        ("timeout", "5"),
        ("timeout", True),
        ("window", 2.5),
        ("learn_cost", 1),
        ("routing", 3),
        ("move_cost", 3),
        ("move_cost", (1.0, 2.0, 3.0)),
        ("candidates", ["cwa", 1]),
        ("speeds", True),
        ("speeds", [1.0, "2"]),
    ],
)
def test_a_value_of_the_wrong_type_names_its_keyword(kw, value):
    with pytest.raises(hetlb.InvalidTypeError, match=f"^{kw}:"):
        option_text(kw, value)


def test_bounds_are_the_tables():
    # Out of bounds is not a type error: the text goes to the library, which refuses it.
    assert option_text("timeout", -1) == "-1"
    assert option_text("window", 0) == "0"
    assert option_text("lambda_", float("inf")) == "inf"
