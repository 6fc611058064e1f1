// "llm-csv": LLM training jobs, one per row, with a header naming the columns (any order, extra columns
// ignored):
//   required  submit (s, >= 0), model (a config name: <model>.json in execution.llm_models), tp, pp,
//             seq, global_batch, dp or gpus (GPUs = TP x PP x DP; both given: they must agree),
//             steps or tokens (steps = ceil(tokens / (global_batch x seq)); both given: steps wins)
//   optional  id, user, gpu_type ('|'-separated catalog names), micro_batch (default 1)
// Each job's model string carries its layout (workloads/jobs/llm_job.hpp), e.g.
//   "llama3-70b (tp 4, pp 2, seq 4096, batch 512)", for the `llm` job model.
// A bad cell is an InputError naming file, line and column.
#include <cmath>
#include <memory>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/llm_job.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

/// A positive integer cell; InputError(file, line, column) otherwise.
long positive_int(std::string_view text, const std::string& file, long line, const std::string& column) {
  const double v = parse_non_negative(text, file, line, column);
  if (v < 1 || v != std::floor(v) || v > 1e12)
    throw InputError(file, line, column, "'" + std::string(text) + "' is not a positive integer");
  return static_cast<long>(v);
}

class LlmCsvReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const std::string& path = config.path;
    const std::string text = load_trace_text(path, config.scenario_file);
    CsvParser csv(text, ',', path);
    std::vector<std::string> header, row;
    long line = 0;
    csv.header(header, line);
    auto col = [&](std::string_view name, bool required) {
      return column_index(header, name, required, path, line);
    };
    const int c_submit = col("submit", true), c_model = col("model", true), c_tp = col("tp", true),
              c_pp = col("pp", true), c_seq = col("seq", true), c_batch = col("global_batch", true);
    const int c_dp = col("dp", false), c_gpus = col("gpus", false), c_steps = col("steps", false),
              c_tokens = col("tokens", false), c_id = col("id", false), c_user = col("user", false),
              c_type = col("gpu_type", false), c_micro = col("micro_batch", false);
    if (c_dp < 0 && c_gpus < 0) throw InputError(path, line, "dp", "needs a 'dp' or a 'gpus' column");
    if (c_steps < 0 && c_tokens < 0)
      throw InputError(path, line, "steps", "needs a 'steps' or a 'tokens' column");

    std::vector<JobSpec> jobs;
    while (csv.next(row, line)) {
      if (row.size() != header.size())
        throw InputError(
            path, line, row.size() < header.size() ? header[row.size()] : "",
            "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
      auto cell = [&](int c) { return c < 0 ? std::string_view() : trim(row[static_cast<std::size_t>(c)]); };
      JobSpec j;
      j.source_line = line;
      j.submit_s = parse_non_negative(cell(c_submit), path, line, "submit");
      LlmJobLayout l;
      l.model = lower(cell(c_model));
      if (l.model.empty() || l.model.find_first_of("(),") != std::string::npos)
        throw InputError(
            path, line, "model",
            "'" + std::string(cell(c_model)) + "': expected a config name (no parentheses or commas)");
      l.tp = positive_int(cell(c_tp), path, line, "tp");
      l.pp = positive_int(cell(c_pp), path, line, "pp");
      l.seq = positive_int(cell(c_seq), path, line, "seq");
      l.global_batch = positive_int(cell(c_batch), path, line, "global_batch");
      if (!cell(c_micro).empty()) l.micro_batch = positive_int(cell(c_micro), path, line, "micro_batch");
      long gpus = 0;
      if (!cell(c_dp).empty()) gpus = l.tp * l.pp * positive_int(cell(c_dp), path, line, "dp");
      if (!cell(c_gpus).empty()) {
        const long g = parse_gpu_count(cell(c_gpus), path, line, "gpus");
        if (gpus > 0 && g != gpus)
          throw InputError(path, line, "gpus",
                           std::to_string(g) + " GPUs, but tp x pp x dp = " + std::to_string(gpus));
        gpus = g;
      }
      if (gpus == 0) throw InputError(path, line, c_dp >= 0 ? "dp" : "gpus", "no GPU count (dp or gpus)");
      if (gpus > kMaxGpusPerJob || gpus % (l.tp * l.pp) != 0)
        throw InputError(path, line, "gpus",
                         std::to_string(gpus) +
                             " GPUs is not a multiple of tp x pp = " + std::to_string(l.tp * l.pp) +
                             " (at most " + std::to_string(kMaxGpusPerJob) + ")");
      const long dp = gpus / (l.tp * l.pp);
      if (l.global_batch % (l.micro_batch * dp) != 0)
        throw InputError(path, line, "global_batch",
                         std::to_string(l.global_batch) + " is not a multiple of micro_batch x dp = " +
                             std::to_string(l.micro_batch * dp));
      if (!cell(c_steps).empty()) {
        j.steps = static_cast<double>(positive_int(cell(c_steps), path, line, "steps"));
      } else if (!cell(c_tokens).empty()) {
        const double tokens = parse_non_negative(cell(c_tokens), path, line, "tokens");
        if (!(tokens > 0)) throw InputError(path, line, "tokens", "must be positive");
        j.steps = std::ceil(tokens / (static_cast<double>(l.global_batch) * static_cast<double>(l.seq)));
      } else {
        throw InputError(path, line, c_steps >= 0 ? "steps" : "tokens", "neither a step nor a token count");
      }
      j.gpus = static_cast<int>(gpus);
      j.model = format_llm_job(l);
      j.gpu_types = split_gpu_types(cell(c_type));
      j.user = std::string(cell(c_user));
      j.id = std::string(cell(c_id));
      if (j.id.empty()) j.id = "job-" + std::to_string(jobs.size());
      jobs.push_back(std::move(j));
    }
    sort_by_submit(jobs);
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{"llm-csv",
                                      "LLM training jobs: submit, model, tp, pp, dp|gpus, seq, global_batch, "
                                      "steps|tokens (for the llm job model)",
                                      [] { return std::make_unique<LlmCsvReader>(); }};

}  // namespace
}  // namespace fleetsim
