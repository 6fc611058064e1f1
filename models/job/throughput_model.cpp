// "throughput" job model: run time = steps / measured steps-per-second for the job's model, scale and
// GPU type, from a Gavel-format table (Narayanan et al., OSDI'20). A multi-GPU job spread over
// several nodes uses the table's "<type>_unconsolidated" rate. GPU types the table lacks are
// timed from the reference type scaled by the ratio of catalog FP32 peaks (an extrapolation).
// A scale the table lacks uses the largest smaller measured scale's rate (no extra speed-up).
#include <cmath>

#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/throughputs/throughput_table.hpp"

namespace fleetsim {
namespace {

const KeyRegistrar kKeys{{
    {"execution", "throughput_table", KeyKind::kPath, "", "workload.throughputs",
     "Gavel throughput JSON: measured steps/s per job type, scale and GPU type", "throughput"},
}};

/// execution.throughput_table, else the trace's workload.throughputs.
std::string table_path(const JobModelParams& p) {
  return p.settings.text("throughput_table", p.workload.text("throughputs", ""));
}

ThroughputTable load_table(const JobModelParams& p) {
  const std::string path = table_path(p);
  if (path.empty())
    throw InputError(p.scenario_file, 0, "execution.throughput_table",
                     "the throughput job model needs a throughput table (execution.throughput_table or "
                     "workload.throughputs)");
  return ThroughputTable::load(path);
}

class ThroughputModel final : public JobModel {
 public:
  explicit ThroughputModel(const JobModelParams& p)
      : table_(load_table(p)), reference_(lower(p.settings.text("reference_gpu", "v100"))) {
    if (const GpuSpec* ref = find_gpu(reference_)) reference_fp32_ = ref->fp32_tflops;
  }

  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                   std::string& why) const override {
    if (!job.steps) {
      why = "no step count in the trace";
      return std::nullopt;
    }
    const bool consolidated = where.nodes <= 1;
    std::string type = table_type(where.gpu_type);
    double scale = 1.0;
    if (type.empty()) {  // not in the table: extrapolate from the reference type by FP32 peak
      type = reference_;
      const GpuSpec* g = find_gpu(where.gpu_type);
      if (g == nullptr || reference_fp32_ <= 0) {
        why = "GPU type " + where.gpu_type + " not in the throughput table";
        return std::nullopt;
      }
      scale = g->fp32_tflops / reference_fp32_;
    }
    auto rate = lookup(type, job, consolidated);
    if (!rate && !consolidated) rate = lookup(type, job, true);
    if (!rate || *rate <= 0) {
      why = "no throughput for ('" + job.model + "', " + std::to_string(job.gpus) + ") on " + type;
      return std::nullopt;
    }
    return *job.steps / (*rate * scale);
  }

  /// From the table's pair entries: this job's rate beside `other` / its rate alone.
  std::optional<double> colocated_speed(const JobSpec& job, const JobSpec& other,
                                        const std::string& gpu_type) const override {
    const std::string type = table_type(gpu_type);
    if (type.empty()) return std::nullopt;
    const auto pair = table_.pair_rate(type, job.model, job.gpus, other.model, other.gpus, true);
    const auto alone = table_.rate(type, job.model, job.gpus, true);
    if (!pair || !alone || *alone <= 0 || pair->first <= 0) return std::nullopt;
    return std::min(1.0, pair->first / *alone);
  }

  bool can_time(const JobSpec& job, std::string& why) const override {
    if (!job.steps) {
      why = "no step count in the trace";
      return false;
    }
    if (!lookup(reference_, job, true)) {
      why = "no throughput for ('" + job.model + "', " + std::to_string(job.gpus) + ")";
      return false;
    }
    return true;
  }

 private:
  /// Measured rate at the job's scale; where the table lacks that scale, the rate of the largest
  /// smaller measured scale (extra GPUs assumed to give no speed-up: conservative, as the reader).
  std::optional<double> lookup(const std::string& type, const JobSpec& job, bool consolidated) const {
    if (auto r = table_.rate_up_to(type, job.model, job.gpus, consolidated)) return r->rate;
    return std::nullopt;
  }

  /// The table's key for a catalog GPU ("V100" -> "v100"), or "" if the table has no such type.
  std::string table_type(const std::string& gpu) const {
    for (const auto& t : table_.gpu_types()) {
      const GpuSpec* g = find_gpu(t);
      if (g != nullptr && g->name == gpu) return t;
    }
    return "";
  }

  ThroughputTable table_;
  std::string reference_;
  double reference_fp32_ = 0;
};

const JobModelRegistrar kRegistrar{
    "throughput",
    "run time = steps / measured rate for the GPU type and (un)consolidated placement (Gavel table)",
    [](const JobModelParams& p) { return std::make_unique<ThroughputModel>(p); }, 1,
    [](const JobModelParams& p, const std::vector<JobSpec>& jobs) {
      return !jobs.empty() && jobs.front().steps.has_value() && !table_path(p).empty();
    }};

}  // namespace
}  // namespace fleetsim
