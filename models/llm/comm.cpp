// Collectives of an LLM iteration on the platform (comm.hpp).
#include "models/llm/comm.hpp"

#include <algorithm>

#include "models/collective/serving_links.hpp"

namespace fleetsim::llm {
namespace {

/// NICs a server's `g` busy GPUs use (as the collective model counts them).
int nics_used(const CommFabric& f, int g) {
  const int per_nic = std::max(1, f.gpus_per_nic);
  return std::max(1, std::min(std::max(1, f.nics_per_node), (g + per_nic - 1) / per_nic));
}

}  // namespace

int group_span(int ranks, int stride, int gpus_per_node) {
  if (ranks <= 1 || gpus_per_node < 1) return 1;
  const long last = static_cast<long>(ranks - 1) * stride;  // the group's last rank, from rank 0
  return static_cast<int>(std::min<long>(ranks, last / gpus_per_node + 1));
}

double collective_seconds(const CollectiveModel& model, const LlmPlatform& p, Collective op, double bytes,
                          int ranks, int stride) {
  if (ranks <= 1 || bytes <= 0) return 0;
  const int nodes = group_span(ranks, stride, p.gpus_per_node);
  const CollectiveDesc d{op, bytes, ranks, nodes};
  if (nodes == 1) return model.predict(d, p.fabric).seconds;
  // The group's g GPUs of a server get g / G of what the server's G busy GPUs get from its NICs.
  const int g = (ranks + nodes - 1) / nodes;
  const int busy = std::max(g, p.gpus_per_node);
  CommFabric f = p.fabric;
  f.inter_gbs *= static_cast<double>(nics_used(f, busy)) * g / busy / nics_used(f, g);
  return model.predict(d, f).seconds;
}

double grad_bucket_params(int dp) {
  return std::max(40e6, 1e6 * dp);
}

std::shared_ptr<const CollectiveCalibration> training_collectives(const CollectiveCalibration& cal,
                                                                  double boundary_bytes) {
  return std::make_shared<const CollectiveCalibration>(
      splice_sizes(cal, vidur_link_calibration(), boundary_bytes));
}

void set_link(LlmPlatform& p, const CollectiveCalibration& cal) {
  p.fabric.link = calibrated_link(cal, p.gpu->name, to_string(default_link_kind(*p.gpu)));
}

}  // namespace fleetsim::llm
