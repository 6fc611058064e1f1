#pragma once
// Workload inflation experiment of FGD (Weng et al., "Beware of Fragmentation: Scheduling
// GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC'23, evaluation): pods
// are drawn from the trace with replacement and submitted one after another, none ever leaving,
// until the GPUs requested so far (sum of GPUs x share) reach max_load x the cluster's GPUs. A pod
// that the placement policy can put nowhere fails and is counted. After each pod: arrived load
// (% of the cluster's GPUs requested so far, failed pods included) and allocated share (% of the
// cluster's GPU capacity allocated). Pure bookkeeping on ClusterState: no SimGrid, so one process
// can run many placements and seeds.
//
// Recording: a point each time the arrived load crosses a multiple of record_step_pct (0.5 % by
// default: at most 260 points to 130 %), plus the last pod; CPU-only pods add no load and so are
// recorded only when they are the last pod. allocated_pct_at_100 is taken at the first pod that
// brings the arrived load to 100 % or more (the last pod's if max_load < 1).
#include <cstdint>
#include <iosfwd>
#include <random>
#include <string>
#include <vector>

#include "sim/cluster/fragmentation.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/platform/cluster_spec.hpp"

namespace fleetsim {

struct InflationOptions {
  double max_load = 1.3;         ///< stop once requested GPUs reach this share of the cluster's
  double record_step_pct = 0.5;  ///< record when arrived load crosses multiples of this (percent)
};

struct InflationPoint {
  double arrived_pct = 0;    ///< GPUs requested so far / cluster GPUs, percent
  double allocated_pct = 0;  ///< GPU capacity allocated / cluster GPU capacity, percent
  long failed_pods = 0;      ///< pods that fitted nowhere so far
};

struct InflationRun {
  std::string placement;
  std::uint64_t seed = 0;
  std::vector<InflationPoint> points;  ///< thinned as above, last pod included
  double allocated_pct_at_100 = 0;
  long pods = 0;                           ///< pods submitted
  long failed_pods = 0;                    ///< of which failed
  ClusterFragmentation fragmentation_end;  ///< against the pool's GPU request distribution
  double wall_s = 0;
};

/// Uniform integer in [0, n), n >= 1, identical on every platform (rejection sampling on the
/// generator's 64-bit output; std::uniform_int_distribution differs between standard libraries).
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n);

/// One run: pods drawn from `pool` with std::mt19937_64(seed). Calls placer.observe_workload(pool)
/// first. Throws InputError if the pool has no GPU request (the load could never grow).
InflationRun run_inflation(const ClusterSpec& cluster, const std::vector<Request>& pool, Placer& placer,
                           std::uint64_t seed, const InflationOptions& options = {});

/// inflation.csv: placement,seed,arrived_pct,allocated_pct,failed_pods (one row per point).
void write_inflation_csv(std::ostream& out, const std::vector<InflationRun>& runs);

/// Per placement (in order of first appearance in `runs`), over its seeds.
struct InflationSummary {
  std::string placement;
  int seeds = 0;
  double at_100_mean = 0, at_100_min = 0, at_100_max = 0;  ///< allocated_pct_at_100
  double failed_pods_mean = 0;
  double final_arrived_pct_mean = 0, final_allocated_pct_mean = 0;  ///< at the last pod
  double frag_gpus_end_mean = 0;         ///< cluster fragmentation at the end, GPUs
  double frag_pct_of_free_end_mean = 0;  ///< same, percent of the free GPU capacity
  double wall_s_mean = 0;
};

std::vector<InflationSummary> summarize_inflation(const std::vector<InflationRun>& runs);

/// inflation_summary.csv: placement,seeds,allocated_pct_at_100_mean,allocated_pct_at_100_min,
/// allocated_pct_at_100_max,failed_pods_mean,final_arrived_pct_mean,final_allocated_pct_mean,
/// frag_gpus_end_mean,frag_pct_of_free_end_mean,wall_s_mean
void write_inflation_summary_csv(std::ostream& out, const std::vector<InflationSummary>& summary);

}  // namespace fleetsim
