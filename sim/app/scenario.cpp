#include "sim/app/scenario.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/scenario_keys.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

using scenario_keys::KeySpec;
using scenario_keys::Kind;
using scenario_keys::kind_matches;
using scenario_keys::kind_name;
using scenario_keys::schema;

/// Validates and reads a parsed scenario; remembers which keys came from overrides.
class Loader {
 public:
  Loader(std::string file, std::string base_dir, std::set<std::string> overridden)
      : file_(std::move(file)), base_dir_(std::move(base_dir)), overridden_(std::move(overridden)) {}

  [[noreturn]] void fail(const std::string& key, const toml::node* n, const std::string& msg) const {
    const bool from_cli = overridden_.count(key) > 0;
    long line = (n != nullptr && !from_cli) ? static_cast<long>(n->source().begin.line) : 0;
    throw InputError(from_cli ? std::string("--set") : file_, line, key, msg);
  }

  mutable std::map<std::string, long> lines;

  void validate(const toml::table& t, const std::string& path, const std::string& schema_path) const {
    const auto& all = schema();
    auto it = all.find(schema_path);
    if (it == all.end()) return;
    const auto& keys = it->second;
    for (const auto& [k, node] : t) {
      const std::string name(k.str());
      const std::string full = path.empty() ? name : path + "." + name;
      auto spec = std::find_if(keys.begin(), keys.end(), [&](const KeySpec& s) { return name == s.key; });
      if (spec == keys.end()) {
        std::vector<std::string> valid;
        for (const auto& s : keys) valid.emplace_back(s.key);
        std::string msg = "unknown key '" + name + "'";
        if (auto best = closest(name, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
        msg += "; valid keys here: " + join(valid, ", ");
        const long line = static_cast<long>(k.source().begin.line);
        if (overridden_.count(full) > 0) throw InputError("--set", 0, full, msg);
        throw InputError(file_, line, full, msg);
      }
      lines[full] = overridden_.count(full) > 0 ? 0 : static_cast<long>(k.source().begin.line);
      if (!kind_matches(node, spec->kind))
        fail(full, &node, std::string("expected ") + kind_name(spec->kind));
      const std::string child_schema = schema_path.empty() ? name : schema_path + "." + name;
      if (spec->kind == Kind::kTable) validate(*node.as_table(), full, child_schema);
      if (spec->kind == Kind::kTableArray && node.is_array()) {
        std::size_t i = 0;
        for (const auto& elem : *node.as_array()) {
          validate(*elem.as_table(), full + "." + std::to_string(i), child_schema + "[]");
          ++i;
        }
      }
    }
  }

  template <typename T>
  T get(const toml::table& t, const std::string& path, const char* key, T fallback) const {
    const toml::node* n = t.get(key);
    if (n == nullptr) return fallback;
    const std::string full = path.empty() ? key : path + "." + key;
    if constexpr (std::is_same_v<T, std::string>) {
      return std::string(*n->as_string());
    } else if constexpr (std::is_same_v<T, bool>) {
      return n->as_boolean()->get();
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(n->as_integer()->get());
    } else {
      return n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
    }
  }

  const toml::node* node(const toml::table& t, const char* key) const { return t.get(key); }

  /// A path value: relative to the scenario folder, or to the cwd when it came from --set.
  std::string path_value(const toml::table& t, const std::string& path, const char* key) const {
    const std::string v = get<std::string>(t, path, key, "");
    if (v.empty()) return v;
    const std::string full = path + "." + key;
    fs::path p(v);
    if (p.is_absolute() || overridden_.count(full) > 0 || base_dir_.empty())
      return p.lexically_normal().string();
    return (fs::path(base_dir_) / p).lexically_normal().string();
  }

  const std::string& file() const { return file_; }

  /// A free-form options table (e.g. scheduler.options) as Options (values kept as text).
  Options options(const toml::table& parent, const std::string& full) const {
    const std::string key = full.substr(full.rfind('.') + 1);
    std::map<std::string, Options::Value> values;
    const toml::table* t = parent[key].as_table();
    if (t == nullptr) return Options({}, file_, full);
    for (const auto& [k, node] : *t) {
      const std::string name(k.str());
      const std::string fk = full + "." + name;
      Options::Value v;
      v.line = overridden_.count(fk) > 0 ? 0 : static_cast<long>(k.source().begin.line);
      if (overridden_.count(fk) > 0) v.origin = "--set";
      if (const toml::array* arr = node.as_array()) {
        std::vector<std::string> parts;
        for (const auto& e : *arr) parts.push_back(scalar_text(e, fk));
        v.text = join(parts, ",");
      } else {
        v.text = scalar_text(node, fk);
      }
      values[name] = v;
    }
    return Options(std::move(values), file_, full);
  }

  std::string scalar_text(const toml::node& n, const std::string& key) const {
    if (n.is_string()) return std::string(*n.as_string());
    if (n.is_integer()) return std::to_string(n.as_integer()->get());
    if (n.is_floating_point()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", n.as_floating_point()->get());
      return buf;
    }
    if (n.is_boolean()) return n.as_boolean()->get() ? "true" : "false";
    fail(key, &n, "expected a number, string, boolean or an array of them");
  }
  bool is_overridden(const std::string& key) const { return overridden_.count(key) > 0; }

 private:
  std::string file_;
  std::string base_dir_;
  std::set<std::string> overridden_;
};

// --set a.b.0.c=value: navigate (creating tables as needed) and replace the value.
void apply_override(toml::table& root, const std::string& assignment, std::set<std::string>& overridden) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", 0, assignment, "expected KEY=VALUE (e.g. cluster.pool.0.nodes=64)");
  const std::string key(trim(std::string_view(assignment).substr(0, eq)));
  const std::string text(trim(std::string_view(assignment).substr(eq + 1)));
  const auto parts = split(key, '.');

  // Value: TOML syntax if it parses (numbers, booleans, quoted strings, arrays), else a bare string.
  toml::table holder;
  try {
    holder = toml::parse("v = " + text);
  } catch (const toml::parse_error&) {
    holder.insert_or_assign("v", text);
  }
  toml::node* value = holder.get("v");

  toml::node* cur = &root;
  std::string canonical;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) throw InputError("--set", 0, key, "empty key segment");
    canonical += (canonical.empty() ? "" : ".") + part;
    const bool last = i + 1 == parts.size();
    if (auto* tbl = cur->as_table()) {
      if (last) {
        tbl->insert_or_assign(part, *value);
        break;
      }
      if (!tbl->contains(part)) {
        const std::string& next = parts[i + 1];
        const bool index_next = !next.empty() && std::all_of(next.begin(), next.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
        if (index_next) {
          tbl->insert(part, toml::array{});
        } else {
          tbl->insert(part, toml::table{});
        }
      }
      cur = tbl->get(part);
    } else if (auto* arr = cur->as_array()) {
      long long idx = -1;
      try {
        idx = parse_int(part, "--set", 0, key);
      } catch (const InputError&) {
        throw InputError("--set", 0, key, "'" + part + "' must be an array index");
      }
      if (idx < 0 || static_cast<std::size_t>(idx) > arr->size())
        throw InputError("--set", 0, key,
                         "index " + part + " out of range (array has " + std::to_string(arr->size()) + ")");
      if (static_cast<std::size_t>(idx) == arr->size()) arr->push_back(toml::table{});
      if (last) {
        arr->replace(arr->begin() + idx, *value);
        break;
      }
      cur = arr->get(static_cast<std::size_t>(idx));
    } else {
      // Name the value being descended into, not the segment below it.
      throw InputError("--set", 0, key,
                       "'" + canonical.substr(0, canonical.rfind('.')) + "' is a value, not a table");
    }
  }
  overridden.insert(key);
}

