#pragma once
// fleetsim sweep --mpi, under `mpirun -n K fleetsim sweep SWEEP.toml --out DIR --mpi`: rank 0 plans the
// sweep (the same checks before anything runs, the same resume) and deals the pending runs one at a
// time to ranks 1..K-1 as they become free; a worker runs each exactly as the local backend does
// (sim/experiments/sweep_plan.hpp execute_job: its own `fleetsim run` process, run.json) and replies its
// status and error. A failed run is recorded and never stops the others. Rank 0 then writes runs.csv,
// aggregate.csv and paired.csv as the local backend does (byte-identical). With K == 1 rank 0 runs
// everything itself, --jobs at a time. Optional at build time: sweep_mpi.cpp is compiled only when
// CMake finds MPI, sweep_mpi_missing.cpp otherwise (--mpi is then exit 2 saying how to get it).
#include <string>

#include "sim/experiments/sweep.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

/// Whether this build has the MPI backend (sweep_mpi.cpp; else sweep_mpi_missing.cpp).
bool mpi_built();

/// Runs the sweep as one rank of an MPI job (every rank calls it). Returns the exit code as run_sweep.
/// Throws mpi_missing_error() in a build without MPI.
int run_sweep_mpi(const std::string& path, const SweepOptions& options);

/// The error of --mpi in a build without MPI.
inline InputError mpi_missing_error() {
  return InputError("", 0, "--mpi",
                    "this fleetsim was built without MPI: install OpenMPI (apt-get install libopenmpi-dev "
                    "openmpi-bin, or scripts/setup.sh) and rebuild (scripts/build.sh); or run the sweep "
                    "without --mpi, or with --slurm-array");
}

}  // namespace fleetsim
