#include "sim/network/network_hook.hpp"

#include <simgrid/s4u/Engine.hpp>

#include <algorithm>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "sim/platform/platform.hpp"

#include "workloads/base/keys.hpp"

namespace fleetsim {

namespace {

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"execution", "fidelity", K::kString, "", "delay",
     "delay (job-level run times) | network (multi-GPU jobs' all-reduces share the SimGrid fabric)", "",
     [](const Options& o, const std::string& key) {
       const std::string v = o.text(key, "");
       if (v != "delay" && v != "network") throw o.error(key, "must be \"delay\" or \"network\"");
     }},
    {"execution", "grad_mb_default", K::kFloat, "MB", "1000",
     "gradient all-reduced per iteration by jobs whose job model does not describe their iteration (trace, "
     "throughput, pollux; the kernels model uses the job's profile)",
     "fidelity network", at_least(0)},
    {"execution", "iteration_compute_s", K::kFloat, "s", "0.5",
     "compute time per iteration of jobs whose job model does not describe their iteration",
     "fidelity network", above(0)},
    {"execution", "chunks_shared", K::kInt, "", "16",
     "chunks a job's run is cut into while it shares fabric links with another job (at least one iteration "
     "each; >= 1)",
     "fidelity network", at_least(1)},
}};

}  // namespace

std::optional<NetworkFidelityConfig> NetworkFidelityConfig::from(const Options& execution) {
  if (execution.text("fidelity", "delay") != "network") return std::nullopt;
  NetworkFidelityConfig c;
  c.grad_bytes = execution.number("grad_mb_default", 1000) * 1e6;
  c.iteration_compute_s = execution.number("iteration_compute_s", c.iteration_compute_s);
  c.chunks_shared = static_cast<int>(execution.integer("chunks_shared", c.chunks_shared));
  return c;
}

NetworkFidelity::NetworkFidelity(const ClusterSpec& cluster, NetworkFidelityConfig config)
    : cluster_(cluster), config_(config) {}

void NetworkFidelity::attach(JobClock& clock, const Platform& platform, std::size_t jobs) {
  clock_ = &clock;
  platform_ = &platform;
  jobs_.assign(jobs, Chunks{});
}

// A multi-GPU job's ring joins the fabric; it runs in chunks from now on.
void NetworkFidelity::on_start(JobId id, const PlacementSummary& where) {
  Chunks& c = of(id);
  c.active = false;
  if (where.gpus < 2) return;
  Execution& run = clock_->execution(id);
  std::vector<std::pair<int, int>> gpus;
  for (const auto& s : clock_->allocation(id).slots)
    if (s.gpu >= 0) gpus.push_back({s.node, s.gpu});
  std::vector<simgrid::s4u::Host*> ring;
  for (const auto& [node, gpu] : ring_order(gpus))
    ring.push_back(platform_->nodes[static_cast<std::size_t>(node)].gpus[static_cast<std::size_t>(gpu)]);
  const GpuSpec* g = find_gpu(where.gpu_type);
  if (ring.size() < 2 || g == nullptr || !(run.runtime > 0)) return;
  double compute_s = config_.iteration_compute_s, comm_s = 0;
  if (const auto shape = clock_->job_model().iteration_shape(clock_->job(id), where)) {
    compute_s = shape->compute_s;
    comm_s = shape->exposed_comm_s;
  } else {
    const auto& net = cluster_.network;
    const int node_gpus = cluster_.nodes[static_cast<std::size_t>(gpus.front().first)].gpus;
    CollectiveDesc d;
    d.bytes = config_.grad_bytes;
    d.ranks = static_cast<int>(ring.size());
    d.nodes = std::max(1, where.nodes);
    comm_s =
        predict_analytic(d, fabric_for(*g, net.nic_gbps, net.nics_per_node, cluster_.gpus_per_nic(node_gpus)))
            .seconds;
  }
  if (!(comm_s > 0) || !(compute_s > 0)) return;
  const double iteration_s = compute_s + comm_s;
  if (!fabric_.add_job(id, ring)) return;
  c.active = true;
  c.phi = compute_s / iteration_s;
  c.iteration = std::min(1.0, iteration_s / run.runtime);
  JobRecord& rec = clock_->record(id);
  if (rec.comm_s < 0) rec.comm_s = 0;
  plan_chunk(id);
  for (long s : fabric_.sharers(id)) cut_chunk(static_cast<JobId>(s));
}

