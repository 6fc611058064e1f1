#include "sim/cluster/placer.hpp"

#include <algorithm>
#include <numeric>

namespace fleetsim {

PlacerRegistry& placers() {
  static PlacerRegistry registry("placement policy");
  return registry;
}

std::optional<Allocation> spread_in_order(const Request& r, const ClusterState& state,
                                          const std::vector<int>& order) {
  Allocation a;
  int need = r.gpus;
  for (int n : order) {
    if (need == 0) break;
    const int take = std::min(need, state.usable_whole(n, r));
    if (take <= 0) continue;
    state.pick_on_node(n, r, take, a);
    need -= take;
  }
  if (need > 0) return std::nullopt;
  state.finalize(r, a);
  return a;
}

Allocation on_node(const Request& r, const ClusterState& s, int n) {
  Allocation a;
  s.pick_on_node(n, r, r.gpus, a);
  s.finalize(r, a);
  return a;
}

Allocation on_gpu(const Request& r, const ClusterState& s, int n, int g) {
  Allocation a;
  a.slots.push_back({n, g, r.milli});
  s.finalize(r, a);
  return a;
}

std::optional<Allocation> spread_most_free_first(const Request& r, const ClusterState& s) {
  if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
  std::vector<int> order(static_cast<std::size_t>(s.node_count()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return s.usable_whole(a, r) > s.usable_whole(b, r); });
  return spread_in_order(r, s, order);
}

}  // namespace fleetsim
