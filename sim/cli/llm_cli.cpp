// Shared options and outputs of the `fleetsim llm` sub-commands (llm_cli.hpp).
#include "sim/cli/llm_cli.hpp"

#include <cstdio>

#include "models/llm/comm.hpp"
#include "sim/app/scenario.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {

using namespace fleetsim::llm;

void add_common(CLI::App* app, CommonArgs& a) {
  app->add_option("--gpu", a.gpu, "catalog GPU (without --platform)");
  app->add_option("--gpus-per-node", a.gpus_per_node, "GPUs per server (without --platform)");
  app->add_option("--nodes", a.nodes, "servers (without --platform; llm plan)");
  app->add_option("--platform", a.platform, "scenario: its first pool and [cluster.network]");
  app->add_option("--set", a.sets, "override a --platform scenario key (KEY=VALUE, repeatable)");
  app->add_option("--calibration", a.calibration,
                  "calibration JSON (e.g. models/calibrations/neusight-fp32.json)");
  app->add_option("--kernel-model", a.kernel_model, "calibrated | table | roofline");
  app->add_option("--collective-model", a.collective_model, "calibrated | nccl-default");
  app->add_option("--launch-us,--launch-floor-us", a.launch_us,
                  "host time to issue one kernel, us (default " + fmt(llm::kDefaultLaunchUs, 1) +
                      ", fitted on vTrain; 0: kernels as the kernel model times them)");
  app->add_flag("--cuda-graphs", a.cuda_graphs, "passes captured as CUDA graphs: one launch per pass");
  app->add_option("--host-overhead-ms", a.host_overhead_ms, "fixed per-iteration overhead, ms");
  app->add_option(
      "--tensor-core-efficiency", a.tensor_core_efficiency,
      "fp16/bf16 GEMMs at this x the fp32 fits' efficiency, in (0, 1] (default: the calibration's, 1)");
}

void add_setup(CLI::App* app, SetupArgs& s) {
  app->add_option("--seq", s.seq, "sequence length");
  app->add_option("--global-batch", s.global_batch, "sequences per iteration");
  app->add_option("--micro-batch", s.micro_batch, "sequences per micro-batch");
  app->add_option("--dtype", s.dtype, "fp32 | fp16 | bf16 (mixed precision)");
  app->add_option("--tp", s.tp, "tensor parallel size");
  app->add_option("--pp", s.pp, "pipeline parallel size");
  app->add_option("--dp", s.dp, "data parallel size");
  app->add_option("--ep", s.ep, "expert parallel size");
  app->add_option("--schedule", s.schedule, "gpipe | 1f1b | interleaved");
  app->add_option("--virtual-stages", s.virtual_stages, "model chunks per pipeline rank (interleaved)");
  app->add_option("--recompute", s.recompute,
                  "none | selective | full | auto (the least recomputation that fits in memory)");
  app->add_option("--zero", s.zero, "ZeRO stage 0-3");
  app->add_flag("--sequence-parallel", s.sequence_parallel, "Megatron sequence parallelism");
  app->add_flag("--no-overlap", s.no_overlap, "DP gradient reduction after the backward pass");
}

TrainingSetup to_setup(const SetupArgs& a) {
  TrainingSetup s;
  s.seq = a.seq, s.global_batch = a.global_batch, s.micro_batch = a.micro_batch;
  s.dtype = parse_dtype(a.dtype, "", 0, "--dtype");
  s.tp = a.tp, s.pp = a.pp, s.dp = a.dp, s.ep = a.ep, s.virtual_stages = a.virtual_stages, s.zero = a.zero;
  s.schedule = parse_schedule(a.schedule, "", "--schedule");
  set_recompute(s, a.recompute, "", "--recompute");
  s.sequence_parallel = a.sequence_parallel;
  s.overlap_grad = !a.no_overlap;
  return s;
}

