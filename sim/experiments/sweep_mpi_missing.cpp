// The MPI backend of a build without MPI (CMake compiles this file instead of sweep_mpi.cpp).
#include "sim/experiments/sweep_mpi.hpp"

namespace fleetsim {

bool mpi_built() {
  return false;
}

int run_sweep_mpi(const std::string&, const SweepOptions&) {
  throw mpi_missing_error();
}

}  // namespace fleetsim
