// "openb": Alibaba GPU cluster pod list (openb, published with FGD, Weng et al., ATC'23):
//   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//   creation_time,deletion_time,scheduled_time
// Columns are found by header name, in any order.
//   submit   = creation_time (s, >= 0); duration = deletion_time - creation_time (>= 0). Pods still alive
//              at the end of the window carry the window end as deletion_time, so their durations are
//              truncated there. An empty deletion_time leaves the duration unknown.
//   gpus     = num_gpu; gpu_milli = share of each GPU (1..1000; 0 for CPU-only pods)
//   gpu_types= gpu_spec split on '|', names as in the trace (e.g. "V100M16"); empty = any model
//   user     = qos; single_node = true (a pod sits on one node); id = name
// The `multigpu20` variant ships only name,cpu_milli,memory_mib,num_gpu,gpu_milli (no times): without
// a creation_time column every pod is submitted at 0, in file order, with unknown duration.
// pod_phase and scheduled_time are not used (Pending pods are kept: they still asked for resources).
#include <memory>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

class OpenbReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const std::string& path = config.path;
    const std::string text = load_trace_text(path, config.scenario_file);
    CsvParser csv(text, ',', path);
    std::vector<std::string> header, row;
    long line = 0;
    csv.header(header, line);
    const long header_line = line;

    const int c_name = column_index(header, "name", true, path, header_line);
    const int c_cpu = column_index(header, "cpu_milli", true, path, header_line);
    const int c_mem = column_index(header, "memory_mib", true, path, header_line);
    const int c_ngpu = column_index(header, "num_gpu", true, path, header_line);
    const int c_milli = column_index(header, "gpu_milli", true, path, header_line);
    const int c_spec = column_index(header, "gpu_spec", false, path, header_line);
    const int c_qos = column_index(header, "qos", false, path, header_line);
    const int c_create = column_index(header, "creation_time", false, path, header_line);
    const int c_delete = c_create < 0 ? -1 : column_index(header, "deletion_time", false, path, header_line);

    std::vector<JobSpec> jobs;
    jobs.reserve(text.size() / 64);
    while (csv.next(row, line)) {
      if (row.size() != header.size()) {
        const std::string field = row.size() < header.size() ? std::string(trim(header[row.size()])) : "";
        throw InputError(
            path, line, field,
            "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
      }
      auto col = [&](int c) -> const std::string& { return row[static_cast<std::size_t>(c)]; };
      auto name = [&](int c) { return std::string(trim(header[static_cast<std::size_t>(c)])); };
      JobSpec j;
      j.source_line = line;
      j.id = std::string(trim(col(c_name)));
      if (j.id.empty()) throw InputError(path, line, name(c_name), "empty pod name");
      j.cpu_milli = parse_non_negative(col(c_cpu), path, line, name(c_cpu));
      j.memory_mib = parse_non_negative(col(c_mem), path, line, name(c_mem));
      j.gpus = parse_gpu_count(col(c_ngpu), path, line, name(c_ngpu));
      const std::string_view milli_text = trim(col(c_milli));
      const int milli =
          milli_text.empty() && j.gpus == 0 ? 0 : parse_gpu_milli(milli_text, path, line, name(c_milli));
      if (j.gpus > 0 && milli == 0)
        throw InputError(path, line, name(c_milli),
                         "0 thousandths of a GPU for a pod asking for " + std::to_string(j.gpus) + " GPU(s)");
      j.gpu_milli = j.gpus == 0 ? 0 : milli;
      if (c_spec >= 0) j.gpu_types = split_gpu_types(col(c_spec));
      if (c_qos >= 0) j.user = std::string(trim(col(c_qos)));
      j.single_node = true;
      if (c_create >= 0) {
        j.submit_s = parse_non_negative(col(c_create), path, line, name(c_create));
        if (c_delete >= 0 && !trim(col(c_delete)).empty()) {
          const double del = parse_non_negative(col(c_delete), path, line, name(c_delete));
          if (del < j.submit_s)
            throw InputError(path, line, name(c_delete),
                             "deletion_time " + std::string(trim(col(c_delete))) +
                                 " is before creation_time " + std::string(trim(col(c_create))) +
                                 " (negative duration)");
          j.duration_s = del - j.submit_s;
        }
      }
      jobs.push_back(std::move(j));
    }
    sort_by_submit(jobs);
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{"openb",
                                      "Alibaba GPU cluster pod list (openb, FGD ATC'23), CSV with header",
                                      [] { return std::make_unique<OpenbReader>(); }};

}  // namespace
}  // namespace fleetsim
