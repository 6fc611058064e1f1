#include "sim/engine/policy.hpp"

namespace fleetsim {

SchedulerRegistry& schedulers() {
  static SchedulerRegistry registry("scheduling policy");
  return registry;
}

}  // namespace fleetsim
