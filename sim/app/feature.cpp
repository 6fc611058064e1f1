#include "sim/app/feature.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace fleetsim {
namespace {

std::vector<FeatureEntry>& registered() {
  static std::vector<FeatureEntry> entries;  // filled by static registrars before main
  return entries;
}

}  // namespace

FeatureRegistrar::FeatureRegistrar(FeatureEntry entry) {
  registered().push_back(std::move(entry));
}

std::vector<const FeatureEntry*> ordered_features() {
  return order_features(registered());
}

std::vector<const FeatureEntry*> order_features(const std::vector<FeatureEntry>& entries) {
  std::map<std::string, const FeatureEntry*> by_name;  // name order breaks ties
  for (const auto& e : entries)
    if (!by_name.emplace(e.name, &e).second)
      throw std::logic_error("feature '" + e.name + "' registered twice");
  std::map<std::string, int> waiting;  // unmet `after` names per feature
  for (const auto& [name, e] : by_name) {
    for (const auto& a : e->after)
      if (by_name.count(a) == 0)
        throw std::logic_error("feature '" + name + "' is declared after '" + a +
                               "', which is not registered");
    waiting[name] = static_cast<int>(e->after.size());
  }
  std::vector<const FeatureEntry*> out;
  while (out.size() < by_name.size()) {
    const auto next =
        std::find_if(waiting.begin(), waiting.end(), [](const auto& w) { return w.second == 0; });
    if (next == waiting.end()) throw std::logic_error("features' `after` declarations form a cycle");
    const FeatureEntry* e = by_name.at(next->first);
    waiting.erase(next);
    out.push_back(e);
    for (auto& [name, count] : waiting) {
      const auto& after = by_name.at(name)->after;
      count -= static_cast<int>(std::count(after.begin(), after.end(), e->name));
    }
  }
  return out;
}

}  // namespace fleetsim
