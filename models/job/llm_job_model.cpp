// "llm" job model (issue 18 item 5): an LLM training job's run time is its steps x one iteration
// predicted by models/llm (predict_iteration: operators by the kernel model, TP/PP/DP collectives by
// the collective model, pipeline bubble, memory) on the GPU type and placement the job actually got.
//
// Job: model = "<model> (tp T, pp P, seq S, batch B[, micro M])" (workloads/jobs/llm_job.hpp; the
// "llm-csv" reader writes it), steps = iterations. <model>.json is a Hugging Face config.json in the
// folder execution.llm_models. The layout is the job's own: TP and PP as given, DP = GPUs it got /
// (TP x PP); the rest of the setup is the scenario's (execution.llm_recompute, by default the least
// recomputation that fits, llm_zero; bf16 mixed precision, 1F1B, sequence parallelism when TP > 1,
// gradient overlap). No layout search: a job runs
// the layout its owner chose (`fleetsim llm plan` finds a better one).
// Placement: the job's servers are taken as ceil(GPUs / nodes) GPUs each (the iteration model's
// Megatron rank order: TP innermost, then DP, then PP), so the same job spread over more nodes sends
// more of its DP and PP traffic (and, below TP GPUs per node, its TP traffic) over the NICs. The
// fabric is the scenario's: [cluster.network] nic_gbps, nics_per_node, gpus_per_nic, intra_node_gbps.
// Not timed (nullopt, the engine skips the job with the reason): TP x PP does not divide the GPUs it
// got, the global batch is not a multiple of micro x DP, the layout does not fit in the GPU's memory,
// a shared GPU, a GPU type not in the catalog.
// Bad input (InputError naming the trace file, line and field 'model'): a model string not in the
// form above, a model with no <model>.json, a layout the model cannot have (TP not dividing the
// heads, PP above the layers).
// Predictions are cached per (model, layout, GPU type, GPUs, GPUs per node): a 10,000-job run
// predicts each distinct shape once.
#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>

#include "models/calibration/calibration.hpp"
#include "models/job/job_model.hpp"
#include "models/llm/comm.hpp"
#include "models/llm/iteration.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/llm_job.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using K = KeyKind;

const KeyRegistrar kKeys{{
    {"execution", "llm_models", K::kPath, "", "",
     "folder of Hugging Face config.json files, <model>.json, named by the jobs' model strings", "llm"},
    {"execution", "llm_calibration", K::kPath, "", "spec-only models",
     "calibration JSON for the kernel and collective models (e.g. models/calibrations/neusight-fp32.json)",
     "llm"},
    {"execution", "llm_launch_us", K::kFloat, "us", fmt(llm::kDefaultLaunchUs, 1),
     "host time to issue one kernel: each Megatron kernel takes at least this long (models/llm/host.hpp; "
     "fitted on vTrain, models/llm/README.md); 0: kernels as the kernel model times them",
     "llm",
     [](const Options& o, const std::string& key) {
       if (o.number(key, 0) < 0) throw o.error(key, "must be >= 0");
     }},
    {"execution", "llm_tensor_core_efficiency", K::kFloat, "", "the calibration's (1)",
     "bf16/fp16 GEMMs run at this x the fp32 fits' roofline efficiency on the tensor-core peak", "llm",
     [](const Options& o, const std::string& key) {
       const double e = o.number(key, 1);
       if (!(e > 0 && e <= 1)) throw o.error(key, "must be in (0, 1]");
     }},
    {"execution", "llm_recompute", K::kString, "", "auto",
     "activation recomputation of every job: none | selective | full | auto (the least that fits in the "
     "GPU's memory)",
     "llm"},
    {"execution", "llm_zero", K::kInt, "", "1", "ZeRO stage 0-3 of every job (over its DP group)", "llm",
     [](const Options& o, const std::string& key) {
       const long z = o.integer(key, 1);
       if (z < 0 || z > 3) throw o.error(key, "must be 0, 1, 2 or 3");
     }},
}};

struct Timed {
  bool ok = false;
  llm::Prediction prediction;
  std::string why;
};

