#!/usr/bin/env python3
"""Open every kind of `hetlb report` page in headless Chromium and check it rendered.

For each kind of input (a trace of `hetlb run iterative`, a trace of `hetlb simulate`,
the JSON of `hetlb run iterative --format json`, the JSON of `hetlb run scenario
--compare --format json`, and a synthetic trace of 1,024 ranks) the script makes the
report, opens it from disk in Debian's `chromium` driven by Playwright with every network
request refused, and fails on any console error or page error, any request that leaves the
file, or an expected chart that is missing, empty or of no size. It saves a screenshot of
each page.

Usage: scripts/browser-check.py [--hetlb target/release/hetlb] [--out DIR]
                                [--chromium /usr/bin/chromium] [--docs docs/img]
Needs: chromium (apt-get install chromium) and playwright (pip install playwright).
"""

import argparse
import json
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO, Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
# Relative to ROOT, where every command runs (the reports name it as given).
SCENARIO = Path("examples") / "scenarios" / "mirtaheri-compensated.toml"
SMALL = ["--procs", "8", "--slowdown", "1,1,3,3,3,3,3,3", "--iterations", "30", "--cost", "300",
         "--items", "4096", "--every", "3"]

# Each kind: the charts that must render, each with at least this many SVG elements.
KINDS = {
    "trace-run": ["chart-imbalance", "chart-load", "chart-heat", "chart-utilisation",
                  "chart-matrix", "chart-arrows", "chart-decisions"],
    "trace-sim": ["chart-imbalance", "chart-load", "chart-heat", "chart-matrix", "chart-arrows"],
    "run-json": ["chart-imbalance", "chart-load", "chart-heat", "chart-decisions",
                 "chart-iterations"],
    "scenario-json": ["chart-scenario"],
    "trace-1024": ["chart-imbalance", "chart-load", "chart-heat", "chart-utilisation",
                   "chart-matrix", "chart-arrows"],
}
MIN_ELEMENTS = 8


def hetlb(binary: str, *args: str, stdout: Optional[IO[str]] = None) -> None:
    result = subprocess.run([binary, *args], stdout=stdout or subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, check=False, cwd=ROOT)
    if result.returncode != 0:
        sys.exit(f"error: hetlb {' '.join(args)} failed: {result.stderr.strip()}")


