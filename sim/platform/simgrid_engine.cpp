#include "sim/platform/simgrid_engine.hpp"

#include <string>
#include <vector>

namespace fleetsim {

std::unique_ptr<simgrid::s4u::Engine> start_simgrid(const SimgridOptions& options) {
  std::vector<std::string> args = {"fleetsim", "--log=root.thres:critical"};
#if defined(__SANITIZE_ADDRESS__)
  args.emplace_back("--cfg=contexts/factory:thread");
#else
  args.emplace_back("--cfg=contexts/factory:raw");
#endif
  if (options.ptasks) args.emplace_back("--cfg=host/model:ptask_L07");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  return std::make_unique<simgrid::s4u::Engine>(&argc, argv.data());
}

}  // namespace fleetsim