Models make_models(const CommonArgs& a) {
  Models m;
  if (!a.calibration.empty()) *m.cal = load_calibration(a.calibration);
  if (a.tensor_core_efficiency != 0) {
    if (!(a.tensor_core_efficiency > 0 && a.tensor_core_efficiency <= 1))
      throw InputError("", 0, "--tensor-core-efficiency", "must be in (0, 1]");
    m.cal->kernels.tensor_core_efficiency = a.tensor_core_efficiency;
  }
  m.kernels = kernel_models().create(a.kernel_model, m.cal->kernels, "", 0, "--kernel-model");
  CollectiveModelParams cp;
  cp.calibration = training_collectives(m.cal->collectives);
  m.collectives = collective_models().create(a.collective_model, cp, "", 0, "--collective-model");
  LlmPlatform& p = m.platform;
  if (a.platform.empty()) {
    p.gpu = &gpu_spec(a.gpu, "", 0, "--gpu");
    if (a.gpus_per_node < 1) throw InputError("", 0, "--gpus-per-node", "must be at least 1");
    if (a.nodes < 1) throw InputError("", 0, "--nodes", "must be at least 1");
    p.gpus_per_node = a.gpus_per_node;
    p.fabric = fabric_for(*p.gpu);
    m.total_gpus = a.nodes * a.gpus_per_node;
  } else {  // only [cluster] is read: a cluster-only scenario, or any scenario's platform
    const ClusterSpec cluster = load_cluster(a.platform, a.sets);
    if (cluster.pools.empty()) throw InputError(a.platform, 0, "cluster.pool", "the scenario has no pool");
    const PoolSpec& pool = cluster.pools.front();
    const NetworkSpec& net = cluster.network;
    p.gpu = &gpu_spec(pool.gpu, a.platform, 0, "cluster.pool.gpu");
    p.gpus_per_node = pool.gpus_per_node;
    m.total_gpus = pool.nodes * pool.gpus_per_node;
    p.fabric = fabric_for(*p.gpu, net.nic_gbps, net.nics_per_node, cluster.gpus_per_nic(pool.gpus_per_node));
    p.fabric.intra_gbs = net.intra_node_gbps / 8;
    m.default_network = false;
  }
  set_link(p, *cp.calibration);
  if (!(a.launch_us >= 0)) throw InputError("", 0, "--launch-us", "must be >= 0");
  p.host.launch_s = a.launch_us * 1e-6;
  p.host.cuda_graphs = a.cuda_graphs;
  p.host_overhead_s = a.host_overhead_ms * 1e-3;
  return m;
}

