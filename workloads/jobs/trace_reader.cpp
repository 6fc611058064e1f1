#include "workloads/jobs/trace_reader.hpp"

#include <algorithm>
#include <cstdio>

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"

namespace fleetsim {

namespace {

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"workload", "format", K::kString, "", "",
     "trace format, a registered reader (fleetsim policies lists them)"},
    {"workload", "path", K::kPath, "", "", "trace file (every format but synthetic)"},
    {"workload", "limit", K::kInt, "", "0 = all", "read at most this many jobs", "", at_least(0)},
}};

}  // namespace

TraceReaderRegistry& trace_readers() {
  static TraceReaderRegistry registry("trace format");
  return registry;
}

namespace {
/// The longest submit time or duration a trace may give: about 31,700 years. Beyond it a time is an input
/// error, not a workload (a duration of 1e308 s made a run with checkpoints never end).
constexpr double kMaxTraceSeconds = 1e12;

/// %g: a huge time stays short in the message (fmt() writes every digit of a fixed-point number).
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

void check_times(const JobSpec& j, const WorkloadConfig& config) {
  const std::string& where = config.path.empty() ? config.scenario_file : config.path;
  if (j.submit_s > kMaxTraceSeconds)
    throw InputError(where, j.source_line, "submit",
                     "submit time " + short_number(j.submit_s) + " s is beyond 1e12 s");
  if (j.duration_s && *j.duration_s > kMaxTraceSeconds)
    throw InputError(where, j.source_line, "duration",
                     "duration " + short_number(*j.duration_s) + " s is beyond 1e12 s");
}

/// Every job of a stream checked by check_times() as it is read.
class CheckedStream final : public JobStream {
 public:
  CheckedStream(std::unique_ptr<JobStream> inner, WorkloadConfig config)
      : inner_(std::move(inner)), config_(std::move(config)) {}
  std::size_t size() const override { return inner_->size(); }
  void rewind() override { inner_->rewind(); }
  bool next(JobSpec& job) override {
    if (!inner_->next(job)) return false;
    check_times(job, config_);
    return true;
  }

 private:
  std::unique_ptr<JobStream> inner_;
  WorkloadConfig config_;
};

/// The first `limit` jobs of a stream.
class LimitedStream final : public JobStream {
 public:
  LimitedStream(std::unique_ptr<JobStream> inner, std::size_t limit)
      : inner_(std::move(inner)), limit_(std::min(limit, inner_->size())) {}
  std::size_t size() const override { return limit_; }
  void rewind() override {
    inner_->rewind();
    given_ = 0;
  }
  bool next(JobSpec& job) override {
    if (given_ >= limit_ || !inner_->next(job)) return false;
    ++given_;
    return true;
  }

 private:
  std::unique_ptr<JobStream> inner_;
  std::size_t limit_ = 0, given_ = 0;
};
}  // namespace

std::unique_ptr<JobStream> stream_trace(const WorkloadConfig& config, std::size_t limit) {
  const auto reader = trace_readers().create(config.format, config.scenario_file, 0, "workload.format");
  auto stream = reader->stream(config);
  if (!stream) return nullptr;
  if (stream->size() == 0) throw InputError(config.scenario_file, 0, "", "trace has no jobs");
  stream = std::make_unique<CheckedStream>(std::move(stream), config);
  if (limit > 0 && limit < stream->size()) return std::make_unique<LimitedStream>(std::move(stream), limit);
  return stream;
}

std::vector<JobSpec> read_trace(const WorkloadConfig& config) {
  // File checks (given, exists, readable, not binary) happen in each file-based reader through
  // load_trace_text(), so that a reader used directly gets them too.
  const auto reader = trace_readers().create(config.format, config.scenario_file, 0, "workload.format");
  std::vector<JobSpec> jobs = reader->read(config);
  if (jobs.empty()) {
    const std::string& where = config.path.empty() ? config.scenario_file : config.path;
    throw InputError(where, 0, "", "trace has no jobs");
  }
  for (const auto& j : jobs)
    if (j.submit_s < 0)  // readers reject these with their line; this is a last guard
      throw InputError(config.path, j.source_line, "submit", "negative submit time " + fmt(j.submit_s));
  for (const auto& j : jobs) check_times(j, config);
  sort_by_submit(jobs);  // readers sort already; this keeps the promise for any reader
  return jobs;
}

}  // namespace fleetsim
