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

/// A trace produced job by job in submit order (generators), so that a run need not hold every
/// JobSpec at once (issue 17: 10M-job traces). After rewind() the same jobs come again, in the same
/// order: the engine reads a stream once to validate it before the run and once during the run.
class JobStream {
 public:
  virtual ~JobStream() = default;
  /// Jobs in the whole stream.
  virtual std::size_t size() const = 0;
  /// Back to the first job.
  virtual void rewind() = 0;
  /// The next job (submit times non-decreasing, the first >= 0); false after the last.
  virtual bool next(JobSpec& job) = 0;
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  virtual std::vector<JobSpec> read(const WorkloadConfig& config) const = 0;
  /// The trace as a stream, for formats that can produce it in submit order without reading it
  /// whole (generators); nullptr (the default) for the others.
  virtual std::unique_ptr<JobStream> stream(const WorkloadConfig& /*config*/) const { return nullptr; }
};

using TraceReaderRegistry = Registry<TraceReader>;
TraceReaderRegistry& trace_readers();

/// The trace as a stream, or nullptr if its format cannot stream (then use read_trace). `limit` > 0:
/// at most that many jobs.
std::unique_ptr<JobStream> stream_trace(const WorkloadConfig& config, std::size_t limit = 0);

/// Convenience: look the format up and read. Also rejects binary files and empty traces.
std::vector<JobSpec> read_trace(const WorkloadConfig& config);

/// Static registrar: `static TraceReaderRegistrar r{"openb", "Alibaba openb pod list", [] {...}};`
struct TraceReaderRegistrar {
  TraceReaderRegistrar(std::string name, std::string description, TraceReaderRegistry::Factory f) {
    trace_readers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
