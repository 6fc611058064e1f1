// FailureHook's outputs: failures.csv, failure_jobs.csv and the summary.json "failures" block.
#include <algorithm>
#include <cmath>
#include <string>

#include "sim/failures/failure_hook.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {
constexpr double kHour = 3600.0;

/// Effective training time ratio of a finished job: its work alone over its wall time from first
/// start to end (-1: not finished or unknown).
double ettr_of(const JobRecord& rec) {
  if (rec.end_s < 0 || rec.start_s < 0 || !(rec.alone_s > 0)) return -1;
  const double wall = rec.end_s - rec.start_s;
  return wall > 0 ? std::min(1.0, rec.alone_s / wall) : 1.0;
}
}  // namespace

void FailureHook::write_csv(std::ostream& out) const {
  out << "time_s,event,node,nodes,component,jobs_hit,gpu_hours_lost,repaired_s,replicas_hit,requests_"
         "rerouted\n";
  for (std::size_t k = 0; k < rows_.size(); ++k) {
    const Row& r = rows_[k];
    out << fmt(r.time_s, 3) << ',' << r.event << ',' << r.node << ',' << r.nodes << ',' << r.component << ','
        << r.jobs_hit << ',' << fmt(r.gpu_h_lost, 4) << ',' << fmt(r.until_s, 3) << ',' << r.replicas_hit
        << ',' << rerouted(k) << '\n';
  }
}

void FailureHook::write_jobs_csv(std::ostream& out) const {
  out << "job_id,gpus,interruptions,checkpoint_interval_s,redone_gpu_h,restart_gpu_h,checkpoint_gpu_h,ettr\n";
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const JobState& j = jobs_[i];
    if (!j.started) continue;  // skipped (e.g. larger than the cluster): never arrived, no record
    const JobRecord& rec = control_->record(static_cast<JobId>(i));
    if (rec.start_s < 0) continue;
    out << rec.spec->id << ',' << fmt(rec.gpus, 3) << ',' << j.interruptions << ',' << fmt(j.interval_s, 3)
        << ',' << fmt(j.redone_gpu_s / kHour, 4) << ',' << fmt(j.restart_gpu_s / kHour, 4) << ','
        << fmt(j.ckpt_gpu_s / kHour, 4) << ',' << fmt(ettr_of(rec), 6) << '\n';
  }
}

nlohmann::ordered_json FailureHook::summary() const {
  nlohmann::ordered_json s;
  s["source"] = trace_ ? "trace " + trace_->file : "generated";
  if (!mapping_note().empty()) s["trace_mapping"] = mapping_note();
  if (trace_) {
    s["trace_faults"] = static_cast<long>(trace_->faults.size());
    s["trace_faults_applied"] = process_->replayed();
  }
  s["node_failures"] = failures_;
  nlohmann::ordered_json by = nlohmann::ordered_json::object();
  for (const auto& [c, n] : by_component_) by[c] = n;
  s["by_component"] = by;
  long interruptions = 0;
  nlohmann::ordered_json by_size = nlohmann::ordered_json::object();
  for (const auto& [g, n] : interruptions_by_gpus_) {
    by_size[std::to_string(g)] = n;
    interruptions += n;
  }
  s["interruptions"] = interruptions;  // planned ones (maintenance) included
  s["interruptions_by_job_gpus"] = by_size;
  if (config_.maintenance_interval_s > 0)
    s["maintenance"] = {{"windows", windows_},
                        {"planned_interruptions", planned_interruptions_},
                        {"node_hours", drained_node_s_ / kHour}};
  if (config_.spare_nodes > 0)
    s["spares"] = {{"nodes", config_.spare_nodes},
                   {"used", spares_used_},
                   {"failures_without_spare", failures_without_spare_},
                   {"held_at_end", static_cast<long>(spares_.size())}};
  double redone = 0, restart = 0, ckpt = 0, useful_w = 0, wall_w = 0, ettr_sum = 0, ettr_min = 1;
  long finished = 0;
  for (std::size_t i = 0; i < jobs_.size(); ++i) {
    const JobState& j = jobs_[i];
    redone += j.redone_gpu_s;
    restart += j.restart_gpu_s;
    ckpt += j.ckpt_gpu_s;
    if (!j.started) continue;
    const JobRecord& rec = control_->record(static_cast<JobId>(i));
    const double e = ettr_of(rec);
    if (e < 0) continue;
    ++finished;
    ettr_sum += e;
    ettr_min = std::min(ettr_min, e);
    useful_w += rec.alone_s * rec.gpus;
    wall_w += (rec.end_s - rec.start_s) * rec.gpus;
  }
  s["lost_gpu_hours"] = {{"redone_work", redone / kHour},
                         {"restart", restart / kHour},
                         {"checkpoint", ckpt / kHour},
                         {"total", (redone + restart + ckpt) / kHour}};
  s["ettr"] = {{"gpu_weighted", wall_w > 0 ? useful_w / wall_w : 1.0},
               {"mean", finished > 0 ? ettr_sum / static_cast<double>(finished) : 1.0},
               {"min", finished > 0 ? ettr_min : 1.0},
               {"jobs", finished},
               {"per_job", "failure_jobs.csv"}};
  s["nodes_down"] = {{"mean", end_s_ > 0 ? down_area_ / end_s_ : 0.0},
                     {"peak", peak_down_},
                     {"node_hours", down_area_ / kHour}};
  s["checkpoint"] = {{"mode", config_.checkpoint},
                     {"detection_s", config_.detection_s},
                     {"restart_s", config_.restart_s},
                     {"restore_s", config_.restore_s}};
  if (!tenants_.empty()) {
    long total = 0;
    for (std::size_t k = 0; k < rows_.size(); ++k) total += rerouted(k);
    s["services"] = {{"replicas_hit", replicas_hit_}, {"requests_rerouted", total}};
  }
  s["node_rate_per_1000_node_days"] = process_->node_rate_per_s() * 1000.0 * 86400.0;
  return s;
}

}  // namespace fleetsim
