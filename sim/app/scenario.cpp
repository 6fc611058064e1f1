#include "sim/app/scenario.hpp"

#include <toml++/toml.h>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/scenario_overrides.hpp"
#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/base/toml_input.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

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
  mutable std::vector<Scenario::InputPath> input_paths;  ///< every path value read, for check_input_paths

  /// Checks `t` (at `path`, declared as `schema_path`) against the declared keys, recursively, and
  /// runs each present key's range check.
  void validate(const toml::table& t, const std::string& path, const std::string& schema_path) const {
    const KeyRegistry& reg = scenario_keys();
    for (const auto& [k, node] : t) {
      const std::string name(k.str());
      const std::string full = path.empty() ? name : path + "." + name;
      const long line = overridden_.count(full) > 0 ? 0 : static_cast<long>(k.source().begin.line);
      const std::string where = overridden_.count(full) > 0 ? std::string("--set") : file_;
      const KeyDecl* spec = reg.find(schema_path, name);
      if (spec == nullptr) {
        if (const RetiredKey* old = reg.retired(schema_path, name))
          throw InputError(where, line, full, old->message);
        std::vector<std::string> valid;
        for (const KeyDecl* d : reg.in_table(schema_path)) valid.push_back(d->name);
        std::string msg = "unknown key '" + name + "'";
        if (auto best = closest(name, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
        msg += "; valid keys here: " + join(valid, ", ");
        throw InputError(where, line, full, msg);
      }
      lines[full] = line;
      check_kind(node, *spec, full);
      const std::string child_schema = schema_path.empty() ? name : schema_path + "." + name;
      if (spec->kind == KeyKind::kTable || spec->kind == KeyKind::kStringTable)
        validate(*node.as_table(), full, child_schema);
      if (spec->kind == KeyKind::kTableArray && node.is_array()) {
        std::size_t i = 0;
        for (const auto& elem : *node.as_array()) {
          validate(*elem.as_table(), full + "." + std::to_string(i), child_schema + "[]");
          ++i;
        }
      }
    }
    const Options values = bag(t, path, schema_path);
    for (const KeyDecl* d : reg.in_table(schema_path))
      if (d->check && values.has(d->name)) d->check(values, d->name);
  }

  void check_kind(const toml::node& n, const KeyDecl& spec, const std::string& full) const {
    const auto expect = [&](bool ok, const std::string& what) {
      if (!ok) fail(full, &n, "expected " + what);
    };
    switch (spec.kind) {
      case KeyKind::kInt:
        return expect(n.is_integer(), kind_name(spec.kind));
      case KeyKind::kFloat:
        return expect(n.is_integer() || n.is_floating_point(), kind_name(spec.kind));
      case KeyKind::kString:
      case KeyKind::kPath:
        return expect(n.is_string(), kind_name(spec.kind));
      case KeyKind::kBool:
        return expect(n.is_boolean(), kind_name(spec.kind));
      case KeyKind::kTable:
      case KeyKind::kFreeTable:
        return expect(n.is_table(), kind_name(spec.kind));
      case KeyKind::kStringTable:
        expect(n.is_table(), kind_name(spec.kind));
        for (const auto& [k, v] : *n.as_table())
          if (!v.is_string()) fail(full + "." + std::string(k.str()), &v, "expected a string");
        return;
      case KeyKind::kTableArray:
        return expect(n.is_array_of_tables() || (n.is_array() && n.as_array()->empty()),
                      kind_name(spec.kind));
      case KeyKind::kIntArray:
      case KeyKind::kNumberArray:
      case KeyKind::kStringArray:
        break;
    }
    expect(n.is_array(), kind_name(spec.kind));
    for (const auto& e : *n.as_array()) {
      if (spec.kind == KeyKind::kIntArray && !e.is_integer()) fail(full, &e, "expected integers");
      if (spec.kind == KeyKind::kNumberArray && !e.is_number()) fail(full, &e, "expected numbers");
      if (spec.kind == KeyKind::kStringArray && (!e.is_string() || e.as_string()->get().empty()))
        fail(full, &e, "expected non-empty strings");
    }
  }

  /// The declared scalar, array and string-table keys of `t` as an Options bag for their owners:
  /// numbers as exact text, paths resolved, arrays as items. Free-form and nested tables are left out.
  Options bag(const toml::table& t, const std::string& path, const std::string& schema_path) const {
    std::map<std::string, Options::Value> values;
    for (const auto& [k, node] : t) {
      const std::string name(k.str());
      const KeyDecl* spec = scenario_keys().find(schema_path, name);
      if (spec == nullptr) continue;
      const std::string full = path.empty() ? name : path + "." + name;
      Options::Value v;
      v.line = overridden_.count(full) > 0 ? 0 : static_cast<long>(k.source().begin.line);
      if (overridden_.count(full) > 0) v.origin = "--set";
      switch (spec->kind) {
        case KeyKind::kTable:
        case KeyKind::kTableArray:
        case KeyKind::kFreeTable:
          continue;
        case KeyKind::kStringTable:
          for (const auto& [ck, cv] : *node.as_table())
            v.entries[std::string(ck.str())] = std::string(*cv.as_string());
          break;
        case KeyKind::kPath:
          v.text = path_value(t, path, name.c_str());
          break;
        case KeyKind::kIntArray:
        case KeyKind::kNumberArray:
        case KeyKind::kStringArray:
          for (const auto& e : *node.as_array()) v.items.push_back(scalar_text(e, full));
          v.text = join(v.items, ",");
          break;
        default:
          v.text = scalar_text(node, full);
      }
      values[name] = std::move(v);
    }
    return Options(std::move(values), file_, path);
  }

  /// The bag of a top-level section ("workload", "execution", "power"); empty when absent.
  Options section(const toml::table& root, const std::string& name) const {
    const toml::table* t = root[name].as_table();
    return t == nullptr ? Options({}, file_, name) : bag(*t, name, name);
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
      const std::int64_t v = n->as_integer()->get();
      if constexpr (sizeof(T) < sizeof(std::int64_t))  // e.g. nodes = 9999999999999 must not wrap around
        if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
          fail(full, n, "out of range: " + std::to_string(v));
      return static_cast<T>(v);
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
    const bool from_cli = overridden_.count(full) > 0;
    fs::path p(v);
    const std::string resolved = p.is_absolute() || from_cli || base_dir_.empty()
                                     ? p.lexically_normal().string()
                                     : (fs::path(base_dir_) / p).lexically_normal().string();
    if (full != "output.dir")
      input_paths.push_back({full, from_cli ? std::string("--set") : file_,
                             from_cli ? 0 : static_cast<long>(t.get(key)->source().begin.line), resolved});
    return resolved;
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
    net.leaves_per_pod = l.get<int>(*nt, p, "leaves_per_pod", net.leaves_per_pod);
    net.core_oversubscription = l.get<double>(*nt, p, "core_oversubscription", net.core_oversubscription);
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

  // --- workload (optional when services are given): the generic keys here, the rest for the trace
  // reader (workloads/jobs/*_reader.cpp)
  if (const toml::array* sv = root["service"].as_array())
    for (std::size_t i = 0; i < sv->size(); ++i) {
      const toml::table& t = *sv->get(i)->as_table();
      const std::string p = "service." + std::to_string(i);
      const toml::table* rt = t["requests"].as_table();
      s.services.push_back({l.bag(t, p, "service[]"), rt != nullptr
                                                          ? l.bag(*rt, p + ".requests", "service[].requests")
                                                          : Options({}, l.file(), p + ".requests")});
    }
  const toml::table* wt = root["workload"].as_table();
  if (wt == nullptr && s.services.empty())
    throw InputError(s.file, 0, "workload", "missing [workload] section (or a [[service]])");
  WorkloadConfig& w = s.workload;
  w.scenario_file = s.file;
  w.seed = s.seed;
  w.settings = l.section(root, "workload");
  w.format = w.settings.text("format", "");
  if (w.format.empty() && wt != nullptr) {
    std::vector<std::string> formats;
    for (const auto& f : trace_readers().entries()) formats.push_back(f.name);
    throw InputError(s.file, static_cast<long>(wt->source().begin.line), "workload.format",
                     "missing (" + join(formats, ", ") + ")");
  }
  w.path = w.settings.text("path", "");
  s.workload_limit = static_cast<long>(w.settings.integer("limit", 0));

  // --- scheduler, execution (the job model's and the network hook's keys stay in the bag)
  const toml::table& st = root["scheduler"].as_table() ? *root["scheduler"].as_table() : empty;
  s.scheduler.policy = l.get<std::string>(st, "scheduler", "policy", s.scheduler.policy);
  s.scheduler.placement = l.get<std::string>(st, "scheduler", "placement", s.scheduler.placement);
  s.scheduler.options = l.options(st, "scheduler.options");
  s.scheduler.placement_options = l.options(st, "scheduler.placement_options");
  ExecutionConfig& e = s.execution;
  e.settings = l.section(root, "execution");
  e.job_model = e.settings.text("job_model", e.job_model);
  s.power = power_config(l.section(root, "power"));
  s.failures = l.section(root, "failures");
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
  return describe_keys_text();
}

namespace {

// Parses TOML text and applies --set overrides (the Loader validates the keys).
toml::table parse_with_overrides(const std::string& toml_text, const std::string& name,
                                 const std::vector<std::string>& overrides,
                                 std::set<std::string>& overridden) {
  toml::table root = parse_toml(toml_text, name);
  for (const auto& o : overrides) apply_override(root, o, overridden);
  return root;
}

std::string read_scenario_text(const std::string& path) {
  std::string text = read_input_file(path);
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
  s.input_paths = loader.input_paths;
  return s;
}

void check_input_paths(const Scenario& s) {
  for (const auto& in : s.input_paths) {
    std::error_code ec;
    if (!fs::exists(in.path, ec)) throw InputError(in.file, in.line, in.key, "not found: " + in.path);
  }
}

Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  return parse_scenario(read_scenario_text(path), path, base_dir_of(path), overrides);
}

std::string resolved_scenario_text(const std::string& path, const std::vector<std::string>& overrides) {
  std::set<std::string> overridden;
  const toml::table root = parse_with_overrides(read_scenario_text(path), path, overrides, overridden);
  std::ostringstream os;
  os << toml::toml_formatter(root) << '\n';
  return os.str();
}

ClusterSpec load_cluster(const std::string& path, const std::vector<std::string>& overrides) {
  std::set<std::string> overridden;
  const toml::table root = parse_with_overrides(read_scenario_text(path), path, overrides, overridden);
  Loader loader(path, base_dir_of(path), overridden);
  loader.validate(root, "", "");
  return build_cluster(root, loader);
}

}  // namespace fleetsim
