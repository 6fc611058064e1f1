#include "sim/serving/kv_fabric.hpp"

#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "sim/platform/platform.hpp"
#include "sim/serving/service_placement.hpp"
#include "workloads/base/keys.hpp"

namespace fleetsim {
namespace {

const KeyRegistrar kKeys{{
    {"service[]", "kv_transfers", KeyKind::kString, "", "auto",
     "disaggregated KV transfers: link (latency + bytes / bandwidth of the placement's link) | network "
     "(flows "
     "on the cluster's SimGrid network beside training's all-reduces, which they slow; needs "
     "execution.fidelity "
     "= network) | auto (network where the run and the service allow it, else link)",
     "", one_of({"auto", "link", "network"})},
}};

double mean(double sum, long n) {
  return n > 0 ? sum / static_cast<double>(n) : 0.0;
}

}  // namespace

bool kv_on_network(const ServiceSpec& spec, bool network_fidelity, bool failures, Reclaim reclaim,
                   const ClusterSpec& cluster) {
  const std::string v = spec.options.text("kv_transfers", "auto");
  if (v == "link") return false;
  const bool asked = v == "network";
  const auto refuse = [&](const std::string& why) {
    if (asked) throw spec.options.error("kv_transfers", "'network' " + why);
    return false;
  };
  if (spec.engine.prefill_replicas <= 0)
    return refuse("needs a disaggregated service (prefill_replicas and decode_replicas)");
  if (!network_fidelity)
    return refuse(
        "needs execution.fidelity = \"network\" (training's all-reduces on the SimGrid network; the "
        "fabric fidelity's fluid rates carry no KV flows)");
  if (failures)
    return refuse("is not modelled with [failures] (a failed node's hosts go off under the transfers)");
  if (spec.kv_link_gbps > 0)
    return refuse("and kv_link_gbps (a fixed link for every transfer) exclude each other");
  if (reclaim != Reclaim::kHold)
    return refuse("needs reclaim = \"hold\" (replicas placed once, at the start)");
  if (asked && cluster.nodes.size() < 2)
    return refuse(
        "needs a cluster of two servers or more: its prefill and decode replicas cannot be on "
        "different servers on this one");
  return true;
}

simgrid::s4u::ExecPtr start_kv_ptask(const std::vector<simgrid::s4u::Host*>& src,
                                     const std::vector<simgrid::s4u::Host*>& dst, double bytes) {
  const std::size_t k = std::min(src.size(), dst.size());
  const std::size_t n = 2 * k;
  std::vector<simgrid::s4u::Host*> hosts(src.begin(), src.begin() + static_cast<long>(k));
  hosts.insert(hosts.end(), dst.begin(), dst.begin() + static_cast<long>(k));
  std::vector<double> matrix(n * n, 0.0);
  for (std::size_t i = 0; i < k; ++i) matrix[i * n + k + i] = bytes / static_cast<double>(k);
  simgrid::s4u::ExecPtr exec = simgrid::s4u::Exec::init()
                                   ->set_hosts(hosts)
                                   ->set_flops_amounts(std::vector<double>(n, 0.0))
                                   ->set_bytes_amounts(matrix);
  exec->start();
  return exec;
}

KvLink kv_platform_link(const std::vector<simgrid::s4u::Host*>& src,
                        const std::vector<simgrid::s4u::Host*>& dst, RouteCache& routes) {
  const std::size_t k = std::min(src.size(), dst.size());
  std::unordered_map<simgrid::s4u::Link*, int> pairs;
  KvLink link;
  for (std::size_t i = 0; i < k; ++i) {
    const RouteCache::Route& r = routes.get(src[i], dst[i]);
    link.latency_s = std::max(link.latency_s, r.latency);
    for (auto* l : r.links) ++pairs[l];
  }
  double s_per_byte = 0;  // per pair
  for (const auto& [l, count] : pairs) {
    const bool fatpipe = l->get_sharing_policy() == simgrid::s4u::Link::SharingPolicy::FATPIPE;
    s_per_byte = std::max(s_per_byte, (fatpipe ? 1.0 : count) / l->get_bandwidth());
  }
  if (s_per_byte > 0) link.bytes_per_s = static_cast<double>(k) / s_per_byte;
  return link;
}

KvFabric::KvFabric(std::vector<Service> services, const ServiceReservations& reservations,
                   const ClusterSpec& cluster, double colocation_slowdown)
    : services_(std::move(services)),
      reservations_(reservations),
      cluster_(cluster),
      colocation_slowdown_(colocation_slowdown) {}

void KvFabric::attach(JobClock& clock, const Platform& platform, std::size_t /*jobs*/) {
  clock_ = &clock;
  platform_ = &platform;
}

void KvFabric::attach(ClusterControl& /*control*/, std::size_t /*jobs*/) {
  // First pass: each service alone on the links of its replicas' first placements.
  const auto& all = reservations_.placements();
  requests_.clear();
  for (std::size_t s = 0; s < services_.size(); ++s) {
    const Service& svc = services_[s];
    const PreparedService& p = *svc.prepared;
    const auto n = static_cast<std::size_t>(p.engine.replicas);
    const std::size_t first = std::min(all.size(), svc.first);
    const PlacementHistory mine(all.begin() + static_cast<long>(first),
                                all.begin() + static_cast<long>(std::min(all.size(), first + n)));
    ServingEngineConfig engine = p.engine;
    apply_placement(*svc.spec, cluster_, mine, all, {}, colocation_slowdown_, engine);
    std::vector<KvLink> links;
    const int prefill = p.engine.prefill_replicas;
    for (int from = 0; from < prefill; ++from)
      for (int to = prefill; to < p.engine.replicas; ++to)
        links.push_back(kv_platform_link(hosts_of(svc.first + static_cast<std::size_t>(from)),
                                         hosts_of(svc.first + static_cast<std::size_t>(to)), routes_));
    engine.kv_links = links;
    engine.kv_link_changes.clear();
    links_.push_back(std::move(links));
    const ServingResult r = simulate_serving(p.requests, *p.model, engine);
    requests_.push_back(p.requests.size());
    for (std::size_t i = 0; i < r.requests.size(); ++i) {
      const RequestOutcome& o = r.requests[i];
      if (o.decode_replica < 0 || o.kv_from < 0 || o.kv_sent_s < 0) continue;
      flows_.push_back({s, static_cast<int>(i), o.kv_from, o.decode_replica, o.kv_sent_s, o.kv_bytes});
    }
  }
  std::stable_sort(flows_.begin(), flows_.end(),
                   [](const Flow& a, const Flow& b) { return a.start_s < b.start_s; });
}

double KvFabric::next_event_s() const {
  return next_ < flows_.size() ? flows_[next_].start_s : std::numeric_limits<double>::infinity();
}

void KvFabric::on_event() {
  const double now = clock_->now();
  for (; next_ < flows_.size() && flows_[next_].start_s <= now; ++next_) start(next_);
}

std::vector<simgrid::s4u::Host*> KvFabric::hosts_of(std::size_t d) const {
  std::vector<simgrid::s4u::Host*> hosts;
  if (d >= reservations_.slots().size()) return hosts;
  for (const Slot& s : reservations_.slots()[d]) {
    const auto& node = platform_->nodes[static_cast<std::size_t>(s.node)];
    hosts.push_back(node.gpus[static_cast<std::size_t>(s.gpu)]);
  }
  return hosts;
}

void KvFabric::start(std::size_t f) {
  Flow& flow = flows_[f];
  const std::size_t first = services_[flow.service].first;
  const auto src = hosts_of(first + static_cast<std::size_t>(flow.from));
  const auto dst = hosts_of(first + static_cast<std::size_t>(flow.to));
  if (src.empty() || dst.empty()) return;  // a replica down now: the link's time
  for (auto* h : src)
    if (std::find(dst.begin(), dst.end(), h) != dst.end()) return;  // one GPU (MPS shares): no network
  const auto& svc = services_[flow.service];
  const int prefill = svc.prepared->engine.prefill_replicas;
  const int decode = svc.prepared->engine.replicas - prefill;
  flow.alone_s =
      links_[flow.service][static_cast<std::size_t>(flow.from * decode + flow.to - prefill)].seconds(
          flow.bytes);
  inflight_.push_back(start_kv_ptask(src, dst, flow.bytes));
  inflight_flow_.push_back(f);
}

JobId KvFabric::activity_done(std::size_t k) {
  flows_[inflight_flow_[k]].end_s = clock_->now();
  inflight_.erase(inflight_.begin() + static_cast<long>(k));
  inflight_flow_.erase(inflight_flow_.begin() + static_cast<long>(k));
  return -1;
}

std::vector<ServingEngineConfig::KvMeasured> KvFabric::measured(std::size_t s) const {
  std::vector<ServingEngineConfig::KvMeasured> out(s < requests_.size() ? requests_[s] : 0);
  for (const Flow& f : flows_) {
    if (f.service != s || f.end_s < 0) continue;
    const double took = f.end_s - f.start_s;
    out[static_cast<std::size_t>(f.request)] = {f.from, f.to, took, f.alone_s > 0 ? took / f.alone_s : 1.0};
  }
  return out;
}

nlohmann::ordered_json KvFabric::summary(std::size_t s, long used) const {
  long flows = 0, on = 0;
  double alone = 0, took = 0, worst = 0;
  for (const Flow& f : flows_) {
    if (f.service != s) continue;
    ++flows;
    if (f.end_s < 0) continue;
    ++on;
    alone += f.alone_s;
    took += f.end_s - f.start_s;
    if (f.alone_s > 0) worst = std::max(worst, (f.end_s - f.start_s) / f.alone_s);
  }
  nlohmann::ordered_json j;
  j["flows"] = flows;
  j["on_network"] = on;
  j["alone_mean_s"] = mean(alone, on);
  j["measured_mean_s"] = mean(took, on);
  j["slowdown"] = alone > 0 ? took / alone : 1.0;
  j["slowdown_max"] = worst;
  j["used"] = used;
  return j;
}

}  // namespace fleetsim
