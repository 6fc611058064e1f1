// Measurements of one job's traces (see job_analysis.hpp).
#include "sim/diagnosis/job_analysis.hpp"

#include <algorithm>
#include <map>

#include "sim/diagnosis/what_if.hpp"
#include "sim/replay/op_index.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::diagnosis {
namespace {

using replay::Dag;
using replay::EdgeKind;
using replay::KernelClass;
using replay::Node;
using replay::NodeKind;

bool has(const std::string& s, std::string_view p) {
  return s.find(p) != std::string::npos;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 == 1 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double overlap(double a, double b, double lo, double hi) {
  return std::max(0.0, std::min(b, hi) - std::max(a, lo));
}

}  // namespace

bool tensor_core_kernel(std::string_view name) {
  const std::string l = lower(name.substr(0, std::min<std::size_t>(name.size(), 160)));
  for (std::string_view k : {"hmma", "884", "1688", "16816", "tensorop", "tf32", "wgmma", "f16", "bf16",
                             "fp16", "half", "s16816", "h16816", "_hgemm", "i8816"})
    if (has(l, k)) return true;
  return false;
}

bool fp32_simt_gemm(std::string_view name) {
  if (tensor_core_kernel(name)) return false;
  const std::string l = lower(name.substr(0, std::min<std::size_t>(name.size(), 160)));
  for (std::string_view k : {"sgemm", "gemmsn", "gemv", "gemmk1", "f32f32", "fp32"})
    if (has(l, k)) return true;
  return false;
}

std::vector<HostInterval> dataloader_intervals(const KinetoTrace& t) {
  std::vector<HostInterval> iv;
  for (const auto& e : t.events)
    if ((e.cat == KinetoCat::cpu_op || e.cat == KinetoCat::user_annotation) &&
        e.name.find("DataLoader") != std::string_view::npos)
      iv.push_back({e.tid, e.ts, e.ts + e.dur});
  std::sort(iv.begin(), iv.end(), [](const HostInterval& a, const HostInterval& b) {
    return a.tid != b.tid ? a.tid < b.tid : a.lo < b.lo;
  });
  std::vector<HostInterval> out;
  for (const auto& x : iv) {
    if (!out.empty() && out.back().tid == x.tid && x.lo <= out.back().hi)
      out.back().hi = std::max(out.back().hi, x.hi);
    else
      out.push_back(x);
  }
  return out;
}

JobAnalysis analyse_job(const JobInput& job) {
  JobAnalysis a;
  a.name = job.name;
  std::vector<const KinetoTrace*> ptrs;
  for (const auto& t : job.traces) ptrs.push_back(t.get());
  a.graph = replay::build_exec_graph(ptrs);
  const replay::ExecGraph& g = a.graph;
  a.measured = replay::measured_times(g);
  a.steps = replay::analyse(g, a.measured, a.measured);
  a.device = replay::traced_device_name(g);
  a.gpu = replay::resolve_gpu(a.device);

  const std::size_t n = boost::num_vertices(g.g);
  std::map<int, std::vector<std::size_t>> by_rank;
  for (std::size_t v = 0; v < n; ++v) by_rank[g.g[v].rank].push_back(v);
  std::map<std::string, KernelStat> kstats;

  for (std::size_t ti = 0; ti < ptrs.size(); ++ti) {
    RankStats r;
    r.rank = g.ranks[ti];
    r.file = ptrs[ti]->file;
    r.hta = gpu_breakdown(*ptrs[ti]);
    std::vector<std::pair<double, double>> windows;
    for (const auto& s : a.steps) {
      if (s.rank != r.rank) continue;
      windows.emplace_back(s.measured_end - s.measured, s.measured_end);
      r.step_s += s.measured;
      const auto& b = s.measured_breakdown;
      r.step.compute += b.compute;
      r.step.communication += b.communication;
      r.step.memory += b.memory;
      r.step.idle += b.idle;
      r.step.overlap += b.overlap;
      r.step.exposed_communication += b.exposed_communication;
    }
    r.steps = static_cast<long>(windows.size());
    auto in_steps = [&](double t) {
      for (const auto& [lo, hi] : windows)
        if (t >= lo - 1e-9 && t <= hi + 1e-9) return true;
      return false;
    };
    // Data loading on the host inside the steps.
    for (const auto& d : dataloader_intervals(*ptrs[ti])) {
      const double lo = (d.lo - g.origin_us) * 1e-6, hi = (d.hi - g.origin_us) * 1e-6;
      for (const auto& [wa, wb] : windows) r.dataloader_s += overlap(lo, hi, wa, wb);
    }
    std::vector<double> kernel_us, launch_us;
    long short_kernels = 0, kernels = 0;
    for (std::size_t v : by_rank[r.rank]) {
      const Node& nd = g.g[v];
      const double dur = nd.end - nd.start;
      if (nd.kind == NodeKind::cpu) {
        const auto& e = g.event(nd);
        if (e.name.find("Memcpy") == std::string_view::npos || !in_steps(nd.start)) continue;
        Dag::in_edge_iterator ei, ee;
        bool waited = false, htod = false;
        for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei) {
          if (g.g[*ei].kind != EdgeKind::sync) continue;
          waited = true;
          const Node& src = g.g[boost::source(*ei, g.g)];
          if (src.kind == NodeKind::memcpy && g.event(src).name.find("HtoD") != std::string_view::npos)
            htod = true;
        }
        if (!waited) continue;
        r.sync_copy_s += dur;
        if (htod) r.sync_htod_s += dur;
        continue;
      }
      auto& ks = kstats[std::string(g.event(nd).name)];
      if (ks.count == 0) {
        ks.name = std::string(g.event(nd).name);
        ks.cls = replay::to_string(nd.cls);
      }
      ++ks.count;
      ks.total_s += dur;
      a.class_s[static_cast<std::size_t>(nd.cls)] += dur;
      if (nd.kind != NodeKind::kernel && nd.kind != NodeKind::collective) continue;
      const bool inside = in_steps(nd.start);
      if (inside && nd.cls == KernelClass::gemm) {
        r.gemm_s += dur;
        const std::string_view name = g.event(nd).name;
        if (tensor_core_kernel(name)) r.tensor_gemm_s += dur;
        if (fp32_simt_gemm(name)) r.fp32_gemm_s += dur;
      }
      if (!inside) continue;
      ++kernels;
      kernel_us.push_back(dur * 1e6);
      Dag::in_edge_iterator ei, ee;
      for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei) {
        if (g.g[*ei].kind != EdgeKind::launch) continue;
        const Node& call = g.g[boost::source(*ei, g.g)];
        const double call_dur = call.end - call.start;
        launch_us.push_back(call_dur * 1e6);
        if (dur < call_dur) ++short_kernels;
      }
    }
    const double steps = std::max<long>(1, r.steps);
    r.step_s /= steps;
    r.step.span = r.step_s;
    for (double* x : {&r.step.compute, &r.step.communication, &r.step.memory, &r.step.idle, &r.step.overlap,
                      &r.step.exposed_communication, &r.dataloader_s, &r.sync_copy_s, &r.sync_htod_s,
                      &r.gemm_s, &r.fp32_gemm_s, &r.tensor_gemm_s})
      *x /= steps;
    r.kernels = static_cast<double>(kernels) / steps;
    r.short_kernel_share =
        kernels > 0 ? static_cast<double>(short_kernels) / static_cast<double>(kernels) : 0;
    r.median_kernel_us = median(kernel_us);
    r.median_launch_us = median(launch_us);
    a.ranks.push_back(std::move(r));
  }

  std::vector<KernelStat> all;
  for (auto& [name, ks] : kstats) all.push_back(std::move(ks));
  std::sort(all.begin(), all.end(), [](const KernelStat& x, const KernelStat& y) {
    return x.total_s != y.total_s ? x.total_s > y.total_s : x.name < y.name;
  });
  if (all.size() > 10) all.resize(10);
  a.top_kernels = std::move(all);

  std::vector<double> compute;
  for (const auto& r : a.ranks) {
    a.step_s += r.step_s;
    compute.push_back(r.step.compute);
  }
  a.step_s = step_period_s(a.steps, false);
  const double med = median(compute);
  double worst = 0;
  for (const auto& r : a.ranks)
    if (r.step.compute > worst) {
      worst = r.step.compute;
      a.slowest_rank = r.rank;
    }
  a.compute_spread = med > 0 ? worst / med - 1 : 0;
  return a;
}

}  // namespace fleetsim::diagnosis
