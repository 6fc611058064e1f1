// Output files and the stdout table of `fleetsim diagnose` (see diagnose.hpp).
#include <cmath>
#include <cstdio>
#include <fstream>

#include "sim/diagnosis/results.hpp"
#include "workloads/base/csv_quote.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::diagnosis {
namespace {

using nlohmann::ordered_json;

std::string g(double v) {
  char b[40];
  std::snprintf(b, sizeof b, "%.9g", v);
  return b;
}

std::ofstream open(Staging& s, const std::string& name) {
  return s.open(name);
}

void write_breakdown(const std::vector<JobResult>& jobs, Staging& s) {
  auto f = open(s, "breakdown.csv");
  f << "job,rank,trace,window_us,idle_us,compute_us,non_compute_us,communication_us,memory_us,"
       "idle_host_wait_us,idle_kernel_wait_us,idle_other_us,steps,step_s,step_compute_s,"
       "step_communication_s,step_memory_s,step_idle_s,step_overlap_s,step_exposed_communication_s,"
       "dataloader_s,sync_copy_s,kernels_per_step,short_kernel_share,median_kernel_us,median_launch_us\n";
  for (const auto& j : jobs)
    for (const auto& r : j.analysis.ranks) {
      const auto& t = r.hta.temporal;
      const auto& i = r.hta.idle;
      f << csv_quote(j.input.name) << "," << r.rank << "," << csv_quote(r.file) << "," << g(t.window_us)
        << "," << g(t.idle_us) << "," << g(t.compute_us) << "," << g(t.non_compute_us) << ","
        << g(t.communication_us) << "," << g(t.memory_us) << "," << g(i.host_wait_us) << ","
        << g(i.kernel_wait_us) << "," << g(i.other_us) << "," << r.steps << "," << g(r.step_s) << ","
        << g(r.step.compute) << "," << g(r.step.communication) << "," << g(r.step.memory) << ","
        << g(r.step.idle) << "," << g(r.step.overlap) << "," << g(r.step.exposed_communication) << ","
        << g(r.dataloader_s) << "," << g(r.sync_copy_s) << "," << g(r.kernels) << ","
        << g(r.short_kernel_share) << "," << g(r.median_kernel_us) << "," << g(r.median_launch_us) << "\n";
    }
  auto h = open(s, "idle_streams.csv");
  h << "job,rank,stream,host_wait_us,kernel_wait_us,other_us\n";
  for (const auto& j : jobs)
    for (const auto& r : j.analysis.ranks)
      for (const auto& st : r.hta.idle_by_stream)
        h << csv_quote(j.input.name) << "," << r.rank << "," << st.stream << "," << g(st.host_wait_us) << ","
          << g(st.kernel_wait_us) << "," << g(st.other_us) << "\n";
}

void write_kernels(const std::vector<JobResult>& jobs, Staging& s) {
  auto f = open(s, "kernels.csv");
  f << "job,kind,name,class,count,total_s\n";
  for (const auto& j : jobs) {
    for (int c = 0; c < replay::kKernelClasses; ++c) {
      const double v = j.analysis.class_s[static_cast<std::size_t>(c)];
      if (v > 0)
        f << csv_quote(j.input.name) << ",class," << replay::to_string(static_cast<replay::KernelClass>(c))
          << "," << replay::to_string(static_cast<replay::KernelClass>(c)) << ",," << g(v) << "\n";
    }
    for (const auto& k : j.analysis.top_kernels)
      f << csv_quote(j.input.name) << ",top," << csv_quote(k.name) << "," << k.cls << "," << k.count << ","
        << g(k.total_s) << "\n";
  }
}

void write_findings(const std::vector<JobResult>& jobs, Staging& s) {
  auto f = open(s, "findings.csv");
  f << "job,rule,value,threshold,unit,evidence,fix,estimate,simulated,measured_step_s,baseline_step_s,"
       "predicted_step_s,speedup,not_simulated\n";
  for (const auto& j : jobs)
    for (std::size_t i = 0; i < j.findings.size(); ++i) {
      const Finding& x = j.findings[i];
      const bool sim = x.fix.has_value();
      f << csv_quote(j.input.name) << "," << x.rule << "," << g(x.value) << "," << g(x.threshold) << ","
        << csv_quote(x.unit) << "," << csv_quote(x.evidence) << ","
        << csv_quote(sim ? x.fix->description : "") << "," << (sim ? x.fix->estimate : "") << ","
        << (sim ? "true" : "false") << "," << g(j.analysis.step_s) << "," << g(j.baseline_s) << ","
        << (sim ? g(j.predicted_s[i]) : "") << "," << (sim ? g(j.speedup(i)) : "") << ","
        << csv_quote(x.not_simulated) << "\n";
    }
}

void write_fleet(const std::vector<JobResult>& jobs, const FleetResult& fr, Staging& s) {
  auto f = open(s, "fixes.csv");
  f << "rank,fix,estimate,jobs,gpu_hours,gpu_hours_saved,share_of_fleet_gpu_hours\n";
  for (std::size_t i = 0; i < fr.ranking.size(); ++i) {
    const auto& r = fr.ranking[i];
    f << i + 1 << "," << csv_quote(r.rule) << "," << r.estimate << "," << r.jobs << "," << g(r.gpu_hours)
      << "," << g(r.saved) << "," << g(fr.table.total_gpu_hours > 0 ? r.saved / fr.table.total_gpu_hours : 0)
      << "\n";
  }
  auto h = open(s, "fleet_jobs.csv");
  h << "job,fleet_jobs,gpu_hours,fix,estimate,speedup,gpu_hours_saved\n";
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    const auto& j = jobs[k];
    const auto& sh = fr.table.shares[k];
    for (std::size_t i = 0; i < j.findings.size(); ++i) {
      if (!j.findings[i].fix) continue;
      const double sp = j.speedup(i);
      h << csv_quote(j.input.name) << "," << sh.rows << "," << g(sh.gpu_hours) << "," << j.findings[i].rule
        << "," << j.findings[i].fix->estimate << "," << g(sp) << "," << g(sh.gpu_hours * (1 - 1 / sp))
        << "\n";
    }
  }
}

