"""Shared fixtures: the repository's root and the `hetlb` binary the package is compared
with (HETLB_BIN, or target/release/hetlb under CARGO_TARGET_DIR or the repository)."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]


def _binary() -> pathlib.Path | None:
    candidates = []
    if os.environ.get("HETLB_BIN"):
        candidates.append(pathlib.Path(os.environ["HETLB_BIN"]))
    if os.environ.get("CARGO_TARGET_DIR"):
        candidates.append(pathlib.Path(os.environ["CARGO_TARGET_DIR"]) / "release" / "hetlb")
    candidates.append(ROOT / "target" / "release" / "hetlb")
    for c in candidates:
        if c.is_file():
            return c
    return None


@pytest.fixture(scope="session")
def root() -> pathlib.Path:
    """The repository's root (examples/ lives there)."""
    return ROOT


@pytest.fixture(scope="session")
def cli():
    """Runs the `hetlb` binary and returns its JSON output parsed."""
    binary = _binary()
    if binary is None:
        pytest.fail(
            "the hetlb binary is missing: cargo build --release -p hetlb-cli (or set HETLB_BIN)"
        )

    def run(*args: str) -> dict:
        out = subprocess.run(
            [str(binary), *args, "--format", "json"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        )
        return json.loads(out.stdout)

    return run
