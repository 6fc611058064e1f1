#include "sim/network/network_hook.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

#include <algorithm>
#include <stdexcept>

#include "sim/network/job_ring.hpp"
#include "sim/platform/platform.hpp"

#include "workloads/base/keys.hpp"
#include "workloads/base/sampler.hpp"

namespace fleetsim {

namespace {

/// A fabric_sharing name, the sharing it selects and its fabric_overlap default.
struct Sharing {
  const char* name;
  IdleShare value;
  double overlap;  ///< 0.15 fitted for the mean and arrival fields; worst-link and joint fit none (max-min:
                   ///< unused)
};
constexpr Sharing kSharings[] = {
    {"max-min", IdleShare::kNone, 0},       {"mean-field", IdleShare::kLeftover, 0.15},
    {"arrival", IdleShare::kArrival, 0.15}, {"worst-link", IdleShare::kWorstLink, 0},
    {"joint", IdleShare::kJoint, 0},        {"joint-cycle", IdleShare::kJointCycle, 0},
};

/// A named choice of a key with no more to it than its value (fabric_allocation, fabric_headroom).
template <typename Value>
struct Named {
  const char* name;
  Value value;
};
constexpr Named<FabricAllocation> kAllocations[] = {
    {"max-min", FabricAllocation::kMaxMin},
    {"fair-bottleneck", FabricAllocation::kFairBottleneck},
};
constexpr Named<Headroom> kHeadrooms[] = {
    {"distribution", Headroom::kDistribution},
    {"mean", Headroom::kMean},
};

/// The names of a table of named choices (kSharings, kAllocations, kHeadrooms), for the key's one_of.
template <typename Entry, std::size_t N>
std::vector<std::string> names_of(const Entry (&table)[N]) {
  std::vector<std::string> names;
  for (const Entry& e : table) names.emplace_back(e.name);
  return names;
}

/// The entry named `name` of such a table (checked by the key's one_of before a config is read).
template <typename Entry, std::size_t N>
const Entry& named(const Entry (&table)[N], const std::string& name, const char* key) {
  for (const Entry& e : table)
    if (name == e.name) return e;
  throw std::invalid_argument(std::string(key) + ": unknown name '" + name + "'");
}

/// The name of `value` in such a table: the keys' defaults are NetworkFidelityConfig's, by name.
template <typename Entry, std::size_t N, typename Value>
const char* name_of(const Entry (&table)[N], Value value) {
  for (const Entry& e : table)
    if (e.value == value) return e.name;
  throw std::logic_error("network_hook: a default missing from its table of names");
}

const NetworkFidelityConfig kDefaults{};

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"execution", "fidelity", K::kString, "", "delay",
     "delay (job-level run times) | network (multi-GPU jobs' all-reduces share the SimGrid fabric as ptasks) "
     "| "
     "fabric (jobs' rings share the fabric's links under fair rates, re-solved at starts and ends: fast)",
     "",
     [](const Options& o, const std::string& key) {
       const std::string v = o.text(key, "");
       if (v != "delay" && v != "network" && v != "fabric")
         throw o.error(key, "must be \"delay\", \"network\" or \"fabric\"");
     }},
    {"execution", "grad_mb_default", K::kFloat, "MB", "1000",
     "gradient all-reduced per iteration by jobs whose job model does not describe their iteration (trace, "
     "throughput, pollux; the kernels model uses the job's profile)",
     "fidelity network, fabric", at_least(0)},
    {"execution", "iteration_compute_s", K::kFloat, "s", "0.5",
     "compute time per iteration of jobs whose job model does not describe their iteration",
     "fidelity network, fabric", above(0)},
    {"execution", "fabric_sharing", K::kString, "", name_of(kSharings, kDefaults.sharing),
     "how the fabric fidelity shares a link: max-min (every job talks all the time: the pessimistic bound) | "
     "mean-field (max-min as a floor, plus what sharers leave idle on average while they compute) | "
     "arrival (max-min as a floor; each sharer present with its share of time talking as a job starting to "
     "talk sees it, and present jobs split the link: mean-value analysis of the closed network) | "
     "worst-link (arrival's presences, then a ring's time per byte is the expected worst of its links, each "
     "link's sharers coming and going independently) | "
     "joint (as worst-link, each sharer coming and going once for all the ring's links it crosses, and "
     "sharers whose rate another link sets coming and going too: fabric_draws draws a solve) | "
     "joint-cycle (a ring's time per byte weighs joint's by 1 - q and arrival's by q, q its share of time "
     "talking: its block of talking averages its sharers over about q of their cycle)",
     "fidelity fabric", one_of(names_of(kSharings))},
    {"execution", "fabric_overlap", K::kFloat, "",
     "0 (worst-link, joint, joint-cycle), 0.15 (mean-field, arrival)",
     "fabric sharing: how much more than independent phases sharers' all-reduces overlap (0: a sharer "
     "counts for its share of time talking; 1: always, as max-min). 0.15 fits mean-field and arrival to "
     "the network fidelity's mean JCT (equal chunks) on tests/bench/network-1k and scenarios/philly-network; "
     "worst-link, joint and joint-cycle need none",
     "fidelity fabric", in_closed(0, 1)},
    {"execution", "fabric_draws", K::kInt, "", "32",
     "fabric sharing joint and joint-cycle: draws of the sharers' presences per ring and solve, each "
     "sharer's stratified "
     "(its share of draws within 1 / draws of its presence); 64 and 128 gave the same steady-grid "
     "communication and network-1k mean JCT within its seed-to-seed noise; at most 65,536",
     "fidelity fabric", in_closed(1, 65536)},
    {"execution", "fabric_allocation", K::kString, "", name_of(kAllocations, kDefaults.allocation),
     "the allocation of jobs all talking at once that the fabric fidelity builds on: max-min (max-min "
     "fairness in the per-flow rate) | fair-bottleneck (SimGrid's ptask solver, "
     "as the network fidelity: it favours rings that cross few links; each job's rate from the sharing is "
     "moved towards it by as much of the all-talking slowdown as the job sees: with joint-cycle, "
     "communication by ring width within 8% of network on fixed placements where joint on max-min is off "
     "by up to 19%)",
     "fidelity fabric", one_of(names_of(kAllocations))},
    {"execution", "fabric_headroom", K::kString, "", name_of(kHeadrooms, kDefaults.headroom),
     "fabric sharing arrival, worst-link, joint and joint-cycle: how a link with room for more than a ring's "
     "flows at its alone rate slows it: distribution (whenever more sharers are present than the room holds, "
     "from the distribution of the sharers present: communication within 5% of the closed network's product "
     "form on 60 random links with room for 2-3 flows) | mean (from their mean "
     "number "
     "present: up to 15% optimistic there, as on 4:1 leaf uplinks that hold two NICs' flows)",
     "fidelity fabric", one_of(names_of(kHeadrooms))},
    {"execution", "chunks_shared", K::kInt, "", "16",
     "chunks a job's run is cut into while it shares fabric links with another job (at least one iteration "
     "each; 1 to 1,000,000)",
     "fidelity network", in_closed(1, 1e6)},
    {"execution", "chunk_jitter", K::kFloat, "", "0.5",
     "spread of shared chunks' lengths: each is 1 / chunks_shared of the job times a factor drawn "
     "uniformly in [1 - j, 1 + j] from a hash of the job and the chunk (deterministic), so that sharers' "
     "all-reduce blocks do not stay in phase (0: equal chunks)",
     "fidelity network", in_half_open(0, 1)},
}};

}  // namespace

