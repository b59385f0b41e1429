#!/usr/bin/env bash
# Runs one scenario in hetlb's simulator and in SimGrid, and prints both speeds side by side.
#
# Scenario: N hosts, each executing K tasks one after another with exponential service
# times of mean 1 s; no communication and no balancing (the common ground of both
# simulators). Events counted: the N*K task completions.
#
# SimGrid is not a dependency of hetlb: this script installs Debian's python3-simgrid and
# libsimgrid-dev with apt-get (root needed) and runs the same scenario through SimGrid's
# C++ API (compiled here with g++) and through its Python binding, which forces one thread
# per actor, so it runs on a smaller N.
#
# Usage: scripts/simgrid-compare.sh [N] [K] [N_PYTHON]   (defaults 10000 100 1000)
set -euo pipefail

N=${1:-10000}
K=${2:-100}
N_PY=${3:-1000}
SEED=1
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if ! dpkg -s python3-simgrid libsimgrid-dev >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-simgrid libsimgrid-dev g++ >/dev/null
fi

cargo build --release -q -p hetlb-cli --manifest-path "$ROOT/Cargo.toml"
HETLB="$ROOT/target/release/hetlb"

scenario() { # N K
    cat <<TOML
name = "simgrid-equivalent"
seed = $SEED
[nodes]
count = $1
rate = 1.0
service = "exponential"
initial = $2
[topology]
kind = "ring"
[policy]
kind = "none"
[output]
series = false
TOML
}

hetlb_run() { # N K
    scenario "$1" "$2" >"$WORK/s.toml"
    local start end
    start=$(date +%s.%N)
    "$HETLB" simulate "$WORK/s.toml" --format json >"$WORK/r.json"
    end=$(date +%s.%N)
    /usr/bin/python3 - "$WORK/r.json" "$start" "$end" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"hetlb hosts={sys.argv[4]} tasks={r['executed']} sim_time={r['makespan']:.3f} "
      f"wall={wall:.3f} events={r['events']} events_per_second={r['events'] / wall:.0f}")
PY
}

g++ -O2 -std=c++17 -o "$WORK/simgrid_equivalent" "$HERE/simgrid_equivalent.cpp" -lsimgrid

echo "== $N hosts x $K tasks =="
hetlb_run "$N" "$K"
"$WORK/simgrid_equivalent" "$N" "$K" "$SEED"
echo "== $N_PY hosts x 10 tasks (SimGrid's Python binding: one thread per actor) =="
hetlb_run "$N_PY" 10
/usr/bin/python3 "$HERE/simgrid_equivalent.py" "$N_PY" 10 "$SEED" 2>/dev/null
