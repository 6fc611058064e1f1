#!/usr/bin/env bash
# Configure and build fleetsim. Usage: scripts/build.sh [BUILD_DIR] [Release|Debug|asan]
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build}"
MODE="${2:-Release}"
JOBS="$(nproc 2>/dev/null || echo 2)"
# ccache (CMakeLists.txt uses it when installed): paths relative to the checkout, so another clone
# of the same sources (CI's fresh clone) reuses the compiled objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi
case "$MODE" in
  asan) ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLEETSIM_SANITIZE=ON -DFLEETSIM_BUILD_BENCH=OFF) ;;
  *) ARGS=(-DCMAKE_BUILD_TYPE="$MODE") ;;
esac
if [ ! -f "$DIR/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$DIR" "${GEN[@]}" "${ARGS[@]}" >/dev/null
else
  cmake -S "$ROOT" -B "$DIR" "${ARGS[@]}" >/dev/null
fi
cmake --build "$DIR" -j "$JOBS"