Topology parse_topology(const std::string& v, const Loader& l, const toml::node* n) {
  if (v == "leaf-spine") return Topology::kLeafSpine;
  if (v == "fat-tree") return Topology::kFatTree;
  if (v == "rail-optimized") return Topology::kRailOptimized;
  l.fail("cluster.network.topology", n,
         "unknown topology '" + v + "'; valid: fat-tree, leaf-spine, rail-optimized");
}

IntraNode parse_intra(const std::string& v, const Loader& l, const toml::node* n) {
  if (v == "nvlink") return IntraNode::kNvlink;
  if (v == "nvswitch") return IntraNode::kNvswitch;
  if (v == "pcie") return IntraNode::kPcie;
  l.fail("cluster.network.intra_node", n, "unknown interconnect '" + v + "'; valid: nvlink, nvswitch, pcie");
}

// [cluster]: pools (or an openb node list) and the network.
ClusterSpec build_cluster(const toml::table& root, const Loader& l) {
  const toml::table* cl = root["cluster"].as_table();
  if (cl == nullptr) throw InputError(l.file(), 0, "cluster", "missing [cluster] section");
  NetworkSpec net;
  if (const toml::table* nt = (*cl)["network"].as_table()) {
    const std::string p = "cluster.network";
    net.topology =
        parse_topology(l.get<std::string>(*nt, p, "topology", "leaf-spine"), l, nt->get("topology"));
    net.nodes_per_leaf = l.get<int>(*nt, p, "nodes_per_leaf", net.nodes_per_leaf);
    net.oversubscription = l.get<double>(*nt, p, "oversubscription", net.oversubscription);
    net.nic_gbps = l.get<double>(*nt, p, "nic_gbps", net.nic_gbps);
    net.nics_per_node = l.get<int>(*nt, p, "nics_per_node", net.nics_per_node);
    net.gpus_per_nic = l.get<int>(*nt, p, "gpus_per_nic", net.gpus_per_nic);
    net.switch_ports = l.get<int>(*nt, p, "switch_ports", net.switch_ports);
    net.intra_node =
        parse_intra(l.get<std::string>(*nt, p, "intra_node", "nvlink"), l, nt->get("intra_node"));
    net.intra_node_gbps = l.get<double>(*nt, p, "intra_node_gbps", net.intra_node_gbps);
    net.link_latency_s = l.get<double>(*nt, p, "latency_us", net.link_latency_s * 1e6) * 1e-6;
    if (net.link_latency_s < 0) l.fail(p + ".latency_us", nt->get("latency_us"), "must be >= 0");
  }
  const std::string nodes_csv = l.path_value(*cl, "cluster", "nodes_csv");
  const toml::array* pools = (*cl)["pool"].as_array();
  if (!nodes_csv.empty() && pools != nullptr && !pools->empty())
    l.fail("cluster.nodes_csv", cl->get("nodes_csv"),
           "give either cluster.nodes_csv or [[cluster.pool]], not both");
  if (!nodes_csv.empty()) return read_openb_nodes(nodes_csv, net);
  if (pools == nullptr || pools->empty())
    throw InputError(l.file(), 0, "cluster.pool",
                     "no [[cluster.pool]] and no cluster.nodes_csv: the cluster is empty");
  std::vector<PoolSpec> specs;
  for (std::size_t i = 0; i < pools->size(); ++i) {
    const toml::table& pt = *pools->get(i)->as_table();
    const std::string p = "cluster.pool." + std::to_string(i);
    PoolSpec ps;
    ps.name = l.get<std::string>(pt, p, "name", "pool" + std::to_string(i));
    if (pt.get("nodes") == nullptr)
      throw InputError(l.file(), static_cast<long>(pt.source().begin.line), p + ".nodes",
                       "missing (number of nodes)");
    ps.nodes = l.get<int>(pt, p, "nodes", 1);
    ps.gpus_per_node = l.get<int>(pt, p, "gpus_per_node", ps.gpus_per_node);
    const std::string gpu = l.get<std::string>(pt, p, "gpu", ps.gpu);
    const toml::node* gn = pt.get("gpu");
    const std::string gkey = p + ".gpu";
    const bool cli = l.is_overridden(gkey);
    ps.gpu = gpu_spec(gpu, cli ? "--set" : l.file(),
                      (gn != nullptr && !cli) ? static_cast<long>(gn->source().begin.line) : 0, gkey)
                 .name;
    ps.cpus_per_node = l.get<int>(pt, p, "cpus_per_node", ps.cpus_per_node);
    ps.memory_gib = l.get<double>(pt, p, "memory_gib", ps.memory_gib);
    specs.push_back(ps);
  }
  return expand_pools(std::move(specs), net, l.file());
}

