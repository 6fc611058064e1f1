#!/usr/bin/env bash
# One command on a fresh machine: install what is missing, build, and run every test:
# formatting check, the Release build's tests, then all tests again under AddressSanitizer + UBSan.
# Exits non-zero on any failure.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
JOBS="$(nproc 2>/dev/null || echo 2)"

bash scripts/setup.sh

echo "== clang-format check"
mapfile -t SOURCES < <(git ls-files '*.cpp' '*.hpp' '*.cu' 2>/dev/null || find sim models workloads tests -name '*.[ch]pp')
clang-format --dry-run --Werror "${SOURCES[@]}"

echo "== Release build"
bash scripts/build.sh "$ROOT/build" Release
echo "== Release tests"
(cd build && ctest --output-on-failure -j "$JOBS" --timeout 600)

echo "== AddressSanitizer + UBSan build"
bash scripts/build.sh "$ROOT/build-asan" asan
echo "== AddressSanitizer + UBSan tests"
(cd build-asan && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --output-on-failure -j "$JOBS" --timeout 900)

echo "== plot script"
/usr/bin/python3 scripts/plot.py --self-test
/usr/bin/python3 scripts/plot_calibration.py --self-test
/usr/bin/python3 scripts/calibrate/compare_sweeps.py --self-test

echo "test.sh: all tests passed"
