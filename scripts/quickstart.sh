#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build (Release), run the default
# scenario on a synthetic workload the repo generates itself, and plot the results.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
bash scripts/setup.sh
bash scripts/build.sh "$ROOT/build" Release >/dev/null
OUT="${1:-$ROOT/results/quickstart}"
./build/fleetsim run scenarios/quickstart.toml --out "$OUT"
/usr/bin/python3 scripts/plot.py "$OUT"
echo "plots in       $OUT/ (jct_cdf.png, utilization.png, queue.png)"
