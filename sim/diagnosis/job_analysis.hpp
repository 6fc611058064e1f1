#pragma once
// What `fleetsim diagnose` measures in one job's traces: per rank, HTA's temporal and idle-time
// breakdowns (workloads/profiler/gpu_breakdown.hpp) over the whole trace, and per step (fleetsim's
// replay analysis: ProfilerStep#N windows, else the whole trace) the GPU time by kind, idle,
// communication overlap, data loading, synchronous copies, kernel launch statistics and GEMM
// precision; per job the kernel breakdown by class, the top kernels and the spread across ranks.
// The execution graph is kept: the rules' fixes re-time it for the replay (sim/diagnosis/what_if.hpp).
#include <array>
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/diagnosis/job_input.hpp"
#include "sim/replay/exec_graph.hpp"
#include "sim/replay/replay.hpp"
#include "workloads/profiler/gpu_breakdown.hpp"

namespace fleetsim::diagnosis {

/// Per-step means of one rank, seconds unless named otherwise.
struct RankStats {
  int rank = 0;
  std::string file;
  GpuBreakdown hta;  ///< whole trace, HTA's definitions
  long steps = 0;
  double step_s = 0;              ///< mean measured step time
  replay::Breakdown step;         ///< mean per-step breakdown (span = step_s)
  double dataloader_s = 0;        ///< host time in DataLoader ops (enumerate(DataLoader)..., __next__)
  double sync_copy_s = 0;         ///< host blocked in copies that waited for the GPU
  double sync_htod_s = 0;         ///< the part in host-to-device copies
  double kernels = 0;             ///< kernels launched per step
  double short_kernel_share = 0;  ///< kernels shorter than their launch call (HTA's short kernels)
  double median_kernel_us = 0, median_launch_us = 0;
  double gemm_s = 0, fp32_gemm_s = 0, tensor_gemm_s = 0;  ///< GPU time of GEMM kernels by precision
};

struct KernelStat {
  std::string name;
  std::string cls;  ///< fleetsim's kernel class (sim/replay/exec_graph.hpp)
  long count = 0;
  double total_s = 0;  ///< over all ranks and steps of the trace
};

struct JobAnalysis {
  std::string name;
  std::string device;            ///< traced device name
  const GpuSpec* gpu = nullptr;  ///< its catalog entry (nullptr: unknown)
  replay::ExecGraph graph;
  replay::Times measured;
  std::vector<replay::StepResult> steps;  ///< every rank's steps
  std::vector<RankStats> ranks;
  std::array<double, replay::kKernelClasses> class_s{};  ///< GPU time per class, whole trace, all ranks
  std::vector<KernelStat> top_kernels;                   ///< by total time, at most 10
  double step_s = 0;                                     ///< mean over ranks of their mean step time
  double compute_spread = 0;  ///< max / median - 1 of the ranks' GPU compute per step
  int slowest_rank = 0;       ///< the rank with the most GPU compute per step
};

/// Builds the graph and measures. The job's traces must outlive the analysis.
JobAnalysis analyse_job(const JobInput& job);

/// Is this GEMM kernel name a tensor-core kernel (hmma, 884/1688/16816 tiles, tf32, fp16/bf16)?
bool tensor_core_kernel(std::string_view name);
/// Is this GEMM kernel an fp32 SIMT kernel (sgemm, gemv, ... not on tensor cores)?
bool fp32_simt_gemm(std::string_view name);
struct HostInterval {
  std::int64_t tid = -1;
  double lo = 0, hi = 0;  ///< trace µs
};
/// The host intervals of DataLoader ops of one trace, merged per thread.
std::vector<HostInterval> dataloader_intervals(const KinetoTrace& t);

}  // namespace fleetsim::diagnosis