// The job's ring leaves the fabric (finish or preemption); an in-flight all-reduce is credited for
// the part it completed.
void NetworkFidelity::on_leave(JobId id) {
  if (!fabric_.has_job(id)) return;
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  JobRecord& rec = clock_->record(id);
  const double now = clock_->now();
  if (run.held) {
    const double part = fabric_.cancel(id, now);
    run.done = std::min(1.0, run.done + c.comm * part);
    c.owed = c.comm * (1 - part);
    rec.comm_s += now - c.comm_since;
    run.held = false;
  } else {  // the compute done in this chunk still owes its all-reduce
    c.owed += (run.done - c.chunk_from) * (1.0 - c.phi) / c.phi;
  }
  rec.comm_bytes += fabric_.flow_bytes(id);
  fabric_.remove_job(id);
  c.active = false;
  run.target = 1;
}

// Next chunk: the rest of the job while no running job shares its links, else 1/chunks_shared of it
// (at least one iteration).
void NetworkFidelity::plan_chunk(JobId id) {
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  c.chunk_from = run.done;
  const double rest = std::max(0.0, 1.0 - run.done - c.owed);
  const double chunk = fabric_.shared(id) ? std::max(c.iteration, 1.0 / config_.chunks_shared) : rest;
  run.target = run.done + std::min(chunk, rest) * c.phi;
}

// A sharer appeared: a job computing a longer chunk ends its compute phase at the shared length.
void NetworkFidelity::cut_chunk(JobId id) {
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  if (run.held || !c.active) return;
  const double target = c.chunk_from + std::max(c.iteration, 1.0 / config_.chunks_shared) * c.phi;
  if (target >= run.target) return;
  clock_->advance(id);
  run.target = std::max(run.done, target);
  clock_->reschedule(id);
}

// A chunk's compute phase ended: its all-reduce starts.
bool NetworkFidelity::on_phase_end(JobId id) {
  Chunks& c = of(id);
  if (!c.active) return false;
  Execution& run = clock_->execution(id);
  clock_->advance(id);
  run.done = run.target;
  const double comm = (run.done - c.chunk_from) * (1.0 - c.phi) / c.phi + c.owed;
  c.owed = 0;
  const double now = clock_->now();
  if (fabric_.start(id, comm * run.runtime, now)) {
    run.held = true;
    c.comm = comm;
    c.comm_since = now;
    clock_->reschedule(id);  // held: no phase end until the ptask is done
    return true;
  }
  run.done = std::min(1.0, run.done + comm);  // shorter than the route latency: not simulated
  next_chunk(id);
  return true;
}

double NetworkFidelity::held_progress(JobId id) const {
  const Chunks& c = jobs_[static_cast<std::size_t>(id)];
  const Execution& run = clock_->execution(id);
  // the all-reduce's progress, estimated at its idle-fabric rate
  return std::min(c.comm, (clock_->now() - c.comm_since) / run.runtime);
}

std::optional<JobId> NetworkFidelity::wait(double until) {
  const long done = fabric_.wait(until);
  if (done < 0) return std::nullopt;
  return static_cast<JobId>(done);
}

// A chunk's all-reduce finished.
void NetworkFidelity::resume(JobId id) {
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  clock_->advance(id);
  run.held = false;
  run.done = std::min(1.0, run.done + c.comm);
  clock_->record(id).comm_s += clock_->now() - c.comm_since;
  next_chunk(id);
}

void NetworkFidelity::next_chunk(JobId id) {
  if (1.0 - clock_->execution(id).done < 1e-9) {
    clock_->finish(id);
    return;
  }
  plan_chunk(id);
  clock_->reschedule(id);
}

}  // namespace fleetsim
