// "synthetic": a generated workload (no file). Poisson arrivals at `arrival_rate_per_hour` (the first
// job at 0), GPUs drawn from `gpus_values` with `gpus_weights`, log-normal durations (median, sigma)
// clamped to [duration_min_s, duration_max_s]. Ids "job-<n>", n from 0.
// Sampling is hand-written on std::mt19937_64 (whose output the standard fixes), not the
// std::*_distribution classes (whose algorithms differ between standard libraries), so a seed gives
// the same jobs everywhere. Per job, in order: the inter-arrival gap (not for the first job), the GPU
// count, then the duration.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <random>

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/sampler.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

constexpr long kMaxSyntheticJobs = 100'000'000;

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"workload", "jobs", K::kInt, "", "1000 (llm-synthetic: 260)", "number of jobs",
     "synthetic, llm-synthetic"},
    {"workload", "arrival_rate_per_hour", K::kFloat, "jobs/hour", "60", "Poisson arrival rate", "synthetic"},
    {"workload", "gpus_values", K::kIntArray, "", "[1,2,4,8,16,32]", "GPUs-per-job values", "synthetic"},
    {"workload", "gpus_weights", K::kNumberArray, "", "[70,10,8,8,3,1] %",
     "their weights (after Philly, Jeon et al. ATC'19)", "synthetic"},
    {"workload", "duration_median_s", K::kFloat, "s", "900", "log-normal median duration", "synthetic"},
    {"workload", "duration_sigma", K::kFloat, "", "1.8",
     "log-normal sigma (heavy-tailed as in Philly/Helios)", "synthetic"},
    {"workload", "duration_min_s", K::kFloat, "s", "10", "shortest duration", "synthetic"},
    {"workload", "duration_max_s", K::kFloat, "s", "14 days", "longest duration", "synthetic"},
    {"workload", "seed", K::kInt, "", "the scenario seed", "generator seed", "synthetic, llm-synthetic"},
    {"workload", "models", K::kStringArray, "", "none",
     "model names drawn uniformly per job (with the kernels job model they select training profiles)",
     "synthetic"},
}};

/// Defaults are shaped after published Philly (Jeon et al., ATC'19) and Helios (Hu et al., SC'21)
/// statistics: most jobs use 1 GPU, few use 8+; durations are heavy-tailed (log-normal, median ~ 15
/// min, a long tail to days).
struct SyntheticConfig {
  long jobs = 1000;
  double arrival_rate_per_hour = 60;
  std::vector<int> gpus_values = {1, 2, 4, 8, 16, 32};
  std::vector<double> gpus_weights = {0.70, 0.10, 0.08, 0.08, 0.03, 0.01};
  double duration_median_s = 900;
  double duration_sigma = 1.8;
  double duration_min_s = 10;
  double duration_max_s = 14 * 24 * 3600.0;
  std::uint64_t seed = 1;
  std::vector<std::string> models;  ///< drawn uniformly (empty: jobs have no model)

  static SyntheticConfig from(const WorkloadConfig& w) {
    const Options& o = w.settings;
    SyntheticConfig c;
    c.jobs = static_cast<long>(o.integer("jobs", c.jobs));
    c.arrival_rate_per_hour = o.number("arrival_rate_per_hour", c.arrival_rate_per_hour);
    if (o.has("gpus_values")) {
      c.gpus_values.clear();
      for (double v : o.numbers("gpus_values", {})) c.gpus_values.push_back(static_cast<int>(v));
    }
    c.gpus_weights = o.numbers("gpus_weights", c.gpus_weights);
    c.duration_median_s = o.number("duration_median_s", c.duration_median_s);
    c.duration_sigma = o.number("duration_sigma", c.duration_sigma);
    c.duration_min_s = o.number("duration_min_s", c.duration_min_s);
    c.duration_max_s = o.number("duration_max_s", c.duration_max_s);
    c.seed = static_cast<std::uint64_t>(o.integer("seed", static_cast<long long>(w.seed)));
    c.models = o.texts("models", {});
    return c;
  }
};

