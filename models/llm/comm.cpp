// Collectives of an LLM iteration on the platform (comm.hpp).
#include "models/llm/comm.hpp"

#include <algorithm>

namespace fleetsim::llm {

int group_span(int ranks, int stride, int gpus_per_node) {
  const long width = static_cast<long>(ranks) * stride;
  if (width <= gpus_per_node) return 1;
  return static_cast<int>(std::min<long>(ranks, (width + gpus_per_node - 1) / gpus_per_node));
}

double collective_seconds(const CollectiveModel& model, const LlmPlatform& p, Collective op, double bytes,
                          int ranks, int stride) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const CollectiveDesc d{op, bytes, ranks, group_span(ranks, stride, p.gpus_per_node)};
  return model.predict(d, p.fabric).seconds;
}

}  // namespace fleetsim::llm
