// "philly-gavel": Microsoft Philly per-virtual-cluster traces in Gavel's format (Narayanan et al.,
// OSDI'20). Tab-separated, 7 fields, no header:
//   job_type  command  num_steps_arg  needs_data_dir  total_steps  arrival_time  scale_factor
// submit = arrival_time (s), steps = total_steps, gpus = scale_factor, model = job_type, ids "job-<n>"
// (n = 0-based row). Jobs may span nodes (single_node = false).
// With `throughputs` (a Gavel throughput JSON), duration = total_steps / isolated rate of
// (job_type, scale_factor) on `gpu_type` (default "v100", consolidated placement). Some traces ask
// for scales the table lacks (e.g. A3C, CycleGAN and Recommendation are measured on 1 GPU only, and
// no job type above 8 GPUs): those use the rate at the largest measured smaller scale, i.e. the extra
// GPUs give no speed-up (ThroughputTable::rate_up_to). A job type absent from the table is an error.
#include <memory>
#include <optional>

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"
#include "workloads/throughputs/throughput_table.hpp"

namespace fleetsim {
namespace {

constexpr const char* kFields[] = {"job_type",    "command",      "num_steps_arg", "needs_data_dir",
                                   "total_steps", "arrival_time", "scale_factor"};
constexpr std::size_t kNumFields = std::size(kFields);

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"workload", "throughputs", K::kPath, "", "none: no durations",
     "Gavel throughput JSON whose isolated rates give durations (also the throughput job model's table "
     "when execution.throughput_table is not set)",
     "philly-gavel"},
    {"workload", "gpu_type", K::kString, "", "v100", "GPU type whose throughput defines durations",
     "philly-gavel"},
}};

class PhillyGavelReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const std::string& path = config.path;
    const std::string text = load_trace_text(path, config.scenario_file);

    std::optional<ThroughputTable> table;
    const std::string throughputs = config.settings.text("throughputs", "");
    const std::string given_type = config.settings.text("gpu_type", "v100");
    std::string gpu_type = given_type.empty() ? std::string("v100") : lower(given_type);
    if (!throughputs.empty()) {
      table = ThroughputTable::load(throughputs);
      if (!table->has_gpu_type(gpu_type))
        throw InputError(config.scenario_file, 0, "workload.gpu_type",
                         "GPU type '" + given_type + "' is not in throughput table " + throughputs +
                             "; valid: " + join(table->gpu_types(), ", "));
    }

    std::vector<JobSpec> jobs;
    jobs.reserve(text.size() / 128);
    std::vector<std::string> known_types;
    for_each_line(text, [&](long line, std::string_view row) {
      if (trim(row).empty()) return;
      const auto f = split(row, '\t');
      if (f.size() != kNumFields) {
        const std::string field = f.size() < kNumFields ? kFields[f.size()] : "";
        throw InputError(path, line, field,
                         "expected " + std::to_string(kNumFields) + " tab-separated fields, found " +
                             std::to_string(f.size()));
      }
      JobSpec j;
      j.source_line = line;
      j.id = "job-" + std::to_string(jobs.size());
      j.model = std::string(trim(f[0]));
      if (j.model.empty()) throw InputError(path, line, kFields[0], "empty job type");
      const double steps = parse_non_negative(f[4], path, line, kFields[4]);
      if (steps <= 0) throw InputError(path, line, kFields[4], "total_steps must be > 0, got '" + f[4] + "'");
      j.steps = steps;
      j.submit_s = parse_non_negative(f[5], path, line, kFields[5]);
      j.gpus = parse_gpu_count(f[6], path, line, kFields[6]);
      if (j.gpus < 1)
        throw InputError(path, line, kFields[6], "scale_factor must be >= 1, got '" + f[6] + "'");
      j.gpu_milli = 1000;
      j.single_node = false;

      if (table) {
        if (!table->has_job_type(j.model)) {
          if (known_types.empty()) known_types = table->job_types();
          std::string msg = "job type '" + j.model + "' is not in throughput table " + throughputs;
          if (auto best = closest(j.model, known_types); !best.empty())
            msg += " (did you mean '" + best + "'?)";
          throw InputError(path, line, kFields[0], msg);
        }
        const auto r = table->rate_up_to(gpu_type, j.model, j.gpus, true);
        if (!r)
          throw InputError(path, line, kFields[6],
                           "no positive throughput for ('" + j.model + "', " + std::to_string(j.gpus) +
                               ") or any smaller scale on " + gpu_type + " in " + throughputs);
        j.duration_s = steps / r->rate;
      }
      jobs.push_back(std::move(j));
    });
    sort_by_submit(jobs);
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{
    "philly-gavel", "Philly per-VC trace in Gavel's tab-separated format (durations from a throughput table)",
    [] { return std::make_unique<PhillyGavelReader>(); }};

}  // namespace
}  // namespace fleetsim
