#include "models/job/training_profile.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <ostream>
#include <set>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/base/toml_input.hpp"

namespace fleetsim {

namespace {

long line_of(const toml::node& n) {
  return static_cast<long>(n.source().begin.line);
}

class ProfileParser {
 public:
  explicit ProfileParser(std::string file) : file_(std::move(file)) {}

  ProfileLibrary parse() {
    const toml::table root = parse_toml(read_input_file(file_), file_);
    for (const auto& [k, v] : root)
      if (k.str() != "profile")
        throw InputError(file_, line_of(v), std::string(k.str()),
                         "unknown top-level key (a profile file has [[profile]] tables)");
    const toml::array* arr = root["profile"].as_array();
    if (arr == nullptr || arr->empty())
      throw InputError(file_, 0, "profile", "no [[profile]] tables in the profile file");
    ProfileLibrary lib;
    std::set<std::string> names;
    for (const auto& node : *arr) {
      const toml::table* t = node.as_table();
      if (t == nullptr) throw InputError(file_, line_of(node), "profile", "expected [[profile]] tables");
      TrainingProfile p = profile(*t);
      if (!names.insert(lower(p.name)).second)
        throw InputError(file_, p.line, "profile.name", "duplicate profile '" + p.name + "'");
      lib.profiles.push_back(std::move(p));
    }
    return lib;
  }

 private:
  std::string file_;

  [[noreturn]] void fail(const toml::node& n, const std::string& key, const std::string& msg) const {
    throw InputError(file_, line_of(n), key, msg);
  }

  double number(const toml::table& t, const char* key, const std::string& path, double fallback, double lo,
                double hi) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return fallback;
    std::optional<double> v = n->value<double>();
    if (!v) fail(*n, path + "." + key, "expected a number");
    if (*v < lo || *v > hi) fail(*n, path + "." + key, "must be in [" + fmt(lo) + ", " + fmt(hi) + "]");
    return *v;
  }

  long integer(const toml::table& t, const char* key, const std::string& path) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return 0;
    std::optional<int64_t> v = n->value<int64_t>();
    if (!v || *v < 0) fail(*n, path + "." + key, "expected a non-negative integer");
    return static_cast<long>(*v);
  }

