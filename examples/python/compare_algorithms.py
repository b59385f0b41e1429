"""Compares hetlb's rules on one skewed load vector with hetlb.balance, and plots the final
loads and each rule's cost (matplotlib; skipped with a note when it is missing).

    python examples/python/compare_algorithms.py [OUTPUT.png]
"""

from __future__ import annotations

import sys

import numpy as np

import hetlb


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else "compare_algorithms.png"
    rng = np.random.default_rng(7)
    loads = rng.zipf(1.6, size=64).astype(np.uint64) * 10
    caps = rng.choice([1.0, 2.0, 4.0], size=64)
    rows = []
    for name in hetlb.algorithms():
        kwargs = {"topology": "hypercube:6"}
        if hetlb.algorithm_info(name)["uses_capacities"]:
            kwargs["capacities"] = caps
        r = hetlb.balance(loads, name, **kwargs)
        m = r.metrics
        rows.append((name, r, m))
        print(
            f"{name:<16} max diff {m['max_difference']:>6}  weighted imbalance "
            f"{m['weighted_imbalance']:>7.3f}  units moved {m['units_moved']:>7}  "
            f"messages {m['messages']:>6}  rounds {r.rounds:>5}"
        )
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no plot (pip install matplotlib)")
        return
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.5))
    left.plot(loads, color="grey", lw=1, label="initial")
    for name, r, _ in rows[:7]:
        left.plot(r.final_loads, lw=1, label=name)
    left.set_xlabel("node")
    left.set_ylabel("load (units)")
    left.set_title("final loads of the hypercube rules")
    left.legend(fontsize=7)
    names = [n for n, _, _ in rows]
    right.bar(names, [m["units_moved"] for _, _, m in rows])
    right.set_ylabel("units moved")
    right.set_title("cost of each rule")
    right.tick_params(axis="x", rotation=60, labelsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