std::optional<NetworkFidelityConfig> NetworkFidelityConfig::from(const Options& execution,
                                                                 const std::string& fidelity) {
  if (execution.text("fidelity", "delay") != fidelity) return std::nullopt;
  NetworkFidelityConfig c;
  c.grad_bytes = execution.number("grad_mb_default", 1000) * 1e6;
  c.iteration_compute_s = execution.number("iteration_compute_s", c.iteration_compute_s);
  c.chunks_shared = execution.int32("chunks_shared", c.chunks_shared);
  c.chunk_jitter = execution.number("chunk_jitter", c.chunk_jitter);
  const Sharing& sharing =
      named(kSharings, execution.text("fabric_sharing", name_of(kSharings, c.sharing)), "fabric_sharing");
  c.sharing = sharing.value;
  c.fabric_overlap = execution.number("fabric_overlap", sharing.overlap);
  c.fabric_draws = execution.int32("fabric_draws", c.fabric_draws);
  c.allocation = named(kAllocations, execution.text("fabric_allocation", name_of(kAllocations, c.allocation)),
                       "fabric_allocation")
                     .value;
  c.headroom =
      named(kHeadrooms, execution.text("fabric_headroom", name_of(kHeadrooms, c.headroom)), "fabric_headroom")
          .value;
  return c;
}

