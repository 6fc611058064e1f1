#include "sim/network/fabric_fidelity.hpp"

#include <algorithm>

#include "sim/network/job_ring.hpp"
#include "sim/platform/ring.hpp"

namespace fleetsim {

FabricFidelity::FabricFidelity(const ClusterSpec& cluster, NetworkFidelityConfig config)
    : cluster_(cluster),
      config_(config),
      solver_(config.fabric_overlap, config.sharing, config.fabric_draws, config.allocation,
              config.headroom) {}

void FabricFidelity::attach(JobClock& clock, const Platform& platform, std::size_t jobs) {
  clock_ = &clock;
  platform_ = &platform;
  jobs_.assign(jobs, FabricJob{});
}

// A multi-GPU job's ring joins the fabric: its component is re-solved.
void FabricFidelity::on_start(JobId id, const PlacementSummary& where) {
  FabricJob& f = of(id);
  f.active = false;
  const auto ring = job_ring(*clock_, *platform_, cluster_, config_, id, where);
  if (!ring) return;
  const RingRoutes routes = ring_routes(ring->hosts, &routes_);
  if (!(routes.s_per_byte > 0)) return;
  std::vector<FlowUse> uses;
  for (const auto& [link, count] : routes.links) {
    const int l = ledger_.index(link);
    if (l == solver_.links()) solver_.add_link(ledger_.capacity(l), !ledger_.fatpipe(l));
    uses.push_back({l, count});
  }
  f.active = true;
  f.phi = ring->phi;
  f.flow_rate = 0;
  f.comm_frac = 0;
  const double now = clock_->now();
  f.since = now;
  JobRecord& rec = clock_->record(id);
  if (rec.comm_s < 0) rec.comm_s = 0;
  ++solves_;
  for (long j : solver_.add(id, uses, f.phi)) apply(static_cast<JobId>(j), now);
}

// The job's ring leaves the fabric (finish or preemption): the rest of its component is re-solved.
void FabricFidelity::on_leave(JobId id) {
  FabricJob& f = of(id);
  if (!f.active || !solver_.has(id)) return;
  const double now = clock_->now();
  account(id, now);
  for (const auto& u : solver_.uses(id))
    ledger_.add_load(u.link, -(ledger_.fatpipe(u.link) ? 1 : u.count) * f.flow_rate, now);
  f.active = false;
  f.flow_rate = 0;
  ++solves_;
  for (long j : solver_.remove(id)) apply(static_cast<JobId>(j), now);
}

void FabricFidelity::account(JobId id, double now) {
  FabricJob& f = of(id);
  const double dt = now - f.since;
  f.since = now;
  if (!(dt > 0)) return;
  JobRecord& rec = clock_->record(id);
  rec.comm_s += dt * f.comm_frac;
  rec.comm_bytes += dt * f.flow_rate;
}

// Rate r of s = alone / r: the all-reduce share (1 - phi) of the job's time stretches by s, so its
// work runs at speed 1 / (phi + (1 - phi) s); its rings' flows move (1 - phi) x alone bytes/s per
// unit of that speed (the bytes of its all-reduces spread over its iterations).
void FabricFidelity::apply(JobId id, double now) {
  FabricJob& f = of(id);
  const double fair = solver_.rate(id), alone = solver_.alone_rate(id);
  // not slowed unless by more than rounding (the mean field's iteration may leave an ulp)
  const double stretch = fair >= alone * (1 - 1e-12) ? 1.0 : alone / fair;
  const double speed = stretch == 1.0 ? 1.0 : 1.0 / (f.phi + (1 - f.phi) * stretch);
  const double flow_rate = (1 - f.phi) * alone * speed;
  Execution& run = clock_->execution(id);
  if (speed != run.hook_speed) {
    clock_->advance(id);
    run.hook_speed = speed;
    clock_->reschedule(id);
  }
  account(id, now);
  f.comm_frac = (1 - f.phi) * stretch * speed;
  if (flow_rate != f.flow_rate)
    for (const auto& u : solver_.uses(id))
      ledger_.add_load(u.link, (ledger_.fatpipe(u.link) ? 1 : u.count) * (flow_rate - f.flow_rate), now);
  f.flow_rate = flow_rate;
}

void FabricFidelity::on_end(double time_s) {
  end_s_ = time_s;
  ledger_.close(time_s);
}

NetworkReport FabricFidelity::report() const {
  return ledger_.report(end_s_, 200);
}

}  // namespace fleetsim
