#!/usr/bin/env bash
# Configure and build fleetsim. Usage: scripts/build.sh [BUILD_DIR] [Release|Debug|asan|quick|fuzz] [TARGET...]
# quick: no optimisation and no tests (the quickstart): with clang (FLEETSIM_QUICK_CXX, else the newest
# clang++-N found; `scripts/setup.sh --quick` installs clang-19) and precompiled headers, it compiles
# fleetsim in about 40% of g++'s CPU time at -O0; without clang, g++ at -O0. It simulates about 3x
# slower than Release, with the same outputs.
# fuzz: the libFuzzer harnesses (tests/fuzz/README.md) with clang 16 or newer (FLEETSIM_FUZZ_CXX, else the
# newest clang++-N found); builds target `fuzzers` unless targets are given.
# With targets (e.g. fleetsim), builds only those and what they need; without, everything (tests too).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${1:-$ROOT/build}"
MODE="${2:-Release}"
TARGETS=()
for t in "${@:3}"; do TARGETS+=(--target "$t"); done
JOBS="$(nproc 2>/dev/null || echo 2)"
# ccache (CMakeLists.txt uses it when installed): paths relative to the checkout, so another clone
# of the same sources (CI's fresh clone) reuses the compiled objects.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$ROOT}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
GEN=()
if command -v ninja >/dev/null 2>&1; then GEN=(-G Ninja); fi
case "$MODE" in
  # -O1 -g1 (line tables): sanitizer reports keep file:line, and the build compiles in about half the
  # time of RelWithDebInfo's -O2 -g (measured: 79 s -> 35 s for the heaviest file, 36 s -> 15 s for a test).
  asan) ARGS=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
              -DFLEETSIM_SANITIZE=ON -DFLEETSIM_BUILD_BENCH=OFF) ;;
  fuzz)
    CXX_FUZZ="${FLEETSIM_FUZZ_CXX:-}"
    if [ -z "$CXX_FUZZ" ]; then
      for v in 21 20 19 18 17 16; do
        if command -v "clang++-$v" >/dev/null 2>&1; then CXX_FUZZ="clang++-$v"; break; fi
      done
    fi
    [ -n "$CXX_FUZZ" ] || { echo "build.sh: no clang++-16 or newer (scripts/setup.sh --fuzz installs clang-19)" >&2; exit 2; }
    CC_FUZZ="${CXX_FUZZ/clang++/clang}"
    ARGS=(-DCMAKE_CXX_COMPILER="$CXX_FUZZ" -DCMAKE_C_COMPILER="$CC_FUZZ" -DCMAKE_BUILD_TYPE=RelWithDebInfo
          "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DFLEETSIM_FUZZ=ON)
    [ ${#TARGETS[@]} -gt 0 ] || TARGETS=(--target fuzzers) ;;
  quick)
    ARGS=(-DCMAKE_BUILD_TYPE=Quick -DFLEETSIM_BUILD_TESTS=OFF -DFLEETSIM_BUILD_BENCH=OFF
          -DFLEETSIM_BUILD_MICROBENCH=OFF)
    CXX_QUICK="${FLEETSIM_QUICK_CXX:-}"
    if [ -z "$CXX_QUICK" ]; then
      for v in 21 20 19 18 17 16; do
        if command -v "clang++-$v" >/dev/null 2>&1; then CXX_QUICK="clang++-$v"; break; fi
      done
    fi
    if [ -n "$CXX_QUICK" ] && [ ! -f "$DIR/CMakeCache.txt" ]; then
      # clang with libstdc++ warns inside the standard headers (std::get_temporary_buffer deprecated);
      # the g++ builds hold the warning policy (CMakeLists.txt, FLEETSIM_WERROR).
      ARGS+=(-DCMAKE_CXX_COMPILER="$CXX_QUICK" -DCMAKE_C_COMPILER="${CXX_QUICK/clang++/clang}"
             "-DCMAKE_CXX_FLAGS_QUICK=-O0 -Wno-deprecated-declarations" -DFLEETSIM_PCH=ON
             -DFLEETSIM_WERROR=OFF)
    elif [ ! -f "$DIR/CMakeCache.txt" ]; then
      ARGS+=(-DCMAKE_CXX_FLAGS_QUICK=-O0)
    fi ;;
  *) ARGS=(-DCMAKE_BUILD_TYPE="$MODE") ;;
esac
echo "build.sh: configuring $DIR ($MODE, cmake)"
if [ ! -f "$DIR/CMakeCache.txt" ]; then
  cmake -S "$ROOT" -B "$DIR" "${GEN[@]}" "${ARGS[@]}" >/dev/null
else
  cmake -S "$ROOT" -B "$DIR" "${ARGS[@]}" >/dev/null
fi
WHAT="${*:3}"
echo "build.sh: building ${WHAT:-everything} in $DIR ($JOBS jobs at a time)"
cmake --build "$DIR" -j "$JOBS" "${TARGETS[@]}"
