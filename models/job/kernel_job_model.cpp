// "kernels" job model: a job's iteration time on a placement is predicted from its training profile
// (forward kernels, backward multiple, gradient all-reduce; models/job/training_profile.hpp) by the
// kernel and collective models, so the same trace can be replayed on another GPU type or fabric.
//  - Jobs with `steps` (Philly/Gavel traces): steps count every worker's iterations (Gavel's unit:
//    its rate for N GPUs is N workers' steps per second), so run time = steps x iteration / GPUs.
//  - Jobs with only a duration: the duration was measured on `reference_gpu`, on the fewest nodes the
//    job fits; run time = duration x iteration(placement) / iteration(reference).
//  - A job whose model matches no profile cannot be timed (it is skipped with the reason).
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>

#include "models/calibration/calibration.hpp"
#include "models/job/job_model.hpp"
#include "models/job/training_profile.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"execution", "profiles", K::kPath, "", "", "training-profile TOML", "kernels"},
    {"execution", "calibration", K::kPath, "", "spec-only models",
     "calibration JSON (fleetsim calibrate fit)", "kernels"},
    {"execution", "kernel_model", K::kString, "", "calibrated", "kernel model: calibrated | table | roofline",
     "kernels"},
    {"execution", "collective_model", K::kString, "", "calibrated",
     "collective model: calibrated | nccl-default", "kernels"},
}};

class KernelJobModel final : public JobModel {
 public:
  explicit KernelJobModel(const JobModelParams& p)
      : reference_gpu_(p.settings.text("reference_gpu", "v100")), nic_gbps_(p.nic_gbps) {
    const std::string profiles = p.settings.text("profiles", "");
    const std::string calibration = p.settings.text("calibration", "");
    if (profiles.empty())
      throw InputError(p.scenario_file, 0, "execution.profiles",
                       "the kernels job model needs a training-profile file");
    library_ = read_profiles(profiles);
    calibration_ = std::make_shared<Calibration>();
    if (!calibration.empty()) *calibration_ = load_calibration(calibration);
    kernels_ = kernel_models().create(p.settings.text("kernel_model", "calibrated"), calibration_->kernels,
                                      p.scenario_file, 0, "execution.kernel_model");
    CollectiveModelParams cp;
    cp.calibration = std::shared_ptr<const CollectiveCalibration>(calibration_, &calibration_->collectives);
    collectives_ = collective_models().create(p.settings.text("collective_model", "calibrated"), cp,
                                              p.scenario_file, 0, "execution.collective_model");
    reference_ = find_gpu(reference_gpu_);
  }

  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                   std::string& why) const override {
    const TrainingProfile* p = profile(job, why);
    if (p == nullptr) return std::nullopt;
    const GpuSpec* gpu = find_gpu(where.gpu_type);
    if (gpu == nullptr) {
      why = "GPU type '" + where.gpu_type + "' is not in the catalog";
      return std::nullopt;
    }
    const double iter = iteration(*p, *gpu, where.gpus, where.nodes);
    if (job.steps) return *job.steps * iter / std::max(1, where.gpus);
    if (!job.duration_s || reference_ == nullptr) {
      why = "no steps, and no duration with a known reference_gpu";
      return std::nullopt;
    }
    const int per_node = std::max(1, where.gpus / std::max(1, where.nodes));
    const int ref_nodes = (job.gpus + std::max(per_node, 8) - 1) / std::max(per_node, 8);
    const double ref = iteration(*p, *reference_, std::max(1, job.gpus), std::max(1, ref_nodes));
    return *job.duration_s * iter / ref;
  }

  std::optional<IterationShape> iteration_shape(const JobSpec& job,
                                                const PlacementSummary& where) const override {
    std::string why;
    const TrainingProfile* p = profile(job, why);
    const GpuSpec* gpu = find_gpu(where.gpu_type);
    if (p == nullptr || gpu == nullptr) return std::nullopt;
    const IterationTime t = breakdown(*p, *gpu, where.gpus, where.nodes);
    return IterationShape{t.total_s - t.exposed_comm_s, t.exposed_comm_s};
  }

  bool can_time(const JobSpec& job, std::string& why) const override {
    if (profile(job, why) == nullptr) return false;
    if (job.steps || (job.duration_s && reference_ != nullptr)) return true;
    why = "no steps, and no duration with a known reference_gpu";
    return false;
  }

 private:
  std::string reference_gpu_;
  double nic_gbps_;
  ProfileLibrary library_;
  std::shared_ptr<Calibration> calibration_;
  std::unique_ptr<KernelModel> kernels_;
  std::unique_ptr<CollectiveModel> collectives_;
  const GpuSpec* reference_ = nullptr;
  // Iteration times per (profile, GPU, gpus, nodes): a placement query must not re-predict kernels.
  mutable std::map<std::tuple<const TrainingProfile*, const GpuSpec*, int, int>, IterationTime> cache_;

  const TrainingProfile* profile(const JobSpec& job, std::string& why) const {
    const TrainingProfile* p = library_.find(job.model);
    if (p == nullptr) why = "no training profile matches model '" + job.model + "'";
    return p;
  }

  double iteration(const TrainingProfile& p, const GpuSpec& gpu, int gpus, int nodes) const {
    return breakdown(p, gpu, gpus, nodes).total_s;
  }

  const IterationTime& breakdown(const TrainingProfile& p, const GpuSpec& gpu, int gpus, int nodes) const {
    const auto key = std::make_tuple(&p, &gpu, gpus, nodes);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
    const CommFabric fabric = fabric_for(gpu, nic_gbps_);
    return cache_.emplace(key, iteration_time(p, gpu, gpus, nodes, *kernels_, *collectives_, fabric))
        .first->second;
  }
};

const JobModelRegistrar kRegistrar{
    "kernels",
    "iteration time from the job's training profile (execution.profiles) predicted by the kernel and "
    "collective models (execution.calibration); run time = steps x iteration, or the trace duration "
    "scaled from execution.reference_gpu",
    [](const JobModelParams& p) { return std::make_unique<KernelJobModel>(p); }, 2,
    [](const JobModelParams& p, const std::vector<JobSpec>&) {
      return !p.settings.text("profiles", "").empty();
    }};

}  // namespace
}  // namespace fleetsim
