#include "sim/network/link_ledger.hpp"

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <map>

#include "sim/platform/ring.hpp"

namespace fleetsim {

int LinkLedger::index(simgrid::s4u::Link* l) {
  auto [it, inserted] = index_.try_emplace(l, static_cast<int>(links_.size()));
  if (inserted) {
    links_.push_back(l);
    capacity_.push_back(l->get_bandwidth());
    fatpipe_.push_back(l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE ? 1 : 0);
    const std::string tier = link_tier(l->get_name());
    auto t = std::find(tier_names_.begin(), tier_names_.end(), tier);
    if (t == tier_names_.end()) {
      t = tier_names_.insert(t, tier);
      tiers_.emplace_back();
    }
    tier_.push_back(static_cast<int>(t - tier_names_.begin()));
    load_.emplace_back();
  }
  return it->second;
}

void LinkLedger::close_link(std::size_t l, double now) {
  Load& ld = load_[l];
  const double dt = now - ld.since;
  ld.since = now;
  if (!(dt > 0) || !(ld.load > 0)) return;
  ld.area += ld.load * dt;
  const int b = static_cast<int>(util_bin(ld.load / capacity_[l]));
  auto it = std::find_if(ld.bins.begin(), ld.bins.end(), [b](const auto& p) { return p.first == b; });
  if (it == ld.bins.end())
    ld.bins.push_back({b, dt});
  else
    it->second += dt;
}

void LinkLedger::close_tier(std::size_t t, double now) {
  TierLoad& tl = tiers_[t];
  if (now > tl.since && tl.load > 0) {
    if (!tl.segments.empty() && tl.segments.back().end == tl.since && tl.segments.back().load == tl.load)
      tl.segments.back().end = now;  // same load on: one segment
    else
      tl.segments.push_back({tl.since, now, tl.load});
  }
  tl.since = now;
}

void LinkLedger::add_load(int link, double delta, double now) {
  const auto l = static_cast<std::size_t>(link);
  close_link(l, now);
  Load& ld = load_[l];
  ld.load += delta;
  if (ld.load < 1e-9 * capacity_[l]) ld.load = 0;  // rounding left over when the last job leaves
  if (fatpipe_[l] != 0) return;
  const auto t = static_cast<std::size_t>(tier_[l]);
  close_tier(t, now);
  tiers_[t].load += delta;
  if (tiers_[t].load < 1e-9 * capacity_[l]) tiers_[t].load = 0;
}

void LinkLedger::close(double end_s) {
  for (std::size_t l = 0; l < load_.size(); ++l) close_link(l, end_s);
  for (std::size_t t = 0; t < tiers_.size(); ++t) close_tier(t, end_s);
}

NetworkReport LinkLedger::report(double end_s, int buckets) const {
  NetworkReport r;
  // Every link of the platform, so that tiers' capacities include idle links (as the network fidelity).
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
      const Load& ld = load_[static_cast<std::size_t>(it->second)];
      s.bytes = ld.area;
      s.mean_util = ld.area / end_s / s.capacity_Bps;
      std::vector<double> at(kUtilBins, 0.0);
      double busy = 0;
      for (const auto& [b, t] : ld.bins) {
        at[static_cast<std::size_t>(b)] += t;
        busy += t;
      }
      double acc = std::max(0.0, end_s - busy);  // idle time sits at utilization 0
      for (std::size_t b = 0; b < kUtilBins && acc < 0.99 * end_s; ++b) {
        acc += at[b];
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
    if (!tiers_[t].segments.empty()) tiers.emplace(tier_names_[t], t);
  for (const auto& [tier, t] : tiers)
    add_tier_samples(r, tier, tiers_[t].segments, tier_capacity[tier], end_s, buckets);
  return r;
}

}  // namespace fleetsim
