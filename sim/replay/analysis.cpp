// Per-step analysis of a timeline (measured or replayed): step time, GPU time breakdown,
// communication/compute overlap and the critical path's composition.
#include <algorithm>
#include <utility>

#include "sim/replay/replay.hpp"

namespace fleetsim::replay {
namespace {

using Intervals = std::vector<std::pair<double, double>>;

Intervals merged(Intervals iv) {
  std::sort(iv.begin(), iv.end());
  Intervals out;
  for (const auto& x : iv) {
    if (!out.empty() && x.first <= out.back().second)
      out.back().second = std::max(out.back().second, x.second);
    else
      out.push_back(x);
  }
  return out;
}

double length(const Intervals& iv) {
  double s = 0;
  for (const auto& x : iv) s += x.second - x.first;
  return s;
}

double intersection(const Intervals& a, const Intervals& b) {
  double s = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const double lo = std::max(a[i].first, b[j].first), hi = std::min(a[i].second, b[j].second);
    if (hi > lo) s += hi - lo;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return s;
}

std::string path_class(const Node& n) {
  switch (n.cls) {
    case KernelClass::cpu:
      return "cpu_runtime";
    case KernelClass::communication:
      return "communication";
    case KernelClass::memcpy:
    case KernelClass::memset:
      return "memcpy_memset";
    default:
      return "gpu_compute";
  }
}

Breakdown breakdown(const ExecGraph& g, const std::vector<std::size_t>& gpu_nodes, const Times& t, double a,
                    double b) {
  Breakdown out;
  out.span = b - a;
  Intervals comp, comm, mem, all;
  for (std::size_t v : gpu_nodes) {
    const double lo = std::max(a, t.start[v]), hi = std::min(b, t.end[v]);
    if (hi <= lo) continue;
    const Node& n = g.g[v];
    if (n.kind == NodeKind::collective)
      comm.emplace_back(lo, hi);
    else if (n.kind == NodeKind::memcpy || n.kind == NodeKind::memset)
      mem.emplace_back(lo, hi);
    else
      comp.emplace_back(lo, hi);
    all.emplace_back(lo, hi);
  }
  comp = merged(std::move(comp));
  comm = merged(std::move(comm));
  mem = merged(std::move(mem));
  all = merged(std::move(all));
  out.compute = length(comp);
  out.communication = length(comm);
  out.memory = length(mem);
  out.idle = std::max(0.0, out.span - length(all));
  out.overlap = intersection(comp, comm);
  out.exposed_communication = out.communication - out.overlap;
  return out;
}

// Walk back from the end of `last` along what determined each time, until before `a`.
std::map<std::string, double> critical_path(const ExecGraph& g, const Times& t, long last, double a,
                                            double b) {
  std::map<std::string, double> comp;
  if (last < 0) return comp;
  auto add = [&](const std::string& k, double lo, double hi) {
    lo = std::max(lo, a);
    hi = std::min(hi, b);
    if (hi > lo) comp[k] += hi - lo;
  };
  auto cur = static_cast<std::size_t>(last);
  bool at_end = true;
  add("step_edges", t.end[cur], b);
  const std::size_t guard = 4 * boost::num_vertices(g.g) + 4;
  for (std::size_t it = 0; it < guard; ++it) {
    if (at_end) {
      const Cause& c = t.end_by[cur];
      if (c.src < 0) {
        add(path_class(g.g[cur]), t.start[cur], t.end[cur]);
        at_end = false;
        continue;
      }
      const auto src = static_cast<std::size_t>(c.src);
      const double ref = c.from_start ? t.start[src] : t.end[src];
      add(to_string(c.kind), ref, t.end[cur]);
      cur = src;
      at_end = !c.from_start;
      if (ref < a) break;
    } else {
      const Cause& c = t.start_by[cur];
      if (c.src < 0 || t.start[cur] < a) {
        add("step_edges", a, t.start[cur]);
        break;
      }
      const auto src = static_cast<std::size_t>(c.src);
      const double ref = c.from_start ? t.start[src] : t.end[src];
      add(to_string(c.kind), ref, t.start[cur]);
      cur = src;
      at_end = !c.from_start;
      if (ref < a) break;
    }
  }
  return comp;
}

}  // namespace

std::vector<StepResult> analyse(const ExecGraph& g, const Times& measured, const Times& predicted) {
  std::map<int, std::vector<std::size_t>> gpu_nodes, all_nodes;
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
    all_nodes[g.g[v].rank].push_back(v);
    if (g.g[v].kind != NodeKind::cpu) gpu_nodes[g.g[v].rank].push_back(v);
  }
  std::vector<StepResult> out;
  for (const Step& s : g.steps) {
    StepResult r;
    r.rank = s.rank;
    r.name = s.name;
    r.measured = s.end - s.start;
    double pa = s.start, pb = s.end;
    long last = s.last;
    if (s.whole_trace) {
      const auto& vs = all_nodes[s.rank];
      if (!vs.empty()) {
        double ms = 1e300, me = -1e300, ps = 1e300, pe = -1e300;
        for (std::size_t v : vs) {
          ms = std::min(ms, measured.start[v]);
          me = std::max(me, measured.end[v]);
          ps = std::min(ps, predicted.start[v]);
          if (predicted.end[v] > pe) {
            pe = predicted.end[v];
            last = static_cast<long>(v);
          }
        }
        pa = ps - (ms - s.start);
        pb = pe + (s.end - me);
      }
    } else if (s.first >= 0 && s.last >= 0) {
      const auto f = static_cast<std::size_t>(s.first), l = static_cast<std::size_t>(s.last);
      pa = predicted.start[f] - (measured.start[f] - s.start);
      pb = predicted.end[l] + (s.end - measured.end[l]);
    }
    r.predicted = pb - pa;
    r.measured_end = s.end;
    r.predicted_end = pb;
    const auto& gv = gpu_nodes[s.rank];
    r.measured_breakdown = breakdown(g, gv, measured, s.start, s.end);
    r.predicted_breakdown = breakdown(g, gv, predicted, pa, pb);
    long mlast = s.last;
    if (s.whole_trace) {
      double me = -1e300;
      for (std::size_t v : all_nodes[s.rank])
        if (measured.end[v] > me) {
          me = measured.end[v];
          mlast = static_cast<long>(v);
        }
    }
    r.measured_breakdown.critical_path = critical_path(g, measured, mlast, s.start, s.end);
    r.predicted_breakdown.critical_path = critical_path(g, predicted, last, pa, pb);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace fleetsim::replay
