// One calibration over the whole message-size range (size_ranges.hpp).
#include "models/collective/size_ranges.hpp"

#include <algorithm>
#include <map>

namespace fleetsim {
namespace {

/// The link of `small`'s curve of `system` with the most ranks for `op` ("" if none).
std::string link_of(const CollectiveCalibration& small, const std::string& system, Collective op) {
  const CollectiveCurve* best = nullptr;
  for (const auto& c : small.curves)
    if (c.system == system && c.op == op && !c.link.empty() && (best == nullptr || c.ranks > best->ranks))
      best = &c;
  return best != nullptr ? best->link : "";
}

bool same_curve(const CollectiveCurve& a, const CollectiveCurve& b) {
  return a.system == b.system && a.link == b.link && a.op == b.op && a.ranks == b.ranks && a.nodes == b.nodes;
}

/// `small`'s bands below `at`, then `large`'s from it (both sorted, contiguous).
std::vector<CollectiveBand> spliced(const CollectiveCurve& small, const CollectiveCurve& large, double at) {
  std::vector<CollectiveBand> out;
  for (CollectiveBand b : small.bands) {
    if (b.min_bytes >= at) break;
    b.max_bytes = std::min(b.max_bytes, at);
    out.push_back(b);
  }
  for (std::size_t i = 0; i < large.bands.size(); ++i) {
    CollectiveBand b = large.bands[i];
    if (b.max_bytes < at && i + 1 < large.bands.size()) continue;
    if (out.empty() || b.min_bytes >= at) {
      out.push_back(b);
      continue;
    }
    b.min_bytes = at;
    out.push_back(b);
  }
  return out;
}

}  // namespace

CollectiveCalibration splice_sizes(const CollectiveCalibration& large, const CollectiveCalibration& small,
                                   double boundary_bytes) {
  CollectiveCalibration out;
  out.analytic = large.analytic;
  out.node_topology = large.node_topology;
  std::map<std::string, std::string> system_link;  // large's unlabeled system -> small's link
  std::vector<bool> used(small.curves.size(), false);
  for (CollectiveCurve c : large.curves) {
    const std::string sys = small.match_system(c.system);
    if (c.link.empty() && !sys.empty()) {
      auto [it, fresh] = system_link.try_emplace(c.system, "");
      if (fresh) it->second = link_of(small, sys, Collective::all_reduce);
      c.link = it->second;
    }
    for (std::size_t i = 0; i < small.curves.size(); ++i) {
      const CollectiveCurve& s = small.curves[i];
      if (s.system != sys || s.link != c.link || s.op != c.op || s.ranks != c.ranks || s.nodes != c.nodes ||
          s.bands.empty() || c.bands.empty())
        continue;
      used[i] = true;
      const double at = std::clamp(boundary_bytes, c.bands.front().min_bytes,
                                   std::max(c.bands.front().min_bytes, s.bands.back().max_bytes));
      c.bands = spliced(s, c, at);
      c.samples = 0;
      for (const auto& b : c.bands) c.samples += b.samples;
      break;
    }
    out.curves.push_back(std::move(c));
  }
  for (std::size_t i = 0; i < small.curves.size(); ++i) {
    if (used[i]) continue;
    const bool duplicate = std::any_of(out.curves.begin(), out.curves.end(), [&](const CollectiveCurve& c) {
      return same_curve(c, small.curves[i]);
    });
    if (!duplicate) out.curves.push_back(small.curves[i]);
  }
  return out;
}

std::string calibrated_link(const CollectiveCalibration& cal, const std::string& system,
                            const std::string& wanted) {
  const std::string sys = cal.match_system(system);
  for (const auto& c : cal.curves)
    if (c.system == sys && !c.link.empty()) return wanted;
  return "";
}

}  // namespace fleetsim