ordered_json job_json(const JobResult& j) {
  ordered_json o;
  const auto& a = j.analysis;
  o["job"] = j.input.name;
  o["device"] = a.device;
  o["gpu"] = a.gpu != nullptr ? a.gpu->name : "";
  o["ranks"] = a.ranks.size();
  o["measured_step_s"] = a.step_s;
  o["baseline_step_s"] = j.baseline_s;
  o["compute_spread"] = a.compute_spread;
  ordered_json ranks = ordered_json::array();
  for (const auto& r : a.ranks) {
    const auto& t = r.hta.temporal;
    ordered_json x;
    x["rank"] = r.rank;
    x["trace"] = r.file;
    x["hta_temporal_us"] = {{"window", t.window_us},
                            {"idle", t.idle_us},
                            {"compute", t.compute_us},
                            {"non_compute", t.non_compute_us},
                            {"communication", t.communication_us},
                            {"memory", t.memory_us}};
    x["hta_idle_us"] = {{"host_wait", r.hta.idle.host_wait_us},
                        {"kernel_wait", r.hta.idle.kernel_wait_us},
                        {"other", r.hta.idle.other_us}};
    x["hta_last_step_dropped"] = r.hta.last_step_dropped;
    x["steps"] = r.steps;
    x["step_s"] = r.step_s;
    x["step_breakdown_s"] = {
        {"compute", r.step.compute}, {"communication", r.step.communication},
        {"memory", r.step.memory},   {"idle", r.step.idle},
        {"overlap", r.step.overlap}, {"exposed_communication", r.step.exposed_communication}};
    x["dataloader_s"] = r.dataloader_s;
    x["sync_copy_s"] = r.sync_copy_s;
    x["launch"] = {{"kernels_per_step", r.kernels},
                   {"short_kernel_share", r.short_kernel_share},
                   {"median_kernel_us", r.median_kernel_us},
                   {"median_launch_us", r.median_launch_us}};
    x["gemm_s"] = {{"all", r.gemm_s}, {"fp32_simt", r.fp32_gemm_s}, {"tensor_core", r.tensor_gemm_s}};
    ranks.push_back(std::move(x));
  }
  o["per_rank"] = std::move(ranks);
  ordered_json fs = ordered_json::array();
  for (std::size_t i = 0; i < j.findings.size(); ++i) {
    const auto& f = j.findings[i];
    ordered_json x;
    x["rule"] = f.rule;
    x["value"] = f.value;
    x["threshold"] = f.threshold;
    x["unit"] = f.unit;
    x["evidence"] = f.evidence;
    if (f.fix) {
      x["fix"] = f.fix->description;
      x["estimate"] = f.fix->estimate;
      x["predicted_step_s"] = j.predicted_s[i];
      x["speedup"] = j.speedup(i);
    } else {
      x["not_simulated"] = f.not_simulated;
    }
    fs.push_back(std::move(x));
  }
  o["findings"] = std::move(fs);
  if (j.combined_s > 0)
    o["all_predicted_fixes"] = {{"step_s", j.combined_s}, {"speedup", j.combined_speedup()}};
  return o;
}

}  // namespace

