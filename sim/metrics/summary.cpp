#include "sim/metrics/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace fleetsim {
namespace {

/// A number of the summary, 0 when absent (summaries written before the key existed).
double num(const nlohmann::ordered_json& s, const char* key) {
  const auto it = s.find(key);
  return it != s.end() && it->is_number() ? it->get<double>() : 0.0;
}

/// One line per service of the summary's "services": requests, TTFT / TPOT / E2E mean and p99, SLO
/// attainment, goodput and GPU-hours.
std::string format_services(const nlohmann::ordered_json& services) {
  std::string out =
      "  service              requests   TTFT mean / p99 s    TPOT mean / p99 ms    E2E mean / p99 s   "
      "SLO met   goodput/s    GPU-h\n";
  char buf[512];
  for (const auto& [name, v] : services.items()) {
    if (!v.is_object()) continue;
    std::snprintf(
        buf, sizeof buf, "  %-20s %8ld %9.3f / %-9.3f %8.1f / %-9.1f %8.2f / %-9.2f %6.1f %% %10.2f %8.2f\n",
        name.c_str(), static_cast<long>(num(v, "requests")), num(v, "ttft_mean_s"), num(v, "ttft_p99_s"),
        1e3 * num(v, "tpot_mean_s"), 1e3 * num(v, "tpot_p99_s"), num(v, "e2e_mean_s"), num(v, "e2e_p99_s"),
        100.0 * num(v, "slo_attainment"), num(v, "goodput_rps"), num(v, "gpu_hours"));
    out += buf;
  }
  return out;
}

}  // namespace

nlohmann::ordered_json make_summary(const RunInfo& info, const JobTable& jobs, const TimeSeries& ts,
                                    const FairnessObserver* fairness, const nlohmann::ordered_json& figures) {
  // Exact percentiles: every finished job's JCT and wait (JobStats, sorted at the end of the run).
  const JobStats& st = jobs.stats();
  const auto completed = static_cast<double>(st.jct.size());
  const double makespan = st.jct.empty() ? 0.0 : st.last_end - st.first_submit;
  const double capacity = makespan * ts.total_gpus();
  nlohmann::ordered_json s;
  s["scenario"] = info.scenario;
  s["policy"] = info.policy;
  s["placement"] = info.placement;
  s["job_model"] = info.job_model;
  s["seed"] = info.seed;
  s["jobs"] = info.jobs;
  s["completed"] = static_cast<long>(st.jct.size());
  s["skipped"] = jobs.skipped();
  s["skipped_reasons"] = jobs.skipped_reasons();
  s["mean_jct_s"] = st.jct.empty() ? 0.0 : st.jct_sum / completed;
  s["p50_jct_s"] = percentile_sorted(st.jct, 50);
  s["p99_jct_s"] = percentile_sorted(st.jct, 99);
  s["mean_wait_s"] = st.wait.empty() ? 0.0 : st.wait_sum / completed;
  s["p50_wait_s"] = percentile_sorted(st.wait, 50);
  s["p99_wait_s"] = percentile_sorted(st.wait, 99);
  s["makespan_s"] = makespan;
  s["gpu_utilization"] = capacity > 0 ? ts.busy_gpu_seconds() / capacity : 0.0;
  const double window_capacity = ts.busy_window_s() * ts.total_gpus();
  s["busy_window_s"] = ts.busy_window_s();
  s["busy_window_utilization"] = window_capacity > 0 ? ts.busy_window_gpu_seconds() / window_capacity
                                                     : s["gpu_utilization"].get<double>();
  s["restarts"] = st.restarts;
  s["wasted_gpu_s"] = st.wasted_gpu_s;
  if (fairness != nullptr) {
    s["rho_mean"] = fairness->mean();
    s["rho_max"] = fairness->max();
    s["rho_share_above_1"] = fairness->share_above_1();
  }
  for (const auto& [key, value] : figures.items()) s[key] = value;
  s["total_gpus"] = ts.total_gpus();
  s["peak_queued"] = ts.peak_queued();
  s["events"] = info.events;
  s["wall_s"] = info.wall_s;
  return s;
}

std::string format_summary(const nlohmann::ordered_json& s) {
  const auto services = s.find("services");
  const bool serving = services != s.end() && services->is_object() && !services->empty();
  // A serving-only run: the services' table, not an empty training summary.
  if (serving && num(s, "jobs") == 0) {
    char line[256];
    std::snprintf(line, sizeof line, "  simulated in  %.3f s wall\n", num(s, "wall_s"));
    return format_services(*services) + line;
  }
  char buf[2048];
  auto h = [](double sec) { return sec / 3600.0; };
  std::snprintf(
      buf, sizeof buf,
      "  policy %-12s placement %-12s job model %s\n"
      "  jobs          %8ld   completed %ld, skipped %ld\n"
      "  JCT           mean %10.2f h   p50 %10.2f h   p99 %10.2f h\n"
      "  wait          mean %10.2f h   p50 %10.2f h   p99 %10.2f h\n"
      "  makespan      %10.2f h   GPU utilization %5.1f %% of %d GPUs\n"
      "  busy window   %10.2f h   GPU utilization %5.1f %% (first arrival until no job waits)\n"
      "  simulated in  %.3f s wall (%ld events)\n",
      s["policy"].get<std::string>().c_str(), s["placement"].get<std::string>().c_str(),
      s["job_model"].get<std::string>().c_str(), s["jobs"].get<long>(), s["completed"].get<long>(),
      s["skipped"].get<long>(), h(s["mean_jct_s"].get<double>()), h(s["p50_jct_s"].get<double>()),
      h(s["p99_jct_s"].get<double>()), h(s["mean_wait_s"].get<double>()), h(s["p50_wait_s"].get<double>()),
      h(s["p99_wait_s"].get<double>()), h(s["makespan_s"].get<double>()),
      100.0 * s["gpu_utilization"].get<double>(), s["total_gpus"].get<int>(), h(num(s, "busy_window_s")),
      100.0 * num(s, "busy_window_utilization"), s["wall_s"].get<double>(), s["events"].get<long>());
  std::string out(buf);
  if (s.contains("rho_mean")) {
    std::snprintf(buf, sizeof buf,
                  "  fairness rho  mean %10.3f     max %10.3f     > 1 for %5.1f %% of jobs\n",
                  s["rho_mean"].get<double>(), s["rho_max"].get<double>(),
                  100.0 * s["rho_share_above_1"].get<double>());
    out += buf;
  }
  if (s.contains("energy_kwh")) {
    std::snprintf(buf, sizeof buf,
                  "  energy        %10.1f kWh IT (GPUs %.1f, idle GPUs %.1f)   facility %.1f kWh   "
                  "mean %.1f kW   %.3f kWh/job   cost %.2f\n",
                  s["energy_kwh"].get<double>(), s["gpu_kwh"].get<double>(), s["idle_gpu_kwh"].get<double>(),
                  s["facility_kwh"].get<double>(), s["mean_power_w"].get<double>() / 1000.0,
                  s["energy_per_completed_job_kwh"].get<double>(), s["cost"].get<double>());
    out += buf;
  }
  for (const auto& [reason, count] : s["skipped_reasons"].items())
    out += "  skipped: " + std::to_string(count.get<long>()) + " x " + reason + "\n";
  if (serving) out += format_services(*services);
  return out;
}

}  // namespace fleetsim
