#pragma once
// ClusterSpec: the typed description of a cluster (from [cluster] pools or an openb node list),
// independent of SimGrid. The platform builder turns it into SimGrid zones, hosts and links.
#include <string>
#include <vector>

namespace fleetsim {

enum class Topology { kLeafSpine, kFatTree, kRailOptimized };
enum class IntraNode { kNvlink, kNvswitch, kPcie };

struct PoolSpec {
  std::string name;
  int nodes = 1;
  int gpus_per_node = 8;
  std::string gpu = "A100-80GB";  ///< canonical catalog name
  int cpus_per_node = 64;
  double memory_gib = 512;
};

struct NetworkSpec {
  Topology topology = Topology::kLeafSpine;
  int nodes_per_leaf = 16;
  double oversubscription = 1.0;  ///< leaf downlink : uplink capacity ratio (1 = non-blocking)
  /// 3-tier (leaf-spine, rail-optimized): leaf groups per pod, whose spines reach the other pods
  /// through a core tier; 0 = 2-tier (spines join every leaf group directly).
  int leaves_per_pod = 0;
  double core_oversubscription = 1.0;  ///< pod downlink : core uplink capacity ratio (1 = non-blocking)
  double nic_gbps = 100;               ///< bandwidth of one NIC, Gbit/s
  int nics_per_node = 1;  ///< NICs per node (rail-optimized: one rail each; else bonded to the leaf)
  int gpus_per_nic = 0;   ///< GPUs sharing one NIC (GPU i uses NIC i / gpus_per_nic); 0 = auto
  int switch_ports = 64;  ///< ports per spine switch: counts the spines of aggregated uplinks (energy)
  IntraNode intra_node = IntraNode::kNvlink;
  double intra_node_gbps = 2400;  ///< per-GPU intra-node bandwidth, Gbit/s (e.g. 300 GB/s NVLink3 = 2400)
  double link_latency_s = 1e-6;   ///< per-hop latency of fabric links, s
};

struct NodeSpec {
  std::string name;
  int pool = 0;     ///< index into ClusterSpec::pools
  std::string gpu;  ///< canonical catalog name ("" if gpus == 0)
  int gpus = 0;
  double cpu_milli = 0;  ///< thousandths of a core
  double memory_mib = 0;
  int leaf = 0;  ///< leaf switch index (node index / nodes_per_leaf)
};

struct ClusterSpec {
  std::vector<PoolSpec> pools;
  NetworkSpec network;
  std::vector<NodeSpec> nodes;  ///< expanded nodes, in pool order (openb: file order); leaf by position

  int total_gpus() const;
  /// Leaf *groups* (nodes / nodes_per_leaf, rounded up). Leaf-spine and fat-tree: one leaf switch
  /// each; rail-optimized: one leaf switch per rail in each group (a "scalable unit").
  int leaves() const;
  /// GPUs sharing one NIC on a node with `gpus` GPUs: network.gpus_per_nic, or (0 = auto) the GPUs
  /// spread evenly over the NICs, rounded up. The one GPU-to-NIC rule of the platform and models.
  int gpus_per_nic(int gpus) const;
  /// NIC of local GPU `gpu` on a node with `gpus` GPUs (its rail in a rail-optimized fabric).
  int nic_of_gpu(int gpu, int gpus) const;
};

/// Switches and NICs of the fabric, for power accounting (platform.cpp builds the same shape).
struct FabricInventory {
  long nics = 0;            ///< NICs (one port each) over all nodes
  long leaf_switches = 0;   ///< leaf (top-of-rack / rail) switches
  long spine_switches = 0;  ///< spine switches (0 when one leaf switch serves the whole cluster)
  long core_switches = 0;   ///< 3-tier: core switches joining the pods' spines
};
FabricInventory fabric_inventory(const ClusterSpec& spec);

/// Expand pools into nodes and assign leaves. Throws InputError on impossible clusters.
ClusterSpec expand_pools(std::vector<PoolSpec> pools, const NetworkSpec& network,
                         const std::string& file = "");
/// Read an openb node list (`sn,cpu_milli,memory_mib,gpu,model`); one pool per GPU model, named by its
/// canonical catalog name (CPU-only nodes: pool "cpu"); pool figures are the pool's largest node.
ClusterSpec read_openb_nodes(const std::string& path, const NetworkSpec& network);

std::string to_string(Topology t);
std::string to_string(IntraNode t);

}  // namespace fleetsim
