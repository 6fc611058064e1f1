#include "sim/core/simulation.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <unordered_set>

#include "models/gpu_catalog.hpp"
#include "sim/platform/platform.hpp"
#include "workloads/input_error.hpp"

namespace fleetsim {

Request make_request(const JobSpec& job, const ClusterState& state, const std::string& trace_file) {
  Request r;
  r.gpus = job.gpus;
  r.milli = job.gpus > 0 ? job.gpu_milli : 0;
  if (r.gpus > 0 && (r.milli <= 0 || r.milli > 1000))
    throw InputError(trace_file, job.source_line, "gpu_milli",
                     "must be in 1..1000, got " + std::to_string(r.milli));
  r.cpu_milli = job.cpu_milli;
  r.memory_mib = job.memory_mib;
  r.single_node = job.single_node || !r.whole();
  if (!job.gpu_types.empty()) {
    r.types = 0;
    for (const auto& name : job.gpu_types) {
      const GpuSpec* g = find_gpu(name);
      if (g == nullptr) {
        std::vector<std::string> names = gpu_names();
        std::string msg = "unknown GPU model '" + name + "'";
        if (auto best = closest(name, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
        throw InputError(trace_file, job.source_line, "gpu_type", msg);
      }
      const int t = state.type_index(g->name);
      if (t >= 0) r.types |= TypeMask{1} << t;
    }
  }
  return r;
}

namespace {

struct Completion {
  double time;
  long seq;
  JobId job;
  bool operator>(const Completion& o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

struct RequestKey {
  int gpus, milli;
  TypeMask types;
  double cpu, mem;
  bool single;
  bool operator==(const RequestKey&) const = default;
};
struct RequestKeyHash {
  std::size_t operator()(const RequestKey& k) const {
    std::size_t h = std::hash<long long>()(k.gpus * 1000003LL + k.milli);
    h ^= std::hash<TypeMask>()(k.types) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<double>()(k.cpu) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    h ^= std::hash<double>()(k.mem) + (k.single ? 1 : 0) + (h << 6) + (h >> 2);
    return h;
  }
};

}  // namespace

class Simulation::Impl final : public Launcher {
 public:
  explicit Impl(SimulationParts p) : parts_(std::move(p)), state_(parts_.cluster) {}

  void add_observer(SimObserver& o) { observers_.push_back(&o); }

  SimulationResult run() {
    char arg0[] = "fleetsim";
    char arg1[] = "--log=root.thres:critical";
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer cannot follow SimGrid's stack switching (raw contexts): use threads.
    char arg2[] = "--cfg=contexts/factory:thread";
#else
    char arg2[] = "--cfg=contexts/factory:raw";
#endif
    int argc = 3;
    char* argv[] = {arg0, arg1, arg2, nullptr};
    engine_ = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
    platform_ = build_platform(parts_.cluster);
    simgrid::s4u::Host* controller_host = nullptr;
    for (const auto& n : platform_.nodes) {
      controller_host = n.cpu != nullptr ? n.cpu : (n.gpus.empty() ? nullptr : n.gpus.front());
      if (controller_host != nullptr) break;
    }
    if (controller_host == nullptr) throw InputError("", 0, "cluster", "the cluster has no hosts");

    prepare();
    simgrid::s4u::Actor::create("controller", controller_host, [this] { control_loop(); });
    engine_->run();
    for (auto* o : observers_) o->on_end(now_);
    result_.end_time_s = now_;
    return result_;
  }

  // --- Launcher
  bool try_start(JobId id) override {
    const Request& r = requests_[static_cast<std::size_t>(id)];
    const RequestKey key{r.gpus, r.milli, r.types, r.cpu_milli, r.memory_mib, r.single_node};
    if (failed_.count(key) > 0) return false;
    auto alloc = parts_.placer->place(r, state_);
    if (!alloc) {
      failed_.insert(key);  // stays infeasible until something is released
      return false;
    }
    JobRecord& rec = records_[static_cast<std::size_t>(id)];
    const JobSpec& spec = parts_.jobs[static_cast<std::size_t>(id)];
    PlacementSummary where;
    where.gpus = r.gpus;
    where.gpu_milli = r.milli;
    where.nodes = alloc->nodes;
    where.leaves = alloc->leaves;
    for (const auto& s : alloc->slots)
      if (s.gpu >= 0) {
        where.gpu_type = state_.type_name(state_.node_type(s.node));
        break;
      }
    std::string why;
    const auto runtime = parts_.job_model->run_time_s(spec, where, why);
    if (!runtime || !std::isfinite(*runtime) || *runtime < 0) {
      skip(spec, why.empty() ? "job model gave no run time" : why);
      return true;  // leaves the queue
    }
    state_.allocate(*alloc);
    rec.start_s = now_;
    rec.gpu_type = where.gpu_type;
    rec.nodes = alloc->nodes;
    rec.leaves = alloc->leaves;
    rec.gpus = r.gpus * (r.milli / 1000.0);
    allocations_[static_cast<std::size_t>(id)] = std::move(*alloc);
    completions_.push({now_ + *runtime, seq_++, id});
    ++running_;
    for (auto* o : observers_) o->on_job_started(rec);
    return true;
  }
  const JobSpec& job(JobId id) const override { return parts_.jobs[static_cast<std::size_t>(id)]; }
  double now() const override { return now_; }
  bool saturated() const override {
    return !has_cpu_only_ && state_.used_milli() >= static_cast<long long>(state_.total_gpus()) * 1000;
  }

 private:
  void skip(const JobSpec& job, const std::string& why) {
    ++result_.skipped;
    for (auto* o : observers_) o->on_job_skipped(job, why);
  }

  void prepare() {
    const auto n = parts_.jobs.size();
    requests_.reserve(n);
    records_.resize(n);
    allocations_.resize(n);
    runnable_.assign(n, 1);
    result_.jobs = static_cast<long>(n);
    for (auto* o : observers_) o->on_start(state_.total_gpus(), result_.jobs);
    for (std::size_t i = 0; i < n; ++i) {
      const JobSpec& j = parts_.jobs[i];
      requests_.push_back(make_request(j, state_, parts_.trace_file));
      JobRecord& rec = records_[i];
      rec.spec = &j;
      rec.index = static_cast<int>(i);
      rec.submit_s = j.submit_s;
      if (j.gpus == 0) has_cpu_only_ = true;
      std::string why;
      if (!state_.ever_fits(requests_.back(), why) || !parts_.job_model->can_time(j, why)) {
        runnable_[i] = 0;
        skip(j, why);
      }
    }
  }

  void control_loop() {
    const std::size_t n = parts_.jobs.size();
    constexpr double kInf = std::numeric_limits<double>::infinity();
    while (true) {
      while (next_arrival_ < n && runnable_[next_arrival_] == 0) ++next_arrival_;
      double t = kInf;
      if (next_arrival_ < n) t = parts_.jobs[next_arrival_].submit_s;
      if (!completions_.empty()) t = std::min(t, completions_.top().time);
      if (t == kInf) break;
      if (t > now_) simgrid::s4u::this_actor::sleep_until(t);
      now_ = std::max(now_, t);
      bool released = false;
      while (!completions_.empty() && completions_.top().time <= now_) {
        finish(completions_.top().job);
        completions_.pop();
        released = true;
      }
      if (released) failed_.clear();
      while (next_arrival_ < n && parts_.jobs[next_arrival_].submit_s <= now_) {
        if (runnable_[next_arrival_] != 0)
          parts_.scheduler->enqueue(static_cast<JobId>(next_arrival_), *this);
        ++next_arrival_;
      }
      parts_.scheduler->schedule(*this);
      ++result_.events;
      StateSample s;
      s.time_s = now_;
      s.busy_gpus = static_cast<double>(state_.used_milli()) / 1000.0;
      s.running = running_;
      s.queued = static_cast<long>(parts_.scheduler->queued());
      s.completed = result_.completed;
      for (auto* o : observers_) o->on_sample(s);
    }
    // Jobs still queued with nothing running can never start (e.g. CPU/memory spread).
    const auto left = parts_.scheduler->queued();
    if (left > 0) {
      for (std::size_t i = 0; i < n; ++i) {
        if (runnable_[i] != 0 && records_[i].start_s < 0 && !skipped_late_.count(i)) {
          skipped_late_.insert(i);
          skip(parts_.jobs[i], "could not be placed even on the otherwise idle cluster");
        }
      }
    }
  }

  void finish(JobId id) {
    JobRecord& rec = records_[static_cast<std::size_t>(id)];
    rec.end_s = now_;
    state_.release(allocations_[static_cast<std::size_t>(id)]);
    allocations_[static_cast<std::size_t>(id)] = Allocation{};
    --running_;
    ++result_.completed;
    parts_.scheduler->finished(id);
    for (auto* o : observers_) o->on_job_finished(rec);
  }

  SimulationParts parts_;
  ClusterState state_;
  std::unique_ptr<simgrid::s4u::Engine> engine_;
  Platform platform_;
  std::vector<SimObserver*> observers_;
  std::vector<Request> requests_;
  std::vector<JobRecord> records_;
  std::vector<Allocation> allocations_;
  std::vector<char> runnable_;
  std::priority_queue<Completion, std::vector<Completion>, std::greater<>> completions_;
  std::unordered_set<RequestKey, RequestKeyHash> failed_;
  std::unordered_set<std::size_t> skipped_late_;
  std::size_t next_arrival_ = 0;
  double now_ = 0;
  long seq_ = 0;
  long running_ = 0;
  bool has_cpu_only_ = false;
  SimulationResult result_;
};

Simulation::Simulation(SimulationParts parts) : impl_(std::make_unique<Impl>(std::move(parts))) {}
Simulation::~Simulation() = default;
void Simulation::add_observer(SimObserver& observer) {
  impl_->add_observer(observer);
}
SimulationResult Simulation::run() {
  return impl_->run();
}

}  // namespace fleetsim
