#include "sim/platform/cluster_spec.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

constexpr int kMaxGpusPerNode = 64;
/// Nodes in a whole cluster: 1,000,000 (8M GPUs at 8 per node, 80x the largest preset); beyond it the
/// platform alone would not fit in memory, so a typo such as nodes = 99999999 is an input error.
constexpr long kMaxNodes = 1'000'000;

void validate_network(const NetworkSpec& n, const std::string& file) {
  auto fail = [&](const std::string& key, const std::string& msg) {
    throw InputError(file, 0, "cluster.network." + key, msg);
  };
  if (n.nodes_per_leaf < 1) fail("nodes_per_leaf", "must be >= 1, got " + std::to_string(n.nodes_per_leaf));
  if (!(n.oversubscription >= 1.0) || !std::isfinite(n.oversubscription))
    fail("oversubscription", "must be >= 1 (1 = non-blocking), got " + fmt(n.oversubscription));
  if (n.leaves_per_pod < 0)
    fail("leaves_per_pod", "must be >= 0 (0 = 2-tier), got " + std::to_string(n.leaves_per_pod));
  if (n.leaves_per_pod > 0 && n.topology == Topology::kFatTree)
    fail("leaves_per_pod", "a core tier is built for leaf-spine and rail-optimized fabrics, not fat-tree");
  if (!(n.core_oversubscription >= 1.0) || !std::isfinite(n.core_oversubscription))
    fail("core_oversubscription", "must be >= 1 (1 = non-blocking), got " + fmt(n.core_oversubscription));
  if (!(n.nic_gbps > 0) || !std::isfinite(n.nic_gbps))
    fail("nic_gbps", "must be > 0 Gbit/s, got " + fmt(n.nic_gbps));
  if (!(n.intra_node_gbps > 0) || !std::isfinite(n.intra_node_gbps))
    fail("intra_node_gbps", "must be > 0 Gbit/s, got " + fmt(n.intra_node_gbps));
  if (!(n.link_latency_s >= 0) || !std::isfinite(n.link_latency_s))
    fail("link_latency_s", "must be >= 0 s, got " + fmt(n.link_latency_s));
  if (n.nics_per_node < 1 || n.nics_per_node > kMaxGpusPerNode)
    fail("nics_per_node",
         "must be in 1.." + std::to_string(kMaxGpusPerNode) + ", got " + std::to_string(n.nics_per_node));
  if (n.switch_ports < 2) fail("switch_ports", "must be >= 2, got " + std::to_string(n.switch_ports));
  if (n.gpus_per_nic < 0 || n.gpus_per_nic > kMaxGpusPerNode)
    fail("gpus_per_nic", "must be in 0.." + std::to_string(kMaxGpusPerNode) + " (0 = GPUs / NICs), got " +
                             std::to_string(n.gpus_per_nic));
}

// Every GPU of every node needs a NIC: gpus_per_nic x nics_per_node >= GPUs per node.
void validate_nics(const ClusterSpec& spec, const std::string& file) {
  const NetworkSpec& n = spec.network;
  if (n.gpus_per_nic == 0) return;
  for (const auto& node : spec.nodes) {
    if (n.gpus_per_nic * n.nics_per_node < node.gpus)
      throw InputError(file, 0, "cluster.network.gpus_per_nic",
                       std::to_string(n.gpus_per_nic) + " GPUs per NIC x " + std::to_string(n.nics_per_node) +
                           " NICs leave GPUs of node '" + node.name + "' (" + std::to_string(node.gpus) +
                           " GPUs) without a NIC; raise gpus_per_nic or nics_per_node, or use 0 (auto)");
  }
}

// Zero-padded node index: width = digits of the largest index in the pool.
std::string node_name(const std::string& pool, int index, int count) {
  const int width = static_cast<int>(std::to_string(std::max(0, count - 1)).size());
  std::string digits = std::to_string(index);
  if (static_cast<int>(digits.size()) < width) digits.insert(0, width - digits.size(), '0');
  return pool + "-" + digits;
}

// Node names become SimGrid zone/host/router names next to the fabric's own ("fabric", "leaf-<k>...").
bool reserved_name(const std::string& name) {
  const std::string l = lower(name);
  return l == "fabric" || l == "leaf" || l.starts_with("leaf-");
}

void assign_leaves(ClusterSpec& spec) {
  for (std::size_t i = 0; i < spec.nodes.size(); ++i)
    spec.nodes[i].leaf = static_cast<int>(i) / spec.network.nodes_per_leaf;
}

}  // namespace

int ClusterSpec::total_gpus() const {
  int total = 0;
  for (const auto& n : nodes) total += n.gpus;
  return total;
}

int ClusterSpec::leaves() const {
  if (nodes.empty() || network.nodes_per_leaf < 1) return 0;
  const auto n = static_cast<int>(nodes.size());
  return (n + network.nodes_per_leaf - 1) / network.nodes_per_leaf;
}

