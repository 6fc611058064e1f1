#pragma once
// Small helpers the rule files share: job-level means over ranks and the CPU calls of the graph.
#include <functional>
#include <string>

#include "sim/diagnosis/job_analysis.hpp"

namespace fleetsim::diagnosis::rule_util {

/// Mean over ranks of f(rank) / rank's step time (0 for a zero step).
inline double mean_share(const JobAnalysis& a, const std::function<double(const RankStats&)>& f) {
  double s = 0;
  for (const auto& r : a.ranks) s += r.step_s > 0 ? f(r) / r.step_s : 0;
  return a.ranks.empty() ? 0 : s / static_cast<double>(a.ranks.size());
}

/// "12.3%".
inline std::string pct(double share) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * share);
  return b;
}

/// A CPU call that waits for the GPU (cudaDeviceSynchronize, cudaStreamSynchronize, a synchronous
/// copy): it has an end dependency on GPU work.
inline bool waits_for_gpu(const replay::ExecGraph& g, std::size_t v) {
  replay::Dag::in_edge_iterator ei, ee;
  for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei)
    if (g.g[*ei].kind == replay::EdgeKind::sync) return true;
  return false;
}

/// The binding thread-order edge into CPU call v (the measured host gap before it); false if none.
inline bool host_gap(const replay::ExecGraph& g, std::size_t v, std::size_t& prev, double& gap) {
  replay::Dag::in_edge_iterator ei, ee;
  for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei) {
    const auto& e = g.g[*ei];
    if (e.kind != replay::EdgeKind::thread_order || !e.binding) continue;
    prev = boost::source(*ei, g.g);
    gap = e.lag;
    return true;
  }
  return false;
}

}  // namespace fleetsim::diagnosis::rule_util