def synthetic_trace(path: Path, ranks: int = 1024, calls: int = 12) -> None:
    """A trace of `ranks` ranks as the balancer writes it: steps, calls, loads, flows."""
    rng = random.Random(7)
    events: List[Dict[str, Any]] = [{"name": "process_name", "ph": "M", "ts": 0, "pid": ranks, "tid": 0,
               "args": {"name": "group"}}]
    for r in range(ranks):
        events.append({"name": "process_name", "ph": "M", "ts": 0, "pid": r, "tid": 0,
                       "args": {"name": f"rank {r}"}})
    loads = [rng.randint(50, 150) * (3 if r < ranks // 4 else 1) for r in range(ranks)]
    flow = 0
    for c in range(calls):
        t0 = c * 10_000.0
        for r in range(ranks):
            events.append({"name": "compute", "ph": "X", "ts": t0, "dur": loads[r] * 20.0,
                           "pid": r, "tid": 1, "args": {"units": loads[r]}})
            events.append({"name": "load", "ph": "C", "ts": t0, "pid": r, "tid": 0,
                           "args": {"units": loads[r]}})
        mean = sum(loads) / ranks
        events.append({"name": "imbalance", "ph": "C", "ts": t0, "pid": ranks, "tid": 0,
                       "args": {"max/mean": max(loads) / mean}})
        for r in range(ranks):
            events.append({"name": "rebalance", "ph": "X", "ts": t0 + 6000, "dur": 3000,
                           "pid": r, "tid": 0})
            partner = r ^ (1 << (c % 10))
            if partner < ranks and loads[r] > loads[partner] + 1:
                units = (loads[r] - loads[partner]) // 2
                loads[r] -= units
                loads[partner] += units
                args = {"from": r, "to": partner, "units": units, "bytes": units * 64}
                events.append({"name": "transfer", "cat": "move", "ph": "s", "ts": t0 + 6500,
                               "pid": r, "tid": 0, "id": flow, "args": args})
                events.append({"name": "transfer", "cat": "move", "ph": "f", "ts": t0 + 8500,
                               "pid": partner, "tid": 0, "id": flow, "bp": "e", "args": args})
                flow += 1
    doc = {"traceEvents": events, "displayTimeUnit": "ms",
           "otherData": {"producer": "browser-check (synthetic)", "ranks": ranks}}
    path.write_text(json.dumps(doc))


def make_inputs(binary: str, work: Path) -> Dict[str, Path]:
    inputs: Dict[str, Path] = {}
    inputs["trace-run"] = work / "trace-run.json"
    hetlb(binary, "run", "iterative", *SMALL, "--algorithm", "cwa", "--trigger", "auto:2:1",
          "--trace", str(inputs["trace-run"]))
    inputs["trace-sim"] = work / "trace-sim.json"
    hetlb(binary, "simulate", str(SCENARIO), "--trace", str(inputs["trace-sim"]))
    inputs["run-json"] = work / "run.json"
    with open(inputs["run-json"], "w") as out:
        hetlb(binary, "run", "iterative", *SMALL, "--algorithm", "cwa,dishet,none",
              "--format", "json", stdout=out)
    inputs["scenario-json"] = work / "scenario.json"
    with open(inputs["scenario-json"], "w") as out:
        hetlb(binary, "run", "scenario", str(SCENARIO), "--compare", "--target-seconds", "1",
              "--format", "json", stdout=out)
    inputs["trace-1024"] = work / "trace-1024.json"
    synthetic_trace(inputs["trace-1024"])
    return inputs


def check_page(browser: Any, kind: str, html: Path, shot: Path) -> List[str]:
    """The failures of one page (empty when it rendered)."""
    failures: List[str] = []
    page = browser.new_page(viewport={"width": 1280, "height": 900})

    def refuse(route: Any) -> None:
        if not route.request.url.startswith("file://"):
            failures.append(f"{kind}: a request left the file: {route.request.url}")
            route.abort()
        else:
            route.continue_()

    page.route("**/*", refuse)
    def console(message: Any) -> None:
        if message.type == "error":
            failures.append(f"{kind}: console error: {message.text}")

    page.on("console", console)
    page.on("pageerror", lambda e: failures.append(f"{kind}: page error: {e}"))
    page.goto(html.resolve().as_uri(), wait_until="load")
    page.wait_for_timeout(300)
    for chart in KINDS[kind]:
        found = page.evaluate(
            """(id) => {
                const box = document.getElementById(id);
                if (!box) return {missing: true};
                const svg = box.querySelector('svg');
                const r = (svg || box).getBoundingClientRect();
                const section = box.closest('section');
                return {missing: false, svg: !!svg, width: r.width, height: r.height,
                        elements: svg ? svg.querySelectorAll('*').length : 0,
                        hidden: section ? section.classList.contains('hidden') : false};
            }""", chart)
        if found["missing"]:
            failures.append(f"{kind}: #{chart} is missing")
        elif found["hidden"] or not found["svg"]:
            failures.append(f"{kind}: #{chart} drew nothing")
        elif found["width"] < 100 or found["height"] < 50:
            failures.append(f"{kind}: #{chart} is {found['width']}x{found['height']} px")
        elif found["elements"] < MIN_ELEMENTS:
            failures.append(f"{kind}: #{chart} has {found['elements']} elements")
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    return failures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hetlb", default=str(ROOT / "target" / "release" / "hetlb"))
    parser.add_argument("--out", default=None, help="where the pages and screenshots go")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--docs", default=None, help="also copy the screenshots here")
    args = parser.parse_args()
    args.hetlb = str(Path(args.hetlb).resolve())
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sys.exit("error: playwright is not installed (pip install playwright)")
    if not Path(args.chromium).exists():
        sys.exit(f"error: no chromium at {args.chromium} (apt-get install chromium)")
    out = Path(args.out or tempfile.mkdtemp(prefix="hetlb-browser-")).resolve()
    out.mkdir(parents=True, exist_ok=True)
    inputs = make_inputs(args.hetlb, out)
    pages: Dict[str, Path] = {}
    for kind, path in inputs.items():
        html = out / f"report-{kind}.html"
        hetlb(args.hetlb, "report", str(path), "-o", str(html))
        pages[kind] = html
    failures: List[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium,
                                    args=["--no-sandbox", "--disable-gpu"])
        for kind, html in pages.items():
            shot = out / f"report-{kind}.png"
            failures += check_page(browser, kind, html, shot)
            if args.docs:
                Path(args.docs).mkdir(parents=True, exist_ok=True)
                shutil.copy(shot, Path(args.docs) / shot.name)
        browser.close()
    for f in failures:
        print(f"error: {f}", file=sys.stderr)
    if failures:
        sys.exit(1)
    print(f"browser check: {len(pages)} reports rendered; pages and screenshots in {out}")


if __name__ == "__main__":
    main()
