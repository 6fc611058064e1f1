#include "sim/scheduling/placer.hpp"

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

}  // namespace fleetsim
