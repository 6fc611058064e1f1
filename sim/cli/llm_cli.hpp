#pragma once
// Shared by the `fleetsim llm` sub-commands (cmd_llm.cpp: predict, eval; cmd_llm_plan.cpp: plan):
// platform and model options, the training setup flags, the prediction's JSON and table.
#include <CLI/CLI.hpp>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "models/calibration/calibration.hpp"
#include "models/llm/iteration.hpp"

namespace fleetsim::cli {

struct CommonArgs {
  std::string gpu = "A100-80GB", platform, calibration;
  std::string kernel_model = "calibrated", collective_model = "calibrated";
  int gpus_per_node = 8, nodes = 1;
  std::vector<std::string> sets;  ///< --set overrides of the --platform scenario
  double launch_us = llm::kDefaultLaunchUs, host_overhead_ms = 0;
  bool cuda_graphs = false;
  double tensor_core_efficiency = 0;  ///< > 0: overrides the calibration's (KernelCalibration)
};

struct SetupArgs {
  long seq = 2048, global_batch = 8, micro_batch = 1;
  std::string dtype = "bf16", schedule = "1f1b", recompute = "none";  ///< recompute: or "auto"
  int tp = 1, pp = 1, dp = 1, ep = 1, virtual_stages = 1, zero = 0;
  bool sequence_parallel = false, no_overlap = false;
};

struct Models {
  std::shared_ptr<Calibration> cal = std::make_shared<Calibration>();
  std::unique_ptr<KernelModel> kernels;
  std::unique_ptr<CollectiveModel> collectives;
  llm::LlmPlatform platform;
  int total_gpus = 8;  ///< the scenario pool's nodes x GPUs per node (--gpu: --nodes x --gpus-per-node)
  bool default_network = true;  ///< no --platform: the catalog GPU's NVLink and one 200 Gbit/s NIC per server
};

void add_common(CLI::App* app, CommonArgs& a);
void add_setup(CLI::App* app, SetupArgs& s);
llm::TrainingSetup to_setup(const SetupArgs& a);
/// Kernel and collective models and the platform; InputError on an unknown GPU or a bad scenario.
Models make_models(const CommonArgs& a);
nlohmann::json to_json(const llm::Prediction& r, const llm::TransformerConfig& m, const llm::TrainingSetup& s,
                       const llm::LlmPlatform& p);
/// The breakdown table (parts, then stages, then memory) on stdout.
void print_breakdown(const llm::Prediction& r);
/// The memory line of a prediction ("fits" or "DOES NOT FIT", the parts, the recomputation used).
std::string memory_summary(const llm::Prediction& r);

/// `fleetsim llm plan` (cmd_llm_plan.cpp): declares its options on `sub`'s "plan" sub-command.
struct PlanArgs;
std::shared_ptr<PlanArgs> add_plan(CLI::App& sub);
int run_plan(const PlanArgs& a);

}  // namespace fleetsim::cli
