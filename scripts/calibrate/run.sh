#!/usr/bin/env bash
# Measure this GPU node for fleetsim's calibration: runs every microbenchmark of fleetsim-microbench,
# writes all results under OUTDIR, then fits them with `fleetsim calibrate fit` when fleetsim is built.
# Builds nothing. Usage: scripts/calibrate/run.sh OUTDIR [--quick] [extra fleetsim-microbench options]
#   FLEETSIM_MICROBENCH  path of fleetsim-microbench (default: build/scripts/calibrate/fleetsim-microbench)
#   FLEETSIM_BIN         path of fleetsim (default: build/fleetsim)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
if [ $# -lt 1 ] || [ "${1#-}" != "$1" ]; then
  echo "usage: $0 OUTDIR [--quick] [fleetsim-microbench options]" >&2
  exit 2
fi
OUT="$1"
shift
MB="${FLEETSIM_MICROBENCH:-$ROOT/build/scripts/calibrate/fleetsim-microbench}"
FS="${FLEETSIM_BIN:-$ROOT/build/fleetsim}"
if [ ! -x "$MB" ]; then
  echo "run.sh: $MB not found: build it first (cmake on a machine with CUDA, target fleetsim-microbench)" >&2
  echo "        or set FLEETSIM_MICROBENCH to its path" >&2
  exit 2
fi
mkdir -p "$OUT"
START=$(date +%s)
echo "== fleetsim-microbench $* -> $OUT"
set +e
"$MB" --out "$OUT" "$@" 2>&1 | tee "$OUT/microbench.log"
RC=${PIPESTATUS[0]}
set -e
echo "== microbenchmarks took $(($(date +%s) - START)) s (exit $RC)"
# 2: nothing measured (no GPU, bad option); 1: some benchmark failed, the others' files are complete.
if [ "$RC" -ge 2 ]; then exit "$RC"; fi

if [ -x "$FS" ]; then
  shopt -s nullglob
  # The NeuSight-schema CSVs and the nccl-tests tables; copy_*.csv and launch_*.csv have their own
  # schemas (the fitter would take any file not starting with OPName / comm_type for nccl-tests).
  FILES=("$OUT"/linear_*.csv "$OUT"/bmm_*.csv "$OUT"/elem_*.csv "$OUT"/nccl_*.txt)
  echo "== $FS calibrate fit --out $OUT/calibration.json (${#FILES[@]} files)"
  "$FS" calibrate fit --out "$OUT/calibration.json" "${FILES[@]}"
else
  echo "== $FS not found: skipping 'fleetsim calibrate fit' (run it later on $OUT)"
fi
exit "$RC"
