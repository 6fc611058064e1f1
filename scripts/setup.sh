#!/usr/bin/env bash
# Install fleetsim's build and run dependencies from Debian packages.
# Idempotent: installs only what is missing and prints nothing when all is present.
# Usage: scripts/setup.sh [--quick] [--test] [--fuzz]
#   --quick: also clang-19, the quickstart's compiler (scripts/quickstart.sh passes it)
#   --test:  also what only the tests need (scripts/test.sh passes it)
#   --fuzz:  also clang-19 with libFuzzer (tests/fuzz/README.md)
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ninja-build ccache clang-format
  libsimgrid-dev            # SimGrid 3.32 (pkg-config: simgrid)
  libboost-graph-dev        # Boost.Graph
  libsimdjson-dev zlib1g-dev  # Kineto trace reader (JSON, .json.gz)
  libeigen3-dev             # Eigen (model fitting)
  libqhull-dev              # Qhull (Delaunay triangulation: Pollux's LinearND throughput interpolation)
  libfccp-dev               # fast-cpp-csv-parser
  libtomlplusplus-dev       # toml++ (scenarios)
  libcli11-dev              # CLI11 (command line)
  nlohmann-json3-dev        # JSON
  doctest-dev               # unit tests
  libbenchmark-dev          # Google Benchmark
  libglpk-dev               # GLPK (Gavel's max-min fairness LP)
  liblbfgspp-dev            # LBFGSpp (L-BFGS-B for Pollux's performance-model fit)
  libpagmo-dev              # pagmo2 (crowding distances of the pollux policy's genetic search)
  libopenmpi-dev openmpi-bin  # OpenMPI (optional at build time): fleetsim sweep --mpi under mpirun
  python3 python3-matplotlib python3-pandas  # plots
)
for arg in "$@"; do
  case "$arg" in
    # scripts/build.sh quick: clang with precompiled headers compiles fleetsim in about 40% of g++'s
    # CPU time at -O0 (README.md, "Set up")
    --quick) PACKAGES+=(clang-19) ;;
    --test)
      PACKAGES+=(chromium)      # headless check of the HTML report (ctest report_browser; skips without it)
      PACKAGES+=(slurmctld slurmd slurm-client munge) ;;  # a one-node SLURM (ctest slurm_sweep; skips without it)
    --fuzz) PACKAGES+=(clang-19 libclang-rt-19-dev) ;;  # libFuzzer harnesses (tests/fuzz/README.md; FLEETSIM_TEST_FUZZ)
    *) echo "setup.sh: unknown option '$arg' (--quick, --test, --fuzz)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