NetworkFidelity::NetworkFidelity(const ClusterSpec& cluster, NetworkFidelityConfig config)
    : cluster_(cluster), config_(config) {}

void NetworkFidelity::attach(JobClock& clock, const Platform& platform, std::size_t jobs) {
  clock_ = &clock;
  platform_ = &platform;
  jobs_.assign(jobs, Chunks{});
  open_switch_.assign(platform.nodes.size(), -1);
  open_leaf_.assign(static_cast<std::size_t>(std::max(0, cluster_.leaves())), -1);
}

namespace {
/// Appends `up` and, for a split-duplex link ("<name>_UP"), its other direction ("<name>_DOWN").
void add_both_directions(simgrid::s4u::Link* up, std::vector<simgrid::s4u::Link*>& links) {
  if (up == nullptr) return;
  links.push_back(up);
  std::string name = up->get_name();
  if (name.size() > 3 && name.compare(name.size() - 3, 3, "_UP") == 0) {
    name.replace(name.size() - 3, 3, "_DOWN");
    if (auto* down = simgrid::s4u::Link::by_name_or_null(name)) links.push_back(down);
  }
}

/// The node's NIC links, both directions of each split-duplex link.
std::vector<simgrid::s4u::Link*> nic_links(const NodeHandles& node) {
  std::vector<simgrid::s4u::Link*> links;
  for (auto* up : node.nics) add_both_directions(up, links);
  return links;
}
}  // namespace

std::vector<simgrid::s4u::Link*> NetworkFidelity::uplinks(int leaf) const {
  std::vector<simgrid::s4u::Link*> links;
  const auto& all = platform_->leaf_uplinks;
  const int per_leaf =
      cluster_.network.topology == Topology::kRailOptimized ? std::max(1, cluster_.network.nics_per_node) : 1;
  for (int k = leaf * per_leaf; k < (leaf + 1) * per_leaf && k < static_cast<int>(all.size()); ++k)
    add_both_directions(all[static_cast<std::size_t>(k)], links);
  return links;
}

// Every node under the leaf was lost first (its jobs interrupted, their ptasks cancelled): no flow
// crosses its uplinks now.
void NetworkFidelity::domain_lost(int leaf) {
  if (platform_ == nullptr || leaf < 0 || leaf >= static_cast<int>(open_leaf_.size()) ||
      open_leaf_[static_cast<std::size_t>(leaf)] >= 0)
    return;
  const auto links = uplinks(leaf);
  bool off = true;
  for (auto* l : links) {
    l->turn_off();
    off = off && !l->is_on();
  }
  open_leaf_[static_cast<std::size_t>(leaf)] = static_cast<int>(leaf_switches_.size());
  leaf_switches_.push_back({leaf, clock_->now(), -1, static_cast<int>(links.size()), off});
}

// The node's jobs were interrupted before (their ptasks cancelled in on_leave): nothing runs on it.
int NetworkFidelity::node_lost(int node, long /*event*/) {
  const auto n = static_cast<std::size_t>(node);
  if (platform_ == nullptr || n >= platform_->nodes.size() || open_switch_[n] >= 0) return 0;
  const NodeHandles& h = platform_->nodes[n];
  // GPU hosts only: ptasks run there. The CPU host stays on: node 0's carries fleetsim's controller
  // actor (Simulation::run), and turning it off kills that actor and ends the run silently (measured).
  const auto* self =
      simgrid::s4u::Actor::self() != nullptr ? simgrid::s4u::Actor::self()->get_host() : nullptr;
  bool off = true;
  for (auto* g : h.gpus) {
    if (g == self) continue;
    g->turn_off();
    off = off && !g->is_on();
  }
  for (auto* l : nic_links(h)) l->turn_off();
  open_switch_[n] = static_cast<int>(switches_.size());
  switches_.push_back({node, clock_->now(), -1, off});
  return 0;
}

