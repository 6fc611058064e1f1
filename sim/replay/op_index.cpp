// CPU-side facts about GPU work (see op_index.hpp).
#include "sim/replay/op_index.hpp"

#include <algorithm>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::replay {
namespace {

// "[[64,128],[128,32],[]]" -> {{64,128},{128,32},{}}.
std::vector<std::vector<long>> parse_dims(std::string_view text) {
  std::vector<std::vector<long>> out;
  int depth = 0;
  long cur = -1;
  for (char c : text) {
    if (c == '[') {
      if (++depth == 2) out.emplace_back();
    } else if (c == ']' || c == ',') {
      if (cur >= 0 && depth == 2) out.back().push_back(cur);
      cur = -1;
      if (c == ']') --depth;
    } else if (c >= '0' && c <= '9') {
      cur = (cur < 0 ? 0 : cur * 10) + (c - '0');
    }
  }
  return out;
}

constexpr int kScanLimit = 256;  ///< ops looked at before a launch call when searching its enclosing ops

}  // namespace

const GpuSpec* resolve_gpu(const std::string& device) {
  if (device.empty()) return nullptr;
  if (const GpuSpec* g = find_gpu(device)) return g;
  std::string d = device;
  if (d.rfind("NVIDIA ", 0) == 0) d = d.substr(7);
  if (const GpuSpec* g = find_gpu(d)) return g;
  const std::string l = lower(d);
  const GpuSpec* best = nullptr;
  std::size_t best_len = 0;
  for (const auto& g : gpu_catalog()) {
    std::vector<std::string> names = g.aliases;
    names.push_back(g.name);
    for (const auto& n : names) {
      const std::string ln = lower(n);
      if (ln.size() >= 3 && ln.size() > best_len && l.find(ln) != std::string::npos) {
        best = &g;
        best_len = ln.size();
      }
    }
  }
  return best;
}

std::string traced_device_name(const ExecGraph& g) {
  if (g.traces.empty()) return "";
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
    const Node& n = g.g[v];
    if (n.trace == 0 && n.kind != NodeKind::cpu)
      return g.traces.front()->device_name(std::max(0, g.event(n).device));
  }
  return g.traces.front()->device_name(0);
}

const GpuSpec* traced_gpu(const ExecGraph& g, const std::string& source_gpu) {
  if (!source_gpu.empty()) return &gpu_spec(source_gpu, "", 0, "--source-gpu");
  return resolve_gpu(traced_device_name(g));
}

std::optional<KernelDesc> gemm_desc(const KinetoEvent& op) {
  const auto d = parse_dims(op.input_dims);
  KernelDesc k;
  k.op = "linear";
  const std::string types = lower(op.input_types);
  k.dtype = types.find("half") != std::string::npos       ? DType::fp16
            : types.find("bfloat16") != std::string::npos ? DType::bf16
                                                          : DType::fp32;
  auto two = [&](const std::vector<long>& a, const std::vector<long>& b) {
    if (a.size() == 2 && b.size() == 2 && a[1] == b[0]) {
      k.m = a[0];
      k.k = a[1];
      k.n = b[1];
      return true;
    }
    if (a.size() == 3 && b.size() == 3 && a[0] == b[0] && a[2] == b[1]) {
      k.op = "bmm";
      k.b = a[0];
      k.m = a[1];
      k.k = a[2];
      k.n = b[2];
      return true;
    }
    return false;
  };
  if ((op.name == "aten::mm" || op.name == "aten::bmm" || op.name == "aten::matmul") && d.size() >= 2 &&
      two(d[0], d[1]))
    return k;
  if ((op.name == "aten::addmm" || op.name == "aten::baddbmm") && d.size() >= 3 && two(d[1], d[2])) return k;
  if (op.name == "aten::linear" && d.size() >= 2 && d[0].size() >= 2 && d[1].size() == 2 &&
      d[0].back() == d[1][1]) {
    long rows = 1;
    for (std::size_t i = 0; i + 1 < d[0].size(); ++i) rows *= d[0][i];
    k.m = rows;
    k.k = d[1][1];
    k.n = d[1][0];
    return k;
  }
  return std::nullopt;
}

KernelScale spec_scale(const Node& n, const KinetoEvent& e) {
  const std::string l = lower(e.name.substr(0, std::min<std::size_t>(e.name.size(), 80)));
  if (n.cls == KernelClass::gemm || n.cls == KernelClass::attention) {
    const bool fp32 = l.find("sgemm") != std::string::npos || l.find("fp32") != std::string::npos;
    return fp32 ? KernelScale::fp32 : KernelScale::tensor;
  }
  if (n.kind == NodeKind::memcpy &&
      (l.find("htod") != std::string::npos || l.find("dtoh") != std::string::npos))
    return KernelScale::fixed;  // the host link, not the GPU
  return KernelScale::memory;
}

OpIndex::OpIndex(const ExecGraph& g) : g_(g), ops_(g.traces.size()) {
  for (std::size_t ti = 0; ti < g.traces.size(); ++ti) {
    for (const auto& e : g.traces[ti]->events)
      if (e.cat == KinetoCat::cpu_op) ops_[ti][e.tid].push_back(&e);
    for (auto& [tid, ops] : ops_[ti])
      std::stable_sort(ops.begin(), ops.end(),
                       [](const KinetoEvent* a, const KinetoEvent* b) { return a->ts < b->ts; });
  }
}

const KinetoEvent* OpIndex::launch_call(std::size_t v) const {
  Dag::in_edge_iterator ei, ee;
  for (boost::tie(ei, ee) = boost::in_edges(v, g_.g); ei != ee; ++ei)
    if (g_.g[*ei].kind == EdgeKind::launch) return &g_.event(g_.g[boost::source(*ei, g_.g)]);
  return nullptr;
}

template <typename F>
bool OpIndex::enclosing(const KinetoEvent& call, int trace, F f) const {
  const auto& per_tid = ops_[static_cast<std::size_t>(trace)];
  auto it = per_tid.find(call.tid);
  if (it == per_tid.end()) return false;
  const auto& ops = it->second;
  auto pos = std::upper_bound(ops.begin(), ops.end(), call.ts,
                              [](double t, const KinetoEvent* o) { return t < o->ts; });
  for (int scanned = 0; pos != ops.begin() && scanned < kScanLimit; ++scanned) {
    --pos;
    const KinetoEvent& op = **pos;
    if (op.ts + op.dur < call.ts + call.dur) continue;
    if (f(op)) return true;
  }
  return false;
}

std::optional<KernelDesc> OpIndex::gemm_shape(std::size_t v) const {
  const KinetoEvent* call = launch_call(v);
  if (call == nullptr) return std::nullopt;
  std::optional<KernelDesc> out;
  enclosing(*call, g_.g[v].trace, [&](const KinetoEvent& op) {
    if (op.input_dims.empty()) return false;
    out = gemm_desc(op);
    return out.has_value();
  });
  return out;
}

bool OpIndex::backward(std::size_t v) const {
  const KinetoEvent* call = launch_call(v);
  if (call == nullptr) return false;
  return enclosing(*call, g_.g[v].trace, [](const KinetoEvent& op) {
    return op.name.rfind("autograd::engine", 0) == 0 || op.name.find("Backward") != std::string_view::npos;
  });
}

}  // namespace fleetsim::replay
