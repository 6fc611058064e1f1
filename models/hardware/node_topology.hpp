#pragma once
// NVLink wiring inside one server, for collectives over a subset of its GPUs. NCCL builds its rings
// from NVLink paths when it can: on a switched node (NVSwitch) any subset gets the same per-GPU
// bandwidth, but on a point-to-point mesh (DGX-1's hybrid cube-mesh) the number of rings the links
// carry at once depends on which GPUs take part, so the bus bandwidth of 2..8 GPUs is not monotone
// (V100 DGX-1, nccl-tests all-reduce at 1 GiB: 22.6, 45, 85, 37, 46, 87, 135 GB/s).
//
// ring_capacity(n) counts those rings for GPUs 0..n-1 (CUDA_VISIBLE_DEVICES order, as nccl-tests
// picks them); the calibrated collective model divides its fitted bus bandwidth by it before it
// interpolates between measured GPU counts, and multiplies it back for the count it predicts.
// Counts without an NVLink ring but with an NVLink path (nvlink_chain_only) run as one chain.
#include <array>
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

struct NodeTopology {
  std::string name;
  std::string description;
  int gpus = 8;
  bool switched = false;                  ///< every GPU reaches every other at full bandwidth
  std::vector<std::array<int, 3>> links;  ///< point-to-point meshes: {gpu a, gpu b, NVLink count}
};

/// All known node topologies, in a fixed order.
const std::vector<NodeTopology>& node_topologies();
/// By name (case-insensitive); nullptr if unknown.
const NodeTopology* find_node_topology(std::string_view name);
/// Like find_node_topology but raises InputError(file, line, key) listing the valid names.
const NodeTopology& node_topology(std::string_view name, const std::string& file = "", long line = 0,
                                  const std::string& key = "node topology");

/// Directed rings over GPUs 0..n-1 that the NVLinks carry at once: for n >= 3, twice the largest
/// number of Hamiltonian cycles the link counts allow together (each cycle runs both ways); for
/// n = 2, the links between the two GPUs (one ring uses both directions); 0 when the GPUs have no
/// NVLink ring (NCCL then routes through PCIe or other GPUs). 1 for every n on a switched node
/// (only ratios between counts matter). n outside [2, gpus]: 0.
int ring_capacity(const NodeTopology& t, int n);

/// Whether GPUs 0..n-1 have an NVLink path through all of them (a Hamiltonian path of the links)
/// while no NVLink ring (ring_capacity(t, n) == 0): e.g. DGX-1, 5 GPUs, 4-0-3-2-1. NCCL's ring then
/// needs a PCIe/QPI hop (GPU 4 reaches GPUs 1-3 only across the CPU sockets, a few GB/s), and it
/// runs the all-reduce as a tree instead: one chain along the NVLink path, reduce one way and
/// broadcast the other, every link moving the whole buffer once each way, as one ring of two GPUs
/// does (V100, 8 MiB - 1 GiB: 5 GPUs take 0.97-1.03x the time of 2). False on switched nodes.
bool nvlink_chain_only(const NodeTopology& t, int n);

}  // namespace fleetsim