  TrainingProfile profile(const toml::table& t) {
    static const std::set<std::string> kKeys = {"name",    "match",    "kernels",   "backward_kernels",
                                                "grad_mb", "overlap",  "other_ms",  "backward_factor",
                                                "gpu",     "host_ops", "host_op_us"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        fail(v, "profile." + std::string(k.str()),
             "unknown key; valid: name, match, kernels, backward_kernels, grad_mb, overlap, "
             "backward_factor, other_ms, host_ops, host_op_us, gpu");
    TrainingProfile p;
    p.file = file_;
    p.line = line_of(t);
    const auto name = t["name"].value<std::string>();
    if (!name || name->empty()) throw InputError(file_, p.line, "profile.name", "missing or empty");
    p.name = *name;
    const std::string path = "profile '" + p.name + "'";
    if (const toml::node* m = t.get("match")) {
      const toml::array* a = m->as_array();
      if (a == nullptr) fail(*m, path + ".match", "expected an array of strings");
      for (const auto& s : *a) {
        auto v = s.value<std::string>();
        if (!v || v->empty()) fail(s, path + ".match", "expected non-empty strings");
        p.match.push_back(*v);
      }
    }
    p.grad_bytes = number(t, "grad_mb", path, 0, 0, 1e9) * 1e6;
    p.overlap = number(t, "overlap", path, 0, 0, 1);
    p.backward_factor = number(t, "backward_factor", path, 2, 0, 100);
    p.other_s = number(t, "other_ms", path, 0, 0, 1e9) / 1e3;
    p.host_ops = number(t, "host_ops", path, 0, 0, 1e9);
    p.host_op_s = number(t, "host_op_us", path, kHostOpSeconds * 1e6, 0, 1e6) / 1e6;
    if (const toml::node* g = t.get("gpu")) {
      const auto type = g->value<std::string>();
      if (!type) fail(*g, path + ".gpu", "expected a GPU type name");
      p.gpu = &gpu_spec(*type, file_, line_of(*g), path + ".gpu");
    }
    p.kernels = kernel_list(t, "kernels", path);
    p.backward_kernels = kernel_list(t, "backward_kernels", path);
    if (p.kernels.empty() && p.backward_kernels.empty())
      throw InputError(file_, p.line, path + ".kernels", "missing: a profile lists its forward kernels");
    if (t.get("backward_kernels") != nullptr) {
      if (const toml::node* f = t.get("backward_factor"))
        fail(*f, path + ".backward_factor", "give backward_kernels or backward_factor, not both");
      p.backward_factor = 0;
    }
    for (const auto* list : {&p.kernels, &p.backward_kernels})
      for (const auto& k : *list)
        if (k.ms > 0 && p.gpu == nullptr)
          throw InputError(file_, k.line, path + ".gpu",
                           "kernels with ms need the GPU they were measured on");
    return p;
  }

  std::vector<ProfileKernel> kernel_list(const toml::table& t, const char* key,
                                         const std::string& path) const {
    std::vector<ProfileKernel> out;
    const toml::node* kn = t.get(key);
    if (kn == nullptr) return out;
    const toml::array* ka = kn->as_array();
    if (ka == nullptr) fail(*kn, path + "." + key, "expected an array of inline tables");
    for (const auto& k : *ka) {
      const toml::table* kt = k.as_table();
      if (kt == nullptr) fail(k, path + "." + key, "expected inline tables {op = ..., ...}");
      out.push_back(kernel(*kt, path + "." + key));
    }
    return out;
  }

  ProfileKernel kernel(const toml::table& t, const std::string& path) const {
    static const std::set<std::string> kKeys = {"op", "dtype", "b",  "m",     "n",   "k",
                                                "h",  "count", "ms", "scale", "name"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        fail(v, path + "." + std::string(k.str()),
             "unknown key; valid: op, dtype, b, m, n, k, h, count, ms, scale, name");
    ProfileKernel pk;
    pk.line = line_of(t);
    const auto op = t["op"].value<std::string>();
    if (!op) throw InputError(file_, pk.line, path + ".op", "missing");
    if (*op != "kernel" && !known_kernel_op(*op))
      throw InputError(file_, pk.line, path + ".op",
                       "unknown kernel op '" + *op +
                           "'; valid: linear, bmm, add, addu, div, divu, gelu, mul, mulu, pow, powu, "
                           "relu, tanh, ln, softmax, kernel (measured, no shape)");
    pk.ms = number(t, "ms", path, 0, 0, 1e9);
    pk.count = number(t, "count", path, 1, 0, 1e9);
    if (auto nm = t["name"].value<std::string>()) pk.name = *nm;
    if (const toml::node* sc = t.get("scale")) {
      const auto v = sc->value<std::string>();
      const auto scale = v ? parse_kernel_scale(*v) : std::nullopt;
      if (!scale || *scale == KernelScale::model)
        fail(*sc, path + ".scale", "expected one of memory, fp32, tensor, fixed");
      if (*op != "kernel") fail(*sc, path + ".scale", "only op = \"kernel\" entries (no shape) take a scale");
      pk.scale = *scale;
    }
    if (*op == "kernel") {
      for (const char* shape_key : {"dtype", "b", "m", "n", "k", "h"})
        if (const toml::node* n = t.get(shape_key))
          fail(*n, path + "." + shape_key,
               "an op = \"kernel\" entry has no shape (it is timed by ms and scale)");
      if (pk.ms <= 0 || pk.scale == KernelScale::model)
        throw InputError(file_, pk.line, path, "an op = \"kernel\" entry needs ms and scale");
      pk.kernel.op = *op;
      return pk;
    }
    KernelDesc& d = pk.kernel;
    d.op = *op;
    if (auto dt = t["dtype"].value<std::string>())
      d.dtype = parse_dtype(*dt, file_, pk.line, path + ".dtype");
    d.b = std::max(1L, integer(t, "b", path));
    d.m = integer(t, "m", path);
    d.n = integer(t, "n", path);
    d.k = integer(t, "k", path);
    d.h = integer(t, "h", path);
    if (d.is_gemm() && (d.m == 0 || d.n == 0 || d.k == 0))
      throw InputError(file_, pk.line, path, "a " + d.op + " kernel needs m, n and k");
    if (!d.is_gemm() && d.h == 0)
      throw InputError(file_, pk.line, path, "a " + d.op + " kernel needs h (and b rows)");
    return pk;
  }
};

PredictionLabel worse(PredictionLabel a, PredictionLabel b) {
  return static_cast<int>(a) > static_cast<int>(b) ? a : b;
}

/// Seconds one invocation of `k` takes on `gpu`; widens `label`.
double kernel_seconds(const ProfileKernel& k, const TrainingProfile& p, const GpuSpec& gpu,
                      const KernelModel& kernels, PredictionLabel& label) {
  if (k.ms <= 0 || p.gpu == nullptr) {
    const KernelPrediction pred = kernels.predict(k.kernel, gpu);
    label = worse(label, pred.label);
    return pred.seconds;
  }
  const double measured = k.ms / 1e3;
  if (&gpu == p.gpu || gpu.name == p.gpu->name) return measured;
  if (k.scale != KernelScale::model) {
    label = worse(label, PredictionLabel::extrapolated);
    return measured * spec_ratio(k.scale, *p.gpu, gpu);
  }
  const KernelPrediction on_gpu = kernels.predict(k.kernel, gpu);
  const KernelPrediction traced = kernels.predict(k.kernel, *p.gpu);
  label = worse(label, on_gpu.label);
  return traced.seconds > 0 ? measured * on_gpu.seconds / traced.seconds : measured;
}

std::string toml_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);  // "1e-05", "0.25", "3": all valid TOML numbers
  return buf;
}

