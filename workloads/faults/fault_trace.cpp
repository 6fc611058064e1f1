#include "workloads/faults/fault_trace.hpp"

#include <algorithm>
#include <unordered_set>

namespace fleetsim {

FaultTraceRegistry& fault_trace_readers() {
  static FaultTraceRegistry registry("fault trace format");
  return registry;
}

void finish_trace(FaultTrace& trace) {
  std::stable_sort(trace.faults.begin(), trace.faults.end(),
                   [](const FaultRecord& a, const FaultRecord& b) { return a.start_s < b.start_s; });
  std::unordered_set<std::string> seen;
  trace.nodes.clear();
  trace.span_s = 0;
  for (const auto& f : trace.faults) {
    if (seen.insert(f.node).second) trace.nodes.push_back(f.node);
    trace.span_s = std::max(trace.span_s, f.end_s);
  }
}

}  // namespace fleetsim