Scenario build(const toml::table& root, const Loader& l) {
  Scenario s;
  s.file = l.file();
  const long long seed = l.get<long long>(root, "", "seed", 1);
  if (seed < 0) l.fail("seed", root.get("seed"), "must be >= 0");
  s.seed = static_cast<std::uint64_t>(seed);

  s.cluster = build_cluster(root, l);
  const toml::table empty;

  // --- workload
  const toml::table* wt = root["workload"].as_table();
  if (wt == nullptr) throw InputError(s.file, 0, "workload", "missing [workload] section");
  WorkloadConfig& w = s.workload;
  w.scenario_file = s.file;
  w.format = l.get<std::string>(*wt, "workload", "format", "");
  if (w.format.empty())
    throw InputError(s.file, static_cast<long>(wt->source().begin.line), "workload.format",
                     "missing (openb, philly-gavel, csv or synthetic)");
  w.path = l.path_value(*wt, "workload", "path");
  w.throughputs = l.path_value(*wt, "workload", "throughputs");
  w.gpu_type = l.get<std::string>(*wt, "workload", "gpu_type", "v100");
  w.time_format = l.get<std::string>(*wt, "workload", "time_format", "");
  const std::string delim = l.get<std::string>(*wt, "workload", "delimiter", ",");
  if (delim.size() != 1 && delim != "\\t")
    l.fail("workload.delimiter", wt->get("delimiter"), "must be one character");
  w.delimiter = delim == "\\t" ? '\t' : delim[0];
  s.workload_limit = l.get<long>(*wt, "workload", "limit", 0);
  if (s.workload_limit < 0) l.fail("workload.limit", wt->get("limit"), "must be >= 0");
  if (const toml::table* ct = (*wt)["columns"].as_table())
    for (const auto& [k, v] : *ct) w.columns[std::string(k.str())] = std::string(*v.as_string());
  SyntheticConfig& sy = w.synthetic;
  sy.jobs = l.get<long>(*wt, "workload", "jobs", sy.jobs);
  sy.arrival_rate_per_hour =
      l.get<double>(*wt, "workload", "arrival_rate_per_hour", sy.arrival_rate_per_hour);
  sy.duration_median_s = l.get<double>(*wt, "workload", "duration_median_s", sy.duration_median_s);
  sy.duration_sigma = l.get<double>(*wt, "workload", "duration_sigma", sy.duration_sigma);
  sy.duration_min_s = l.get<double>(*wt, "workload", "duration_min_s", sy.duration_min_s);
  sy.duration_max_s = l.get<double>(*wt, "workload", "duration_max_s", sy.duration_max_s);
  sy.seed =
      static_cast<std::uint64_t>(l.get<long long>(*wt, "workload", "seed", static_cast<long long>(s.seed)));
  if (const toml::array* a = (*wt)["gpus_values"].as_array()) {
    sy.gpus_values.clear();
    for (const auto& e : *a) {
      if (!e.is_integer()) l.fail("workload.gpus_values", &e, "expected integers");
      sy.gpus_values.push_back(static_cast<int>(e.as_integer()->get()));
    }
  }
  if (const toml::array* a = (*wt)["gpus_weights"].as_array()) {
    sy.gpus_weights.clear();
    for (const auto& e : *a) {
      if (!e.is_number()) l.fail("workload.gpus_weights", &e, "expected numbers");
      sy.gpus_weights.push_back(e.is_integer() ? static_cast<double>(e.as_integer()->get())
                                               : e.as_floating_point()->get());
    }
  }

  if (const toml::array* a = (*wt)["models"].as_array()) {
    for (const auto& e : *a) {
      if (!e.is_string() || e.as_string()->get().empty())
        l.fail("workload.models", &e, "expected non-empty strings");
      sy.models.push_back(e.as_string()->get());
    }
  }

  // --- scheduler, execution, output
  const toml::table& st = root["scheduler"].as_table() ? *root["scheduler"].as_table() : empty;
  s.scheduler.policy = l.get<std::string>(st, "scheduler", "policy", s.scheduler.policy);
  s.scheduler.placement = l.get<std::string>(st, "scheduler", "placement", s.scheduler.placement);
  const toml::table& et = root["execution"].as_table() ? *root["execution"].as_table() : empty;
  s.execution.job_model = l.get<std::string>(et, "execution", "job_model", s.execution.job_model);
  s.execution.throughputs = l.path_value(et, "execution", "throughputs");
  if (s.execution.throughputs.empty()) s.execution.throughputs = w.throughputs;
  s.execution.reference_gpu = l.get<std::string>(et, "execution", "reference_gpu", s.execution.reference_gpu);
  s.execution.profiles = l.path_value(et, "execution", "profiles");
  s.execution.calibration = l.path_value(et, "execution", "calibration");
  s.execution.kernel_model = l.get<std::string>(et, "execution", "kernel_model", s.execution.kernel_model);
  s.execution.collective_model =
      l.get<std::string>(et, "execution", "collective_model", s.execution.collective_model);
  s.execution.restart_overhead_s =
      l.get<double>(et, "execution", "restart_overhead_s", s.execution.restart_overhead_s);
  s.execution.restart_s_per_gb =
      l.get<double>(et, "execution", "restart_s_per_gb", s.execution.restart_s_per_gb);
  s.execution.state_gb_per_gpu =
      l.get<double>(et, "execution", "state_gb_per_gpu", s.execution.state_gb_per_gpu);
  for (const char* k : {"restart_overhead_s", "restart_s_per_gb", "state_gb_per_gpu"})
    if (l.get<double>(et, "execution", k, 0) < 0)
      l.fail(std::string("execution.") + k, et.get(k), "must be >= 0");
  s.execution.colocation_slowdown =
      l.get<double>(et, "execution", "colocation_slowdown", s.execution.colocation_slowdown);
  if (!(s.execution.colocation_slowdown > 0) || s.execution.colocation_slowdown > 1)
    l.fail("execution.colocation_slowdown", et.get("colocation_slowdown"), "must be in (0, 1]");
  s.execution.fidelity = l.get<std::string>(et, "execution", "fidelity", s.execution.fidelity);
  if (s.execution.fidelity != "delay" && s.execution.fidelity != "network")
    l.fail("execution.fidelity", et.get("fidelity"), "must be \"delay\" or \"network\"");
  s.execution.grad_mb_default =
      l.get<double>(et, "execution", "grad_mb_default", s.execution.grad_mb_default);
  if (!(s.execution.grad_mb_default >= 0))
    l.fail("execution.grad_mb_default", et.get("grad_mb_default"), "must be >= 0");
  s.execution.iteration_compute_s =
      l.get<double>(et, "execution", "iteration_compute_s", s.execution.iteration_compute_s);
  if (!(s.execution.iteration_compute_s > 0))
    l.fail("execution.iteration_compute_s", et.get("iteration_compute_s"), "must be > 0");
  s.execution.chunks_shared = l.get<int>(et, "execution", "chunks_shared", s.execution.chunks_shared);
  if (s.execution.chunks_shared < 1)
    l.fail("execution.chunks_shared", et.get("chunks_shared"), "must be >= 1");
  s.scheduler.options = l.options(st, "scheduler.options");
  s.scheduler.placement_options = l.options(st, "scheduler.placement_options");
  const toml::table& pt = root["power"].as_table() ? *root["power"].as_table() : empty;
  PowerConfig& pw = s.power;
  pw.busy_fraction = l.get<double>(pt, "power", "busy_fraction", pw.busy_fraction);
  if (!(pw.busy_fraction > 0) || pw.busy_fraction > 1)
    l.fail("power.busy_fraction", pt.get("busy_fraction"), "must be in (0, 1]");
  for (auto [key, field] :
       {std::pair{"node_base_w", &pw.node_base_w}, std::pair{"nic_w", &pw.nic_w},
        std::pair{"switch_w", &pw.switch_w}, std::pair{"price_per_kwh", &pw.price_per_kwh}}) {
    *field = l.get<double>(pt, "power", key, *field);
    if (!(*field >= 0) || !std::isfinite(*field))
      l.fail(std::string("power.") + key, pt.get(key), "must be >= 0, got " + fmt(*field));
  }
  pw.pue = l.get<double>(pt, "power", "pue", pw.pue);
  if (!(pw.pue >= 1) || !std::isfinite(pw.pue))
    l.fail("power.pue", pt.get("pue"), "must be >= 1 (facility / IT energy), got " + fmt(pw.pue));
  const toml::table& ot = root["output"].as_table() ? *root["output"].as_table() : empty;
  s.output.dir = l.path_value(ot, "output", "dir");
  if (s.output.dir.empty()) s.output.dir = OutputConfig{}.dir;
  s.output.timeseries = l.get<bool>(ot, "output", "timeseries", true);
  return s;
}

}  // namespace

