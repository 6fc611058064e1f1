// dot-product placement: the DotProd baseline of FGD (Weng et al., "Beware of Fragmentation:
// Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23, evaluation
// baselines), a multi-resource bin-packing heuristic after Tetris (Grandl et al., SIGCOMM'14) and
// Panigrahy et al.'s vector bin packing heuristics.
//
// For each node that fits the job, with the node's free resources f and the request d as vectors
// over (CPU, memory, GPU share), each dimension normalised by the largest node's capacity of that
// dimension (GPU: GPUs x 1000 thousandths; the GPU entry of f is the node's total free share and
// of d the request's GPUs x share), the score is the normalised dot product
//     (f . d) / dimensions.
// The FGD authors' simulator (hkust-adsl/kubernetes-scheduler-simulator), run with the merged GPU
// dimension and max-node normalisation for the paper's DotProd, takes the node with the SMALLEST
// dot product ("the larger the dot product, the lower the score"), which packs a job where little
// of what it asks for is left; Tetris's alignment score takes the largest. Default: the paper's
// (objective = "min"); objective = "max" gives Tetris's alignment. Ties go to the lowest node index. GPUs
// inside the node: whole GPUs lowest index first, a GPU share on the GPU with the least free share that fits.
// A multi-GPU job that may span nodes and fits no single node takes whole GPUs from the nodes
// with the most usable GPUs first (fewest nodes), lowest index on ties.
//
// Knobs ([scheduler.placement_options]): objective ("min" | "max", default "min"), memory (true:
// memory is a dimension; false: CPU and GPU only, as in the authors' simulator).
#include <algorithm>
#include <numeric>

#include "sim/cluster/placer.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

class DotProduct final : public Placer {
 public:
  explicit DotProduct(const PlacerParams& p)
      : maximize_(parse_objective(p.opts().text(
            "objective", "min", "dot-product: 'min' (FGD paper's DotProd) or 'max' (Tetris alignment)"))),
        memory_(p.opts().flag("memory", true, "dot-product: memory is one of the dimensions")) {}

  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    const auto& [cap_gpu, cap_cpu, cap_mem] = s.largest_node();
    const double d_gpu = 1.0 * r.gpus * r.milli / cap_gpu;
    const double d_cpu = r.cpu_milli / cap_cpu;
    const double d_mem = memory_ ? r.memory_mib / cap_mem : 0.0;
    const double dims = memory_ ? 3.0 : 2.0;
    const int best = best_node(r, s, [&](int n) {
                       const double dot =
                           (s.free_milli(n) / cap_gpu * d_gpu + s.cpu_free(n) / cap_cpu * d_cpu +
                            s.mem_free(n) / cap_mem * d_mem) /
                           dims;
                       return maximize_ ? -dot : dot;
                     }).first;
    if (best >= 0) return on_node(r, s, best);
    return spread_most_free_first(r, s);
  }

 private:
  static bool parse_objective(const std::string& v) {
    if (v == "min") return false;
    if (v == "max") return true;
    throw InputError("", 0, "scheduler.placement_options.objective",
                     "dot-product objective must be 'min' or 'max', got '" + v + "'");
  }

  bool maximize_;
  bool memory_;
};

const PlacerRegistrar kRegistrar{
    "dot-product", "smallest normalised dot product of free (CPU, memory, GPU) and request (FGD's DotProd)",
    [](const PlacerParams& p) { return std::make_unique<DotProduct>(p); }};

}  // namespace
}  // namespace fleetsim
