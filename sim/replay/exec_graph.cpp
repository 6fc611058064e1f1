// Execution graph construction (see exec_graph.hpp).
// GCC 12 with -O2 and the sanitizers reports a false -Wuninitialized inside Boost.Graph's
// named_graph (an empty boost::optional returned by value) where add_vertex is instantiated here.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include "sim/replay/exec_graph.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <unordered_map>

#include "workloads/base/input_error.hpp"

namespace fleetsim::replay {
namespace {

constexpr double kUs = 1e-6;
constexpr double kEps = 1e-9;  // s: tolerance of "before" in measured times

bool contains(const std::string& hay, std::string_view needle) {
  return hay.find(needle) != std::string::npos;
}

std::string lower_prefix(std::string_view s, std::size_t n) {
  std::string out(s.substr(0, std::min(n, s.size())));
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

struct Builder {
  ExecGraph& G;
  explicit Builder(ExecGraph& g) : G(g) {}

  Vertex add_node(Node n) { return boost::add_vertex(std::move(n), G.g); }
  void add_edge(Vertex from, Vertex to, EdgeKind kind, bool from_start, bool to_end, double intrinsic) {
    Edge e;
    e.kind = kind;
    e.from_start = from_start;
    e.to_end = to_end;
    e.intrinsic = std::max(0.0, intrinsic);
    boost::add_edge(from, to, e, G.g);
  }
  double ref_time(Vertex v, bool from_start) const { return from_start ? G.g[v].start : G.g[v].end; }

  // Per rank state while building.
  struct GpuOp {
    Vertex v;
    double launch;  // measured launch call start (or op start when no launch is known)
  };
  void build_rank(int ti);
  void match_collectives();
  void assign_lags();
  bool bind_latest(Vertex v, bool to_end, double measured, double floor);
  void find_steps(int ti, const std::vector<std::vector<Vertex>>& cpu_lanes,
                  const std::vector<int>& lane_of_tid_idx, const std::map<std::int64_t, int>& tid_lane);
};

int lane_index(ExecGraph& G, std::map<std::pair<std::int64_t, std::int64_t>, int>& index, int rank, bool gpu,
               int device, std::int64_t id) {
  const auto key = std::make_pair(gpu ? (static_cast<std::int64_t>(device) + 1) : 0, id);
  auto it = index.find(key);
  if (it != index.end()) return it->second;
  Lane l;
  l.rank = rank;
  l.gpu = gpu;
  l.device = device;
  l.id = id;
  l.name = "rank " + std::to_string(rank) +
           (gpu ? " gpu " + std::to_string(device) + " stream " + std::to_string(id)
                : " thread " + std::to_string(id));
  G.lanes.push_back(std::move(l));
  const int idx = static_cast<int>(G.lanes.size()) - 1;
  index.emplace(key, idx);
  return idx;
}

// Last op of `ops` (stream order) whose launch started before `t` and that ended by `end_limit`.
const Builder::GpuOp* last_launched_before(const std::vector<Builder::GpuOp>& ops, const Dag& g, double t,
                                           double end_limit) {
  auto it = std::upper_bound(ops.begin(), ops.end(), t,
                             [](double x, const Builder::GpuOp& op) { return x < op.launch; });
  while (it != ops.begin()) {
    --it;
    if (g[it->v].end <= end_limit + kEps) return &*it;
  }
  return nullptr;
}

void Builder::build_rank(int ti) {
  const KinetoTrace& t = *G.traces[static_cast<std::size_t>(ti)];
  const int rank = G.ranks[static_cast<std::size_t>(ti)];
  std::map<std::pair<std::int64_t, std::int64_t>, int> lane_idx;

  // CPU lanes: runtime calls per thread, time order; nested calls fold into their parent.
  std::map<std::int64_t, std::vector<std::size_t>> by_tid;
  std::map<std::pair<int, std::int64_t>, std::vector<std::size_t>> by_stream;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    const auto& e = t.events[i];
    if (e.cat == KinetoCat::runtime) by_tid[e.tid].push_back(i);
    if (e.cat == KinetoCat::kernel || e.cat == KinetoCat::memcpy || e.cat == KinetoCat::memset)
      by_stream[{e.device, e.stream}].push_back(i);
  }
  auto by_ts = [&](std::size_t a, std::size_t b) {
    return t.events[a].ts < t.events[b].ts ||
           (t.events[a].ts == t.events[b].ts && t.events[a].dur > t.events[b].dur);
  };
  auto sec = [&](double us) { return (us - G.origin_us) * kUs; };

  std::unordered_map<std::int64_t, Vertex> launch_of;  // correlation -> runtime node
  std::vector<std::vector<Vertex>> cpu_lanes;
  std::map<std::int64_t, int> tid_lane;
  for (auto& [tid, idx] : by_tid) {
    std::sort(idx.begin(), idx.end(), by_ts);
    const int lane = lane_index(G, lane_idx, rank, false, 0, tid);
    tid_lane[tid] = static_cast<int>(cpu_lanes.size());
    cpu_lanes.emplace_back();
    auto& vs = cpu_lanes.back();
    for (std::size_t i : idx) {
      const auto& e = t.events[i];
      if (!vs.empty() && sec(e.ts) < G.g[vs.back()].end - kEps) {  // nested (driver inside runtime)
        if (e.correlation >= 0) launch_of.emplace(e.correlation, vs.back());
        continue;
      }
      Node n;
      n.kind = NodeKind::cpu;
      n.cls = KernelClass::cpu;
      n.rank = rank;
      n.lane = lane;
      n.trace = ti;
      n.event = i;
      n.start = sec(e.ts);
      n.end = sec(e.ts + e.dur);
      n.body = n.end - n.start;
      const Vertex v = add_node(n);
      if (!vs.empty())
        add_edge(vs.back(), v, EdgeKind::thread_order, false, false, n.start - G.g[vs.back()].end);
      vs.push_back(v);
      if (e.correlation >= 0) launch_of[e.correlation] = v;
    }
  }

  // Intrinsic launch latency: a low percentile of launch -> start lags of this rank.
  std::vector<double> lags;
  for (auto& [key, idx] : by_stream)
    for (std::size_t i : idx) {
      const auto& e = t.events[i];
      auto it = launch_of.find(e.correlation);
      if (e.correlation >= 0 && it != launch_of.end()) lags.push_back(sec(e.ts) - G.g[it->second].start);
    }
  double launch_latency = 0;
  if (!lags.empty()) {
    std::sort(lags.begin(), lags.end());
    launch_latency = std::max(0.0, lags[lags.size() / 20]);
  }

  // GPU lanes.
  std::map<std::pair<int, std::int64_t>, std::vector<GpuOp>> ops_of_stream;
  std::unordered_map<std::int64_t, Vertex> gpu_of_corr;
  for (auto& [key, idx] : by_stream) {
    std::sort(idx.begin(), idx.end(), by_ts);
    const int lane = lane_index(G, lane_idx, rank, true, key.first, key.second);
    auto& ops = ops_of_stream[key];
    for (std::size_t i : idx) {
      const auto& e = t.events[i];
      Node n;
      n.rank = rank;
      n.lane = lane;
      n.trace = ti;
      n.event = i;
      n.start = sec(e.ts);
      n.end = sec(e.ts + e.dur);
      n.body = n.end - n.start;
      if (e.cat == KinetoCat::memcpy) {
        n.kind = NodeKind::memcpy;
        n.cls = KernelClass::memcpy;
      } else if (e.cat == KinetoCat::memset) {
        n.kind = NodeKind::memset;
        n.cls = KernelClass::memset;
      } else if (!e.collective.empty()) {
        n.kind = NodeKind::collective;
        n.cls = KernelClass::communication;
        n.group = e.process_group.empty() ? "default" : e.process_group;
      } else {
        n.kind = NodeKind::kernel;
        n.cls = classify_kernel(e.name);
      }
      const Vertex v = add_node(n);
      double launch = n.start;
      auto it = e.correlation >= 0 ? launch_of.find(e.correlation) : launch_of.end();
      if (it != launch_of.end() && G.g[it->second].start <= n.start + kEps) {
        add_edge(it->second, v, EdgeKind::launch, true, false, launch_latency);
        launch = G.g[it->second].start;
      }
      if (!ops.empty()) add_edge(ops.back().v, v, EdgeKind::stream_order, false, false, 0);
      ops.push_back({v, launch});
      if (e.correlation >= 0) gpu_of_corr[e.correlation] = v;
    }
    // Launch times must be non-decreasing for the look-ups below.
    for (std::size_t k = 1; k < ops.size(); ++k) ops[k].launch = std::max(ops[k].launch, ops[k - 1].launch);
  }

  // Device-side sync records (cuda_sync), by correlation id of the runtime call.
  std::unordered_map<std::int64_t, const KinetoEvent*> sync_of_corr;
  for (const auto& e : t.events)
    if (e.cat == KinetoCat::sync && e.correlation >= 0) sync_of_corr[e.correlation] = &e;

  // Synchronising runtime calls: end deps on the GPU work they wait for.
  for (auto& vs : cpu_lanes)
    for (Vertex v : vs) {
      const Node& n = G.g[v];
      const auto& e = t.events[n.event];
      const std::string lname = lower_prefix(e.name, 64);
      std::vector<Vertex> waits;
      // A call whose own GPU operation finished before it returned waited for it (cudaMemcpy,
      // pageable cudaMemcpyAsync, hipMemcpyWithStream).
      if (e.correlation >= 0) {
        auto it = gpu_of_corr.find(e.correlation);
        if (it != gpu_of_corr.end() && G.g[it->second].end <= n.end + kEps &&
            G.g[it->second].start >= n.start - kEps)
          waits.push_back(it->second);
      }
      if (contains(lname, "synchronize")) {
        const KinetoEvent* rec = nullptr;
        if (auto it = sync_of_corr.find(e.correlation); it != sync_of_corr.end()) rec = it->second;
        std::int64_t only_stream = -1;
        double launched_before = n.start;
        if (rec != nullptr && rec->sync_kind == "Stream Sync") only_stream = rec->stream;
        if (rec != nullptr && rec->sync_kind == "Event Sync" && rec->wait_on_event_record_corr >= 0) {
          only_stream = rec->wait_on_stream;
          if (auto it = launch_of.find(rec->wait_on_event_record_corr); it != launch_of.end())
            launched_before = G.g[it->second].start;
        }
        for (auto& [key, ops] : ops_of_stream) {
          if (only_stream >= 0 && key.second != only_stream) continue;
          if (const GpuOp* op = last_launched_before(ops, G.g, launched_before, n.end))
            waits.push_back(op->v);
        }
      }
      std::sort(waits.begin(), waits.end());
      waits.erase(std::unique(waits.begin(), waits.end()), waits.end());
      for (Vertex w : waits) add_edge(w, v, EdgeKind::sync, false, true, 0);
    }

  // Cross-stream event waits recorded by cuda_sync "Wait Event" records.
  for (const auto& e : t.events) {
    if (e.cat != KinetoCat::sync || e.wait_on_event_record_corr < 0 || e.stream < 0) continue;
    if (e.sync_kind.find("Wait") == std::string::npos) continue;
    auto rec = launch_of.find(e.wait_on_event_record_corr);
    auto waiter_call = launch_of.find(e.correlation);
    if (rec == launch_of.end() || waiter_call == launch_of.end()) continue;
    auto src_ops = ops_of_stream.find({e.device, e.wait_on_stream});
    auto dst_ops = ops_of_stream.find({e.device, e.stream});
    if (src_ops == ops_of_stream.end() || dst_ops == ops_of_stream.end()) continue;
    const double rec_t = G.g[rec->second].start, wait_t = G.g[waiter_call->second].start;
    const GpuOp* src = last_launched_before(src_ops->second, G.g, rec_t, 1e300);
    auto it = std::upper_bound(dst_ops->second.begin(), dst_ops->second.end(), wait_t,
                               [](double x, const GpuOp& op) { return x < op.launch; });
    if (src == nullptr || it == dst_ops->second.end()) continue;
    if (G.g[src->v].end <= G.g[it->v].start + kEps)
      add_edge(src->v, it->v, EdgeKind::event_wait, false, false, 0);
  }

  // Inferred cross-stream waits: a GPU op that started well after both its launch and its stream
  // predecessor waited for something; when an op of another stream of the device ended just before
  // it started, that is the cudaStreamWaitEvent the trace did not record (NCCL <-> compute streams).
  {
    std::map<int, std::vector<Vertex>> by_end;  // device -> ops sorted by end
    for (auto& [key, ops] : ops_of_stream)
      for (const auto& op : ops) by_end[key.first].push_back(op.v);
    for (auto& [dev, vs] : by_end)
      std::sort(vs.begin(), vs.end(), [&](Vertex a, Vertex b) { return G.g[a].end < G.g[b].end; });
    constexpr double kUnexplained = 5e-6, kWindow = 20e-6;
    for (auto& [key, ops] : ops_of_stream)
      for (std::size_t k = 0; k < ops.size(); ++k) {
        const Vertex v = ops[k].v;
        const Node& n = G.g[v];
        double explained = ops[k].launch < n.start ? ops[k].launch + launch_latency : n.start;
        if (k > 0) explained = std::max(explained, G.g[ops[k - 1].v].end);
        if (n.start - explained < kUnexplained) continue;
        const auto& ends = by_end[key.first];
        auto it = std::upper_bound(ends.begin(), ends.end(), n.start + kEps,
                                   [&](double x, Vertex o) { return x < G.g[o].end; });
        while (it != ends.begin()) {
          --it;
          const Node& o = G.g[*it];
          if (n.start - o.end > kWindow || o.end <= explained) break;
          if (o.lane != n.lane) {
            add_edge(*it, v, EdgeKind::event_wait, false, false, 0);
            ++G.inferred_waits;
            break;
          }
        }
      }
  }

  // Collective sequence numbers per process group (file order of the kernels by start).
  std::map<std::string, std::vector<Vertex>> colls;
  for (auto& [key, ops] : ops_of_stream)
    for (const auto& op : ops)
      if (G.g[op.v].kind == NodeKind::collective) colls[G.g[op.v].group].push_back(op.v);
  for (auto& [grp, vs] : colls) {
    std::sort(vs.begin(), vs.end(), [&](Vertex a, Vertex b) { return G.g[a].start < G.g[b].start; });
    for (std::size_t k = 0; k < vs.size(); ++k) G.g[vs[k]].group_seq = static_cast<std::int64_t>(k);
  }

  std::vector<int> unused;
  find_steps(ti, cpu_lanes, unused, tid_lane);
}

void Builder::find_steps(int ti, const std::vector<std::vector<Vertex>>& cpu_lanes, const std::vector<int>&,
                         const std::map<std::int64_t, int>& tid_lane) {
  const KinetoTrace& t = *G.traces[static_cast<std::size_t>(ti)];
  const int rank = G.ranks[static_cast<std::size_t>(ti)];
  auto sec = [&](double us) { return (us - G.origin_us) * kUs; };
  std::vector<const KinetoEvent*> anns;
  for (const auto& e : t.events)
    if (e.cat == KinetoCat::user_annotation && e.name.rfind("ProfilerStep#", 0) == 0) anns.push_back(&e);
  std::sort(anns.begin(), anns.end(),
            [](const KinetoEvent* a, const KinetoEvent* b) { return a->ts < b->ts; });
  auto inside = [&](const std::vector<Vertex>& vs, double a, double b, long& first, long& last) {
    auto it = std::lower_bound(vs.begin(), vs.end(), a - kEps,
                               [&](Vertex v, double x) { return G.g[v].start < x; });
    for (; it != vs.end() && G.g[*it].start <= b + kEps; ++it) {
      if (G.g[*it].end > b + kEps) continue;
      if (first < 0 || G.g[*it].start < G.g[static_cast<Vertex>(first)].start) first = static_cast<long>(*it);
      if (last < 0 || G.g[*it].end > G.g[static_cast<Vertex>(last)].end) last = static_cast<long>(*it);
    }
  };
  for (const KinetoEvent* a : anns) {
    Step s;
    s.rank = rank;
    s.name = std::string(a->name);
    s.start = sec(a->ts);
    s.end = sec(a->ts + a->dur);
    if (auto it = tid_lane.find(a->tid); it != tid_lane.end())
      inside(cpu_lanes[static_cast<std::size_t>(it->second)], s.start, s.end, s.first, s.last);
    if (s.first < 0)
      for (const auto& vs : cpu_lanes) inside(vs, s.start, s.end, s.first, s.last);
    G.steps.push_back(std::move(s));
  }
  if (anns.empty()) {
    Step s;
    s.rank = rank;
    s.name = "trace";
    s.whole_trace = true;
    bool any = false;
    for (const auto& e : t.events) {
      if (e.ts < 0) continue;
      const double a = sec(e.ts), b = sec(e.ts + e.dur);
      s.start = any ? std::min(s.start, a) : a;
      s.end = any ? std::max(s.end, b) : b;
      any = true;
    }
    G.steps.push_back(std::move(s));
  }
}

void Builder::match_collectives() {
  // (group, seq) -> nodes of every rank.
  std::map<std::pair<std::string, std::int64_t>, std::vector<Vertex>> by_key;
  for (Vertex v = 0; v < boost::num_vertices(G.g); ++v) {
    const Node& n = G.g[v];
    if (n.kind == NodeKind::collective && n.group_seq >= 0) by_key[{n.group, n.group_seq}].push_back(v);
  }
  long mismatched = 0;
  for (auto& [key, vs] : by_key) {
    if (vs.size() < 2) continue;
    const std::string& op = G.event(G.g[vs.front()]).collective;
    bool same = true;
    for (Vertex v : vs) same = same && G.event(G.g[v]).collective == op;
    if (!same) {
      ++mismatched;
      continue;
    }
    double dmin = 1e300;
    for (Vertex v : vs) dmin = std::min(dmin, G.g[v].end - G.g[v].start);
    for (Vertex v : vs) {
      G.g[v].matched_ranks = static_cast<int>(vs.size());
      G.g[v].body = dmin;  // the transfer itself; the rest was waiting for other ranks
      for (Vertex o : vs)
        if (o != v && G.g[o].start <= G.g[v].end + kEps)
          add_edge(o, v, EdgeKind::collective, true, true, dmin);
    }
    G.matched_collectives += static_cast<long>(vs.size());
  }
  if (mismatched > 0)
    G.notes.push_back(
        std::to_string(mismatched) +
        " collective(s) differ in kind across ranks at the same sequence number and were not joined");
}

// Among v's in-edges that constrain its start (to_end = false) or its end: each gets its intrinsic
// lag capped by the measured slack to `measured` (thread order keeps its whole measured gap: CPU
// work between calls); the one whose reference + lag is latest, and later than `floor`, binds and
// gets the exact measured lag. Returns whether an edge binds.
bool Builder::bind_latest(Vertex v, bool to_end, double measured, double floor) {
  Dag::in_edge_iterator ei, ee;
  Dag::edge_descriptor best{};
  bool have = false;
  double best_t = floor;
  for (boost::tie(ei, ee) = boost::in_edges(v, G.g); ei != ee; ++ei) {
    Edge& e = G.g[*ei];
    if (e.to_end != to_end) continue;
    const double ref = ref_time(boost::source(*ei, G.g), e.from_start);
    const double slack = std::max(0.0, measured - ref);
    e.lag = std::min(e.intrinsic, slack);
    if (!to_end && e.kind == EdgeKind::thread_order) e.lag = slack;
    if (ref + e.lag > best_t) {
      best_t = ref + e.lag;
      best = *ei;
      have = true;
    }
  }
  if (!have) return false;
  Edge& b = G.g[best];
  b.lag = std::max(0.0, measured - ref_time(boost::source(best, G.g), b.from_start));
  b.binding = true;
  return true;
}

// Binding constraint per node: exact measured lag; others their intrinsic minimum (capped by slack).
void Builder::assign_lags() {
  for (Vertex v = 0; v < boost::num_vertices(G.g); ++v) {
    Node& n = G.g[v];
    const double measured_body = n.end - n.start;
    // Start constraints: the latest one binds.
    bind_latest(v, false, n.start, -1e300);
    // End constraints: the body (intrinsic n.body) against end deps.
    // Synchronising calls cost a few microseconds of their own once the GPU work they wait for is
    // done; collectives' n.body is already the transfer time (set when they were matched).
    const double body_intrinsic =
        n.kind == NodeKind::cpu ? std::min(measured_body, 2e-6) : std::min(n.body, measured_body);
    const bool dep_binds = bind_latest(v, true, n.end, n.start + body_intrinsic);
    n.body = dep_binds ? body_intrinsic : measured_body;
  }
}

}  // namespace

ExecGraph build_exec_graph(const std::vector<const KinetoTrace*>& traces) {
  ExecGraph G;
  G.traces = traces;
  long gpu_events = 0;
  bool any_ts = false;
  std::set<int> seen;
  for (const KinetoTrace* t : traces) {
    gpu_events += t->gpu_events;
    int r = t->rank;
    if (!seen.insert(r).second) {
      if (traces.size() > 1)
        throw InputError(t->file, 0, "distributedInfo.rank",
                         "two traces of one job claim rank " + std::to_string(r) +
                             " (give one trace per rank, or use --summary for one trace per job)");
    }
    G.ranks.push_back(r);
    G.world_size = std::max({G.world_size, t->world_size, r + 1});
    for (const auto& e : t->events) {
      if (e.ts < 0) continue;
      G.origin_us = any_ts ? std::min(G.origin_us, e.ts) : e.ts;
      any_ts = true;
    }
  }
  if (gpu_events == 0)
    throw InputError(traces.empty() ? "" : traces.front()->file, 0, "traceEvents",
                     "the trace has no GPU events (kernel, gpu_memcpy, gpu_memset): was it recorded with "
                     "ProfilerActivity.CUDA?");
  Builder b(G);
  for (int i = 0; i < static_cast<int>(traces.size()); ++i) b.build_rank(i);
  b.match_collectives();
  b.assign_lags();
  return G;
}

}  // namespace fleetsim::replay
