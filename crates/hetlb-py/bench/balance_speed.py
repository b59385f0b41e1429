"""hetlb.balance on 2^20 loads against the Rust calls it makes, on the same loads.

    python bench/balance_speed.py [RUNS] [RULES]

Writes the loads to a file, runs the Rust side (hetlb-bench's example balance_call, built
with `cargo build --release -p hetlb-bench --example balance_call`), times hetlb.balance,
and prints both medians and their ratio. Nothing is asserted: timings are reported."""

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


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rules = sys.argv[2] if len(sys.argv) > 2 else "cwa,oem,dem-hetero,hybrid"
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    example = target / "release" / "examples" / "balance_call"
    loads = np.random.default_rng(1).integers(0, 1000, size=1 << 20, dtype=np.uint64)
    with tempfile.TemporaryDirectory() as d:
        path = pathlib.Path(d) / "loads.txt"
        path.write_text("\n".join(map(str, loads.tolist())) + "\n")
        out = subprocess.run(
            [str(example), str(path), str(runs), rules], check=True, capture_output=True, text=True
        ).stdout
    rust = {line.split()[0]: float(line.split()[1]) for line in out.splitlines() if line.strip()}
    print(f"{'rule':<12}{'Rust (s)':>12}{'Python (s)':>12}{'ratio':>8}")
    for rule in rules.split(","):
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            r = hetlb.balance(loads, rule)
            times.append(time.perf_counter() - t)
        assert int(r.final_loads.sum()) == int(loads.sum())
        py = statistics.median(times)
        print(f"{rule:<12}{rust[rule]:>12.4f}{py:>12.4f}{py / rust[rule]:>8.2f}")


if __name__ == "__main__":
    main()
