// Keys owned by the app: the sections, the seed, the cluster, the scheduler and the output. The engine
// (sim/engine/engine_config.cpp), trace readers, job models, the network hook, the energy model,
// failures and services declare theirs next to their code (workloads/base/keys.hpp).
#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

using K = KeyKind;

const KeyRegistrar kSections{{
    {"", "seed", K::kInt, "", "1", "random seed for every stochastic part", "", at_least(0)},
    {"", "cluster", K::kTable, "", "", "the cluster"},
    {"", "workload", K::kTable, "", "", "the job trace"},
    {"", "scheduler", K::kTable, "", "", "scheduling and placement policies"},
    {"", "execution", K::kTable, "", "", "how job run times are modelled"},
    {"", "power", K::kTable, "", "", "energy model: power figures, PUE, price"},
    {"", "output", K::kTable, "", "", "where results go"},
}};

const KeyRegistrar kCluster{{
    {"cluster", "pool", K::kTableArray, "", "", "one or more pools of identical nodes"},
    {"cluster", "network", K::kTable, "", "", "fabric and intra-node interconnect"},
    {"cluster", "nodes_csv", K::kPath, "", "",
     "instead of pools: node list in the openb format (sn,cpu_milli,memory_mib,gpu,model)"},
    {"cluster.pool[]", "name", K::kString, "", "pool<i>", "pool name"},
    {"cluster.pool[]", "nodes", K::kInt, "", "", "number of nodes (>= 1, required)"},
    {"cluster.pool[]", "gpus_per_node", K::kInt, "", "8", "GPUs per node"},
    {"cluster.pool[]", "gpu", K::kString, "", "A100-80GB",
     "GPU model from the catalog (fleetsim policies lists them; aliases such as v100 accepted)"},
    {"cluster.pool[]", "cpus_per_node", K::kInt, "", "64", "CPU cores per node"},
    {"cluster.pool[]", "memory_gib", K::kFloat, "GiB", "512", "memory per node"},
    {"cluster.network", "topology", K::kString, "", "leaf-spine",
     "leaf-spine | fat-tree | rail-optimized (NIC r of every node to the rail-r leaf of its group, rail "
     "leaves joined by spines, as in DGX SuperPODs)"},
    {"cluster.network", "nodes_per_leaf", K::kInt, "", "16", "nodes under one leaf switch"},
    {"cluster.network", "oversubscription", K::kFloat, "", "1 = non-blocking",
     "leaf down:up capacity ratio, >= 1"},
    {"cluster.network", "leaves_per_pod", K::kInt, "", "0 = 2-tier",
     "3-tier fabric (leaf-spine, rail-optimized): leaf groups per pod; pods reach each other through "
     "one core uplink each (link pod-<p>-core)"},
    {"cluster.network", "core_oversubscription", K::kFloat, "", "1 = non-blocking",
     "pod down:core up capacity ratio, >= 1 (3-tier only)"},
    {"cluster.network", "nic_gbps", K::kFloat, "Gbit/s", "100", "bandwidth of one NIC"},
    {"cluster.network", "nics_per_node", K::kInt, "", "1",
     "NICs per node; rail-optimized: one rail each, else bonded into one link"},
    {"cluster.network", "gpus_per_nic", K::kInt, "", "0",
     "GPUs sharing one NIC, GPU i on NIC i / gpus_per_nic (0 = auto: GPUs / NICs)"},
    {"cluster.network", "switch_ports", K::kInt, "", "64",
     "ports per spine switch, to count spines of leaf-spine and rail-optimized fabrics for energy"},
    {"cluster.network", "intra_node", K::kString, "", "nvlink", "nvlink | nvswitch | pcie"},
    {"cluster.network", "intra_node_gbps", K::kFloat, "Gbit/s", "2400", "per-GPU intra-node bandwidth"},
    {"cluster.network", "latency_us", K::kFloat, "microseconds", "1", "per-hop fabric latency", "",
     at_least(0)},
}};

const KeyRegistrar kScheduler{{
    {"scheduler", "policy", K::kString, "", "fifo", "scheduling policy (fleetsim policies lists them)"},
    {"scheduler", "placement", K::kString, "", "first-fit", "placement policy (fleetsim policies)"},
    {"scheduler", "options", K::kFreeTable, "", "",
     "the scheduling policy's knobs (fleetsim policies lists them); a knob it does not read is an error"},
    {"scheduler", "placement_options", K::kFreeTable, "", "", "the placement policy's knobs"},
}};

const KeyRegistrar kOutput{{
    {"output", "dir", K::kPath, "", "results", "output folder"},
    {"output", "timeseries", K::kBool, "", "true", "write timeseries.csv"},
}};

}  // namespace
}  // namespace fleetsim
