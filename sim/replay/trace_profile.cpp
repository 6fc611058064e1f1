// Training profiles from Kineto traces (see trace_profile.hpp).
#include "sim/replay/trace_profile.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/replay/op_index.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::replay {
namespace {

struct Group {
  ProfileKernel kernel;
  bool backward = false;
  long n = 0;
  double us = 0;  ///< summed durations
};

std::string shape_key(const KernelDesc& d, bool backward) {
  return std::string(backward ? "b|" : "f|") + d.op + "|" + std::string(to_string(d.dtype)) + "|" +
         std::to_string(d.b) + "|" + std::to_string(d.m) + "|" + std::to_string(d.n) + "|" +
         std::to_string(d.k);
}

std::string mb(double bytes) {
  return fmt(bytes / 1e6, 3) + " MB";
}

constexpr std::size_t kNameChars = 120;  ///< kernel names kept in the profile (information only)

}  // namespace

TraceProfile profile_from_trace(const ExecGraph& g, const std::string& name, const std::string& source_gpu) {
  if (g.traces.empty()) throw InputError("", 0, "TRACE", "no trace given");
  TraceProfile out;
  out.rank = g.ranks.front();
  const std::string& file = g.traces.front()->file;

  std::vector<const Step*> steps;
  for (const Step& s : g.steps)
    if (s.rank == out.rank) steps.push_back(&s);
  std::sort(steps.begin(), steps.end(), [](const Step* a, const Step* b) { return a->start < b->start; });
  out.steps = static_cast<long>(steps.size());
  if (steps.empty())
    throw InputError(file, 0, "traceEvents", "rank " + std::to_string(out.rank) + " has no step");
  const auto in_step = [&](double t) {
    for (const Step* s : steps)
      if (t >= s->start && t < s->end) return true;
    return false;
  };

  // Which GPU the durations were measured on.
  const GpuSpec* gpu = traced_gpu(g, source_gpu);
  if (gpu == nullptr) {
    const std::string device = traced_device_name(g);
    throw InputError(file, 0, "deviceProperties",
                     "the traced GPU '" + (device.empty() ? std::string("(none recorded)") : device) +
                         "' is not in the catalog; name it with --source-gpu TYPE");
  }

  const OpIndex ops(g);
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;
  double allreduce_bytes = 0;
  std::map<std::string, std::pair<long, double>> other_collectives;  // name -> (count, bytes)
  long unknown_bytes = 0;
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
    const Node& node = g.g[v];
    if (node.rank != out.rank || node.kind == NodeKind::cpu || !in_step(node.start)) continue;
    const KinetoEvent& e = g.event(node);
    if (node.kind == NodeKind::collective) {
      if (e.bytes <= 0) ++unknown_bytes;
      if (e.collective == "allreduce") {
        allreduce_bytes += e.bytes;
      } else {
        auto& [count, bytes] = other_collectives[e.collective.empty() ? "unnamed" : e.collective];
        ++count;
        bytes += e.bytes;
      }
      continue;
    }
    const bool backward = ops.backward(v);
    std::optional<KernelDesc> shape;
    if (node.cls == KernelClass::gemm) shape = ops.gemm_shape(v);
    const std::string trimmed(e.name.substr(0, std::min(e.name.size(), kNameChars)));
    ProfileKernel k;
    std::string key;
    if (shape) {
      k.kernel = *shape;
      key = shape_key(*shape, backward);
    } else {
      k.kernel.op = "kernel";
      k.scale = spec_scale(node, e);
      key = std::string(backward ? "b|" : "f|") + std::string(to_string(k.scale)) + "|" + trimmed;
    }
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) {
      k.name = trimmed;
      groups.push_back({k, backward, 0, 0});
    }
    Group& grp = groups[it->second];
    ++grp.n;
    grp.us += e.dur;
  }
  if (groups.empty())
    throw InputError(file, 0, "traceEvents",
                     "rank " + std::to_string(out.rank) + " has no GPU kernels inside its steps");

  TrainingProfile& p = out.profile;
  p.name = name;
  p.gpu = gpu;
  p.file = file;
  p.backward_factor = 0;
  const double nsteps = static_cast<double>(out.steps);
  for (Group& grp : groups) {
    grp.kernel.count = static_cast<double>(grp.n) / nsteps;
    grp.kernel.ms = grp.us / static_cast<double>(grp.n) / 1e3;
    const double per_step_s = grp.us / 1e6 / nsteps;
    (grp.backward ? out.backward_s : out.forward_s) += per_step_s;
    ++(grp.kernel.kernel.op == "kernel" ? out.shapeless : out.shaped);
    (grp.backward ? p.backward_kernels : p.kernels).push_back(grp.kernel);
  }
  p.grad_bytes = allreduce_bytes / nsteps;

  // The measured breakdown, averaged over the steps.
  const Times t = measured_times(g);
  for (const StepResult& s : analyse(g, t, t)) {
    if (s.rank != out.rank) continue;
    const Breakdown& b = s.measured_breakdown;
    out.measured.span += b.span / nsteps;
    out.measured.compute += b.compute / nsteps;
    out.measured.communication += b.communication / nsteps;
    out.measured.memory += b.memory / nsteps;
    out.measured.idle += b.idle / nsteps;
    out.measured.overlap += b.overlap / nsteps;
    out.measured.exposed_communication += b.exposed_communication / nsteps;
  }
  const double hidden = out.measured.communication - out.measured.exposed_communication;
  p.overlap = out.backward_s > 0 ? std::clamp(hidden / out.backward_s, 0.0, 1.0) : 0.0;
  const double covered = out.forward_s + out.backward_s + out.measured.exposed_communication;
  p.other_s = std::max(0.0, out.measured.span - covered);

  if (p.backward_kernels.empty())
    out.notes.push_back(
        "no GPU work was launched from the backward pass (autograd ops): all of it is in "
        "`kernels` and overlap is 0");
  if (covered > out.measured.span * 1.001)
    out.notes.push_back(
        "operations on concurrent streams overlap: their summed durations exceed the step "
        "time by " +
        std::to_string((covered - out.measured.span) * 1e3) +
        " ms, so other_ms is 0 and the profile overstates the step on the traced GPU");
  for (const auto& [coll, cb] : other_collectives)
    out.notes.push_back(std::to_string(cb.first) + " " + coll + " collectives (" + mb(cb.second) +
                        " in all) are not in the profile: its model has the data-parallel all-reduce only");
  if (unknown_bytes > 0)
    out.notes.push_back(std::to_string(unknown_bytes) +
                        " collectives record no message size (no NCCL args in the trace); grad_mb counts "
                        "only the sized ones");
  if (p.grad_bytes > 0 && g.world_size <= 1)
    out.notes.push_back("the trace all-reduces " + mb(p.grad_bytes) +
                        " per step but records a world size of 1");
  return out;
}

}  // namespace fleetsim::replay