void write_outputs(const std::vector<JobResult>& jobs, const std::optional<FleetResult>& fleet, Staging& s) {
  write_breakdown(jobs, s);
  write_kernels(jobs, s);
  write_findings(jobs, s);
  ordered_json sum;
  ordered_json d;
  d["jobs"] = jobs.size();
  std::map<std::string, long> per_rule;
  for (const auto& r : rules()) per_rule[r.name] = 0;
  for (const auto& j : jobs)
    for (const auto& f : j.findings) ++per_rule[f.rule];
  d["findings_per_rule"] = per_rule;
  ordered_json js = ordered_json::array();
  for (const auto& j : jobs) js.push_back(job_json(j));
  d["per_job"] = std::move(js);
  sum["diagnosis"] = std::move(d);
  if (fleet) {
    write_fleet(jobs, *fleet, s);
    ordered_json f;
    f["table"] = fleet->table.file;
    f["total_gpu_hours"] = fleet->table.total_gpu_hours;
    f["unmatched_rows"] = fleet->table.unmatched_rows;
    f["unmatched_gpu_hours"] = fleet->table.unmatched_gpu_hours;
    ordered_json rk = ordered_json::array();
    for (const auto& r : fleet->ranking)
      rk.push_back({{"fix", r.rule},
                    {"estimate", r.estimate},
                    {"jobs", r.jobs},
                    {"gpu_hours", r.gpu_hours},
                    {"gpu_hours_saved", r.saved}});
    f["ranking"] = std::move(rk);
    sum["fleet"] = std::move(f);
    if (fleet->rerun) {
      ordered_json r;
      r["jobs_changed"] = fleet->rerun->jobs_changed;
      for (const char* k : {"mean_wait_s", "p50_wait_s", "p99_wait_s", "mean_jct_s", "p50_jct_s", "p99_jct_s",
                            "makespan_s", "gpu_utilization"}) {
        const double b = fleet->rerun->baseline.value(k, 0.0), x = fleet->rerun->fixed.value(k, 0.0);
        r[k] = {{"baseline", b}, {"fixed", x}, {"change", b != 0 ? x / b - 1 : 0.0}};
      }
      sum["rerun"] = std::move(r);
    }
  }
  auto f = open(s, "summary.json");
  f << sum.dump(2) << "\n";
}

std::string format_findings(const std::vector<JobResult>& jobs, const std::optional<FleetResult>& fleet) {
  std::string out;
  char b[512];
  std::snprintf(b, sizeof b, "%-28s %-22s %9s %10s %8s  %s\n", "job", "finding", "value", "step_ms",
                "speedup", "estimate");
  out += b;
  for (const auto& j : jobs) {
    if (j.findings.empty()) {
      std::snprintf(b, sizeof b, "%-28s %-22s %9s %10.3f\n", j.input.name.substr(0, 28).c_str(), "(none)", "",
                    1e3 * j.analysis.step_s);
      out += b;
    }
    for (std::size_t i = 0; i < j.findings.size(); ++i) {
      const auto& f = j.findings[i];
      std::snprintf(b, sizeof b, "%-28s %-22s %9.3g %10.3f %8s  %s\n", j.input.name.substr(0, 28).c_str(),
                    f.rule.c_str(), f.value, 1e3 * j.analysis.step_s,
                    f.fix ? g(std::round(j.speedup(i) * 1000) / 1000).c_str() : "-",
                    f.fix ? f.fix->estimate.c_str() : "not simulated");
      out += b;
    }
  }
  if (fleet) {
    std::snprintf(b, sizeof b, "\nfleet: %.1f GPU-hours (%ld rows name no diagnosed job: %.1f GPU-hours)\n",
                  fleet->table.total_gpu_hours, fleet->table.unmatched_rows,
                  fleet->table.unmatched_gpu_hours);
    out += b;
    for (std::size_t i = 0; i < fleet->ranking.size(); ++i) {
      const auto& r = fleet->ranking[i];
      std::snprintf(b, sizeof b, "  %zu. %-24s %10.1f GPU-hours saved over %ld job(s) (%s)\n", i + 1,
                    r.rule.c_str(), r.saved, r.jobs, r.estimate.c_str());
      out += b;
    }
    if (fleet->rerun) {
      const auto& bj = fleet->rerun->baseline;
      const auto& fj = fleet->rerun->fixed;
      std::snprintf(
          b, sizeof b,
          "  fleet rerun (%ld jobs shortened): mean wait %.2f h -> %.2f h, mean JCT %.2f h -> %.2f h, "
          "makespan %.2f h -> %.2f h\n",
          fleet->rerun->jobs_changed, bj.value("mean_wait_s", 0.0) / 3600,
          fj.value("mean_wait_s", 0.0) / 3600, bj.value("mean_jct_s", 0.0) / 3600,
          fj.value("mean_jct_s", 0.0) / 3600, bj.value("makespan_s", 0.0) / 3600,
          fj.value("makespan_s", 0.0) / 3600);
      out += b;
    }
  }
  return out;
}

}  // namespace fleetsim::diagnosis