std::string Scenario::key_file(const std::string& key) const {
  return overridden.count(key) > 0 ? "--set" : file;
}
long Scenario::key_line(const std::string& key) const {
  auto it = key_lines.find(key);
  return it == key_lines.end() ? 0 : it->second;
}

std::string describe_scenario_keys() {
  std::string out;
  for (const auto& [table, keys] : schema()) {
    out += table.empty() ? std::string("(top level)") : "[" + table + "]";
    out += "\n";
    for (const auto& k : keys) {
      if (k.kind == Kind::kTable || k.kind == Kind::kTableArray) continue;
      char buf[256];
      std::snprintf(buf, sizeof buf, "  %-24s %s\n", k.key, k.doc);
      out += buf;
    }
  }
  return out;
}

namespace {

// Parses TOML text and applies --set overrides (the Loader validates the keys).
toml::table parse_with_overrides(const std::string& toml_text, const std::string& name,
                                 const std::vector<std::string>& overrides,
                                 std::set<std::string>& overridden) {
  toml::table root;
  try {
    root = toml::parse(toml_text, name);
  } catch (const toml::parse_error& e) {
    throw InputError(name, static_cast<long>(e.source().begin.line), "", std::string(e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o, overridden);
  return root;
}

std::string read_scenario_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  if (text.find('\0') != std::string::npos) throw InputError(path, 0, "", "binary file, not a TOML scenario");
  return text;
}

std::string base_dir_of(const std::string& path) {
  const std::string base = fs::path(path).parent_path().string();
  return base.empty() ? "." : base;
}

}  // namespace

Scenario parse_scenario(const std::string& toml_text, const std::string& name, const std::string& base_dir,
                        const std::vector<std::string>& overrides) {
  std::set<std::string> overridden;
  const toml::table root = parse_with_overrides(toml_text, name, overrides, overridden);
  Loader loader(name, base_dir, overridden);
  loader.validate(root, "", "");
  Scenario s = build(root, loader);
  s.key_lines = loader.lines;
  s.overridden = overridden;
  return s;
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_scenario_text(path), path, base_dir_of(path), overrides);
}

ClusterSpec load_cluster(const std::string& path) {
  std::set<std::string> overridden;
  const toml::table root = parse_with_overrides(read_scenario_text(path), path, {}, overridden);
  Loader loader(path, base_dir_of(path), overridden);
  loader.validate(root, "", "");
  return build_cluster(root, loader);
}

}  // namespace fleetsim
