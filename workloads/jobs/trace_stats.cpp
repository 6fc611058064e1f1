#include "workloads/jobs/trace_stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

/// Linear interpolation between order statistics of sorted `v` (numpy's default), q in [0, 1].
double quantile(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return v[lo] + (v[hi] - v[lo]) * frac;
}

std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}

std::string percent(std::size_t part, std::size_t whole) {
  if (whole == 0) return "-";
  return fmt(100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) + " %";
}

}  // namespace

std::string human_duration(double seconds) {
  const double a = std::fabs(seconds);
  if (a < 60) return fmt(seconds, 1) + " s";
  if (a < 3600) return fmt(seconds / 60, 1) + " min";
  if (a < 86400) return fmt(seconds / 3600, 1) + " h";
  return fmt(seconds / 86400, 1) + " d";
}

TraceStats compute_stats(const std::vector<JobSpec>& jobs) {
  TraceStats s;
  s.jobs = jobs.size();
  if (jobs.empty()) return s;
  s.first_submit_s = jobs.front().submit_s;
  s.last_submit_s = jobs.front().submit_s;
  std::vector<double> durations;
  durations.reserve(jobs.size());
  double sum = 0;
  for (const auto& j : jobs) {
    s.first_submit_s = std::min(s.first_submit_s, j.submit_s);
    s.last_submit_s = std::max(s.last_submit_s, j.submit_s);
    ++s.gpu_histogram[j.gpus];
    if (j.gpus > 0 && j.gpu_milli < 1000) ++s.fractional_gpu_jobs;
    if (j.single_node) ++s.single_node_jobs;
    if (j.steps) ++s.jobs_with_steps;
    if (j.duration_s) {
      durations.push_back(*j.duration_s);
      sum += *j.duration_s;
      s.gpu_hours += j.gpus * (j.gpu_milli / 1000.0) * *j.duration_s / 3600.0;
    }
  }
  s.span_s = s.last_submit_s - s.first_submit_s;
  s.jobs_with_duration = durations.size();
  if (!durations.empty()) {
    std::sort(durations.begin(), durations.end());
    s.duration_p10_s = quantile(durations, 0.10);
    s.duration_p50_s = quantile(durations, 0.50);
    s.duration_p90_s = quantile(durations, 0.90);
    s.duration_p99_s = quantile(durations, 0.99);
    s.duration_max_s = durations.back();
    s.duration_mean_s = sum / static_cast<double>(durations.size());
  }
  return s;
}

std::string format_stats(const TraceStats& s, const std::string& title) {
  constexpr std::size_t kLabel = 24;
  std::string out;
  auto row = [&](const std::string& label, const std::string& value) {
    out += "  " + pad(label, kLabel) + value + "\n";
  };
  out += title + "\n";
  out += std::string(std::max<std::size_t>(title.size(), 8), '-') + "\n";
  row("jobs", std::to_string(s.jobs));
  if (s.jobs == 0) return out;
  row("submit span", human_duration(s.span_s) + "  (" + fmt(s.first_submit_s, 3) + " s .. " +
                         fmt(s.last_submit_s, 3) + " s)");
  if (s.span_s > 0 && s.jobs > 1)
    row("mean arrival rate", fmt(static_cast<double>(s.jobs - 1) / (s.span_s / 3600.0), 2) + " jobs/h");
  out += "  " + pad("GPUs per job", kLabel) + pad("jobs", 10) + "share\n";
  for (const auto& [gpus, count] : s.gpu_histogram) {
    const std::string label = "    " + std::to_string(gpus) + (gpus == 0 ? " (CPU only)" : "");
    out += "  " + pad(label, kLabel) + pad(std::to_string(count), 10) + percent(count, s.jobs) + "\n";
  }
  row("fractional-GPU jobs", std::to_string(s.fractional_gpu_jobs) + "  (" +
                                 percent(s.fractional_gpu_jobs, s.jobs) + ", gpu_milli < 1000)");
  row("single-node jobs",
      std::to_string(s.single_node_jobs) + "  (" + percent(s.single_node_jobs, s.jobs) + ")");
  row("jobs with step counts", std::to_string(s.jobs_with_steps));
  row("jobs with durations",
      std::to_string(s.jobs_with_duration) + "  (" + percent(s.jobs_with_duration, s.jobs) + ")");
  if (s.jobs_with_duration > 0) {
    auto dur = [&](const char* label, double v) {
      row(label, pad(fmt(v, 1) + " s", 16) + human_duration(v));
    };
    dur("  duration p10", s.duration_p10_s);
    dur("  duration p50", s.duration_p50_s);
    dur("  duration p90", s.duration_p90_s);
    dur("  duration p99", s.duration_p99_s);
    dur("  duration max", s.duration_max_s);
    dur("  duration mean", s.duration_mean_s);
    row("GPU-hours", fmt(s.gpu_hours, 1) + " GPU-h  (jobs with durations; fractional GPUs pro rata)");
  }
  return out;
}

}  // namespace fleetsim
