// "pollux" job model: Pollux's application model (Qiao et al., OSDI'21; the simulator of its artifact,
// petuum/adaptdl branch osdi21-artifact, simulator/), for jobs of a fixed global batch size.
//
// Profiles: execution.pollux_profiles names a FOLDER with one sub-folder per application (bert, cifar10,
// ...), read by models/job/pollux_app.cpp: measured step times (placements.csv, scalability.csv; AWS
// g4dn.12xlarge nodes, 4 NVIDIA T4 each) and statistical-efficiency traces (validation-<B>.csv).
//
// Job: model = "<application> (batch size <B>)" (the "pollux" reader writes this). As in the artifact, a
// job trains its application's number of epochs (rows of its validation traces), counted in
// statistically efficient progress: an epoch e needs progress(e + 1) - progress(e) (in steps at the
// application's smallest batch b0), and one step at batch B makes gain(B, e) = (var + sqr) /
// (var / (B / b0) + sqr) of it, from the gradient statistics of the epoch interpolated between the
// validated batches. So a large batch needs more steps: the run time on a placement is
//     sum over epochs of  (progress(e + 1) - progress(e)) / gain(B', e)  x  time per step,
// where B is split as the artifact does (local = ceil(B / GPUs); above the largest measured local batch
// the surplus runs as gradient accumulation: a extra micro-steps of m examples, B' = GPUs x m x (a + 1))
// and one step takes step(m) + a x (step(m) - sync(m)). The step time is the artifact's: the measured
// placement string when it exists (the engine passes GPUs per node), LinearND interpolation otherwise.
// The placement only scales the time per step, so a job resumed on another shape keeps its progress
// exactly (the engine's remaining fraction).
//
// Not modelled: the artifact rounds each epoch's duration to whole seconds (<= 0.5 s per epoch).
// GPU type: the profiles are T4 measurements. On another catalog GPU the compute part (step - sync) is
// scaled by the FP32 peak ratio T4 / that GPU; the sync part is kept (an extrapolation). Shared GPUs
// (gpu_milli < 1000) are not timed.
//
// Bad input: a job whose application has no profile folder, or whose batch size lies outside the
// application's validated batches, is an error naming the trace file, line and field.
#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "models/job/pollux_app.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProfiledGpu = "T4";

