#include "sim/serving/cluster_services.hpp"

#include <algorithm>
#include <ostream>
#include <type_traits>

#include "sim/serving/gpu_reclaim.hpp"
#include "sim/serving/kv_fabric.hpp"
#include "sim/serving/service_placement.hpp"

namespace fleetsim {
namespace {

/// Every replica's demand; a reclaiming service's carry its power windows (a first pass alone).
std::vector<ReplicaDemand> demands_of(const std::vector<ServiceSpec>& specs,
                                      const std::vector<PreparedService>& prepared,
                                      const std::vector<Reclaim>& reclaim) {
  std::vector<ReplicaDemand> demands;
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto d = replica_demands(specs[i]);
    if (reclaim[i] != Reclaim::kHold) {
      const auto windows = first_pass_windows(prepared[i]);
      for (std::size_t r = 0; r < d.size() && r < windows.size(); ++r) {
        d[r].reclaim = reclaim[i];
        d[r].windows = windows[r];
      }
    }
    demands.insert(demands.end(), d.begin(), d.end());
  }
  return demands;
}

std::vector<Reclaim> policies_of(const std::vector<ServiceSpec>& specs) {
  std::vector<Reclaim> out;
  for (const auto& spec : specs) out.push_back(reclaim_policy(spec));
  return out;
}

std::vector<PreparedService> prepare_all(const std::vector<ServiceSpec>& specs) {
  std::vector<PreparedService> prepared;
  for (const auto& spec : specs) prepared.push_back(prepare_service(spec));
  return prepared;
}

}  // namespace

ClusterServices::ClusterServices(std::vector<ServiceSpec> specs, const ClusterSpec& cluster,
                                 const EngineConfig& engine, const PowerConfig& power, bool network_fidelity,
                                 bool failures)
    : specs_(std::move(specs)),
      prepared_(prepare_all(specs_)),
      reclaim_(policies_of(specs_)),
      cluster_(cluster),
      colocation_slowdown_(engine.colocation_slowdown),
      power_(power),
      reservations_(demands_of(specs_, prepared_, reclaim_)) {
  reservations_.set_preemption_cost(engine.restart_overhead_s,
                                    engine.restart_s_per_gb * engine.state_gb_per_gpu);
  std::vector<KvFabric::Service> kv;
  std::size_t first = 0;
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const bool on = kv_on_network(specs_[i], network_fidelity, failures, reclaim_[i], cluster);
    on_network_.push_back(on ? static_cast<int>(kv.size()) : -1);
    if (on) kv.push_back({&specs_[i], &prepared_[i], first});
    first += static_cast<std::size_t>(specs_[i].engine.replicas);
  }
  if (!kv.empty())
    kv_ = std::make_unique<KvFabric>(std::move(kv), reservations_, cluster_, colocation_slowdown_);
}

ClusterServices::~ClusterServices() = default;

std::vector<std::string> ClusterServices::warnings() const {
  std::vector<std::string> out;
  for (const auto& p : prepared_)
    if (!p.rejected_note.empty()) out.push_back(p.rejected_note);
  return out;
}

void ClusterServices::attach(Simulation& sim) {
  sim.attach(reservations_);
  sim.add_tenant(reservations_);
  if (kv_ == nullptr) return;
  sim.attach(static_cast<ExecutionHook&>(*kv_));
  sim.attach(
      static_cast<ClusterHook&>(*kv_));  // after the reservations: its first pass needs their placements
}

