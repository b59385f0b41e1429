"""hetlb.simulate equals `hetlb simulate FILE --format json` on every example scenario."""

from __future__ import annotations

import pathlib

import pytest

import hetlb

SCENARIOS = sorted((pathlib.Path(__file__).resolve().parents[3] / "examples" / "scenarios").glob("*.toml"))


def test_there_are_scenarios():
    assert len(SCENARIOS) >= 6


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_equals_the_cli(cli, path):
    doc = cli("simulate", str(path))
    assert hetlb.simulate(path) == doc
    assert hetlb.simulate(str(path)) == doc


@pytest.mark.parametrize("path", SCENARIOS[:2], ids=lambda p: p.stem)
def test_a_seed_equals_the_cli(cli, path):
    assert hetlb.simulate(path, seed=7) == cli("simulate", str(path), "--seed", "7")


def test_text_equals_the_file():
    path = next(p for p in SCENARIOS if p.stem == "mirtaheri-balanced")
    assert hetlb.simulate(path.read_text()) == hetlb.simulate(path)


def test_series_are_kept_on_request(cli):
    path = next(p for p in SCENARIOS if p.stem == "mirtaheri-balanced")
    doc = cli("simulate", str(path), "--series")
    assert hetlb.simulate(path, series=True) == doc
