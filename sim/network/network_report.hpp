#pragma once
// Network fidelity outputs: per-link utilization (links.csv), fabric-tier utilization over time
// (link_tiers.csv, plotted by scripts/plot.py) and the "network" block of summary.json.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace fleetsim {

class JobTable;
struct CommRow;

/// Utilization of one link over the run (links carrying no all-reduce traffic are omitted unless
/// they belong to a fabric tier).
struct LinkStat {
  std::string name;
  std::string tier;  ///< gpu | intra | nic | leaf-uplink | spine
  double capacity_Bps = 0;
  double mean_util = 0;  ///< time-weighted mean of load / capacity over [0, end]
  double p99_util = 0;   ///< 99th percentile over time of load / capacity
  double bytes = 0;      ///< all-reduce bytes carried
};

struct TierSample {
  double time_s = 0;  ///< start of the bucket
  std::string tier;
  double util = 0;  ///< tier load / tier capacity, mean over the bucket
};

struct NetworkReport {
  std::vector<LinkStat> links;    ///< sorted by p99, then mean utilization, descending
  std::vector<TierSample> tiers;  ///< buckets of equal length over [0, end]
  long ptasks = 0;                ///< all-reduce ptasks simulated (chunks)
};

/// Utilization histograms: bin b holds [b - 1/2, b + 1/2) x kUtilBin (p99 resolution); the last
/// bin, 2.0, also holds anything above.
constexpr double kUtilBin = 0.005;
constexpr std::size_t kUtilBins = 401;
inline std::size_t util_bin(double util) {
  return std::min(kUtilBins - 1, static_cast<std::size_t>(std::lround(std::max(0.0, util) / kUtilBin)));
}

/// A tier's load (bytes/s summed over its links) over [start, end).
struct TierSegment {
  double start, end, load;
};

/// Appends `tier`'s utilization over `buckets` equal buckets of [0, end_s] (load / tier_capacity).
void add_tier_samples(NetworkReport& r, const std::string& tier, const std::vector<TierSegment>& segments,
                      double tier_capacity, double end_s, int buckets);

/// links.csv: link,tier,capacity_gbps,mean_util,p99_util,gb (hottest first).
void write_links_csv(std::ostream& out, const NetworkReport& r);
/// link_tiers.csv: time_s,tier,util.
void write_link_tiers_csv(std::ostream& out, const NetworkReport& r);
/// The jobs' communication time (comm_s) summed by the number of nodes their ring spans: buckets "1",
/// "2", "3-4", "5-8", "9-16", "17-32", "33-64", "65+", all present (0 when empty).
nlohmann::ordered_json comm_by_nodes(const std::vector<CommRow>& rows);
/// summary.json "network": ptasks, jobs_on_fabric, comm_s_total, comm_s_by_nodes, mean_comm_share
/// (comm_s / JCT over jobs on the fabric), tiers {mean_util, peak_util}, hottest_links (top 5 by p99,
/// then mean).
nlohmann::ordered_json network_summary(const NetworkReport& r, const JobTable& jobs);

}  // namespace fleetsim
