#include "sim/network/network_fidelity.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace fleetsim {

int RingPtasks::link_index(simgrid::s4u::Link* l) {
  auto [it, inserted] = index_.try_emplace(l, static_cast<int>(links_.size()));
  if (inserted) {
    links_.push_back(l);
    capacity_.push_back(l->get_bandwidth());
    fatpipe_.push_back(l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE ? 1 : 0);
    const std::string tier = link_tier(l->get_name());
    auto t = std::find(tier_names_.begin(), tier_names_.end(), tier);
    if (t == tier_names_.end()) {
      t = tier_names_.insert(t, tier);
      tier_segments_.emplace_back();
      tier_acc_.push_back(0);
      tier_hit_.push_back(0);
    }
    tier_.push_back(static_cast<int>(t - tier_names_.begin()));
    load_.emplace_back();
    hist_.emplace_back(kUtilBins, 0.0);
    users_.emplace_back();
  }
  return it->second;
}

bool RingPtasks::add_job(long id, const std::vector<simgrid::s4u::Host*>& ring) {
  Job j;
  j.ring = ring;
  const RingRoutes routes = ring_routes(ring, &routes_);
  if (!(routes.s_per_byte > 0)) return false;
  j.latency = routes.latency;
  j.s_per_byte = routes.s_per_byte;
  for (const auto& [link, count] : routes.links) {
    const int l = link_index(link);
    j.uses.push_back({l, count});
    if (fatpipe_[static_cast<std::size_t>(l)] == 0) users_[static_cast<std::size_t>(l)].push_back(id);
  }
  std::sort(j.uses.begin(), j.uses.end(), [](const LinkUse& a, const LinkUse& b) { return a.link < b.link; });
  jobs_[id] = std::move(j);
  return true;
}

void RingPtasks::remove_job(long id) {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return;
  for (const auto& u : it->second.uses) {
    auto& v = users_[static_cast<std::size_t>(u.link)];
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
  }
  jobs_.erase(it);
}