int ClusterSpec::gpus_per_nic(int gpus) const {
  const int nics = std::max(1, network.nics_per_node);
  return network.gpus_per_nic > 0 ? network.gpus_per_nic : std::max(1, (gpus + nics - 1) / nics);
}

int ClusterSpec::nic_of_gpu(int gpu, int gpus) const {
  return std::min(std::max(1, network.nics_per_node) - 1, gpu / gpus_per_nic(gpus));
}

FabricInventory fabric_inventory(const ClusterSpec& spec) {
  FabricInventory inv;
  const NetworkSpec& n = spec.network;
  inv.nics = static_cast<long>(spec.nodes.size()) * n.nics_per_node;
  const long groups = spec.leaves();
  const bool rail = n.topology == Topology::kRailOptimized;
  inv.leaf_switches = rail ? groups * n.nics_per_node : groups;
  if (n.topology == Topology::kFatTree) {  // as platform.cpp builds it
    inv.spine_switches = std::max(1L, std::lround(n.nodes_per_leaf / n.oversubscription));
    return inv;
  }
  if (inv.leaf_switches <= 1) return inv;  // a single leaf switch needs no spine
  const double down_ports = rail ? n.nodes_per_leaf : static_cast<double>(n.nodes_per_leaf) * n.nics_per_node;
  const auto up_ports = static_cast<long>(std::ceil(down_ports / n.oversubscription - 1e-9));
  inv.spine_switches = (inv.leaf_switches * up_ports + n.switch_ports - 1) / n.switch_ports;
  if (n.leaves_per_pod > 0 && groups > n.leaves_per_pod) {  // every spine's uplinks / core oversubscription
    const auto core_ports = static_cast<long>(
        std::ceil(static_cast<double>(inv.leaf_switches * up_ports) / n.core_oversubscription - 1e-9));
    inv.core_switches = (core_ports + n.switch_ports - 1) / n.switch_ports;
  }
  return inv;
}

ClusterSpec expand_pools(std::vector<PoolSpec> pools, const NetworkSpec& network, const std::string& file) {
  validate_network(network, file);
  if (pools.empty()) throw InputError(file, 0, "cluster.pool", "a cluster needs at least one pool");

  ClusterSpec spec;
  spec.network = network;
  std::set<std::string> names;
  long total_nodes = 0;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    PoolSpec& p = pools[i];
    const std::string key = "cluster.pool." + std::to_string(i) + ".";
    auto fail = [&](const std::string& field, const std::string& msg) {
      throw InputError(file, 0, key + field, msg);
    };
    if (trim(p.name).empty()) fail("name", "pool name must not be empty");
    if (p.name.find_first_of(" \t,/") != std::string::npos)
      fail("name", "pool name '" + p.name + "' must not contain spaces, commas or slashes");
    if (reserved_name(p.name)) fail("name", "pool name '" + p.name + "' is reserved (fabric, leaf)");
    if (!names.insert(lower(p.name)).second) fail("name", "duplicate pool name '" + p.name + "'");
    if (p.nodes < 1) fail("nodes", "must be >= 1, got " + std::to_string(p.nodes));
    total_nodes += p.nodes;
    if (total_nodes > kMaxNodes)
      fail("nodes", "the cluster would have " + std::to_string(total_nodes) + " nodes; at most " +
                        std::to_string(kMaxNodes) + " are supported");
    if (p.gpus_per_node < 0 || p.gpus_per_node > kMaxGpusPerNode)
      fail("gpus_per_node",
           "must be in 0.." + std::to_string(kMaxGpusPerNode) + ", got " + std::to_string(p.gpus_per_node));
    if (p.cpus_per_node < 1) fail("cpus_per_node", "must be >= 1, got " + std::to_string(p.cpus_per_node));
    if (!(p.memory_gib > 0) || !std::isfinite(p.memory_gib))
      fail("memory_gib", "must be > 0 GiB, got " + fmt(p.memory_gib));
    if (p.gpus_per_node > 0 || !p.gpu.empty()) p.gpu = gpu_spec(p.gpu, file, 0, key + "gpu").name;
  }

  // A cluster without a GPU runs nothing: every job and every service replica would be skipped.
  if (std::none_of(pools.begin(), pools.end(), [](const PoolSpec& p) { return p.gpus_per_node > 0; }))
    throw InputError(file, 0, "cluster.pool.0.gpus_per_node",
                     "no pool has GPUs (gpus_per_node = 0" +
                         std::string(pools.size() > 1 ? " in every pool" : "") +
                         "): nothing could run; give gpus_per_node >= 1");
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const PoolSpec& p = pools[i];
    for (int n = 0; n < p.nodes; ++n) {
      NodeSpec node;
      node.name = node_name(p.name, n, p.nodes);
      node.pool = static_cast<int>(i);
      node.gpus = p.gpus_per_node;
      node.gpu = p.gpus_per_node > 0 ? p.gpu : std::string();
      node.cpu_milli = 1000.0 * p.cpus_per_node;
      node.memory_mib = 1024.0 * p.memory_gib;
      spec.nodes.push_back(std::move(node));
    }
  }
  spec.pools = std::move(pools);
  assign_leaves(spec);
  validate_nics(spec, file);
  return spec;
}

