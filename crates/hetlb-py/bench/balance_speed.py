"""hetlb.balance on 2^20 loads against the Rust calls it makes, on the same loads.

    python bench/balance_speed.py [RUNS] [RULES]

Writes the loads to a file, then alternates blocks of 3 runs of the Rust side (hetlb-bench's example
balance_call, built with `cargo build --release -p hetlb-bench --example balance_call`) and
of hetlb.balance, and prints both medians and their ratio. Nothing is asserted: timings
are reported."""

from __future__ import annotations

import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import hetlb

ROOT = pathlib.Path(__file__).resolve().parents[3]
BLOCK = 3


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rules = sys.argv[2] if len(sys.argv) > 2 else "cwa,oem,dem-hetero,hybrid"
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    example = target / "release" / "examples" / "balance_call"
    loads = np.random.default_rng(1).integers(0, 1000, size=1 << 20, dtype=np.uint64)
    rust: dict = {rule: [] for rule in rules.split(",")}
    python: dict = {rule: [] for rule in rules.split(",")}
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "loads.txt"
        path.write_text("\n".join(map(str, loads.tolist())) + "\n")
        for rule in rules.split(","):
            hetlb.balance(loads, rule)  # not counted, as the Rust side's first run
        # Blocks of BLOCK runs of each side in turn (each side keeps its process warm within a
        # block), so that a burst of load from elsewhere hits both.
        for _ in range(max(1, runs // BLOCK)):
            out = subprocess.run(
                [str(example), str(path), str(BLOCK), rules], check=True, capture_output=True, text=True
            ).stdout
            for line in out.splitlines():
                words = line.split()
                rust[words[0]].extend(float(w) for w in words[2 : 2 + BLOCK])
            for rule in rules.split(","):
                for _ in range(BLOCK):
                    t = time.perf_counter()
                    r = hetlb.balance(loads, rule)
                    python[rule].append(time.perf_counter() - t)
                    assert int(r.final_loads.sum()) == int(loads.sum())
    print(f"{'rule':<12}{'Rust (s)':>12}{'Python (s)':>12}{'ratio':>8}")
    for rule in rules.split(","):
        a, b = statistics.median(rust[rule]), statistics.median(python[rule])
        print(f"{rule:<12}{a:>12.4f}{b:>12.4f}{b / a:>8.2f}")


if __name__ == "__main__":
    main()
