#pragma once
// GPU time breakdowns of one rank's Kineto trace with Holistic Trace Analysis' definitions (HTA,
// github.com/facebookresearch/HolisticTraceAnalysis, hta/analyzers/breakdown_analysis.py), so that
// fleetsim's figures and HTA's can be read side by side (sim/diagnosis/README.md).
//
// GPU events: every kernel, memcpy, memset and cuda_sync record that names a stream. With two or
// more ProfilerStep#N annotations only those launched (their runtime call, by correlation id) before
// the last step began are kept: the last step may be cut short by the profiler. Traces with
// sub-microsecond timestamps have their GPU events rounded inward to whole microseconds (start up,
// end down), as HTA does: Kineto's nanosecond timestamps make back-to-back events overlap.
//
// Temporal breakdown: window = last GPU event end - first GPU event start; idle = window - union of
// all GPU events (overlapping streams count once); compute = union of compute kernels;
// non-compute = window - idle - compute (communication, memory copies, sync records).
// Kernel kinds by name, as HTA: communication (nccl..., hip..., hccl..., ...ncclKernel...), memory
// (Memcpy..., Memset..., dma...), compute (anything not naming a collective, copy, sync or launch).
//
// Idle-time breakdown, per stream, over kernels, copies and sets only (not sync records): each gap
// between consecutive events of the stream is host wait when the event's launch call started after
// the previous event ended (the host was late), kernel wait when it is shorter than
// `consecutive_kernel_delay_us` (HTA's default: 30 in the trace's microseconds), other otherwise.
#include <cstdint>
#include <string_view>
#include <vector>

#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim {

enum class HtaKernelKind { compute, communication, memory, other };
/// HTA's kernel type of a GPU event name.
HtaKernelKind hta_kernel_kind(std::string_view name);

struct TemporalBreakdown {
  double window_us = 0;                        ///< first GPU event start to last GPU event end
  double idle_us = 0;                          ///< no GPU event running
  double compute_us = 0;                       ///< union of compute kernels
  double non_compute_us = 0;                   ///< window - idle - compute
  double communication_us = 0, memory_us = 0;  ///< unions of communication kernels and of copies/sets
  long events = 0;
};

struct StreamIdle {
  std::int64_t stream = -1;  ///< -1 in a rank total
  double host_wait_us = 0, kernel_wait_us = 0, other_us = 0;
  double total_us() const { return host_wait_us + kernel_wait_us + other_us; }
};

struct GpuBreakdown {
  TemporalBreakdown temporal;
  std::vector<StreamIdle> idle_by_stream;  ///< by stream id
  StreamIdle idle;                         ///< summed over streams
  bool last_step_dropped = false;          ///< two or more steps: GPU work of the last one left out
  bool rounded = false;                    ///< sub-microsecond timestamps rounded inward
};

GpuBreakdown gpu_breakdown(const KinetoTrace& t, double consecutive_kernel_delay_us = 30);

}  // namespace fleetsim