std::vector<long> RingPtasks::sharers(long id) const {
  std::vector<long> out;
  const Job& j = jobs_.at(id);
  for (const auto& u : j.uses)
    for (long o : users_[static_cast<std::size_t>(u.link)])
      if (o != id) out.push_back(o);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool RingPtasks::shared(long id) const {
  const Job& j = jobs_.at(id);
  for (const auto& u : j.uses)
    if (users_[static_cast<std::size_t>(u.link)].size() > 1) return true;
  return false;
}

bool RingPtasks::start(long id, double alone_s, double now) {
  Job& j = jobs_.at(id);
  if (j.exec != nullptr || !(alone_s > j.latency) || !(j.s_per_byte > 0)) return false;
  snapshot(now);
  j.bytes = ring_bytes_for(RingRoutes{{}, j.s_per_byte, j.latency}, alone_s);
  j.exec = start_ring_ptask(j.ring, j.bytes);
  j.ratio = 1;
  inflight_.push_back(j.exec);
  inflight_job_.push_back(id);
  inflight_ptr_.push_back(&j);
  ++ptasks_;
  return true;
}

bool RingPtasks::in_flight(long id) const {
  auto it = jobs_.find(id);
  return it != jobs_.end() && it->second.exec != nullptr;
}

long RingPtasks::wait(double until) {
  const double now = simgrid::s4u::Engine::get_clock();
  const double timeout = std::isfinite(until) ? std::max(0.0, until - now) : -1.0;
  ssize_t k = -1;
  try {
    k = simgrid::s4u::Exec::wait_any_for(inflight_, timeout);
  } catch (const simgrid::TimeoutException&) {  // some 3.32 code paths throw instead of returning -1
    k = -1;
  }
  if (k < 0) return -1;
  return complete(static_cast<std::size_t>(k));
}

long RingPtasks::complete(std::size_t k) {
  const long id = inflight_job_[k];
  snapshot(simgrid::s4u::Engine::get_clock(), id);
  const auto at = static_cast<std::ptrdiff_t>(k);
  inflight_.erase(inflight_.begin() + at);
  inflight_job_.erase(inflight_job_.begin() + at);
  inflight_ptr_[k]->exec = nullptr;
  inflight_ptr_.erase(inflight_ptr_.begin() + at);
  return id;
}

double RingPtasks::cancel(long id, double now) {
  Job& j = jobs_.at(id);
  if (j.exec == nullptr) return 0;
  snapshot(now);
  const double done = std::clamp(1.0 - j.ratio, 0.0, 1.0);
  j.exec->cancel();
  for (std::size_t k = 0; k < inflight_.size(); ++k)
    if (inflight_job_[k] == id) {
      inflight_.erase(inflight_.begin() + static_cast<std::ptrdiff_t>(k));
      inflight_job_.erase(inflight_job_.begin() + static_cast<std::ptrdiff_t>(k));
      inflight_ptr_.erase(inflight_ptr_.begin() + static_cast<std::ptrdiff_t>(k));
      break;
    }
  j.exec = nullptr;
  return done;
}

double RingPtasks::flow_bytes(long id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? 0.0 : it->second.flow_bytes;
}

// Every in-flight ptask's progress since the last snapshot, in inflight_ order, added to the loads
// of the links it crosses; then each loaded link's segment goes to its histogram and its tier.
void RingPtasks::snapshot(double now, long finished) {
  const double dt = now - last_snapshot_;
  last_snapshot_ = now;
  if (!(dt > 0)) return;
  touched_.clear();
  for (std::size_t k = 0; k < inflight_.size(); ++k) {
    Job& j = *inflight_ptr_[k];
    const double r =
        inflight_job_[k] == finished ? 0.0 : std::clamp(inflight_[k]->get_remaining_ratio(), 0.0, 1.0);
    const double moved = (j.ratio - r) * j.bytes;
    j.ratio = r;
    j.flow_bytes += moved;
    if (!(moved > 0)) continue;
    for (const auto& u : j.uses) {
      const auto l = static_cast<std::size_t>(u.link);
      if (load_[l].acc == 0) touched_.push_back(u.link);
      load_[l].acc += (fatpipe_[l] != 0 ? 1 : u.count) * moved / dt;
    }
  }
  for (int li : touched_) {
    const auto l = static_cast<std::size_t>(li);
    LinkLoad& ll = load_[l];
    const int b = static_cast<int>(util_bin(ll.acc / capacity_[l]));
    if (b != ll.bin) {  // swap the held bin: the same additions, on the same values, as hist_ alone
      if (ll.bin >= 0) hist_[l][static_cast<std::size_t>(ll.bin)] = ll.held;
      ll.held = hist_[l][static_cast<std::size_t>(b)];
      ll.bin = b;
    }
    ll.held += dt;
    ll.area += ll.acc * dt;
    if (fatpipe_[l] == 0) {
      const auto t = static_cast<std::size_t>(tier_[l]);
      tier_acc_[t] += ll.acc;
      tier_hit_[t] = 1;
    }
    ll.acc = 0;
  }
  for (std::size_t t = 0; t < tier_hit_.size(); ++t) {
    if (tier_hit_[t] == 0) continue;
    tier_segments_[t].push_back({now - dt, now, tier_acc_[t]});
    tier_acc_[t] = 0;
    tier_hit_[t] = 0;
  }
}

double RingPtasks::time_at(std::size_t link, std::size_t b) const {
  const LinkLoad& ll = load_[link];
  return ll.bin >= 0 && static_cast<std::size_t>(ll.bin) == b ? ll.held : hist_[link][b];
}

NetworkReport RingPtasks::report(double end_s, int buckets) const {
  NetworkReport r;
  r.ptasks = ptasks_;
  // Every link of the platform, so that tiers' capacities include idle links.
  std::map<std::string, double> tier_capacity;
  for (auto* l : simgrid::s4u::Engine::get_instance()->get_all_links()) {
    const std::string tier = link_tier(l->get_name());
    if (tier == "cpu" || l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE) continue;
    tier_capacity[tier] += l->get_bandwidth();
    auto it = index_.find(l);
    const bool fabric = tier == "nic" || tier == "leaf-uplink" || tier == "spine" || tier == "core";
    if (it == index_.end() && !fabric) continue;
    LinkStat s;
    s.name = l->get_name();
    s.tier = tier;
    s.capacity_Bps = l->get_bandwidth();
    if (it != index_.end() && end_s > 0) {
      const auto li = static_cast<std::size_t>(it->second);
      const LinkLoad& ll = load_[li];
      s.bytes = ll.area;
      s.mean_util = ll.area / end_s / s.capacity_Bps;
      double busy = 0;
      for (std::size_t b = 0; b < kUtilBins; ++b) busy += time_at(li, b);
      double acc = std::max(0.0, end_s - busy);  // idle time sits at utilization 0
      for (std::size_t b = 0; b < kUtilBins && acc < 0.99 * end_s; ++b) {
        acc += time_at(li, b);
        s.p99_util = static_cast<double>(b) * kUtilBin;
      }
    }
    r.links.push_back(std::move(s));
  }
  std::stable_sort(r.links.begin(), r.links.end(), [](const LinkStat& a, const LinkStat& b) {
    if (a.p99_util != b.p99_util) return a.p99_util > b.p99_util;
    return a.mean_util != b.mean_util ? a.mean_util > b.mean_util : a.name < b.name;
  });
  if (!(end_s > 0) || buckets <= 0) return r;
  std::map<std::string, std::size_t> tiers;  // by name, as the report lists them
  for (std::size_t t = 0; t < tier_names_.size(); ++t)
    if (!tier_segments_[t].empty()) tiers.emplace(tier_names_[t], t);
  for (const auto& [tier, t] : tiers)
    add_tier_samples(r, tier, tier_segments_[t], tier_capacity[tier], end_s, buckets);
  return r;
}

}  // namespace fleetsim
