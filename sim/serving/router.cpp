#include "sim/serving/router.hpp"

namespace fleetsim {

RouterRegistry& routers() {
  static RouterRegistry registry("routing");
  return registry;
}

}  // namespace fleetsim
