// The replay's platform and its collectives as SimGrid parallel tasks (see fabric.hpp).
#include "sim/replay/replay_network.hpp"

#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/platform/platform.hpp"
#include "sim/platform/ring.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::replay {
namespace {

constexpr double kTracedNicGbps = 200;  // not in the trace: assumed for the traced cluster
constexpr double kPcieGbps = 256;       // PCIe 4.0 x16 per direction, for GPUs without NVLink
constexpr double kEps = 1e-9;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string describe(const ClusterSpec& c) {
  std::string gpus;
  for (const auto& p : c.pools)
    gpus += (gpus.empty() ? "" : " + ") + std::to_string(p.nodes) + " node(s) x " +
            std::to_string(p.gpus_per_node) + " " + p.gpu;
  return gpus + ", " + to_string(c.network.topology) + ", NIC " + num(c.network.nic_gbps) + " Gbit/s, " +
         to_string(c.network.intra_node) + " " + num(c.network.intra_node_gbps) + " Gbit/s per GPU";
}

}  // namespace

ReplayCluster replay_cluster(const ExecGraph& g, const std::string& source_gpu, const WhatIf& w) {
  ReplayCluster c;
  c.ranks = std::max(1, g.world_size);
  for (int r : g.ranks) c.ranks = std::max(c.ranks, r + 1);
  if (w.cluster) {
    c.traced = *w.cluster;
    c.source = w.scenario;
    if (c.traced.total_gpus() < c.ranks)
      throw InputError(w.scenario, 0, "cluster",
                       "has " + std::to_string(c.traced.total_gpus()) +
                           " GPU(s); the traces' world size is " + std::to_string(c.ranks));
  } else {
    const GpuSpec* gpu = source_gpu.empty() ? nullptr : find_gpu(source_gpu);
    if (gpu == nullptr) {
      gpu = &gpu_spec("A100-80GB");
      if (c.ranks > 1)
        c.notes.push_back("traced GPU '" + source_gpu + "' not in the catalog: the platform uses " +
                          gpu->name + " figures for its links");
    }
    PoolSpec pool;
    pool.name = "node";
    pool.gpu = gpu->name;
    pool.gpus_per_node = std::min(c.ranks, 8);
    pool.nodes = (c.ranks + pool.gpus_per_node - 1) / pool.gpus_per_node;
    NetworkSpec net;
    net.nic_gbps = kTracedNicGbps;
    net.intra_node = gpu->nvlink_gbs > 0 ? IntraNode::kNvlink : IntraNode::kPcie;
    // Catalog NVLink figures sum both directions; a link's bandwidth is per direction.
    net.intra_node_gbps = gpu->nvlink_gbs > 0 ? gpu->nvlink_gbs / 2 * 8 : kPcieGbps;
    c.traced = expand_pools({pool}, net);
    c.source = "trace";
  }
  c.cluster = c.traced;
  if (w.nic_gbps > 0) c.cluster.network.nic_gbps = w.nic_gbps;
  if (w.intra_node_gbps > 0) c.cluster.network.intra_node_gbps = w.intra_node_gbps;
  c.notes.insert(c.notes.begin(), "platform (" +
                                      (c.source == "trace" ? std::string("implied by the traces, NIC assumed")
                                                           : "from " + c.source) +
                                      "): " + describe(c.traced));
  if (c.cluster.network.nic_gbps != c.traced.network.nic_gbps ||
      c.cluster.network.intra_node_gbps != c.traced.network.intra_node_gbps)
    c.notes.push_back("what-if network: NIC " + num(c.cluster.network.nic_gbps) + " Gbit/s, intra-node " +
                      num(c.cluster.network.intra_node_gbps) + " Gbit/s per GPU");
  return c;
}

ReplayNetwork::ReplayNetwork(const ExecGraph& g, const ReplayCluster& c, const std::vector<double>& factor)
    : g_(g) {
  const Platform p = build_platform(c.traced);
  for (std::size_t ni = 0; ni < p.nodes.size(); ++ni) {
    hosts_.push_back(p.nodes[ni].gpus);
    for (std::size_t i = 0; i < p.nodes[ni].gpus.size(); ++i) {
      gpu_of_rank_.push_back(p.nodes[ni].gpus[i]);
      where_.emplace_back(static_cast<int>(ni), static_cast<int>(i));
    }
  }
  controller_ = p.nodes.front().cpu;

  // Groups: the kernels of one collective call across the traced ranks.
  const std::size_t n = boost::num_vertices(g.g);
  group_of_.assign(n, -1);
  std::map<std::pair<std::string, std::int64_t>, std::vector<std::size_t>> matched;
  std::vector<std::vector<std::size_t>> sets;
  for (std::size_t v = 0; v < n; ++v) {
    const Node& node = g.g[v];
    if (node.kind != NodeKind::collective) continue;
    if (node.matched_ranks >= 2 && node.group_seq >= 0)
      matched[{node.group, node.group_seq}].push_back(v);
    else
      sets.push_back({v});
  }
  for (auto& [key, vs] : matched) sets.push_back(std::move(vs));

  for (auto& members : sets) {
    double t_last = -1e300, d = 1e300;
    for (std::size_t v : members) {
      t_last = std::max(t_last, g.g[v].start);
      d = std::min(d, g.g[v].end - g.g[v].start);
    }
    bool consistent = true;  // every kernel ended after the last one started
    for (std::size_t v : members) consistent = consistent && t_last <= g.g[v].end + kEps;
    if (consistent) {
      add_group(std::move(members), t_last, std::max(0.0, d), factor);
      continue;
    }
    // The ranks' clocks disagree (a kernel ended before the last one started): each kernel moves
    // the data on its own, from its own start.
    ++split_;
    for (std::size_t v : members) add_group({v}, g.g[v].start, std::max(0.0, d), factor);
  }
  // Routes were measured on the as-traced network; now the what-if one.
  rerate_network(c.traced.network, c.cluster.network);
}