nlohmann::json to_json(const Prediction& r, const TransformerConfig& m, const TrainingSetup& s,
                       const LlmPlatform& p) {
  nlohmann::json j;
  j["model"] = {{"file", m.file},   {"layers", m.layers},     {"hidden", m.hidden},
                {"heads", m.heads}, {"kv_heads", m.kv_heads}, {"intermediate", m.intermediate},
                {"vocab", m.vocab}, {"experts", m.experts},   {"params", m.total_params()}};
  j["setup"] = {{"seq", s.seq},
                {"global_batch", s.global_batch},
                {"micro_batch", s.micro_batch},
                {"dtype", to_string(s.dtype)},
                {"tp", s.tp},
                {"pp", s.pp},
                {"dp", s.dp},
                {"ep", s.ep},
                {"schedule", to_string(s.schedule)},
                {"recompute", s.recompute_auto ? "auto" : std::string(to_string(s.recompute))},
                {"recompute_used", to_string(r.recompute)},
                {"zero", s.zero},
                {"sequence_parallel", s.sequence_parallel},
                {"overlap_grad", s.overlap_grad}};
  j["platform"] = {{"gpu", p.gpu->name},
                   {"gpus_per_node", p.gpus_per_node},
                   {"intra_gbs", p.fabric.intra_gbs},
                   {"inter_gbs", p.fabric.inter_gbs},
                   {"nics_per_node", p.fabric.nics_per_node},
                   {"launch_us", p.host.launch_s * 1e6},
                   {"cuda_graphs", p.host.cuda_graphs}};
  j["iteration_ms"] = r.total_s * 1e3;
  j["breakdown_ms"] = {{"compute", r.compute_s * 1e3},
                       {"tp", r.tp_s * 1e3},
                       {"ep", r.ep_s * 1e3},
                       {"launch", r.launch_s * 1e3},
                       {"bubble", r.bubble_s * 1e3},
                       {"pp", r.pp_s * 1e3},
                       {"dp_exposed", r.dp_exposed_s * 1e3},
                       {"optimizer", r.optimizer_s * 1e3},
                       {"host", r.host_s * 1e3},
                       {"dp_total", r.dp_s * 1e3}};
  j["dominant"] = r.dominant();
  j["microbatches"] = r.microbatches;
  j["critical_stage"] = r.critical_stage;
  j["tokens_per_s"] = r.tokens_per_s;
  j["memory_gb"] = r.memory_bytes / 1e9;
  j["memory_capacity_gb"] = r.memory_capacity / 1e9;
  j["memory_breakdown_gb"] = {{"weights", r.memory.weights / 1e9},
                              {"gradients", r.memory.grads / 1e9},
                              {"optimizer", r.memory.optimizer / 1e9},
                              {"activations", r.memory.activations / 1e9}};
  j["fits"] = r.feasible;
  if (!r.feasible) j["does_not_fit"] = r.infeasible;
  j["label"] = to_string(r.label);
  for (const StageTime& st : r.stages)
    j["stages"].push_back({{"stage", st.stage},
                           {"layers", st.layers},
                           {"forward_ms", st.forward_s * 1e3},
                           {"backward_ms", st.backward_s * 1e3},
                           {"compute_ms", st.compute_s * 1e3},
                           {"tp_ms", st.tp_s * 1e3},
                           {"ep_ms", st.ep_s * 1e3},
                           {"launch_ms", st.launch_s * 1e3},
                           {"params", st.params},
                           {"memory_gb", st.memory.total() / 1e9},
                           {"activations_gb", st.memory.activations / 1e9},
                           {"kernels", st.kernels}});
  return j;
}

std::string memory_summary(const Prediction& r) {
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "memory %.2f of %.2f GB per GPU (weights %.2f, gradients %.2f, optimizer %.2f, activations "
                "%.2f; recompute %s): %s",
                r.memory_bytes / 1e9, r.memory_capacity / 1e9, r.memory.weights / 1e9, r.memory.grads / 1e9,
                r.memory.optimizer / 1e9, r.memory.activations / 1e9,
                std::string(to_string(r.recompute)).c_str(), r.feasible ? "fits" : "DOES NOT FIT");
  return buf;
}

void print_breakdown(const Prediction& r) {
  std::printf("%-12s %10s\n", "part", "ms");
  const std::pair<const char*, double> rows[] = {
      {"compute", r.compute_s},       {"tp comm", r.tp_s},          {"ep comm", r.ep_s},
      {"launch", r.launch_s},         {"bubble", r.bubble_s},       {"pp comm", r.pp_s},
      {"dp exposed", r.dp_exposed_s}, {"optimizer", r.optimizer_s}, {"host", r.host_s},
      {"iteration", r.total_s}};
  for (const auto& [name, v] : rows) std::printf("%-12s %10.3f\n", name, v * 1e3);
  std::printf("%-6s %7s %12s %12s %10s %10s %10s\n", "stage", "layers", "fwd ms/mb", "bwd ms/mb", "params M",
              "mem GB", "act GB");
  for (const StageTime& st : r.stages)
    std::printf("%-6d %7d %12.3f %12.3f %10.1f %10.2f %10.2f\n", st.stage, st.layers, st.forward_s * 1e3,
                st.backward_s * 1e3, st.params / 1e6, st.memory.total() / 1e9, st.memory.activations / 1e9);
  std::printf("dominant: %s; %.0f tokens/s; %s\n", r.dominant().c_str(), r.tokens_per_s,
              memory_summary(r).c_str());
}

}  // namespace fleetsim::cli
