// HTA-definition GPU time breakdowns of one rank (see gpu_breakdown.hpp).
#include "workloads/profiler/gpu_breakdown.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>
#include <utility>

namespace fleetsim {
namespace {

bool starts(std::string_view s, std::string_view p) {
  return s.substr(0, p.size()) == p;
}
bool has(std::string_view s, std::string_view p) {
  return s.find(p) != std::string_view::npos;
}

struct Ev {
  double ts, end;
  const KinetoEvent* e;
};

double union_length(std::vector<std::pair<double, double>> iv) {
  std::sort(iv.begin(), iv.end());
  double total = 0, lo = 0, hi = 0;
  bool open = false;
  for (const auto& [a, b] : iv) {
    if (open && a <= hi) {
      hi = std::max(hi, b);
      continue;
    }
    if (open) total += hi - lo;
    lo = a;
    hi = b;
    open = true;
  }
  if (open) total += hi - lo;
  return total;
}

}  // namespace

HtaKernelKind hta_kernel_kind(std::string_view n) {
  // hta/common/types.py: CommunicateKernelGroupingPattern, MemoryKernelGroupingPattern,
  // ComputeKernelGroupingPattern (re.match: anchored at the start of the name).
  if (starts(n, "nccl") || starts(n, "hip") || starts(n, "hccl") || has(n, "ncclKernel"))
    return HtaKernelKind::communication;
  if (starts(n, "Memcpy") || starts(n, "hipMemcpy") || starts(n, "Memset") || starts(n, "hipMemset") ||
      starts(n, "dma"))
    return HtaKernelKind::memory;
  const bool launch = starts(n, "cuda") && has(n.substr(4), "LaunchKernel");
  static constexpr std::string_view kStarts[] = {"nccl",        "Stream Wait Event",
                                                 "runFunction", "hip",
                                                 "job_exe",     "packet",
                                                 "pe_exe",      "cpum_exe_subgraph",
                                                 "hccl",        "collective_subgraph_execution"};
  bool non_compute = launch || has(n, "Memcpy") || has(n, "Memset") || has(n, "dma") || has(n, "Sync");
  for (std::string_view p : kStarts) non_compute = non_compute || starts(n, p);
  return non_compute ? HtaKernelKind::other : HtaKernelKind::compute;
}

GpuBreakdown gpu_breakdown(const KinetoTrace& t, double delay_us) {
  GpuBreakdown out;
  // HTA reads timestamps as pandas floats when any has a fraction and then rounds inward.
  for (const auto& e : t.events)
    if (e.ts != std::floor(e.ts) || e.dur != std::floor(e.dur)) {
      out.rounded = true;
      break;
    }
  auto span = [&](const KinetoEvent& e) {
    if (!out.rounded) return std::make_pair(e.ts, e.ts + e.dur);
    const double a = std::ceil(e.ts), b = std::floor(e.ts + e.dur);
    return std::make_pair(a, b);
  };

  // Launch calls by correlation id, and the last profiler step's start.
  std::unordered_map<std::int64_t, double> launch_ts;
  std::map<std::string_view, double> step_start;
  for (const auto& e : t.events) {
    if (e.cat == KinetoCat::runtime && e.correlation >= 0) launch_ts.emplace(e.correlation, span(e).first);
    if ((e.cat == KinetoCat::user_annotation || e.cat == KinetoCat::cpu_op) &&
        starts(e.name, "ProfilerStep#")) {
      auto [it, added] = step_start.try_emplace(e.name, span(e).first);
      if (!added) it->second = std::max(it->second, span(e).first);
    }
  }
  double last_step = -1e300;
  for (const auto& [name, ts] : step_start) last_step = std::max(last_step, ts);
  out.last_step_dropped = step_start.size() >= 2;

  std::vector<Ev> gpu;
  for (const auto& e : t.events) {
    const bool device = e.cat == KinetoCat::kernel || e.cat == KinetoCat::memcpy ||
                        e.cat == KinetoCat::memset || e.cat == KinetoCat::sync;
    if (!device || e.stream < 0) continue;
    const auto [a, b] = span(e);
    if (out.last_step_dropped) {
      if (e.correlation >= 0) {
        auto it = launch_ts.find(e.correlation);
        if (it == launch_ts.end() || !(it->second < last_step)) continue;
      } else if (!(a < last_step)) {
        continue;
      }
    }
    gpu.push_back({a, b, &e});
  }
  if (gpu.empty()) return out;

  std::vector<std::pair<double, double>> all, compute, comm, mem;
  double first = 1e300, last = -1e300;
  for (const auto& g : gpu) {
    all.emplace_back(g.ts, g.end);
    first = std::min(first, g.ts);
    last = std::max(last, g.end);
    switch (hta_kernel_kind(g.e->name)) {
      case HtaKernelKind::compute:
        compute.emplace_back(g.ts, g.end);
        break;
      case HtaKernelKind::communication:
        comm.emplace_back(g.ts, g.end);
        break;
      case HtaKernelKind::memory:
        mem.emplace_back(g.ts, g.end);
        break;
      case HtaKernelKind::other:
        break;
    }
  }
  TemporalBreakdown& tb = out.temporal;
  tb.events = static_cast<long>(gpu.size());
  tb.window_us = last - first;
  tb.idle_us = tb.window_us - union_length(std::move(all));
  tb.compute_us = union_length(std::move(compute));
  tb.non_compute_us = tb.window_us - tb.idle_us - tb.compute_us;
  tb.communication_us = union_length(std::move(comm));
  tb.memory_us = union_length(std::move(mem));

  // Idle-time breakdown per stream (kernels, copies and sets; not sync records).
  std::map<std::int64_t, std::vector<const Ev*>> by_stream;
  for (const auto& g : gpu)
    if (g.e->cat != KinetoCat::sync) by_stream[g.e->stream].push_back(&g);
  for (auto& [stream, evs] : by_stream) {
    std::stable_sort(evs.begin(), evs.end(), [](const Ev* a, const Ev* b) { return a->ts < b->ts; });
    StreamIdle s;
    s.stream = stream;
    for (std::size_t i = 1; i < evs.size(); ++i) {
      const double prev_end = evs[i - 1]->end, gap = evs[i]->ts - prev_end;
      auto it = evs[i]->e->correlation >= 0 ? launch_ts.find(evs[i]->e->correlation) : launch_ts.end();
      if (it != launch_ts.end() && it->second > prev_end)
        s.host_wait_us += gap;
      else if (gap < delay_us)
        s.kernel_wait_us += gap;
      else
        s.other_us += gap;
    }
    out.idle.host_wait_us += s.host_wait_us;
    out.idle.kernel_wait_us += s.kernel_wait_us;
    out.idle.other_us += s.other_us;
    out.idle_by_stream.push_back(s);
  }
  return out;
}

}  // namespace fleetsim
