#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "sim/engine/simulation_impl.hpp"

namespace fleetsim {

JobProgress Simulation::Impl::progress(JobId id) const {
  const Live& l = live(id);
  const Execution& run = l.run;
  const JobRecord& rec = l.record;
  JobProgress p;
  p.running = run.running_index >= 0;
  p.first_start_s = rec.start_s;
  p.restarts = rec.restarts;
  p.preempted_s = rec.preempted_s;
  double done = run.done, attained = run.attained_gpu_s, executed = run.executed_s;
  if (p.running) {
    const double dt = now_ - run.since;
    const double work_dt = run.held ? 0.0 : std::max(0.0, dt - run.overhead_left);
    done = std::min(1.0, done + work_dt * run.speed() / run.runtime);
    if (run.held)
      for (const auto* h : hooks_) done += h->held_progress(id);
    attained += dt * rec.gpus;
    executed += dt;
    p.gpus = rec.gpus;
    p.overhead_left_s = std::max(0.0, run.overhead_left - dt);
    p.expected_end_s = run.since + run.overhead_left + (1.0 - run.done) * run.runtime / run.speed();
  } else if (run.preempted_at >= 0) {
    p.preempted_s += now_ - run.preempted_at;
  }
  p.remaining_fraction = run.runtime > 0 || p.running ? 1.0 - done : 1.0;
  p.attained_gpu_s = attained;
  p.executed_s = executed;
  return p;
}

std::optional<double> Simulation::Impl::estimated_runtime(JobId id) const {
  const auto i = at(id);
  if (estimates_[i] >= 0) return estimates_[i];
  // Nominal placement: the first allowed GPU type of the cluster.
  const Request& r = jobs_.request(i);
  int type = 0;
  while (type < state_.type_count() && (r.types & (TypeMask{1} << type)) == 0) ++type;
  const auto v = estimated_runtime_on(id, type < state_.type_count() ? type : 0);
  if (v) estimates_[i] = *v;
  return v;
}

std::optional<double> Simulation::Impl::estimated_runtime_on(JobId id, int gpu_type) const {
  const Request& r = jobs_.request(at(id));
  if (gpu_type < 0 || gpu_type >= state_.type_count()) return std::nullopt;
  if (r.gpus > 0 && (r.types & (TypeMask{1} << gpu_type)) == 0) return std::nullopt;
  PlacementSummary where;  // consolidated: one node where the job fits one
  where.gpus = r.gpus;
  where.gpu_milli = r.milli;
  where.gpu_type = state_.type_name(gpu_type);
  std::string why;
  return parts_.job_model->run_time_s(jobs_.spec(at(id)), where, why);
}

void Simulation::Impl::release(const Allocation& a) {
  state_.release(a);
  failed_.clear();  // capacity came back
  // A reserve_shared() holder leaves its GPUs' co-location too: the jobs beside it speed up.
  auto same = [&](const Allocation& b) {
    return b.slots.size() == a.slots.size() &&
           std::equal(b.slots.begin(), b.slots.end(), a.slots.begin(), [](const Slot& x, const Slot& y) {
             return x.node == y.node && x.gpu == y.gpu && x.milli == y.milli;
           });
  };
  const auto it = std::find_if(shared_.begin(), shared_.end(), [&](const auto& h) { return same(h.second); });
  if (it == shared_.end()) return;
  const auto neighbours = coloc_.remove(it->first, it->second);
  shared_.erase(it);
  refresh_colocation(neighbours);
}

std::vector<JobId> Simulation::Impl::jobs_on_node(int n) const {
  std::vector<JobId> out;
  for (JobId id : running_)
    for (const auto& slot : live(id).alloc.slots)
      if (slot.node == n) {
        out.push_back(id);
        break;
      }
  std::sort(out.begin(), out.end());
  return out;
}

void Simulation::Impl::refresh_colocation(const std::vector<JobId>& jobs) {
  for (JobId j : jobs) {
    if (j < 0) continue;  // a reserve_shared() holder: no job to re-time
    Execution& run = live(j).run;
    if (run.running_index < 0) continue;
    const double c = coloc_.speed(j, live(j).alloc, [this](JobId a, JobId b) { return pair_speed(a, b); });
    if (c == run.coloc_speed) continue;
    advance(j);
    run.coloc_speed = c;
    reschedule(j);
  }
}

PlacementSummary Simulation::Impl::summarize(const Request& r, const Allocation& a) const {
  PlacementSummary where;
  where.gpus = r.gpus;
  where.gpu_milli = r.milli;
  where.nodes = a.nodes;
  where.leaves = a.leaves;
  for (const auto& s : a.slots)
    if (s.gpu >= 0) {
      where.gpu_type = state_.type_name(state_.node_type(s.node));
      break;
    }
  // GPUs per node, nodes in the order the placer first used them.
  std::vector<int> seen;
  for (const auto& s : a.slots) {
    if (s.gpu < 0) continue;
    if (!seen.empty() && seen.back() == s.node) {  // placers add a node's GPUs together: O(slots)
      ++where.gpus_per_node.back();
      continue;
    }
    const auto it = std::find(seen.begin(), seen.end(), s.node);
    if (it == seen.end()) {
      seen.push_back(s.node);
      where.gpus_per_node.push_back(1);
    } else {
      ++where.gpus_per_node[static_cast<std::size_t>(it - seen.begin())];
    }
  }
  return where;
}

double Simulation::Impl::pair_speed(JobId a, JobId b) const {
  if (b < 0) return parts_.engine.colocation_slowdown;
  const auto v =
      parts_.job_model->colocated_speed(jobs_.spec(at(a)), jobs_.spec(at(b)), live(a).record.gpu_type);
  return v ? *v : parts_.engine.colocation_slowdown;
}

void Simulation::Impl::node_up(int n) {
  if (!state_.is_down(n)) return;
  state_.set_up(n);
  failed_.clear();  // capacity came back
}

void Simulation::Impl::set_speed(JobId id, double speed) {
  Execution& run = live(id).run;
  if (run.running_index < 0 || !(speed > 0) || speed == run.policy_speed) return;
  advance(id);
  run.policy_speed = speed;
  reschedule(id);
}

bool Simulation::Impl::try_start_on(JobId id, int gpu_type) {
  const Request& full = jobs_.request(at(id));
  if (full.gpus == 0) return try_start(id);
  if (gpu_type < 0 || gpu_type >= state_.type_count()) return false;
  Request r = full;  // same request, type mask narrowed: its own key in the failed-placement cache
  r.types &= TypeMask{1} << gpu_type;
  if (r.types == 0) return false;
  return start_with(id, r);
}

bool Simulation::Impl::try_start_scaled(JobId id, int gpus) {
  const Request& full = jobs_.request(at(id));
  if (full.gpus <= 0 || !full.whole() || gpus < 1) return false;
  if (gpus == full.gpus) return try_start(id);
  Request r = full;
  const double scale = static_cast<double>(gpus) / full.gpus;
  r.gpus = gpus;
  r.cpu_milli = full.cpu_milli * scale;
  r.memory_mib = full.memory_mib * scale;
  return start_with(id, r);
}

bool Simulation::Impl::try_start_at(JobId id, const std::vector<NodeGpus>& where) {
  const Request& full = jobs_.request(at(id));
  if (live(id).run.running_index >= 0) return true;
  if (full.gpus <= 0 || !full.whole() || where.empty()) return false;
  int gpus = 0;
  for (const auto& w : where) gpus += w.gpus;
  if (gpus < 1) return false;
  Request r = full;
  const double scale = static_cast<double>(gpus) / full.gpus;
  r.gpus = gpus;
  r.cpu_milli = full.cpu_milli * scale;
  r.memory_mib = full.memory_mib * scale;
  Allocation alloc;
  std::vector<bool> seen(static_cast<std::size_t>(state_.node_count()), false);
  for (const auto& w : where) {
    if (w.node < 0 || w.node >= state_.node_count() || w.gpus < 1) return false;
    if (seen[static_cast<std::size_t>(w.node)]) return false;  // each node once
    seen[static_cast<std::size_t>(w.node)] = true;
    if (state_.is_down(w.node) || !state_.fits_part(w.node, r, w.gpus)) return false;
    state_.pick_on_node(w.node, r, w.gpus, alloc);
  }
  state_.finalize(r, alloc);
  return start_allocated(id, r, std::move(alloc));
}

void Simulation::Impl::set_progress_rate(JobId id, double rate) {
  Execution& run = live(id).run;
  if (run.running_index < 0 || !(rate > 0) || !std::isfinite(rate)) return;
  advance(id);
  run.runtime = 1.0 / rate;
  run.policy_speed = 1;
  reschedule(id);
}

std::optional<double> Simulation::Impl::estimated_runtime_scaled(JobId id, int gpus) const {
  const Request& r = jobs_.request(at(id));
  if (r.gpus <= 0 || !r.whole() || gpus < 1) return std::nullopt;
  int type = 0;
  while (type < state_.type_count() && (r.types & (TypeMask{1} << type)) == 0) ++type;
  if (type >= state_.type_count()) return std::nullopt;
  int per_node = 0;
  for (int n = 0; n < state_.node_count() && per_node == 0; ++n)
    if (state_.node_type(n) == type) per_node = state_.node_gpus(n);
  if (per_node <= 0) return std::nullopt;
  PlacementSummary where;
  where.gpus = gpus;
  where.gpu_type = state_.type_name(type);
  for (int left = gpus; left > 0; left -= per_node) where.gpus_per_node.push_back(std::min(left, per_node));
  where.nodes = static_cast<int>(where.gpus_per_node.size());
  std::string why;
  return parts_.job_model->run_time_s(jobs_.spec(at(id)), where, why);
}

int Simulation::Impl::max_gpus(JobId id) const {
  const JobSpec& j = jobs_.spec(at(id));
  const auto m = parts_.job_model->max_gpus(j);
  return m ? std::max(1, *m) : std::max(1, j.gpus);
}

void Simulation::Impl::reschedule(JobId id) {
  Execution& run = live(id).run;
  ++run.epoch;
  const double t = phase_end_time(run);
  if (std::isfinite(t)) events_.push({t, seq_++, id, run.epoch});
}

void Simulation::Impl::phase_end(JobId id) {
  for (auto* h : hooks_)
    if (h->on_phase_end(id)) return;
  finish(id);
}

void Simulation::Impl::remove_running(JobId id) {
  Execution& run = live(id).run;
  const int pos = run.running_index;
  const JobId last = running_.back();
  running_[static_cast<std::size_t>(pos)] = last;
  live(last).run.running_index = pos;
  running_.pop_back();
  run.running_index = -1;
}

void Simulation::Impl::skip(const JobSpec& job, const std::string& why) {
  ++result_.skipped;
  for (auto* o : observers_) o->on_job_skipped(job, why);
}

double Simulation::Impl::next_hook_event() const {
  double t = std::numeric_limits<double>::infinity();
  for (const auto* ch : cluster_hooks_) t = std::min(t, ch->next_event_s());
  return t;
}

bool Simulation::Impl::work_left() const {
  return next_arrival_ < jobs_.size() || !running_.empty() ||
         (parts_.scheduler->queued() > 0 &&
          (state_.down_nodes() > 0 ||
           std::any_of(cluster_hooks_.begin(), cluster_hooks_.end(),
                       [](const ClusterHook* h) { return h->frees_capacity_later(); })));
}

}  // namespace fleetsim
