#!/usr/bin/env bash
# Hostile scenario files through `hetlb run scenario` and `hetlb simulate`, each under
# `ulimit -v` and a time limit: the full run of crates/hetlb-cli/tests/commands/fuzz_run_scenario.rs,
# whose seeded sample of 30 files `cargo test` runs (300 in CI). Every run must end with exit 0 or one
# `error: ...` line with exit 1 or 2: no abort, panic, failed allocation or hang.
#
# Usage: scripts/fuzz-run-scenario.sh [COUNT] [SEED]   (defaults 1000 2024)
# Environment: HETLB_FUZZ_ULIMIT_KIB (default 2097152, 2 GiB), HETLB_FUZZ_SECONDS (default
# 120); the files of the failures are kept under the system's temporary directory.
set -euo pipefail

cd "$(dirname "$0")/.."
HETLB_FUZZ_SCENARIOS=${1:-1000} HETLB_FUZZ_SEED=${2:-2024} HETLB_FUZZ_TALLY=1 \
    cargo test --release -p hetlb-cli --test commands fuzz_run_scenario:: -- --nocapture
