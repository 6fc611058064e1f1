// best-fit placement: the node that the job leaves with the least remaining resources.
//
// Follows the Best-fit baseline of FGD (Weng et al., "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23): the node with the
// least remaining resources, as a weighted sum over resource dimensions. As in the authors'
// simulator (hkust-adsl/kubernetes-scheduler-simulator) the score of a node that fits the job is
//     sum_i w_i * (free_i - request_i) / capacity_i,   i in {GPU share, CPU, memory}
// with capacity_i the largest node's capacity of that dimension (GPU: GPUs x 1000 thousandths).
// Lowest score wins; ties go to the lowest node index. GPUs inside the node: whole GPUs lowest
// index first, a GPU share on the GPU with the least free share that fits.
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties.
//
// Knobs ([scheduler.placement_options]): gpu_weight (0.5), cpu_weight (0.5), memory_weight (0).
// cpu_weight = 0 gives the plain GPU best fit (least free GPU capacity left after placement).
#include <algorithm>
#include <numeric>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

class BestFit final : public Placer {
 public:
  explicit BestFit(const PlacerParams& p)
      : w_gpu_(p.opts().number("gpu_weight", 0.5, "weight of the free GPU share left (best-fit)")),
        w_cpu_(p.opts().number("cpu_weight", 0.5, "weight of the free CPU left (best-fit)")),
        w_mem_(p.opts().number("memory_weight", 0.0, "weight of the free memory left (best-fit)")) {}

  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    const auto& [cap_gpu, cap_cpu, cap_mem] = s.largest_node();
    const int best = best_node(r, s, [&](int n) {
                       return w_gpu_ * (s.free_milli(n) - 1.0 * r.gpus * r.milli) / cap_gpu +
                              w_cpu_ * (s.cpu_free(n) - r.cpu_milli) / cap_cpu +
                              w_mem_ * (s.mem_free(n) - r.memory_mib) / cap_mem;
                     }).first;
    if (best >= 0) return on_node(r, s, best);
    return spread_most_free_first(r, s);
  }

 private:
  double w_gpu_, w_cpu_, w_mem_;
};

const PlacerRegistrar kRegistrar{
    "best-fit", "node left with the least weighted free GPU/CPU (FGD paper's Best-fit baseline)",
    [](const PlacerParams& p) { return std::make_unique<BestFit>(p); }};

}  // namespace
}  // namespace fleetsim
