#include "sim/network/network_report.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "sim/metrics/recorders.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

void add_tier_samples(NetworkReport& r, const std::string& tier, const std::vector<TierSegment>& segments,
                      double tier_capacity, double end_s, int buckets) {
  const double width = end_s / buckets;
  std::vector<double> area(static_cast<std::size_t>(buckets), 0.0);
  for (const auto& seg : segments) {
    for (double from = seg.start; from < seg.end;) {
      auto b = std::min(static_cast<std::size_t>(from / width), area.size() - 1);
      // from / width may round below a bucket edge that `from` sits on: move on, or the rest of a
      // segment spanning buckets would be dropped
      while (b + 1 < area.size() && (static_cast<double>(b) + 1) * width <= from) ++b;
      const double edge =
          b + 1 == area.size() ? seg.end : std::min(seg.end, (static_cast<double>(b) + 1) * width);
      area[b] += seg.load * (edge - from);
      if (edge <= from) break;
      from = edge;
    }
  }
  for (std::size_t b = 0; b < area.size(); ++b)
    r.tiers.push_back({static_cast<double>(b) * width, tier, area[b] / width / tier_capacity});
}

void write_links_csv(std::ostream& out, const NetworkReport& r) {
  out << "link,tier,capacity_gbps,mean_util,p99_util,gb\n";
  for (const auto& l : r.links)
    out << l.name << ',' << l.tier << ',' << fmt(l.capacity_Bps * 8 / 1e9, 3) << ',' << fmt(l.mean_util, 6)
        << ',' << fmt(l.p99_util, 6) << ',' << fmt(l.bytes / 1e9, 3) << '\n';
}

void write_link_tiers_csv(std::ostream& out, const NetworkReport& r) {
  out << "time_s,tier,util\n";
  for (const auto& t : r.tiers) out << fmt(t.time_s) << ',' << t.tier << ',' << fmt(t.util, 6) << '\n';
}

nlohmann::ordered_json comm_by_nodes(const std::vector<CommRow>& rows) {
  // ring width buckets: 1 node (NVLink/NVSwitch only), 2, then doubling; every bucket is written, so
  // that a sweep's runs share the metrics (network.comm_s_by_nodes.<bucket>)
  static constexpr std::pair<int, const char*> kBuckets[] = {{1, "1"},      {2, "2"},        {4, "3-4"},
                                                             {8, "5-8"},    {16, "9-16"},    {32, "17-32"},
                                                             {64, "33-64"}, {1 << 30, "65+"}};
  std::vector<double> sums(std::size(kBuckets), 0.0);
  for (const auto& rec : rows) {
    std::size_t b = 0;
    while (b + 1 < std::size(kBuckets) && rec.nodes > kBuckets[b].first) ++b;
    sums[b] += rec.comm_s;
  }
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (std::size_t b = 0; b < sums.size(); ++b) j[kBuckets[b].second] = sums[b];
  return j;
}

nlohmann::ordered_json network_summary(const NetworkReport& r, const JobTable& jobs) {
  nlohmann::ordered_json j;
  j["ptasks"] = r.ptasks;
  long on_fabric = 0;
  double comm = 0, share = 0;
  for (const auto& rec : jobs.comm_rows()) {
    ++on_fabric;
    comm += rec.comm_s;
    if (rec.run_s > 0) share += rec.comm_s / rec.run_s;
  }
  j["jobs_on_fabric"] = on_fabric;
  j["comm_s_total"] = comm;
  j["comm_s_by_nodes"] = comm_by_nodes(jobs.comm_rows());
  j["mean_comm_share"] = on_fabric > 0 ? share / static_cast<double>(on_fabric) : 0.0;
  std::map<std::string, std::pair<double, double>> tiers;  // tier -> (sum, peak)
  std::map<std::string, long> buckets;
  for (const auto& t : r.tiers) {
    auto& [sum, peak] = tiers[t.tier];
    sum += t.util;
    peak = std::max(peak, t.util);
    ++buckets[t.tier];
  }
  nlohmann::ordered_json tj = nlohmann::ordered_json::object();
  for (const auto& [tier, v] : tiers)
    tj[tier] = {{"mean_util", v.first / static_cast<double>(buckets[tier])}, {"peak_util", v.second}};
  j["tiers"] = tj;
  nlohmann::ordered_json hot = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < r.links.size() && k < 5; ++k) {
    const auto& l = r.links[k];
    if (!(l.mean_util > 0)) break;
    hot.push_back({{"link", l.name}, {"tier", l.tier}, {"mean_util", l.mean_util}, {"p99_util", l.p99_util}});
  }
  j["hottest_links"] = hot;
  return j;
}

}  // namespace fleetsim
