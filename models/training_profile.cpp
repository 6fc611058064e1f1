#include "models/training_profile.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <optional>
#include <set>

#include "workloads/input_error.hpp"
#include "workloads/text.hpp"

namespace fleetsim {

namespace {

long line_of(const toml::node& n) {
  return static_cast<long>(n.source().begin.line);
}

class ProfileParser {
 public:
  explicit ProfileParser(std::string file) : file_(std::move(file)) {}

  ProfileLibrary parse() {
    toml::table root;
    try {
      root = toml::parse_file(file_);
    } catch (const toml::parse_error& e) {
      throw InputError(file_, static_cast<long>(e.source().begin.line), "", std::string(e.description()));
    }
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
    static const std::set<std::string> kKeys = {"name",    "match",           "kernels", "grad_mb",
                                                "overlap", "backward_factor", "other_ms"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        fail(v, "profile." + std::string(k.str()),
             "unknown key; valid: name, match, kernels, grad_mb, overlap, backward_factor, other_ms");
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
    const toml::node* kn = t.get("kernels");
    const toml::array* ka = kn == nullptr ? nullptr : kn->as_array();
    if (ka == nullptr || ka->empty())
      throw InputError(file_, p.line, path + ".kernels", "missing: a profile lists its forward kernels");
    for (const auto& k : *ka) {
      const toml::table* kt = k.as_table();
      if (kt == nullptr) fail(k, path + ".kernels", "expected inline tables {op = ..., ...}");
      p.kernels.push_back(kernel(*kt, path + ".kernels"));
    }
    return p;
  }

  ProfileKernel kernel(const toml::table& t, const std::string& path) const {
    static const std::set<std::string> kKeys = {"op", "dtype", "b", "m", "n", "k", "h", "count"};
    for (const auto& [k, v] : t)
      if (kKeys.count(std::string(k.str())) == 0)
        fail(v, path + "." + std::string(k.str()), "unknown key; valid: op, dtype, b, m, n, k, h, count");
    ProfileKernel pk;
    pk.line = line_of(t);
    const auto op = t["op"].value<std::string>();
    if (!op) throw InputError(file_, pk.line, path + ".op", "missing");
    if (!known_kernel_op(*op))
      throw InputError(file_, pk.line, path + ".op",
                       "unknown kernel op '" + *op +
                           "'; valid: linear, bmm, add, addu, div, divu, gelu, mul, mulu, pow, powu, "
                           "relu, tanh, ln, softmax");
    KernelDesc& d = pk.kernel;
    d.op = *op;
    if (auto dt = t["dtype"].value<std::string>())
      d.dtype = parse_dtype(*dt, file_, pk.line, path + ".dtype");
    d.b = std::max(1L, integer(t, "b", path));
    d.m = integer(t, "m", path);
    d.n = integer(t, "n", path);
    d.k = integer(t, "k", path);
    d.h = integer(t, "h", path);
    pk.count = number(t, "count", path, 1, 0, 1e9);
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

}  // namespace

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
  for (const auto& k : p.kernels) {
    const KernelPrediction pred = kernels.predict(k.kernel, gpu);
    it.forward_s += k.count * pred.seconds;
    it.label = worse(it.label, pred.label);
  }
  it.backward_s = p.backward_factor * it.forward_s;
  if (gpus > 1 && p.grad_bytes > 0) {
    CollectiveDesc c;
    c.op = Collective::all_reduce;
    c.bytes = p.grad_bytes;
    c.ranks = gpus;
    c.nodes = std::max(1, nodes);
    it.comm_s = collectives.predict(c, fabric).seconds;
  }
  it.exposed_comm_s = std::max(0.0, it.comm_s - p.overlap * it.backward_s);
  it.total_s = it.forward_s + it.backward_s + it.exposed_comm_s + p.other_s;
  return it;
}

}  // namespace fleetsim