void NetworkFidelity::node_back(int node) {
  const auto n = static_cast<std::size_t>(node);
  if (platform_ == nullptr || n >= platform_->nodes.size() || open_switch_[n] < 0) return;
  const NodeHandles& h = platform_->nodes[n];
  for (auto* g : h.gpus)
    if (!g->is_on()) g->turn_on();
  for (auto* l : nic_links(h)) l->turn_on();
  switches_[static_cast<std::size_t>(open_switch_[n])].on_s = clock_->now();
  open_switch_[n] = -1;
  // Its leaf was down with it (a domain failure): the switch is repaired with its first node.
  const int leaf = cluster_.nodes[n].leaf;
  if (leaf < 0 || leaf >= static_cast<int>(open_leaf_.size())) return;
  int& open = open_leaf_[static_cast<std::size_t>(leaf)];
  if (open < 0) return;
  for (auto* l : uplinks(leaf)) l->turn_on();
  leaf_switches_[static_cast<std::size_t>(open)].on_s = clock_->now();
  open = -1;
}

// A multi-GPU job's ring joins the fabric; it runs in chunks from now on.
void NetworkFidelity::on_start(JobId id, const PlacementSummary& where) {
  Chunks& c = of(id);
  c.active = false;
  // Rolled back to a checkpoint (a failure): the work after it is done again whole, compute and
  // all-reduce, so no all-reduce is owed for the compute it had done before.
  if (clock_->execution(id).done + 1e-12 < c.left_done) c.owed = 0;
  const auto ring = job_ring(*clock_, *platform_, cluster_, config_, id, where);
  if (!ring) return;
  for (const auto* h : ring->hosts)  // nodes out of service are never placed on (ClusterState)
    if (!h->is_on())
      throw std::logic_error("network fidelity: job placed on switched-off host " + h->get_name());
  if (!rings_.add_job(id, ring->hosts)) return;
  c.active = true;
  c.phi = ring->phi;
  c.iteration = std::min(1.0, ring->iteration_s / clock_->execution(id).runtime);
  JobRecord& rec = clock_->record(id);
  if (rec.comm_s < 0) rec.comm_s = 0;
  plan_chunk(id);
  for (long s : rings_.sharers(id)) cut_chunk(static_cast<JobId>(s));
}

// The job's ring leaves the fabric (finish or preemption); an in-flight all-reduce is credited for
// the part it completed.
void NetworkFidelity::on_leave(JobId id) {
  if (!rings_.has_job(id)) return;
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  JobRecord& rec = clock_->record(id);
  const double now = clock_->now();
  if (run.held) {
    const double part = rings_.cancel(id, now);
    run.done = std::min(1.0, run.done + c.comm * part);
    c.owed = c.comm * (1 - part);
    rec.comm_s += now - c.comm_since;
    run.held = false;
  } else {  // the compute done in this chunk still owes its all-reduce
    c.owed += (run.done - c.chunk_from) * (1.0 - c.phi) / c.phi;
  }
  rec.comm_bytes += rings_.flow_bytes(id);
  rings_.remove_job(id);
  c.active = false;
  c.left_done = run.done;
  run.target = 1;
}

// A shared chunk's length for the job's next chunk: 1/chunks_shared of the job times a factor drawn
// uniformly in [1 - chunk_jitter, 1 + chunk_jitter] from a hash of the job and its chunk count (the
// same on every run and platform), at least one iteration.
double NetworkFidelity::draw_shared_length(JobId id) {
  Chunks& c = of(id);
  double scale = 1;
  if (config_.chunk_jitter > 0) {
    const double u = unit_interval(splitmix64((static_cast<std::uint64_t>(id) << 24) ^ c.planned++));
    scale = 1 + config_.chunk_jitter * (2 * u - 1);
  }
  return std::max(c.iteration, scale / config_.chunks_shared);
}

// Next chunk: the rest of the job while no running job shares its links, else a shared chunk.
void NetworkFidelity::plan_chunk(JobId id) {
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  c.chunk_from = run.done;
  const double rest = std::max(0.0, 1.0 - run.done - c.owed);
  c.shared_len = draw_shared_length(id);
  const double chunk = rings_.shared(id) ? c.shared_len : rest;
  run.target = run.done + std::min(chunk, rest) * c.phi;
}

// A sharer appeared: a job computing a longer chunk ends its compute phase at the shared length.
void NetworkFidelity::cut_chunk(JobId id) {
  Chunks& c = of(id);
  Execution& run = clock_->execution(id);
  if (run.held || !c.active) return;
  const double target = c.chunk_from + c.shared_len * c.phi;
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
  if (rings_.start(id, comm * run.runtime, now)) {
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
