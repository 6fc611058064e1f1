#pragma once
// Link load accounting of the fabric fidelity: every link's load (bytes/s) is piecewise constant,
// changed only when a job's rate changes, so each change closes the link's interval [since, now):
// its bytes, its time at its utilization bin, and its tier's load segment. Costs O(links of the
// changed job) per change, nothing per event otherwise. Gives the same NetworkReport as the
// network fidelity (links.csv, link_tiers.csv, summary.json "network").
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/network/network_report.hpp"

namespace simgrid::s4u {
class Link;
}  // namespace simgrid::s4u

namespace fleetsim {

class LinkLedger {
 public:
  /// Index of link `l` (registered on first use).
  int index(simgrid::s4u::Link* l);
  double capacity(int link) const { return capacity_[static_cast<std::size_t>(link)]; }
  bool fatpipe(int link) const { return fatpipe_[static_cast<std::size_t>(link)] != 0; }
  /// The link's load changes by `delta` bytes/s at `now`.
  void add_load(int link, double delta, double now);
  /// Closes every interval at `end_s` (the run's end), before report().
  void close(double end_s);
  NetworkReport report(double end_s, int buckets) const;

 private:
  struct Load {
    double load = 0;                           ///< bytes/s now
    double since = 0;                          ///< start of the current interval
    double area = 0;                           ///< bytes carried
    std::vector<std::pair<int, double>> bins;  ///< (utilization bin, time at it), loaded intervals only
  };
  struct TierLoad {
    double load = 0, since = 0;
    std::vector<TierSegment> segments;
  };
  void close_link(std::size_t l, double now);
  void close_tier(std::size_t t, double now);

  std::unordered_map<simgrid::s4u::Link*, int> index_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<double> capacity_;
  std::vector<char> fatpipe_;
  std::vector<int> tier_;
  std::vector<std::string> tier_names_;
  std::vector<Load> load_;
  std::vector<TierLoad> tiers_;
};

}  // namespace fleetsim
