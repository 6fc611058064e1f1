#include "sim/experiments/inflation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <limits>
#include <map>
#include <ostream>

#include "sim/cluster/cluster_state.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - max % n;  // a multiple of n: [0, limit) maps evenly
  std::uint64_t x = rng();
  while (x >= limit) x = rng();
  return x % n;
}

InflationRun run_inflation(const ClusterSpec& cluster, const std::vector<Request>& pool, Placer& placer,
                           std::uint64_t seed, const InflationOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  long long pool_milli = 0;
  for (const auto& r : pool) pool_milli += 1LL * r.gpus * r.milli;
  if (pool_milli <= 0) throw InputError("", 0, "workload", "no pod asks for a GPU: the load cannot grow");
  if (!(options.max_load > 0) || !std::isfinite(options.max_load))
    throw InputError("", 0, "--max-load", "must be a positive number");
  if (!(options.record_step_pct > 0)) throw InputError("", 0, "record step", "must be positive");

  ClusterState state(cluster);
  const double capacity_milli = 1000.0 * state.total_gpus();
  if (capacity_milli <= 0) throw InputError("", 0, "cluster", "the cluster has no GPUs");
  const double target_milli = options.max_load * capacity_milli;
  placer.observe_workload(pool);

  InflationRun run;
  run.seed = seed;
  std::mt19937_64 rng(seed);
  long long arrived_milli = 0;
  long long last_bucket = -1;
  bool have_100 = false;
  InflationPoint p;
  bool recorded = false;  // the last pod's point is in run.points
  while (static_cast<double>(arrived_milli) < target_milli) {
    const Request& r = pool[uniform_below(rng, pool.size())];
    ++run.pods;
    arrived_milli += 1LL * r.gpus * r.milli;
    if (auto a = placer.place(r, state))
      state.allocate(*a);
    else
      ++run.failed_pods;
    p.arrived_pct = 100.0 * static_cast<double>(arrived_milli) / capacity_milli;
    p.allocated_pct = 100.0 * static_cast<double>(state.used_milli()) / capacity_milli;
    p.failed_pods = run.failed_pods;
    if (!have_100 && arrived_milli >= state.total_gpus() * 1000LL) {
      have_100 = true;
      run.allocated_pct_at_100 = p.allocated_pct;
    }
    const auto bucket = static_cast<long long>(std::floor(p.arrived_pct / options.record_step_pct + 1e-9));
    recorded = bucket > last_bucket;
    if (recorded) {
      run.points.push_back(p);
      last_bucket = bucket;
    }
  }
  if (!recorded) run.points.push_back(p);
  if (!have_100) run.allocated_pct_at_100 = p.allocated_pct;
  run.fragmentation_end = cluster_fragmentation(state, WorkloadDistribution::from_requests(pool));
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

namespace {
std::string num(double v, int digits = 4) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}
}  // namespace

void write_inflation_csv(std::ostream& out, const std::vector<InflationRun>& runs) {
  out << "placement,seed,arrived_pct,allocated_pct,failed_pods\n";
  for (const auto& run : runs)
    for (const auto& p : run.points)
      out << run.placement << ',' << run.seed << ',' << num(p.arrived_pct) << ',' << num(p.allocated_pct)
          << ',' << p.failed_pods << '\n';
}

std::vector<InflationSummary> summarize_inflation(const std::vector<InflationRun>& runs) {
  std::vector<InflationSummary> out;
  std::map<std::string, std::size_t> index;
  for (const auto& r : runs) {
    auto [it, added] = index.try_emplace(r.placement, out.size());
    if (added) {
      out.emplace_back();
      out.back().placement = r.placement;
      out.back().at_100_min = std::numeric_limits<double>::infinity();
      out.back().at_100_max = -std::numeric_limits<double>::infinity();
    }
    InflationSummary& s = out[it->second];
    ++s.seeds;
    s.at_100_mean += r.allocated_pct_at_100;
    s.at_100_min = std::min(s.at_100_min, r.allocated_pct_at_100);
    s.at_100_max = std::max(s.at_100_max, r.allocated_pct_at_100);
    s.failed_pods_mean += static_cast<double>(r.failed_pods);
    s.final_arrived_pct_mean += r.points.empty() ? 0.0 : r.points.back().arrived_pct;
    s.final_allocated_pct_mean += r.points.empty() ? 0.0 : r.points.back().allocated_pct;
    s.frag_gpus_end_mean += r.fragmentation_end.milli / 1000.0;
    s.frag_pct_of_free_end_mean += 100.0 * r.fragmentation_end.share();
    s.wall_s_mean += r.wall_s;
  }
  for (auto& s : out) {
    const double k = s.seeds;
    for (double* v :
         {&s.at_100_mean, &s.failed_pods_mean, &s.final_arrived_pct_mean, &s.final_allocated_pct_mean,
          &s.frag_gpus_end_mean, &s.frag_pct_of_free_end_mean, &s.wall_s_mean})
      *v /= k;
  }
  return out;
}

void write_inflation_summary_csv(std::ostream& out, const std::vector<InflationSummary>& summary) {
  out << "placement,seeds,allocated_pct_at_100_mean,allocated_pct_at_100_min,allocated_pct_at_100_max,"
         "failed_pods_mean,final_arrived_pct_mean,final_allocated_pct_mean,frag_gpus_end_mean,"
         "frag_pct_of_free_end_mean,wall_s_mean\n";
  for (const auto& s : summary)
    out << s.placement << ',' << s.seeds << ',' << num(s.at_100_mean) << ',' << num(s.at_100_min) << ','
        << num(s.at_100_max) << ',' << num(s.failed_pods_mean, 1) << ',' << num(s.final_arrived_pct_mean)
        << ',' << num(s.final_allocated_pct_mean) << ',' << num(s.frag_gpus_end_mean, 3) << ','
        << num(s.frag_pct_of_free_end_mean) << ',' << num(s.wall_s_mean) << '\n';
}

}  // namespace fleetsim
