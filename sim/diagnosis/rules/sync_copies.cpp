// Rule sync_copies: the host blocks in copies that wait for the GPU (cudaMemcpy, a cudaMemcpyAsync
// from pageable memory) for more than a share of the step. Fix for host-to-device copies: pinned
// memory and non_blocking=True: the replay lets those calls return without waiting for the copy
// and the GPU work queued before it. Device-to-host copies are not re-timed: the host usually
// reads what it copies back (loss.item()), and whether it could wait later is not in the trace.
#include "sim/diagnosis/rule.hpp"
#include "sim/diagnosis/rules/rule_util.hpp"

namespace fleetsim::diagnosis {
namespace {

bool htod_wait(const replay::ExecGraph& g, std::size_t v) {
  replay::Dag::in_edge_iterator ei, ee;
  for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei) {
    if (g.g[*ei].kind != replay::EdgeKind::sync) continue;
    const auto& src = g.g[boost::source(*ei, g.g)];
    if (src.kind == replay::NodeKind::memcpy && g.event(src).name.find("HtoD") != std::string_view::npos)
      return true;
  }
  return false;
}

std::optional<Finding> check(const JobAnalysis& a, const Thresholds& t) {
  const double share = rule_util::mean_share(a, [](const RankStats& r) { return r.sync_copy_s; });
  const double min_share = t["sync_copies.min_share"];
  if (!(share > min_share)) return std::nullopt;
  const double htod = rule_util::mean_share(a, [](const RankStats& r) { return r.sync_htod_s; });
  Finding f;
  f.value = share;
  f.threshold = min_share;
  f.unit = "share of step";
  f.evidence = "the host blocks in synchronous copies " + rule_util::pct(share) + " of the step (" +
               rule_util::pct(htod) + " in host-to-device copies)";
  if (htod <= 0) {
    f.not_simulated =
        "only device-to-host copies block: the host reads what it copies back, and whether it could wait "
        "later "
        "is not in the trace";
    return f;
  }
  Fix fix;
  fix.description =
      "pinned host memory and non_blocking=True for host-to-device copies: those calls no longer "
      "wait for the GPU (device-to-host copies unchanged)";
  fix.estimate = "prediction";
  fix.adjust = [](const JobAnalysis& job, replay::Retiming& r) {
    const auto& g = job.graph;
    const std::size_t n = boost::num_vertices(g.g);
    r.unsync.assign(n, 0);
    for (std::size_t v = 0; v < n; ++v)
      if (g.g[v].kind == replay::NodeKind::cpu &&
          g.event(g.g[v]).name.find("Memcpy") != std::string_view::npos && htod_wait(g, v))
        r.unsync[v] = 1;
  };
  f.fix = std::move(fix);
  return f;
}

const RuleRegistrar kRule{{
    "sync_copies",
    "synchronous host-device copies: the host blocks in copies for more than min_share of the step",
    {{"sync_copies.min_share", "share of step", 0.02,
      "host time blocked in copies per step above which it fires",
      "PyTorch performance tuning guide (pin_memory, non_blocking copies); share: fleetsim's choice"}},
    check,
}};

}  // namespace
}  // namespace fleetsim::diagnosis
