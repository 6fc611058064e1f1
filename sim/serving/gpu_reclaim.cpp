#include "sim/serving/gpu_reclaim.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

const KeyRegistrar kKeys{{
    {"service[]", "reclaim", KeyKind::kString, "", "hold",
     "GPUs of replicas the autoscaler switches off: hold (kept for the whole run) | preempt (released to "
     "training; switched on, the replica preempts the training jobs in its way) | wait (released; "
     "switched on, the replica waits for free GPUs, serving later)",
     "", one_of({"hold", "preempt", "wait"})},
}};

bool autoscaled(const ServingEngineConfig& e) {
  auto scaled = [](int min, int size) { return min > 0 && min < size; };
  if (e.prefill_replicas == 0) return scaled(e.min_replicas, e.replicas);
  return scaled(e.min_prefill_replicas, e.prefill_replicas) ||
         scaled(e.min_decode_replicas, e.replicas - e.prefill_replicas);
}

struct Down {
  double from = 0;
  double to = 0;
  long event = -1;
};

}  // namespace

Reclaim reclaim_policy(const ServiceSpec& spec) {
  const std::string v = spec.options.text("reclaim", "hold");
  if (v == "hold") return Reclaim::kHold;
  if (!spec.mig.empty() || spec.mps_share > 0 || spec.data_parallel > 1)
    throw spec.options.error("reclaim",
                             "'" + v + "' needs replicas of whole GPUs (no mig, mps or data_parallel)");
  if (!autoscaled(spec.engine))
    throw spec.options.error("reclaim",
                             "'" + v +
                                 "' needs the autoscaler (min_replicas, or min_prefill_replicas / "
                                 "min_decode_replicas, below the replicas): no replica is switched off");
  return v == "preempt" ? Reclaim::kPreempt : Reclaim::kWait;
}

std::vector<std::vector<PowerWindow>> first_pass_windows(const PreparedService& p) {
  return simulate_serving(p.requests, *p.model, p.engine).windows;
}

void serve_granted(const std::vector<std::vector<PowerWindow>>& granted, ServingEngineConfig& engine,
                   std::vector<long>& events) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<std::vector<Down>> down(static_cast<std::size_t>(engine.replicas));
  for (std::size_t k = 0; k < engine.outages.size(); ++k) {
    const ReplicaOutage& o = engine.outages[k];
    if (o.replica >= 0 && o.replica < engine.replicas)
      down[static_cast<std::size_t>(o.replica)].push_back(
          {o.down_s, o.up_s, k < events.size() ? events[k] : -1});
  }
  for (std::size_t r = 0; r < granted.size() && r < down.size(); ++r) {
    double off = 0;  // out of service since
    for (const PowerWindow& w : granted[r]) {
      if (!std::isfinite(w.on_s)) continue;  // never got GPUs: off throughout
      if (w.ready_s > off) down[r].push_back({off, w.ready_s, -1});
      off = std::max(off, w.off_s);
    }
    if (std::isfinite(off)) down[r].push_back({off, inf, -1});
  }
  engine.outages.clear();
  events.clear();
  for (std::size_t r = 0; r < down.size(); ++r) {
    auto& list = down[r];
    std::stable_sort(list.begin(), list.end(), [](const Down& a, const Down& b) { return a.from < b.from; });
    std::vector<Down> merged;
    for (const Down& d : list) {
      if (d.to <= d.from && d.event < 0) continue;
      if (!merged.empty() && d.from <= merged.back().to) {
        merged.back().to = std::max(merged.back().to, d.to);
        if (merged.back().event < 0) merged.back().event = d.event;
        continue;
      }
      merged.push_back(d);
    }
    for (const Down& d : merged) {
      engine.outages.push_back({static_cast<int>(r), d.from, d.to});
      events.push_back(d.event);
    }
  }
  engine.min_replicas = 0;
  engine.min_prefill_replicas = 0;
  engine.min_decode_replicas = 0;
}

void reclaim_summary(const ServiceSpec& spec, Reclaim policy,
                     const std::vector<std::vector<PowerWindow>>& granted,
                     const std::vector<ReclaimStats>& stats, double end_s, nlohmann::ordered_json& j) {
  double held_s = 0;
  std::vector<std::pair<double, int>> steps;  // +1 when a replica gets GPUs, -1 when it releases them
  for (const auto& windows : granted)
    for (const PowerWindow& w : windows) {
      if (!std::isfinite(w.on_s)) continue;
      held_s += std::max(0.0, std::min(w.off_s, end_s) - w.on_s);
      steps.emplace_back(w.on_s, 1);
      if (std::isfinite(w.off_s)) steps.emplace_back(w.off_s, -1);
    }
  std::sort(steps.begin(), steps.end());  // at one instant, releases (-1) before takes
  int on = 0, peak = 0;
  for (const auto& s : steps) peak = std::max(peak, on += s.second);
  long preempted = 0;
  double waited = 0;
  for (const auto& s : stats) {
    preempted += s.jobs_preempted;
    waited += s.waited_s;
  }
  j["autoscaled"] = true;
  j["peak_replicas"] = peak;
  j["gpu_hours"] = held_s * replica_gpu_share(spec) / 3600;
  j["reclaim"] = policy == Reclaim::kPreempt ? "preempt" : "wait";
  j["reclaim_jobs_preempted"] = preempted;
  j["reclaim_wait_s"] = waited;
}

}  // namespace fleetsim
