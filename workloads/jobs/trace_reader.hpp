#pragma once
// TraceReader: one per trace format, registered by name ("openb", "philly-gavel", "csv", "pollux",
// "synthetic").
// A reader returns jobs sorted by submit time (stable), with submit times shifted so the first is >= 0.
// Every malformed input raises InputError naming file, line and field.
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"
#include "workloads/jobs/job.hpp"

namespace fleetsim {

/// What a reader is given: the format, the trace file and every [workload] key of the scenario as an
/// Options bag. Each reader declares the keys it reads (workloads/base/keys.hpp) in its own .cpp.
struct WorkloadConfig {
  std::string format;         ///< registry name of the reader
  std::string path;           ///< trace file (resolved, absolute or relative to cwd)
  std::uint64_t seed = 1;     ///< the scenario seed (default of generators' own seeds)
  Options settings;           ///< [workload] keys, paths resolved
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