/// "<application> (batch size <B>)" -> (application, B); B = 0 when absent or malformed.
std::pair<std::string, long> parse_model(const std::string& model) {
  static const std::string kTag = " (batch size ";
  const auto pos = model.find(kTag);
  if (pos == std::string::npos || model.back() != ')') return {lower(trim(model)), 0};
  const std::string digits = model.substr(pos + kTag.size(), model.size() - 1 - pos - kTag.size());
  long b = 0;
  for (char ch : digits) {
    if (ch < '0' || ch > '9' || b > 1'000'000'000L) return {lower(trim(model.substr(0, pos))), 0};
    b = 10 * b + (ch - '0');
  }
  return {lower(trim(model.substr(0, pos))), b};
}

/// GPUs per node when the engine did not say (an estimate): `gpus` spread evenly over `nodes`.
std::vector<int> even_split(int gpus, int nodes) {
  nodes = std::clamp(nodes, 1, std::max(1, gpus));
  std::vector<int> out(static_cast<std::size_t>(nodes), gpus / nodes);
  for (int i = 0; i < gpus % nodes; ++i) ++out[static_cast<std::size_t>(i)];
  return out;
}

class PolluxModel final : public JobModel, public PolluxJobSource {
 public:
  explicit PolluxModel(const JobModelParams& p)
      : trace_file_(p.workload.text("path", "")), one_gpu_(p.settings.texts("pollux_one_gpu", {"ncf"})) {
    for (auto& a : one_gpu_) a = lower(a);
    const std::string folder = p.settings.text("pollux_profiles", "");
    if (folder.empty())
      throw InputError(p.scenario_file, 0, "execution.pollux_profiles",
                       "the pollux job model needs execution.pollux_profiles = the folder of Pollux profiles "
                       "(<application>/placements.csv)");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw InputError(folder, 0, "execution.pollux_profiles",
                       fs::exists(folder, ec)
                           ? "not a folder (the pollux job model reads <application>/placements.csv)"
                           : "no such folder");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (e.is_directory() && fs::exists(e.path() / "placements.csv")) dirs.push_back(e.path());
    if (ec) throw InputError(folder, 0, "execution.pollux_profiles", "cannot list folder: " + ec.message());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      PolluxApplication app = PolluxApplication::load(d, p.scenario_file);
      apps_.emplace(app.name(), std::move(app));
    }
    if (apps_.empty())
      throw InputError(folder, 0, "execution.pollux_profiles",
                       "no application profiles (<application>/placements.csv) in this folder");
    for (const auto& [name, app] : apps_) names_ += (names_.empty() ? "" : ", ") + name;
    if (const GpuSpec* g = find_gpu(kProfiledGpu)) profiled_fp32_ = g->fp32_tflops;
  }

  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                   std::string& why) const override {
    long batch = 0;
    const PolluxApplication& app = resolve(job, batch);
    if (where.gpu_milli < 1000) {
      why = "the pollux model does not time shared GPUs";
      return std::nullopt;
    }
    const int replicas = std::max(1, where.gpus);
    int placed = 0;
    for (int g : where.gpus_per_node) placed += g;
    const std::vector<int> placement =
        placed == replicas ? where.gpus_per_node : even_split(replicas, where.nodes);
    const PolluxBatch b = app.fixed_batch(batch, replicas);
    const PolluxStepTimes t = app.step_times(placement, static_cast<double>(b.atomic));
    double compute = t.step - t.sync;
    if (where.gpu_type != kProfiledGpu) {
      const GpuSpec* g = find_gpu(where.gpu_type);
      if (g == nullptr || g->fp32_tflops <= 0 || profiled_fp32_ <= 0) {
        why = "GPU type " + where.gpu_type + " has no FP32 peak to scale the T4 profiles by";
        return std::nullopt;
      }
      compute *= profiled_fp32_ / g->fp32_tflops;
    }
    const double step_s = compute + t.sync + static_cast<double>(b.accum) * compute;
    double steps = 0;  // steps at batch b.batch to reach the application's last epoch
    for (int e = 0; e < app.epochs(); ++e)
      steps += (app.progress(e + 1) - app.progress(e)) / app.gain(static_cast<double>(b.batch), e);
    return steps * step_s;
  }

  /// Elastic jobs: the batch over the smallest measured per-GPU batch (the artifact's Optimus limit);
  /// 1 for the applications of execution.pollux_one_gpu.
  std::optional<int> max_gpus(const JobSpec& job) const override {
    const PolluxJobInfo info = pollux_job(job);
    if (info.one_gpu) return 1;
    return static_cast<int>(std::clamp(info.batch / std::max(1L, info.app->min_local()), 1L, 1'000'000L));
  }

  PolluxJobInfo pollux_job(const JobSpec& job) const override {
    PolluxJobInfo info;
    info.app = &resolve(job, info.batch);
    info.one_gpu = std::find(one_gpu_.begin(), one_gpu_.end(), info.app->name()) != one_gpu_.end();
    return info;
  }

  bool can_time(const JobSpec& job, std::string& /*why*/) const override {
    long batch = 0;
    resolve(job, batch);
    return true;
  }

 private:
  /// The job's application and batch; bad input throws, naming the trace's file and line.
  const PolluxApplication& resolve(const JobSpec& job, long& batch) const {
    const auto [name, b] = parse_model(job.model);
    const auto it = apps_.find(name);
    if (it == apps_.end())
      throw InputError(trace_file_, job.source_line, "application",
                       "no Pollux profile for application '" + name + "' (profiles: " + names_ + ")");
    const PolluxApplication& app = it->second;
    if (b <= 0)
      throw InputError(
          trace_file_, job.source_line, "batch_size",
          "no batch size in model '" + job.model + "' (expected '<application> (batch size N)')");
    if (b < app.init_batch() || b > app.max_batch())
      throw InputError(trace_file_, job.source_line, "batch_size",
                       "batch size " + std::to_string(b) + " of " + name + " is outside its profiled range " +
                           std::to_string(app.init_batch()) + ".." + std::to_string(app.max_batch()) +
                           " (validation-<B>.csv in " + app.folder() + ")");
    batch = b;
    return app;
  }

  std::string trace_file_;
  std::vector<std::string> one_gpu_;
  std::map<std::string, PolluxApplication> apps_;
  std::string names_;
  double profiled_fp32_ = 0;
};

const KeyRegistrar kKeys{{
    {"execution", "pollux_profiles", KeyKind::kPath, "", "",
     "folder of Pollux profiles: <application>/placements.csv, scalability.csv, validation-<B>.csv",
     "pollux"},
    {"execution", "pollux_one_gpu", KeyKind::kStringArray, "", "[\"ncf\"]",
     "applications a policy that sizes jobs (optimus) keeps on one GPU (Pollux's simulator pins ncf)",
     "pollux"},
}};

const JobModelRegistrar kRegistrar{"pollux",
                                   "Pollux's application model: epochs of statistically efficient progress x "
                                   "measured step time for the job's placement and batch (Pollux profiles)",
                                   [](const JobModelParams& p) { return std::make_unique<PolluxModel>(p); }};

}  // namespace
}  // namespace fleetsim
