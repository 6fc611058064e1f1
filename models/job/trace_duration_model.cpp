// "trace" job model: a job runs for the duration the trace recorded, whatever the placement.
#include "models/job/job_model.hpp"

namespace fleetsim {
namespace {

class TraceDurationModel final : public JobModel {
 public:
  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary&,
                                   std::string& why) const override {
    if (!job.duration_s) {
      why = "no duration in the trace";
      return std::nullopt;
    }
    return *job.duration_s;
  }
  bool can_time(const JobSpec& job, std::string& why) const override {
    if (job.duration_s) return true;
    why = "no duration in the trace";
    return false;
  }
};

const JobModelRegistrar kRegistrar{
    "trace", "run time = the trace's recorded duration (placement-independent)",
    [](const JobModelParams&) { return std::make_unique<TraceDurationModel>(); }};

}  // namespace
}  // namespace fleetsim
