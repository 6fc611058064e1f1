// "pollux": the 160-job workloads of Pollux (Qiao et al., OSDI'21, artifact petuum/adaptdl branch
// osdi21-artifact, simulator/workloads/), a CSV with header `name,time,application,num_replicas,batch_size`:
//   id = name, submit = time (s), gpus = num_replicas, model = "<application> (batch size <batch_size>)".
// The model string carries the fixed global batch size, in the same "(batch size N)" form as Gavel's job
// types, because the "pollux" job model needs it (local batch = batch_size / replicas) and JobSpec has no
// batch-size field. Columns are found by name, in any order; extra columns are ignored.
//
// Job length in steps (JobSpec::steps): an estimate for job models that count steps. The "pollux" job
// model does not use it: it trains each job for its application's epochs of statistically efficient
// progress, as Pollux's simulator does (models/job/pollux_model.cpp). The estimate is
//     steps = epochs(application) * ceil(examples per epoch(application) / batch_size)
// with the artifact's epoch counts (max_epochs in applications.py) and each data set's size:
//   bert 2 x 88,641 (SQuAD v1.1 train as 384-token windows), cifar10 100 x 50,000, deepspeech2 80 x 7,200
//   (CMU-ARCTIC utterances: an ESTIMATE), imagenet 90 x 1,281,167, ncf 10 x 4,970,845 (MovieLens-1M
//   positives with 4 sampled negatives each), yolov3 50 x 16,551 (PASCAL VOC 2007+2012 trainval).
// It ignores statistical efficiency (a large batch needs more steps than this).
#include <array>
#include <cmath>
#include <memory>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

struct Application {
  const char* name;
  int epochs;
  double examples_per_epoch;
};

constexpr std::array<Application, 6> kApplications = {{
    {"bert", 2, 88641},
    {"cifar10", 100, 50000},
    {"deepspeech2", 80, 7200},
    {"imagenet", 90, 1281167},
    {"ncf", 10, 4970845},
    {"yolov3", 50, 16551},
}};

class PolluxTraceReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const std::string& path = config.path;
    const std::string text = load_trace_text(path, config.scenario_file);
    CsvParser csv(text, ',', path);
    std::vector<std::string> header, row;
    long line = 0;
    csv.header(header, line);
    const long header_line = line;
    for (auto& h : header) h = std::string(trim(h));
    const int c_name = column_index(header, "name", true, path, header_line);
    const int c_time = column_index(header, "time", true, path, header_line);
    const int c_app = column_index(header, "application", true, path, header_line);
    const int c_replicas = column_index(header, "num_replicas", true, path, header_line);
    const int c_batch = column_index(header, "batch_size", true, path, header_line);

    std::vector<std::string> app_names;
    for (const auto& a : kApplications) app_names.emplace_back(a.name);

    std::vector<JobSpec> jobs;
    while (csv.next(row, line)) {
      if (row.size() != header.size()) {
        const std::string field = row.size() < header.size() ? header[row.size()] : "";
        throw InputError(
            path, line, field,
            "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
      }
      auto cell = [&](int c) { return trim(row[static_cast<std::size_t>(c)]); };
      JobSpec j;
      j.source_line = line;
      j.id = std::string(cell(c_name));
      if (j.id.empty()) j.id = "job-" + std::to_string(jobs.size());
      j.submit_s = parse_non_negative(cell(c_time), path, line, "time");
      j.gpus = parse_gpu_count(cell(c_replicas), path, line, "num_replicas");
      if (j.gpus < 1) throw InputError(path, line, "num_replicas", "a Pollux job needs at least 1 replica");
      const long long batch = parse_int(cell(c_batch), path, line, "batch_size");
      if (batch < j.gpus)
        throw InputError(path, line, "batch_size",
                         "global batch size " + std::to_string(batch) + " is smaller than the " +
                             std::to_string(j.gpus) + " replicas (each needs at least 1 example)");

      const std::string app = lower(cell(c_app));
      const Application* found = nullptr;
      for (const auto& a : kApplications)
        if (app == a.name) found = &a;
      if (found == nullptr) {
        std::string msg = "unknown application '" + std::string(cell(c_app)) + "'";
        if (auto best = closest(app, app_names); !best.empty()) msg += " (did you mean '" + best + "'?)";
        throw InputError(path, line, "application", msg + "; valid: " + join(app_names, ", "));
      }
      const double steps_per_epoch = std::ceil(found->examples_per_epoch / static_cast<double>(batch));
      j.steps = found->epochs * steps_per_epoch;
      j.model = std::string(found->name) + " (batch size " + std::to_string(batch) + ")";
      jobs.push_back(std::move(j));
    }
    sort_by_submit(jobs);
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{
    "pollux",
    "Pollux (OSDI'21) workload CSV: name,time,application,num_replicas,batch_size; steps from epochs x "
    "data set / batch",
    [] { return std::make_unique<PolluxTraceReader>(); }};

}  // namespace
}  // namespace fleetsim