void ClusterServices::run() {
  // Replicas of service i are demands [first, first + replicas) of the reservations.
  std::size_t first = 0;
  const auto& all = reservations_.placements();
  const auto& occ = reservations_.occupancy();
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    const auto n = static_cast<std::size_t>(specs_[i].engine.replicas);
    const auto last = std::min(all.size(), first + n);
    // A replica moved by failover: every placement it held, in time order.
    const PlacementHistory mine(all.begin() + static_cast<long>(first),
                                all.begin() + static_cast<long>(last));
    const std::vector<std::vector<OccupancyChange>> occupancy(
        occ.begin() + static_cast<long>(std::min(occ.size(), first)),
        occ.begin() + static_cast<long>(std::min(occ.size(), last)));
    apply_placement(specs_[i], cluster_, mine, all, occupancy, colocation_slowdown_, prepared_[i].engine);
    // Failover: this service's replica outages from the cluster run (replica = demand - first).
    std::vector<long> events;
    for (const auto& o : reservations_.outages()) {
      const auto d = static_cast<std::size_t>(o.demand);
      if (d < first || d >= first + n) continue;
      prepared_[i].engine.outages.push_back({static_cast<int>(d - first), o.down_s, o.up_s});
      events.push_back(o.event);
    }
    Outcome out;
    out.replicas_hit = static_cast<long>(events.size());
    const auto slice = [&](const auto& all_demands) {
      using V = std::decay_t<decltype(all_demands)>;
      return V(all_demands.begin() + static_cast<long>(std::min(all_demands.size(), first)),
               all_demands.begin() + static_cast<long>(std::min(all_demands.size(), last)));
    };
    if (reclaim_[i] != Reclaim::kHold)
      serve_granted(slice(reservations_.granted()), prepared_[i].engine, events);
    const int kv = on_network_[i];
    if (kv >= 0) {
      prepared_[i].engine.kv_links = kv_->links(static_cast<std::size_t>(kv));
      prepared_[i].engine.kv_link_changes.clear();
      prepared_[i].engine.kv_measured = kv_->measured(static_cast<std::size_t>(kv));
    }
    const auto measured = prepared_[i].engine.kv_measured;
    out.run = run_service(specs_[i], std::move(prepared_[i]));
    if (kv >= 0) {
      long used = 0;  // second-pass transfers that took their measured time
      for (std::size_t k = 0; k < out.run.result.requests.size() && k < measured.size(); ++k) {
        const RequestOutcome& o = out.run.result.requests[k];
        if (o.decode_replica >= 0 && measured[k].from == o.kv_from && measured[k].to == o.decode_replica)
          ++used;
      }
      out.run.summary["kv_on_network"] = kv_->summary(static_cast<std::size_t>(kv), used);
    }
    if (reclaim_[i] != Reclaim::kHold)
      reclaim_summary(specs_[i], reclaim_[i], slice(reservations_.granted()),
                      slice(reservations_.reclaim_stats()), out.run.result.end_s, out.run.summary);
    out.run.summary["gpu_energy_kwh"] = service_gpu_energy_kwh(specs_[i], out.run, power_);
    for (std::size_t k = 0; k < events.size() && k < out.run.result.rerouted.size(); ++k) {
      if (reclaim_[i] != Reclaim::kHold && events[k] < 0) continue;  // an off window, no failure
      reservations_.add_rerouted(events[k], out.run.result.rerouted[k]);
      out.rerouted += out.run.result.rerouted[k];
    }
    outcomes_.push_back(std::move(out));
    first += n;
  }
  prepared_.clear();
}

void ClusterServices::write_requests(std::ostream& out) const {
  write_requests_header(out);
  for (std::size_t i = 0; i < outcomes_.size(); ++i) write_requests_rows(out, specs_[i], outcomes_[i].run);
}

void ClusterServices::write_series(std::ostream& out) const {
  write_serving_series_header(out);
  for (std::size_t i = 0; i < outcomes_.size(); ++i)
    write_serving_series_rows(out, specs_[i], outcomes_[i].run);
}

nlohmann::ordered_json ClusterServices::summary() const {
  nlohmann::ordered_json block;
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    auto& s = block[specs_[i].name];
    s = outcomes_[i].run.summary;
    if (reservations_.nodes_can_leave()) {
      s["replicas_hit"] = outcomes_[i].replicas_hit;
      s["requests_rerouted"] = outcomes_[i].rerouted;
    }
  }
  return block;
}

}  // namespace fleetsim
