#pragma once
// TraceReader: one per trace format, registered by name ("openb", "philly-gavel", "csv", "synthetic").
// A reader returns jobs sorted by submit time (stable), with submit times shifted so the first is >= 0.
// Every malformed input raises InputError naming file, line and field.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "workloads/jobs/job.hpp"
#include "workloads/base/registry.hpp"

namespace fleetsim {

/// Parameters of the synthetic generator. Defaults are shaped after published Philly (Jeon et al.,
/// ATC'19) and Helios (Hu et al., SC'21) statistics: most jobs use 1 GPU, few use 8+; durations are
/// heavy-tailed (log-normal, median ~ 15 min, a long tail to days).
struct SyntheticConfig {
  long jobs = 1000;
  double arrival_rate_per_hour = 60;  ///< Poisson arrivals
  /// GPUs-per-job distribution: values and weights.
  std::vector<int> gpus_values = {1, 2, 4, 8, 16, 32};
  std::vector<double> gpus_weights = {0.70, 0.10, 0.08, 0.08, 0.03, 0.01};
  double duration_median_s = 900;  ///< log-normal median
  double duration_sigma = 1.8;     ///< log-normal shape (natural-log std dev)
  double duration_min_s = 10;
  double duration_max_s = 14 * 24 * 3600.0;
  std::uint64_t seed = 1;
  /// Model names given to jobs, drawn uniformly (empty: jobs have no model). With the "kernels"
  /// job model they select training profiles; durations are then those on execution.reference_gpu.
  std::vector<std::string> models;
};

struct WorkloadConfig {
  std::string format;       ///< registry name of the reader
  std::string path;         ///< trace file (resolved, absolute or relative to cwd)
  std::string throughputs;  ///< philly-gavel: Gavel throughput JSON
  std::string gpu_type;     ///< philly-gavel: GPU type whose throughput defines durations (e.g. "v100")
  std::map<std::string, std::string> columns;  ///< csv: logical name -> column name
  std::string time_format;  ///< csv: strptime format for datetime submit columns ("" = seconds)
  char delimiter = ',';     ///< csv
  SyntheticConfig synthetic;
  std::string scenario_file;  ///< for messages: where the workload section came from
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  virtual std::vector<JobSpec> read(const WorkloadConfig& config) const = 0;
};

using TraceReaderRegistry = Registry<TraceReader>;
TraceReaderRegistry& trace_readers();

/// Convenience: look the format up and read. Also rejects binary files and empty traces.
std::vector<JobSpec> read_trace(const WorkloadConfig& config);

/// Static registrar: `static TraceReaderRegistrar r{"openb", "Alibaba openb pod list", [] {...}};`
struct TraceReaderRegistrar {
  TraceReaderRegistrar(std::string name, std::string description, TraceReaderRegistry::Factory f) {
    trace_readers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
