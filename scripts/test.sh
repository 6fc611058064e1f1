#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build, and run every test:
# formatting check, the Release build's tests, then all tests again under AddressSanitizer + UBSan.
# Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="$(nproc 2>/dev/null || echo 2)"

bash scripts/setup.sh --test

echo "== clang-format check"
mapfile -t SOURCES < <(git ls-files '*.cpp' '*.hpp' '*.cu' 2>/dev/null || find sim models workloads tests -name '*.[ch]pp')
clang-format --dry-run --Werror "${SOURCES[@]}"

echo "== Release build"
bash scripts/build.sh "$ROOT/build" Release
# ctest, then one line saying how many cases were skipped for want of ../shared (exit 77).
run_ctest() {
  local dir=$1 label=$2
  shift 2
  local log
  log="$(mktemp)"
  local rc=0
  # "$@": the environment (env VAR=...), then after -- the ctest selection.
  local envs=() sel=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  sel=("$@")
  (cd "$dir" && "${envs[@]}" ctest --output-on-failure -j "$JOBS" --timeout 900 "${sel[@]}") 2>&1 | tee "$log" || rc=$?
  local skipped
  skipped="$(grep -cE '^\s+[0-9]+ - .*\(Skipped\)$' "$log" || true)"
  if [ "$skipped" -gt 0 ]; then
    echo "$label: $skipped test(s) skipped, each saying why (the shared data ../shared/data absent, or a package or permission missing)"
  else
    echo "$label: no test skipped"
  fi
  rm -f "$log"
  return "$rc"
}

# Each test runs under the build that gives it meaning, once where twice adds nothing:
# - the mutation tests ("fuzz: mutants", hundreds of damaged inputs through the real binary) look for
#   crashes and memory errors: under the sanitizers only;
# - the Python-only tests (report, plots, layering, the fabric accuracy sweep's analysis) and the long
#   comparisons with measured data and peers (Pollux's simulator, the Philly fabric sweep, SLURM) check
#   figures, not memory, on code the short cases run under the sanitizers too: in Release only.
RELEASE_SKIP='^fuzz: mutants'
ASAN_SKIP='^(pollux peer: |fabric_accuracy|report_self_test|report_browser|plot_sizing_self_test|layers|slurm_sweep)'

echo "== Release tests"
run_ctest build Release env -- -E "$RELEASE_SKIP"

echo "== AddressSanitizer + UBSan build"
bash scripts/build.sh "$ROOT/build-asan" asan
echo "== AddressSanitizer + UBSan tests"
run_ctest build-asan "ASan+UBSan" env ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  -- -E "$ASAN_SKIP"

# libFuzzer harnesses (tests/fuzz/README.md): opt-in, as the fuzz tree is a third full compile
# (about 22 min on 2 cores without ccache); FLEETSIM_TEST_FUZZ=SECONDS fuzzes each harness that long.
if [ -n "${FLEETSIM_TEST_FUZZ:-}" ]; then
  echo "== libFuzzer harnesses, ${FLEETSIM_TEST_FUZZ} s each"
  bash scripts/setup.sh --fuzz
  bash scripts/build.sh "$ROOT/build-fuzz" fuzz
  python3 tests/fuzz/fuzz.py run --seconds "$FLEETSIM_TEST_FUZZ" --build "$ROOT/build-fuzz/tests/fuzz"
fi

echo "== plot script"
/usr/bin/python3 scripts/plot.py --self-test
/usr/bin/python3 scripts/plot_calibration.py --self-test
/usr/bin/python3 scripts/plot_serving.py --self-test
/usr/bin/python3 scripts/plot_failures.py --self-test
/usr/bin/python3 scripts/plot_llm_eval.py --self-test
/usr/bin/python3 scripts/calibrate/compare_sweeps.py --self-test

echo "== quickstart's run and plots (the README's first command, on the Release build)"
QUICK_OUT="$(mktemp -d)"
FLEETSIM_QUICKSTART_BIN="$ROOT/build/fleetsim" bash scripts/quickstart.sh "$QUICK_OUT/quickstart" >/dev/null
for f in comparison.csv comparison.png jct_cdf.png; do
  [ -s "$QUICK_OUT/quickstart/$f" ] || { echo "quickstart: $f missing" >&2; exit 1; }
done
rm -rf "$QUICK_OUT"

echo "test.sh: all tests passed"