void ReplayNetwork::add_group(std::vector<std::size_t> members, double t_last, double d,
                              const std::vector<double>& factor) {
  Group grp;
  const double f = factor[members.front()];
  grp.transfer = d * f;
  std::vector<int> ranks = group_ranks(g_.g[members.front()]);
  for (std::size_t v : members) {
    group_of_[v] = static_cast<long>(groups_.size());
    grp.tail.push_back((g_.g[v].end - (t_last + d)) * f);
    ranks.push_back(g_.g[v].rank);
  }
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  grp.pending = static_cast<int>(members.size());
  grp.members = std::move(members);
  if (ranks.size() >= 2 && grp.transfer > 0) {
    grp.ring = ring_for(ranks);
    const Ring& ring = rings_[static_cast<std::size_t>(grp.ring)];
    grp.bytes = ring_bytes_for(RingRoutes{{}, ring.s_per_byte, ring.latency}, grp.transfer);
  }
  (grp.bytes > 0 ? network_groups_ : timed_) += 1;
  groups_.push_back(std::move(grp));
}

std::vector<int> ReplayNetwork::group_ranks(const Node& n) const {
  const KinetoEvent& e = g_.event(n);
  const KinetoTrace& t = *g_.traces[static_cast<std::size_t>(n.trace)];
  const int world = static_cast<int>(gpu_of_rank_.size());
  std::vector<int> out;
  for (const auto& pg : t.process_groups)
    if (pg.name == e.process_group && !pg.ranks.empty()) out = pg.ranks;
  if (out.empty()) {
    // Unknown members: the whole world, or the aligned block of group_size ranks holding this rank.
    const int size = e.group_size > 0 ? std::min(e.group_size, world) : world;
    const int base = n.rank / size * size;
    for (int r = base; r < base + size; ++r) out.push_back(r);
  }
  out.erase(std::remove_if(out.begin(), out.end(), [&](int r) { return r < 0 || r >= world; }), out.end());
  return out;
}

long ReplayNetwork::ring_for(const std::vector<int>& ranks) {
  auto it = ring_index_.find(ranks);
  if (it != ring_index_.end()) return it->second;
  std::vector<std::pair<int, int>> at;
  for (int r : ranks) at.push_back(where_[static_cast<std::size_t>(r)]);
  Ring ring;
  for (const auto& [node, local] : ring_order(at))
    ring.hosts.push_back(hosts_[static_cast<std::size_t>(node)][static_cast<std::size_t>(local)]);
  const RingRoutes routes = ring_routes(ring.hosts);
  ring.s_per_byte = routes.s_per_byte;
  ring.latency = routes.latency;
  rings_.push_back(std::move(ring));
  return ring_index_[ranks] = static_cast<long>(rings_.size()) - 1;
}

ReplayNetwork::Arrival ReplayNetwork::arrive(long k, std::size_t v, double t) {
  Group& grp = groups_[static_cast<std::size_t>(k)];
  Arrival a;
  if (--grp.pending > 0) return a;
  a.last = true;
  grp.last = v;
  if (grp.bytes > 0) {
    a.ptask = start_ring_ptask(rings_[static_cast<std::size_t>(grp.ring)].hosts, grp.bytes);
    ++ptasks_;
  } else {
    a.timed_end = t + grp.transfer;
  }
  return a;
}

std::vector<std::pair<std::size_t, double>> ReplayNetwork::transfer_done(long k, double t) const {
  const Group& grp = groups_[static_cast<std::size_t>(k)];
  std::vector<std::pair<std::size_t, double>> out;
  for (std::size_t i = 0; i < grp.members.size(); ++i) out.emplace_back(grp.members[i], t + grp.tail[i]);
  return out;
}

std::vector<std::string> ReplayNetwork::notes() const {
  return {std::to_string(network_groups_) +
          " collective call(s) moved their data as SimGrid parallel tasks over their process group's "
          "GPUs in ring order (bytes calibrated to the traced transfer time on the as-traced idle "
          "platform), " +
          std::to_string(timed_) +
          " as timed delays (single-GPU group, or not longer than the route latency); " +
          std::to_string(rings_.size()) + " distinct ring(s)" +
          (split_ > 0 ? "; " + std::to_string(split_) +
                            " matched call(s) whose ranks' clocks disagree (a kernel ended before the last "
                            "started) moved their data per rank from each kernel's start"
                      : std::string())};
}

}  // namespace fleetsim::replay
