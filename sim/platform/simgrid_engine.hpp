#pragma once
// The one place that starts SimGrid's engine (one per process): the cluster simulation and the
// Kineto replay both call start_simgrid() before building their platform.
#include <simgrid/s4u/Engine.hpp>

#include <memory>

namespace fleetsim {

struct SimgridOptions {
  /// host/model:ptask_L07, for collectives as parallel tasks (network fidelity, replay). Ordinary
  /// execs and comms still work under it.
  bool ptasks = false;
};

/// Creates the engine with fleetsim's settings: SimGrid's own logging only at critical level, raw
/// contexts (threads under AddressSanitizer, which cannot follow raw stack switching), and the
/// host model `options` asks for.
std::unique_ptr<simgrid::s4u::Engine> start_simgrid(const SimgridOptions& options);

}  // namespace fleetsim
