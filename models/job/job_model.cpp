#include "models/job/job_model.hpp"

namespace fleetsim {

JobModelRegistry& job_models() {
  static JobModelRegistry registry("job model");
  return registry;
}

}  // namespace fleetsim
