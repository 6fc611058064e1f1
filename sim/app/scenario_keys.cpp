#include "sim/app/scenario_keys.hpp"

namespace fleetsim::scenario_keys {

// The one place where scenario keys, their types, units and defaults are declared.
// "[]" in a table path stands for any element of an array of tables.
const std::map<std::string, std::vector<KeySpec>>& schema() {
  static const std::map<std::string, std::vector<KeySpec>> s = {
      {"",
       {{"seed", Kind::kInt, "random seed for every stochastic part (default 1)"},
        {"cluster", Kind::kTable, "the cluster"},
        {"workload", Kind::kTable, "the job trace"},
        {"scheduler", Kind::kTable, "scheduling and placement policies"},
        {"execution", Kind::kTable, "how job run times are modelled"},
        {"power", Kind::kTable, "energy model: power figures, PUE, price"},
        {"output", Kind::kTable, "where results go"}}},
      {"cluster",
       {{"pool", Kind::kTableArray, "one or more pools of identical nodes"},
        {"network", Kind::kTable, "fabric and intra-node interconnect"},
        {"nodes_csv", Kind::kString, "node list in the openb format (sn,cpu_milli,memory_mib,gpu,model)"}}},
      {"cluster.pool[]",
       {{"name", Kind::kString, "pool name (default pool<i>)"},
        {"nodes", Kind::kInt, "number of nodes (>= 1)"},
        {"gpus_per_node", Kind::kInt, "GPUs per node (default 8)"},
        {"gpu", Kind::kString, "GPU model from the catalog (default A100-80GB)"},
        {"cpus_per_node", Kind::kInt, "CPU cores per node (default 64)"},
        {"memory_gib", Kind::kFloat, "memory per node, GiB (default 512)"}}},
      {"cluster.network",
       {{"topology", Kind::kString, "leaf-spine | fat-tree | rail-optimized (default leaf-spine)"},
        {"nodes_per_leaf", Kind::kInt, "nodes under one leaf switch (default 16)"},
        {"oversubscription", Kind::kFloat, "leaf down:up capacity ratio, >= 1 (default 1 = non-blocking)"},
        {"nic_gbps", Kind::kFloat, "bandwidth of one NIC, Gbit/s (default 100)"},
        {"nics_per_node", Kind::kInt,
         "NICs per node; rail-optimized: one rail each, else bonded into one link (default 1)"},
        {"gpus_per_nic", Kind::kInt,
         "GPUs sharing one NIC, GPU i on NIC i / gpus_per_nic (default 0 = auto)"},
        {"switch_ports", Kind::kInt,
         "ports per spine switch, to count spines of leaf-spine and rail-optimized fabrics for energy "
         "(default 64)"},
        {"intra_node", Kind::kString, "nvlink | nvswitch | pcie (default nvlink)"},
        {"intra_node_gbps", Kind::kFloat, "per-GPU intra-node bandwidth, Gbit/s (default 2400)"},
        {"latency_us", Kind::kFloat, "per-hop fabric latency, microseconds (default 1)"}}},
      {"workload",
       {{"format", Kind::kString, "openb | philly-gavel | csv | synthetic"},
        {"path", Kind::kString, "trace file"},
        {"throughputs", Kind::kString, "philly-gavel: Gavel throughput JSON"},
        {"gpu_type", Kind::kString,
         "philly-gavel: GPU type whose throughput defines durations (default v100)"},
        {"columns", Kind::kTable, "csv: logical column -> column name"},
        {"time_format", Kind::kString, "csv: strptime format of a datetime submit column"},
        {"delimiter", Kind::kString, "csv: field separator (default ,)"},
        {"limit", Kind::kInt, "read at most this many jobs (default 0 = all)"},
        {"jobs", Kind::kInt, "synthetic: number of jobs (default 1000)"},
        {"arrival_rate_per_hour", Kind::kFloat, "synthetic: Poisson arrival rate, jobs/hour (default 60)"},
        {"gpus_values", Kind::kArray, "synthetic: GPUs-per-job values (default [1,2,4,8,16,32])"},
        {"gpus_weights", Kind::kArray, "synthetic: their weights (default Philly-like)"},
        {"duration_median_s", Kind::kFloat, "synthetic: log-normal median duration, s (default 900)"},
        {"duration_sigma", Kind::kFloat, "synthetic: log-normal sigma (default 1.8)"},
        {"duration_min_s", Kind::kFloat, "synthetic: shortest duration, s (default 10)"},
        {"duration_max_s", Kind::kFloat, "synthetic: longest duration, s (default 14 days)"},
        {"seed", Kind::kInt, "synthetic: generator seed (default: the scenario seed)"},
        {"models", Kind::kArray, "synthetic: model names drawn uniformly per job (default none)"}}},
      {"workload.columns",
       {{"submit", Kind::kString, "arrival time column (seconds or datetime)"},
        {"duration", Kind::kString, "run time column, s"},
        {"gpus", Kind::kString, "GPUs per job column"},
        {"id", Kind::kString, "job id column"},
        {"gpu_type", Kind::kString, "GPU model constraint column"},
        {"user", Kind::kString, "user / virtual cluster column"},
        {"gpu_milli", Kind::kString, "thousandths of a GPU per GPU column"},
        {"cpu_milli", Kind::kString, "CPU request column, thousandths of a core"},
        {"memory_mib", Kind::kString, "memory request column, MiB"},
        {"steps", Kind::kString, "iterations column"},
        {"model", Kind::kString, "model / application column"}}},
      {"scheduler",
       {{"policy", Kind::kString, "scheduling policy (fleetsim policies; default fifo)"},
        {"placement", Kind::kString, "placement policy (default first-fit)"},
        {"options", Kind::kTable, "the scheduling policy's knobs (fleetsim policies lists them)"},
        {"placement_options", Kind::kTable, "the placement policy's knobs"}}},
      {"execution",
       {{"job_model", Kind::kString, "auto | trace | throughput | kernels | pollux (default auto)"},
        {"profiles", Kind::kString, "training-profile TOML for the kernels job model"},
        {"calibration", Kind::kString,
         "calibration JSON (fleetsim calibrate fit) for the kernels job model (default: spec-only)"},
        {"kernel_model", Kind::kString, "kernel model: calibrated | table | roofline (default calibrated)"},
        {"collective_model", Kind::kString,
         "collective model: calibrated | nccl-default (default calibrated)"},
        {"throughputs", Kind::kString, "throughput table for the throughput model"},
        {"reference_gpu", Kind::kString,
         "table GPU type scaled by spec for GPUs not in the table (default v100)"},
        {"restart_overhead_s", Kind::kFloat,
         "fixed checkpoint-restore cost of a preempted job's restart, s (default 30)"},
        {"restart_s_per_gb", Kind::kFloat, "plus this many seconds per GB of model state (default 0)"},
        {"state_gb_per_gpu", Kind::kFloat, "model state per GPU of the job, GB (default 0)"},
        {"colocation_slowdown", Kind::kFloat,
         "speed factor (0, 1] of a job per other job sharing its GPU where the job model has no measured "
         "pair rate (default 1 = no interference)"},
        {"fidelity", Kind::kString,
         "delay (job-level run times) | network (multi-GPU jobs' all-reduces share the SimGrid fabric; "
         "default delay)"},
        {"grad_mb_default", Kind::kFloat,
         "network fidelity: gradient MB all-reduced per iteration by jobs whose job model does not "
         "describe their iteration (trace, throughput, pollux; the kernels model uses the job's profile) "
         "(default 1000)"},
        {"iteration_compute_s", Kind::kFloat,
         "network fidelity: compute time per iteration, s, of jobs whose job model does not describe "
         "their iteration (default 0.5)"},
        {"chunks_shared", Kind::kInt,
         "network fidelity: chunks a job's run is cut into while it shares fabric links with another "
         "job (at least one iteration each; >= 1, default 16)"}}},
      {"power",
       {{"busy_fraction", Kind::kFloat,
         "power of a GPU allocated to a running job as a fraction of its catalog TDP, (0, 1] (default 0.8)"},
        {"node_base_w", Kind::kFloat, "non-GPU power per node (CPUs, memory, fans), W (default 400)"},
        {"nic_w", Kind::kFloat, "power per NIC incl. transceiver, W (default 20)"},
        {"switch_w", Kind::kFloat, "power per fabric switch (leaf or spine), W (default 400)"},
        {"pue", Kind::kFloat, "power usage effectiveness, facility / IT energy, >= 1 (default 1)"},
        {"price_per_kwh", Kind::kFloat, "price per facility kWh, any currency (default 0 = no cost)"}}},
      {"output",
       {{"dir", Kind::kString, "output folder (default results)"},
        {"timeseries", Kind::kBool, "write timeseries.csv (default true)"}}},
  };
  return s;
}

const char* kind_name(Kind k) {
  switch (k) {
    case Kind::kInt:
      return "an integer";
    case Kind::kFloat:
      return "a number";
    case Kind::kString:
      return "a string";
    case Kind::kBool:
      return "true or false";
    case Kind::kTable:
      return "a table";
    case Kind::kTableArray:
      return "an array of tables ([[...]])";
    case Kind::kArray:
      return "an array";
  }
  return "?";
}

bool kind_matches(const toml::node& n, Kind k) {
  switch (k) {
    case Kind::kInt:
      return n.is_integer();
    case Kind::kFloat:
      return n.is_integer() || n.is_floating_point();
    case Kind::kString:
      return n.is_string();
    case Kind::kBool:
      return n.is_boolean();
    case Kind::kTable:
      return n.is_table();
    case Kind::kTableArray:
      return n.is_array_of_tables() || (n.is_array() && n.as_array()->empty());
    case Kind::kArray:
      return n.is_array();
  }
  return false;
}

}  // namespace fleetsim::scenario_keys