ClusterSpec read_openb_nodes(const std::string& path, const NetworkSpec& network) {
  validate_network(network, path);
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open node list");

  std::string text;
  long line_no = 0;
  auto next_line = [&]() -> bool {
    if (!std::getline(in, text)) return false;
    ++line_no;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    return true;
  };

  // Header: the five openb columns, in any order (extra columns are ignored).
  const std::vector<std::string> required = {"sn", "cpu_milli", "memory_mib", "gpu", "model"};
  std::map<std::string, std::size_t> col;
  if (!next_line()) throw InputError(path, 0, "", "empty file: expected header " + join(required, ","));
  const auto header = split(text, ',');
  for (std::size_t i = 0; i < header.size(); ++i) col[std::string(trim(header[i]))] = i;
  for (const auto& r : required)
    if (!col.contains(r))
      throw InputError(path, line_no, r,
                       "missing column '" + r + "'; expected header " + join(required, ","));

  ClusterSpec spec;
  spec.network = network;
  std::map<std::string, int> pool_of;  // canonical GPU name ("" = CPU-only) -> pool index
  std::set<std::string> seen;
  while (next_line()) {
    if (trim(text).empty()) continue;
    const auto fields = split(text, ',');
    if (fields.size() != header.size())
      throw InputError(
          path, line_no, "",
          "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(fields.size()));
    auto field = [&](const std::string& name) { return trim(fields[col[name]]); };

    NodeSpec node;
    node.name = std::string(field("sn"));
    if (node.name.empty()) throw InputError(path, line_no, "sn", "empty node name");
    if (reserved_name(node.name) || node.name.find_first_of(" \t") != std::string::npos)
      throw InputError(path, line_no, "sn", "node name '" + node.name + "' is reserved or has blanks");
    if (!seen.insert(node.name).second)
      throw InputError(path, line_no, "sn", "duplicate node name '" + node.name + "'");
    node.cpu_milli = parse_double(field("cpu_milli"), path, line_no, "cpu_milli");
    if (node.cpu_milli <= 0) throw InputError(path, line_no, "cpu_milli", "must be > 0");
    node.memory_mib = parse_double(field("memory_mib"), path, line_no, "memory_mib");
    if (node.memory_mib <= 0) throw InputError(path, line_no, "memory_mib", "must be > 0");
    const long long gpus = parse_int(field("gpu"), path, line_no, "gpu");
    if (gpus < 0 || gpus > kMaxGpusPerNode)
      throw InputError(path, line_no, "gpu",
                       "must be in 0.." + std::to_string(kMaxGpusPerNode) + ", got " + std::to_string(gpus));
    node.gpus = static_cast<int>(gpus);
    const auto model = field("model");
    if (node.gpus > 0) {
      if (model.empty()) throw InputError(path, line_no, "model", "node has GPUs but no GPU model");
      node.gpu = gpu_spec(model, path, line_no, "model").name;
    } else if (!model.empty()) {
      // A model with zero GPUs is harmless; keep it canonical if known, but the node has no GPU.
      node.gpu.clear();
    }

    auto [it, inserted] = pool_of.try_emplace(node.gpu, static_cast<int>(spec.pools.size()));
    if (inserted) {
      PoolSpec p;
      p.name = node.gpu.empty() ? "cpu" : node.gpu;
      p.gpu = node.gpu;
      p.nodes = 0;
      p.gpus_per_node = 0;
      p.cpus_per_node = 0;
      p.memory_gib = 0;
      spec.pools.push_back(p);
    }
    // Pool figures are the largest node of the pool; NodeSpec keeps each node's own numbers.
    PoolSpec& p = spec.pools[static_cast<std::size_t>(it->second)];
    p.nodes += 1;
    p.gpus_per_node = std::max(p.gpus_per_node, node.gpus);
    p.cpus_per_node = std::max(p.cpus_per_node, static_cast<int>(std::ceil(node.cpu_milli / 1000.0)));
    p.memory_gib = std::max(p.memory_gib, node.memory_mib / 1024.0);
    node.pool = it->second;
    spec.nodes.push_back(std::move(node));
  }
  if (spec.nodes.empty()) throw InputError(path, 0, "", "node list has no nodes");
  assign_leaves(spec);  // file order: neighbouring rows share a leaf
  validate_nics(spec, path);
  return spec;
}

std::string to_string(Topology t) {
  switch (t) {
    case Topology::kLeafSpine:
      return "leaf-spine";
    case Topology::kFatTree:
      return "fat-tree";
    case Topology::kRailOptimized:
      return "rail-optimized";
  }
  return "unknown";
}

std::string to_string(IntraNode t) {
  switch (t) {
    case IntraNode::kNvlink:
      return "nvlink";
    case IntraNode::kNvswitch:
      return "nvswitch";
    case IntraNode::kPcie:
      return "pcie";
  }
  return "unknown";
}

}  // namespace fleetsim
