#!/usr/bin/env bash
# Install fleetsim's build and run dependencies from Debian packages.
# Idempotent: installs only what is missing and prints nothing when all is present.
# Usage: scripts/setup.sh [--test]   (--test: also what only the tests need; scripts/test.sh passes it)
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
if [ "${1:-}" = "--test" ]; then
  PACKAGES+=(chromium)      # headless check of the HTML report (ctest report_browser; skips without it)
  PACKAGES+=(slurmctld slurmd slurm-client munge)  # a one-node SLURM (ctest slurm_sweep; skips without it)
fi
if [ "${1:-}" = "--fuzz" ]; then
  PACKAGES+=(clang-19 libclang-rt-19-dev)  # libFuzzer harnesses (tests/fuzz/README.md; FLEETSIM_TEST_FUZZ)
fi

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
