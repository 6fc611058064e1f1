#pragma once
// Fault traces: recorded node failures and repairs, one reader per format registered by name
// (workloads.faults: `stepfun` for the InfiniteHBD trace, `csv` for node,start,end,component). No
// SimGrid and no cluster: sim/failures maps the trace's node names onto the modelled nodes.
#include <memory>
#include <string>
#include <vector>

#include "workloads/base/registry.hpp"

namespace fleetsim {

/// One fault: node `node` is down from start_s until end_s (seconds from the trace's origin).
struct FaultRecord {
  std::string node;  ///< the trace's node name
  double start_s = 0;
  double end_s = 0;
  std::string component;  ///< e.g. "gpu", "nic"; lower case
  std::string detail;     ///< the trace's finer description, if any
  long line = 0;          ///< where it was read (line, or event index for JSON), for messages
};

struct FaultTrace {
  std::string file;
  std::vector<FaultRecord> faults;  ///< sorted by start, then trace order
  std::vector<std::string> nodes;   ///< distinct node names, in order of first appearance
  double span_s = 0;                ///< from 0 to the last event
};

class FaultTraceReader {
 public:
  virtual ~FaultTraceReader() = default;
  /// Reads the whole trace; bad rows are InputErrors naming file, line and field.
  virtual FaultTrace read(const std::string& path) const = 0;
};

using FaultTraceRegistry = Registry<FaultTraceReader>;
FaultTraceRegistry& fault_trace_readers();

struct FaultTraceRegistrar {
  FaultTraceRegistrar(std::string name, std::string description, FaultTraceRegistry::Factory f) {
    fault_trace_readers().add(std::move(name), std::move(description), std::move(f));
  }
};

/// Sorts the faults, fills `nodes` and `span_s` (readers call it last).
void finish_trace(FaultTrace& trace);

}  // namespace fleetsim