void write_kernels(std::ostream& out, const char* key, const std::vector<ProfileKernel>& list) {
  out << key << " = [\n";
  for (const auto& k : list) {
    const KernelDesc& d = k.kernel;
    out << "  { op = " << toml_string(d.op);
    if (d.op == "kernel") {
      out << ", scale = " << toml_string(to_string(k.scale));
    } else {
      if (d.dtype != DType::fp32) out << ", dtype = " << toml_string(to_string(d.dtype));
      if (d.b != 1) out << ", b = " << d.b;
      if (d.is_gemm()) {
        out << ", m = " << d.m << ", n = " << d.n << ", k = " << d.k;
      } else {
        out << ", h = " << d.h;
      }
    }
    out << ", count = " << num(k.count);
    if (k.ms > 0) out << ", ms = " << num(k.ms);
    if (!k.name.empty()) out << ", name = " << toml_string(k.name);
    out << " },\n";
  }
  out << "]\n";
}

}  // namespace

void write_profile(std::ostream& out, const TrainingProfile& p) {
  out << "[[profile]]\nname = " << toml_string(p.name) << "\n";
  if (!p.match.empty()) {
    out << "match = [";
    for (std::size_t i = 0; i < p.match.size(); ++i) out << (i > 0 ? ", " : "") << toml_string(p.match[i]);
    out << "]\n";
  }
  if (p.gpu != nullptr) out << "gpu = " << toml_string(p.gpu->name) << "\n";
  out << "grad_mb = " << num(p.grad_bytes / 1e6) << "\noverlap = " << num(p.overlap)
      << "\nother_ms = " << num(p.other_s * 1e3) << "\n";
  if (p.host_ops > 0) out << "host_ops = " << num(p.host_ops) << "\n";
  if (std::abs(p.host_op_s - kHostOpSeconds) > 1e-12)
    out << "host_op_us = " << num(p.host_op_s * 1e6) << "\n";
  if (p.backward_kernels.empty()) out << "backward_factor = " << num(p.backward_factor) << "\n";
  write_kernels(out, "kernels", p.kernels);
  if (!p.backward_kernels.empty()) write_kernels(out, "backward_kernels", p.backward_kernels);
}

const TrainingProfile* ProfileLibrary::find(std::string_view model) const {
  const std::string m = lower(model);
  for (const auto& p : profiles)
    if (lower(p.name) == m) return &p;
  for (const auto& p : profiles)
    for (const auto& s : p.match)
      if (m.find(lower(s)) != std::string::npos) return &p;
  return nullptr;
}

ProfileLibrary read_profiles(const std::string& path) {
  return ProfileParser(path).parse();
}

IterationTime iteration_time(const TrainingProfile& p, const GpuSpec& gpu, int gpus, int nodes,
                             const KernelModel& kernels, const CollectiveModel& collectives,
                             const CommFabric& fabric) {
  IterationTime it;
  for (const auto& k : p.kernels) it.forward_s += k.count * kernel_seconds(k, p, gpu, kernels, it.label);
  it.backward_s = p.backward_factor * it.forward_s;
  for (const auto& k : p.backward_kernels)
    it.backward_s += k.count * kernel_seconds(k, p, gpu, kernels, it.label);
  if (gpus > 1 && p.grad_bytes > 0) {
    CollectiveDesc c;
    c.op = Collective::all_reduce;
    c.bytes = p.grad_bytes;
    c.ranks = gpus;
    c.nodes = std::max(1, nodes);
    it.comm_s = collectives.predict(c, fabric).seconds;
  }
  it.exposed_comm_s = std::max(0.0, it.comm_s - p.overlap * it.backward_s);
  it.host_s = p.host_ops * p.host_op_s;
  it.total_s = it.forward_s + it.backward_s + it.exposed_comm_s + it.host_s + p.other_s;
  return it;
}

}  // namespace fleetsim