class LlmJobModel final : public JobModel {
 public:
  explicit LlmJobModel(const JobModelParams& p)
      : trace_file_(p.workload.text("path", p.scenario_file)),
        launch_s_(p.settings.number("llm_launch_us", llm::kDefaultLaunchUs) * 1e-6),
        zero_(p.settings.int32("llm_zero", 1)),
        nic_gbps_(p.nic_gbps),
        nics_per_node_(p.nics_per_node),
        gpus_per_nic_(p.gpus_per_nic),
        intra_gbps_(p.intra_node_gbps) {
    llm::set_recompute(recompute_, p.settings.text("llm_recompute", "auto"), p.scenario_file,
                       "execution.llm_recompute");
    const std::string folder = p.settings.text("llm_models", "");
    if (folder.empty())
      throw InputError(p.scenario_file, 0, "execution.llm_models",
                       "the llm job model needs execution.llm_models = a folder of <model>.json configs");
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) throw InputError(folder, 0, "execution.llm_models", "no such folder");
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files)
      configs_.emplace(lower(f.stem().string()), llm::read_transformer_config(f.string()));
    if (configs_.empty())
      throw InputError(folder, 0, "execution.llm_models", "no <model>.json in this folder");
    for (const auto& [name, c] : configs_) names_ += (names_.empty() ? "" : ", ") + name;

    calibration_ = std::make_shared<Calibration>();
    if (const std::string cal = p.settings.text("llm_calibration", ""); !cal.empty())
      *calibration_ = load_calibration(cal);
    if (p.settings.has("llm_tensor_core_efficiency"))
      calibration_->kernels.tensor_core_efficiency = p.settings.number("llm_tensor_core_efficiency", 1);
    kernels_ = kernel_models().create("calibrated", calibration_->kernels, p.scenario_file, 0,
                                      "execution.llm_calibration");
    CollectiveModelParams cp;
    comm_calibration_ = llm::training_collectives(calibration_->collectives);
    cp.calibration = comm_calibration_;
    collectives_ =
        collective_models().create("calibrated", cp, p.scenario_file, 0, "execution.llm_calibration");
  }

  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                   std::string& why) const override {
    const Timed& t = timed(job, where);
    if (!t.ok) {
      why = t.why;
      return std::nullopt;
    }
    return job.steps.value_or(0) * t.prediction.total_s;
  }

  std::optional<IterationShape> iteration_shape(const JobSpec& job,
                                                const PlacementSummary& where) const override {
    const Timed& t = timed(job, where);
    if (!t.ok) return std::nullopt;
    const double exposed = t.prediction.dp_exposed_s + t.prediction.pp_s;
    return IterationShape{t.prediction.total_s - exposed, exposed};
  }

  bool can_time(const JobSpec& job, std::string& why) const override {
    const auto [config, layout] = resolve(job);
    if (!job.steps) {
      why = "an llm job needs a step count";
      return false;
    }
    llm::TrainingSetup s = setup(layout, job.gpus);
    if (s.dp < 1 || job.gpus % (s.tp * s.pp) != 0) {
      why = std::to_string(job.gpus) + " GPUs is not a multiple of TP x PP = " + std::to_string(s.tp * s.pp);
      return false;
    }
    try {
      llm::validate(*config, s, config->file);
    } catch (const InputError& e) {
      throw InputError(trace_file_, job.source_line, "model", "'" + job.model + "': " + e.what());
    }
    return true;
  }

 private:
  using Key = std::tuple<std::string, const GpuSpec*, int, int>;

  std::pair<const llm::TransformerConfig*, LlmJobLayout> resolve(const JobSpec& job) const {
    std::string why;
    const auto layout = parse_llm_job(job.model, why);
    if (!layout) throw InputError(trace_file_, job.source_line, "model", why);
    const auto it = configs_.find(layout->model);
    if (it == configs_.end())
      throw InputError(
          trace_file_, job.source_line, "model",
          "no config '" + layout->model + ".json' in execution.llm_models (models: " + names_ + ")");
    return {&it->second, *layout};
  }

  llm::TrainingSetup setup(const LlmJobLayout& l, int gpus) const {
    llm::TrainingSetup s;
    s.tp = static_cast<int>(l.tp), s.pp = static_cast<int>(l.pp);
    s.dp = gpus / std::max(1, s.tp * s.pp);
    s.seq = l.seq, s.global_batch = l.global_batch, s.micro_batch = l.micro_batch;
    s.recompute = recompute_.recompute, s.recompute_auto = recompute_.recompute_auto;
    s.zero = s.dp > 1 ? zero_ : 0;
    s.sequence_parallel = s.tp > 1;
    return s;
  }

  const Timed& timed(const JobSpec& job, const PlacementSummary& where) const {
    const int gpus = std::max(1, where.gpus);
    int nodes = std::max(1, where.nodes);
    if (!where.gpus_per_node.empty()) nodes = std::max(nodes, static_cast<int>(where.gpus_per_node.size()));
    const int per_node = (gpus + nodes - 1) / nodes;
    const GpuSpec* gpu = find_gpu(where.gpu_type);
    Key key{job.model, gpu, gpus, per_node};
    if (where.gpu_milli < 1000) std::get<0>(key) += " [shared]";
    if (gpu == nullptr) std::get<0>(key) += " [" + where.gpu_type + "]";
    if (const auto it = cache_.find(key); it != cache_.end()) return it->second;
    return cache_.emplace(key, predict(job, where, gpu, gpus, per_node)).first->second;
  }

  Timed predict(const JobSpec& job, const PlacementSummary& where, const GpuSpec* gpu, int gpus,
                int per_node) const {
    Timed t;
    const auto [config, layout] = resolve(job);
    if (where.gpu_milli < 1000) return fail(t, "the llm model does not time shared GPUs");
    if (gpu == nullptr) return fail(t, "GPU type '" + where.gpu_type + "' is not in the catalog");
    const llm::TrainingSetup s = setup(layout, gpus);
    if (gpus % (s.tp * s.pp) != 0)
      return fail(t, "TP x PP = " + std::to_string(s.tp * s.pp) + " does not divide the " +
                         std::to_string(gpus) + " GPUs it got");
    try {
      llm::validate(*config, s, config->file);
    } catch (const InputError& e) {
      return fail(
          t, std::string("layout does not fit the ") + std::to_string(gpus) + " GPUs it got: " + e.what());
    }
    llm::LlmPlatform platform;
    platform.gpu = gpu;
    platform.gpus_per_node = per_node;
    platform.fabric = fabric_for(*gpu, nic_gbps_, nics_per_node_, gpus_per_nic_);
    if (intra_gbps_ > 0) platform.fabric.intra_gbs = intra_gbps_ / 8;
    llm::set_link(platform, *comm_calibration_);
    platform.host.launch_s = launch_s_;
    t.prediction = llm::predict_iteration(*config, s, platform, *kernels_, *collectives_);
    if (!t.prediction.feasible)
      return fail(t, "'" + job.model + "' on " + std::to_string(gpus) + " " + gpu->name + " (DP " +
                         std::to_string(s.dp) + ") does not fit in memory: " + t.prediction.infeasible);
    t.ok = true;
    return t;
  }

  static Timed fail(Timed& t, std::string why) {
    t.ok = false;
    t.why = std::move(why);
    return t;
  }

  std::string trace_file_;
  double launch_s_;
  int zero_;
  double nic_gbps_;
  int nics_per_node_, gpus_per_nic_;
  double intra_gbps_;
  llm::TrainingSetup recompute_;  ///< its recompute and recompute_auto
  std::map<std::string, llm::TransformerConfig> configs_;
  std::string names_;
  std::shared_ptr<Calibration> calibration_;
  std::shared_ptr<const CollectiveCalibration> comm_calibration_;  ///< spliced over all sizes
  std::unique_ptr<KernelModel> kernels_;
  std::unique_ptr<CollectiveModel> collectives_;
  mutable std::map<Key, Timed> cache_;
};

const JobModelRegistrar kRegistrar{
    "llm",
    "LLM training: steps x one iteration predicted by models/llm (HF config.json in execution.llm_models, "
    "the job's TP/PP, DP from its GPUs) on the GPU type and nodes it got",
    [](const JobModelParams& p) { return std::make_unique<LlmJobModel>(p); }, 3,
    [](const JobModelParams& p, const std::vector<JobSpec>&) {
      return !p.settings.text("llm_models", "").empty();
    }};

}  // namespace
}  // namespace fleetsim
