#include "sim/failures/failure_hook.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "models/reliability/checkpoint.hpp"
#include "sim/cluster/cluster_state.hpp"
#include "sim/engine/execution.hpp"

namespace fleetsim {

FailureHook::FailureHook(FailureConfig config) : config_(std::move(config)) {
  if (!config_.trace.empty())
    trace_ = std::make_unique<FaultTrace>(
        fault_trace_readers()
            .create(config_.trace_format, config_.file, 0, "failures.trace_format")
            ->read(config_.trace));
}

FailureHook::~FailureHook() = default;

void FailureHook::attach(ClusterControl& control, std::size_t jobs) {
  control_ = &control;
  tenants_ = control.tenants();
  jobs_.assign(jobs, JobState{});
  const int nodes = control.cluster().node_count();
  down_.assign(static_cast<std::size_t>(nodes), 0);
  drained_.assign(static_cast<std::size_t>(nodes), 0);
  spare_.assign(static_cast<std::size_t>(nodes), 0);
  process_ = std::make_unique<FailureProcess>(config_, control.cluster(), trace_.get());
  for (int n = std::max(0, nodes - config_.spare_nodes); n < nodes; ++n) {
    spare_[static_cast<std::size_t>(n)] = 1;
    spares_.push_back(n);
    control.node_down(n);
  }
  if (config_.maintenance_interval_s > 0) next_window_s_ = config_.maintenance_interval_s;
}

bool FailureHook::out(int node) const {
  const auto n = static_cast<std::size_t>(node);
  return down_[n] > 0 || drained_[n] > 0 || spare_[n] != 0;
}

void FailureHook::sync(int node, bool was_out) {
  const bool now_out = out(node);
  if (now_out && !was_out) control_->node_down(node);
  if (!now_out && was_out) control_->node_up(node);
}

const std::string& FailureHook::mapping_note() const {
  static const std::string kNone;
  return process_ ? process_->mapping_note() : kNone;
}

double FailureHook::next_event_s() const {
  double t = std::min(process_->next_s(), next_window_s_);
  if (!repairs_.empty()) t = std::min(t, repairs_.top().time_s);
  if (!window_ends_.empty()) t = std::min(t, window_ends_.top().time_s);
  return t;
}

void FailureHook::on_event() {
  const double now = control_->now();
  // Repairs and window ends before failures of the same instant; windows open last.
  while (true) {
    if (!repairs_.empty() && repairs_.top().time_s <= now && repairs_.top().time_s <= process_->next_s()) {
      const Repair r = repairs_.top();
      repairs_.pop();
      repair(r.node);
    } else if (!window_ends_.empty() && window_ends_.top().time_s <= now) {
      const Repair r = window_ends_.top();
      window_ends_.pop();
      close_window(r.node);
    } else if (process_->next_s() <= now) {
      fail(process_->pop());
    } else if (next_window_s_ <= now) {
      open_window();
      next_window_s_ += config_.maintenance_interval_s;
    } else {
      return;
    }
  }
}

void FailureHook::open_window() {
  const int nodes = static_cast<int>(down_.size());
  std::vector<int> picked;
  for (int tried = 0; tried < nodes && static_cast<int>(picked.size()) < config_.maintenance_nodes; ++tried) {
    const int n = window_cursor_;
    window_cursor_ = (window_cursor_ + 1) % nodes;
    if (!out(n)) picked.push_back(n);
  }
  if (picked.empty()) return;
  std::set<JobId> hit;
  for (int n : picked)
    for (JobId id : control_->jobs_on_node(n)) hit.insert(id);
  double lost_gpu_s = 0;
  for (JobId id : hit) lost_gpu_s += interrupt(id, true);
  const int replicas = tell_lost(picked);
  planned_interruptions_ += static_cast<long>(hit.size());
  const double now = control_->now();
  const double until = now + config_.maintenance_duration_s;
  for (int n : picked) {
    ++drained_[static_cast<std::size_t>(n)];
    sync(n, false);
    window_ends_.push({until, seq_++, n});
  }
  ++windows_;
  rows_.push_back({now, "maintenance", picked.front(), static_cast<int>(picked.size()), "planned",
                   static_cast<int>(hit.size()), lost_gpu_s / 3600.0, until, replicas});
  tell_back();
}

int FailureHook::tell_lost(const std::vector<int>& nodes) {
  int hit = 0;
  const auto event = static_cast<long>(rows_.size());
  for (NodeTenant* t : tenants_)
    for (int n : nodes) hit += t->node_lost(n, event);
  replicas_hit_ += hit;
  return hit;
}

void FailureHook::tell_back() {
  for (NodeTenant* t : tenants_) t->capacity_back();
}

long FailureHook::rerouted(std::size_t k) const {
  long n = 0;
  for (const NodeTenant* t : tenants_) n += t->requests_rerouted(static_cast<long>(k));
  return n;
}

void FailureHook::close_window(int node) {
  const bool was_out = out(node);
  --drained_[static_cast<std::size_t>(node)];
  drained_node_s_ += config_.maintenance_duration_s;
  sync(node, was_out);
  if (drained_[static_cast<std::size_t>(node)] == 0 && down_[static_cast<std::size_t>(node)] == 0)
    for (NodeTenant* t : tenants_) t->node_back(node);
  rows_.push_back({control_->now(), "maintenance_end", node, 1, "planned", 0, 0.0, control_->now()});
  tell_back();
}

void FailureHook::count_down(int delta) {
  const double now = control_->now();
  down_area_ += nodes_down_ * (now - last_change_);
  last_change_ = now;
  nodes_down_ += delta;
  peak_down_ = std::max(peak_down_, nodes_down_);
}

void FailureHook::fail(const FailureEvent& e) {
  std::set<JobId> hit;
  for (int n : e.nodes)
    for (JobId id : control_->jobs_on_node(n)) hit.insert(id);
  double lost_gpu_s = 0;
  for (JobId id : hit) lost_gpu_s += interrupt(id);
  const int replicas = tell_lost(e.nodes);
  if (e.domain >= 0 && !e.nodes.empty())
    for (NodeTenant* t : tenants_) t->domain_lost(control_->cluster().node_leaf(e.nodes.front()));
  const double now = control_->now();
  for (int n : e.nodes) {
    const auto i = static_cast<std::size_t>(n);
    const bool was_out = out(n), in_service = !was_out;
    if (down_[i]++ == 0) count_down(+1);
    if (spare_[i] != 0) {  // a held spare failed: it leaves the pool until repaired
      spare_[i] = 0;
      spares_.erase(std::find(spares_.begin(), spares_.end(), n));
    }
    sync(n, was_out);
    repairs_.push({std::max(e.repaired_s, now), seq_++, n});
    if (!in_service || config_.spare_nodes == 0) continue;
    if (spares_.empty()) {
      ++failures_without_spare_;
      continue;
    }
    const int spare = spares_.front();  // the longest-held spare joins
    spares_.erase(spares_.begin());
    spare_[static_cast<std::size_t>(spare)] = 0;
    sync(spare, true);
    ++spares_used_;
  }
  ++failures_;
  ++by_component_[e.component];
  rows_.push_back({now, "failure", e.nodes.front(), static_cast<int>(e.nodes.size()), e.component,
                   static_cast<int>(hit.size()), lost_gpu_s / 3600.0, e.repaired_s, replicas});
  tell_back();
}

void FailureHook::repair(int node) {
  const auto i = static_cast<std::size_t>(node);
  if (--down_[i] > 0) return;  // still down for another fault
  count_down(-1);
  const long in_service = static_cast<long>(down_.size()) - config_.spare_nodes;
  // Nodes neither failed nor held as spares (drained ones count: they come back). A held spare is
  // never failed (a failing spare leaves the pool), so the two counts do not overlap.
  const long serving = static_cast<long>(down_.size()) - nodes_down_ - static_cast<long>(spares_.size());
  if (config_.spare_nodes > 0 && static_cast<int>(spares_.size()) < config_.spare_nodes &&
      serving > in_service) {
    spare_[i] = 1;  // back to the spare pool (its replacement is already in service)
    spares_.push_back(node);
  }
  sync(node, true);
  if (drained_[i] == 0)
    for (NodeTenant* t : tenants_) t->node_back(node);
  rows_.push_back({control_->now(), "repair", node, 1, "", 0, 0.0, control_->now()});
  tell_back();
}

// Falls the job back to its last checkpoint and hands it back to the scheduler; GPU-s lost.
double FailureHook::interrupt(JobId id, bool planned) {
  control_->advance(id);
  const Execution& run = control_->execution(id);
  const JobRecord& rec = control_->record(id);
  JobState& j = jobs_[static_cast<std::size_t>(id)];
  // Its progress counts an all-reduce in flight (network fidelity) for the part it has done.
  const double done = control_->work_done(id);
  double saved = j.seg_start;
  if (planned)
    saved = done;  // a drain checkpoints its jobs first
  else if (j.ckpt_fraction > 0)
    saved += std::floor((done - j.seg_start) / j.ckpt_fraction + 1e-9) * j.ckpt_fraction;
  saved = std::clamp(saved, 0.0, done);
  double restore = config_.restore_s;
  if (config_.checkpoint_gb_per_gpu > 0 && config_.storage_gb_per_s_per_node > 0 && rec.nodes > 0)
    restore += config_.checkpoint_gb_per_gpu * rec.gpus / (config_.storage_gb_per_s_per_node * rec.nodes);
  const double overhead = (planned ? 0.0 : config_.detection_s) + config_.restart_s + restore;
  const double redone = (done - saved) * run.runtime * rec.gpus;
  ++j.interruptions;
  j.redone_gpu_s += redone;
  j.restart_gpu_s += overhead * rec.gpus;
  ++interruptions_by_gpus_[static_cast<int>(std::ceil(rec.gpus))];
  const double lost = redone + overhead * rec.gpus;
  leaving_ = id;
  leaving_saved_ = saved;
  control_->interrupt(id, saved, overhead);
  leaving_ = -1;
  return lost;
}

double FailureHook::write_s(int nodes, double gpus) const {
  if (config_.checkpoint_gb_per_gpu > 0 && config_.storage_gb_per_s_per_node > 0)
    return config_.checkpoint_gb_per_gpu * gpus / (config_.storage_gb_per_s_per_node * std::max(1, nodes));
  return config_.checkpoint_write_s;
}

double FailureHook::interval_s(int nodes, double write_s) const {
  if (config_.checkpoint == "fixed") return config_.checkpoint_interval_s;
  if (config_.checkpoint != "auto") return 0;
  const double rate = process_->node_rate_per_s() * std::max(1, nodes);
  return rate > 0 ? daly_interval_s(write_s, 1.0 / rate) : 0;
}

void FailureHook::on_start(JobId id, const PlacementSummary& where) {
  Execution& run = control_->execution(id);
  JobState& j = jobs_[static_cast<std::size_t>(id)];
  j.started = true;
  j.seg_start = run.done;
  j.ckpt_fraction = 0;
  j.share = 0;
  const double write = write_s(where.nodes, where.gpus * (where.gpu_milli / 1000.0));
  const double tau = interval_s(where.nodes, write);
  j.interval_s = tau;
  if (!(tau > 0) || !(run.runtime > 0)) return;
  run.runtime *= (tau + write) / tau;  // every tau of work is followed by a write of `write` s
  j.ckpt_fraction = (tau + write) / run.runtime;
  j.share = write / (tau + write);
}

void FailureHook::on_leave(JobId id) {
  const Execution& run = control_->execution(id);
  JobState& j = jobs_[static_cast<std::size_t>(id)];
  const double saved = leaving_ == id ? leaving_saved_ : run.done;
  j.ckpt_gpu_s += std::max(0.0, saved - j.seg_start) * run.runtime * j.share * control_->record(id).gpus;
}

void FailureHook::on_end(double time_s) {
  end_s_ = time_s;
  if (control_ != nullptr) {
    down_area_ += nodes_down_ * (time_s - last_change_);
    last_change_ = time_s;
  }
}

}  // namespace fleetsim