void validate(const SyntheticConfig& c, const std::string& file) {
  auto fail = [&](const char* key, const std::string& msg) {
    throw InputError(file, 0, std::string("workload.") + key, msg);
  };
  if (c.jobs < 1 || c.jobs > kMaxSyntheticJobs)
    fail("jobs", "must be in [1, " + std::to_string(kMaxSyntheticJobs) + "], got " + std::to_string(c.jobs));
  if (!std::isfinite(c.arrival_rate_per_hour) || c.arrival_rate_per_hour <= 0)
    fail("arrival_rate_per_hour", "must be a finite number > 0, got " + fmt(c.arrival_rate_per_hour));
  if (c.gpus_values.empty()) fail("gpus_values", "must not be empty");
  for (int v : c.gpus_values)
    if (v < 0 || v > kMaxGpusPerJob)
      fail("gpus_values",
           "value " + std::to_string(v) + " out of range [0, " + std::to_string(kMaxGpusPerJob) + "]");
  if (c.gpus_weights.size() != c.gpus_values.size())
    fail("gpus_weights", "has " + std::to_string(c.gpus_weights.size()) + " weights for " +
                             std::to_string(c.gpus_values.size()) + " gpus_values");
  double total = 0;
  for (double w : c.gpus_weights) {
    if (!std::isfinite(w) || w < 0) fail("gpus_weights", "weights must be finite and >= 0, got " + fmt(w));
    total += w;
  }
  if (total <= 0) fail("gpus_weights", "weights must not all be 0");
  if (!std::isfinite(c.duration_median_s) || c.duration_median_s <= 0)
    fail("duration_median_s", "must be a finite number > 0, got " + fmt(c.duration_median_s));
  if (!std::isfinite(c.duration_sigma) || c.duration_sigma < 0)
    fail("duration_sigma", "must be a finite number >= 0, got " + fmt(c.duration_sigma));
  if (!std::isfinite(c.duration_min_s) || c.duration_min_s < 0)
    fail("duration_min_s", "must be a finite number >= 0, got " + fmt(c.duration_min_s));
  if (!std::isfinite(c.duration_max_s) || c.duration_max_s < c.duration_min_s)
    fail("duration_max_s", "must be finite and >= duration_min_s (" + fmt(c.duration_min_s) + "), got " +
                               fmt(c.duration_max_s));
}

/// The generator: jobs drawn one at a time, so a run can stream them (JobStream).
class SyntheticStream final : public JobStream {
 public:
  explicit SyntheticStream(SyntheticConfig c) : c_(std::move(c)), s_(c_.seed) {
    double total = 0;
    for (double w : c_.gpus_weights) cum_.push_back(total += w);
    mean_gap_s_ = 3600.0 / c_.arrival_rate_per_hour;
    log_median_ = std::log(c_.duration_median_s);
  }
  std::size_t size() const override { return static_cast<std::size_t>(c_.jobs); }
  void rewind() override {
    s_ = Sampler(c_.seed);
    n_ = 0;
    t_ = 0;
  }
  bool next(JobSpec& j) override {
    if (n_ >= size()) return false;
    j = JobSpec{};
    if (n_ > 0) t_ += s_.exponential(mean_gap_s_);
    j.id = "job-" + std::to_string(n_);
    j.submit_s = t_;
    j.gpus = c_.gpus_values[s_.pick(cum_)];
    j.gpu_milli = j.gpus == 0 ? 0 : 1000;
    const double d = std::exp(log_median_ + c_.duration_sigma * s_.normal());
    j.duration_s = std::clamp(d, c_.duration_min_s, c_.duration_max_s);
    j.source_line = 0;
    // Drawn last and only when asked for, so traces without models keep their random stream.
    if (!c_.models.empty())
      j.model = c_.models[std::min(c_.models.size() - 1,
                                   static_cast<std::size_t>(s_.uniform() * c_.models.size()))];
    ++n_;
    return true;
  }

 private:
  SyntheticConfig c_;
  Sampler s_;
  std::vector<double> cum_;
  double mean_gap_s_ = 0, log_median_ = 0, t_ = 0;
  std::size_t n_ = 0;
};

class SyntheticReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const auto stream = make(config);
    std::vector<JobSpec> jobs(stream->size());
    for (auto& j : jobs) stream->next(j);
    return jobs;
  }
  std::unique_ptr<JobStream> stream(const WorkloadConfig& config) const override { return make(config); }

 private:
  static std::unique_ptr<SyntheticStream> make(const WorkloadConfig& config) {
    SyntheticConfig c = SyntheticConfig::from(config);
    validate(c, config.scenario_file);
    return std::make_unique<SyntheticStream>(std::move(c));
  }
};

const TraceReaderRegistrar kRegistrar{
    "synthetic", "generated: Poisson arrivals, weighted GPU counts, log-normal durations (seeded, portable)",
    [] { return std::make_unique<SyntheticReader>(); }};

}  // namespace
}  // namespace fleetsim
