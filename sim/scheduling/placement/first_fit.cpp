// first-fit placement: the lowest-numbered node that can host the whole job; a multi-GPU job that
// may span nodes and fits no single node takes free GPUs from nodes in index order.
#include <numeric>

#include "sim/cluster/placer.hpp"

namespace fleetsim {
namespace {

class FirstFit final : public Placer {
 public:
  std::optional<Allocation> place(const Request& r, const ClusterState& s) override {
    if (r.gpus > 0 && r.whole() && s.free_whole_of(r.types) < r.gpus) return std::nullopt;
    if (const int n = s.first_fit_node(r); n >= 0) return on_node(r, s, n);
    if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
    if (order_.size() != static_cast<std::size_t>(s.node_count())) {
      order_.resize(static_cast<std::size_t>(s.node_count()));
      std::iota(order_.begin(), order_.end(), 0);
    }
    return spread_in_order(r, s, order_);
  }

 private:
  std::vector<int> order_;
};

const PlacerRegistrar kRegistrar{"first-fit",
                                 "lowest-numbered node that fits; multi-node jobs fill nodes in index order",
                                 [](const PlacerParams&) { return std::make_unique<FirstFit>(); }};

}  // namespace
}  // namespace fleetsim
