// What-if re-timing and the SimGrid replay (see replay.hpp).
#include "sim/replay/replay.hpp"

#include <simgrid/Exception.hpp>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "models/hardware/gpu_catalog.hpp"
#include "models/kernel/kernel_model.hpp"
#include "sim/platform/simgrid_engine.hpp"
#include "sim/replay/op_index.hpp"
#include "sim/replay/replay_network.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::replay {
namespace {

namespace sg4 = simgrid::s4u;

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

double parse_number(const std::string& key, const std::string& value) {
  const std::string l = lower(value);
  if (l == "inf" || l == "infinity") return std::numeric_limits<double>::infinity();
  try {
    std::size_t pos = 0;
    const double v = std::stod(value, &pos);
    if (pos != value.size() || !(v > 0)) throw std::invalid_argument("");
    return v;
  } catch (...) {
    throw InputError("--set", 0, key, "expected a positive number (or inf), got '" + value + "'");
  }
}

}  // namespace

bool WhatIf::baseline() const {
  bool plain = gpu.empty() && nic_gbps == 0 && intra_node_gbps == 0 && launch_overhead_scale == 1;
  for (double s : speedup) plain = plain && s == 1;
  return plain;
}

void WhatIf::set(const std::string& kv) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos) throw InputError("--set", 0, kv, "expected KEY=VALUE");
  const std::string key = kv.substr(0, eq), value = kv.substr(eq + 1);
  static const char* kValid =
      "network.nic_gbps, network.intra_node_gbps, speedup.gemm, speedup.attention, speedup.elementwise, "
      "speedup.communication, speedup.memcpy, speedup.other, launch_overhead_scale";
  if (key == "network.nic_gbps") {
    nic_gbps = parse_number(key, value);
  } else if (key == "network.intra_node_gbps") {
    intra_node_gbps = parse_number(key, value);
  } else if (key == "launch_overhead_scale") {
    launch_overhead_scale = parse_number(key, value);
    if (std::isinf(launch_overhead_scale)) throw InputError("--set", 0, key, "must be finite");
  } else if (key.rfind("speedup.", 0) == 0) {
    const std::string cls = key.substr(8);
    const double v = parse_number(key, value);
    bool found = false;
    for (int c = 0; c < kKernelClasses; ++c) {
      const auto kc = static_cast<KernelClass>(c);
      if (kc == KernelClass::cpu || kc == KernelClass::memset) continue;
      if (to_string(kc) == cls) {
        speedup[static_cast<std::size_t>(c)] = v;
        if (kc == KernelClass::memcpy) speedup[static_cast<std::size_t>(KernelClass::memset)] = v;
        found = true;
      }
    }
    if (!found) throw InputError("--set", 0, key, std::string("unknown kernel class; valid keys: ") + kValid);
  } else {
    throw InputError("--set", 0, key, std::string("unknown replay key; valid keys: ") + kValid);
  }
}

std::map<std::string, std::string> WhatIf::describe() const {
  std::map<std::string, std::string> m;
  if (!gpu.empty()) m["gpu"] = gpu;
  if (!scenario.empty()) m["scenario"] = scenario;
  if (nic_gbps > 0) m["network.nic_gbps"] = std::to_string(nic_gbps);
  if (intra_node_gbps > 0) m["network.intra_node_gbps"] = std::to_string(intra_node_gbps);
  if (launch_overhead_scale != 1) m["launch_overhead_scale"] = std::to_string(launch_overhead_scale);
  for (int c = 0; c < kKernelClasses; ++c) {
    const auto kc = static_cast<KernelClass>(c);
    if (kc == KernelClass::memset || kc == KernelClass::cpu) continue;
    const double s = speedup[static_cast<std::size_t>(c)];
    if (s != 1) m["speedup." + to_string(kc)] = std::isinf(s) ? "inf" : std::to_string(s);
  }
  return m;
}

Retiming retime(const ExecGraph& g, const WhatIf& w) {
  Retiming r;
  const std::size_t n = boost::num_vertices(g.g);
  r.factor.assign(n, 1.0);
  const GpuSpec* src = traced_gpu(g, w.source_gpu);
  r.source_gpu = src != nullptr ? src->name : traced_device_name(g);
  const GpuSpec* dst = nullptr;
  if (!w.gpu.empty()) {
    dst = &gpu_spec(w.gpu, "--gpu");
    if (src == nullptr)
      throw InputError(g.traces.front()->file, 0, "deviceProperties",
                       "the traced GPU '" + r.source_gpu +
                           "' is not in the catalog; name it with --source-gpu TYPE to use --gpu");
    r.target_gpu = dst->name;
  }
  std::optional<OpIndex> ops;  // only a --gpu what-if needs the shapes
  if (dst != nullptr) ops.emplace(g);
  for (std::size_t v = 0; v < n; ++v) {
    const Node& node = g.g[v];
    double f = 1;
    if (node.kind == NodeKind::cpu) {
      f = w.launch_overhead_scale;
    } else if (node.kind == NodeKind::collective) {
      f = 1;  // the transfer is simulated on the platform's network (sim/replay/replay_network.hpp)
    } else if (dst != nullptr) {
      std::optional<KernelDesc> shape;
      if (node.cls == KernelClass::gemm) shape = ops->gemm_shape(v);
      if (shape && roofline_seconds(*shape, *src) > 0 && roofline_seconds(*shape, *dst) > 0) {
        f = roofline_seconds(*shape, *dst) / roofline_seconds(*shape, *src);
        ++r.by_kernel_model;
      } else {
        f = spec_ratio(spec_scale(node, g.event(node)), *src, *dst);
        ++r.by_spec_ratio;
      }
    }
    const double s = w.speedup[static_cast<std::size_t>(node.cls)];
    r.factor[v] = std::isinf(s) ? 0.0 : f / s;
  }
  if (dst != nullptr)
    r.notes.push_back(
        "--gpu " + r.target_gpu + " (traced: " + r.source_gpu + "): " + std::to_string(r.by_kernel_model) +
        " GEMM kernels re-timed by the roofline kernel model from the launching op's input shapes "
        "(ratio of predictions, times the measured duration); " +
        std::to_string(r.by_spec_ratio) +
        " GPU operations without shapes by the spec ratio (GEMM/attention: tensor or FP32 peak; "
        "others: memory bandwidth; host copies unchanged)");
  return r;
}

Times measured_times(const ExecGraph& g) {
  Times t;
  const std::size_t n = boost::num_vertices(g.g);
  t.start.resize(n);
  t.end.resize(n);
  t.start_by.assign(n, Cause{});
  t.end_by.assign(n, Cause{});
  for (std::size_t v = 0; v < n; ++v) {
    t.start[v] = g.g[v].start;
    t.end[v] = g.g[v].end;
    Dag::in_edge_iterator ei, ee;
    for (boost::tie(ei, ee) = boost::in_edges(v, g.g); ei != ee; ++ei) {
      const Edge& e = g.g[*ei];
      if (!e.binding) continue;
      Cause c;
      c.src = static_cast<long>(boost::source(*ei, g.g));
      c.kind = e.kind;
      c.from_start = e.from_start;
      if (e.to_end)
        t.end_by[v] = c;
      else
        t.start_by[v] = c;
    }
  }
  return t;
}

namespace {

class Replayer {
 public:
  Replayer(const ExecGraph& g, const Retiming& r, const WhatIf& w) : g_(g), r_(r), w_(w) {}

  void run(const ReplayCluster& cluster, ReplayRun& out) {
    const std::size_t n = boost::num_vertices(g_.g);
    times_.start.assign(n, 0);
    times_.end.assign(n, 0);
    times_.start_by.assign(n, Cause{});
    times_.end_by.assign(n, Cause{});
    start_pending_.assign(n, 0);
    end_pending_.assign(n, 0);
    start_lb_.assign(n, 0);
    end_lb_.assign(n, 0);
    body_done_.assign(n, 0);
    for (std::size_t v = 0; v < n; ++v) {
      Dag::in_edge_iterator ei, ee;
      for (boost::tie(ei, ee) = boost::in_edges(v, g_.g); ei != ee; ++ei)
        if (!dropped(g_.g[*ei], v)) ++(g_.g[*ei].to_end ? end_pending_[v] : start_pending_[v]);
      if (start_pending_[v] == 0) push(std::max(0.0, g_.g[v].start), v, Kind::start);
    }
    network_ = std::make_unique<ReplayNetwork>(g_, cluster, r_.factor);
    for (std::size_t v = 0; v < n; ++v) end_pending_[v] += network_->waits(v) ? 1 : 0;  // its transfer
    finished_.assign(n, 0);
    sg4::Actor::create("replay", network_->controller(), [this] { loop(); });
    sg4::Engine::get_instance()->run();
    long unfinished = 0;
    for (std::size_t v = 0; v < n; ++v) unfinished += finished_[v] ? 0 : 1;
    if (unfinished > 0)
      throw std::runtime_error("replay: " + std::to_string(unfinished) +
                               " nodes never became ready (a dependency cycle in the execution graph)");
    out.times = std::move(times_);
    out.sim_seconds = sg4::Engine::get_clock();
    out.executions = network_->ptasks();
    out.notes = cluster.notes;
    for (auto& note : network_->notes()) out.notes.push_back(std::move(note));
  }

 private:
  enum class Kind { start, body, finish, transfer };  // transfer: v = group index
  struct Timer {
    double t;
    std::size_t seq;
    std::size_t v;
    Kind kind;
    bool operator>(const Timer& o) const { return t > o.t || (t == o.t && seq > o.seq); }
  };

  void push(double t, std::size_t v, Kind k) { timers_.push({t, seq_++, v, k}); }

  void loop() {
    for (;;) {
      const double now = sg4::Engine::get_clock();
      while (!timers_.empty() && timers_.top().t <= now + 1e-12) {
        const Timer t = timers_.top();
        timers_.pop();
        handle(t);
      }
      if (timers_.empty() && inflight_.empty()) break;
      if (inflight_.empty()) {
        sg4::this_actor::sleep_until(timers_.top().t);
        continue;
      }
      const double timeout = timers_.empty() ? -1.0 : std::max(0.0, timers_.top().t - now);
      ssize_t idx = -1;
      try {
        idx = sg4::Exec::wait_any_for(inflight_, timeout);
      } catch (const simgrid::TimeoutException&) {
        idx = -1;
      }
      if (idx >= 0) {
        const auto i = static_cast<std::size_t>(idx);
        const long k = owner_[i];
        inflight_[i] = inflight_.back();
        owner_[i] = owner_.back();
        inflight_.pop_back();
        owner_.pop_back();
        transfer_done(k, sg4::Engine::get_clock());
      }
    }
  }

  void handle(const Timer& t) {
    switch (t.kind) {
      case Kind::start:
        start(t.v, t.t);
        break;
      case Kind::body:
        body_done(t.v, t.t);
        break;
      case Kind::finish:
        finish(t.v, t.t);
        break;
      case Kind::transfer:
        transfer_done(static_cast<long>(t.v), t.t);
        break;
    }
  }

  // A synchronising call made asynchronous (Retiming::unsync) no longer waits for its GPU work.
  bool dropped(const Edge& e, std::size_t target) const {
    return e.kind == EdgeKind::sync && !r_.unsync.empty() && r_.unsync[target] != 0;
  }

  double edge_lag(const Edge& e, std::size_t target) const {
    if (e.kind == EdgeKind::thread_order && e.binding)
      return e.lag * w_.launch_overhead_scale * (r_.gap_scale.empty() ? 1.0 : r_.gap_scale[target]);
    if (e.kind == EdgeKind::collective) return e.lag * r_.factor[target];
    return e.lag;
  }

  void notify(std::size_t v, bool from_start, double t) {
    Dag::out_edge_iterator oi, oe;
    for (boost::tie(oi, oe) = boost::out_edges(v, g_.g); oi != oe; ++oi) {
      const Edge& e = g_.g[*oi];
      const std::size_t m = boost::target(*oi, g_.g);
      if (e.from_start != from_start || dropped(e, m)) continue;
      const double val = t + edge_lag(e, m);
      const Cause c{static_cast<long>(v), e.kind, e.from_start};
      if (e.to_end) {
        // A collective waiting for its simulated transfer: the transfer's end replaces the lags.
        if (val >= end_lb_[m] && !(e.kind == EdgeKind::collective && network_->waits(m))) {
          end_lb_[m] = val;
          times_.end_by[m] = c;
        }
        if (--end_pending_[m] == 0 && body_done_[m]) push(std::max(end_lb_[m], t), m, Kind::finish);
      } else {
        if (val >= start_lb_[m]) {
          start_lb_[m] = val;
          times_.start_by[m] = c;
        }
        if (--start_pending_[m] == 0) push(std::max(start_lb_[m], t), m, Kind::start);
      }
    }
  }

  void start(std::size_t v, double t) {
    times_.start[v] = t;
    notify(v, true, t);
    const Node& n = g_.g[v];
    const double dur = network_->waits(v) ? 0.0 : n.body * r_.factor[v];
    push(t + std::max(0.0, dur), v, Kind::body);
    const long k = network_->group_of(v);
    if (k < 0) return;
    const ReplayNetwork::Arrival a = network_->arrive(k, v, t);
    if (a.ptask != nullptr) {
      inflight_.push_back(a.ptask);
      owner_.push_back(k);
    } else if (a.timed_end) {
      push(*a.timed_end, static_cast<std::size_t>(k), Kind::transfer);
    }
  }

  void transfer_done(long k, double t) {
    // The last rank to arrive started the transfer: the others waited for it (from its start),
    // its own kernel ends by its transfer (its body).
    const std::size_t last = network_->last_arrival(k);
    for (const auto& [m, val] : network_->transfer_done(k, t)) {
      if (val >= end_lb_[m]) {
        end_lb_[m] = val;
        times_.end_by[m] = m == last ? Cause{} : Cause{static_cast<long>(last), EdgeKind::collective, true};
      }
      if (--end_pending_[m] == 0 && body_done_[m]) push(std::max(end_lb_[m], t), m, Kind::finish);
    }
  }

  void body_done(std::size_t v, double t) {
    body_done_[v] = 1;
    if (t >= end_lb_[v]) {
      end_lb_[v] = t;
      times_.end_by[v] = Cause{};
    }
    if (end_pending_[v] == 0) push(std::max(end_lb_[v], t), v, Kind::finish);
  }

  void finish(std::size_t v, double t) {
    times_.end[v] = t;
    finished_[v] = 1;
    notify(v, false, t);
  }

  const ExecGraph& g_;
  const Retiming& r_;
  const WhatIf& w_;
  Times times_;
  std::vector<int> start_pending_, end_pending_;
  std::vector<double> start_lb_, end_lb_;
  std::vector<char> body_done_, finished_;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::size_t seq_ = 0;
  std::unique_ptr<ReplayNetwork> network_;
  std::vector<sg4::ExecPtr> inflight_;  ///< collective ptasks in flight
  std::vector<long> owner_;             ///< their groups
};

}  // namespace

ReplayRun simulate(const ExecGraph& g, const Retiming& r, const WhatIf& w, const ReplayCluster& c) {
  auto engine = start_simgrid({.ptasks = true});  // collectives are parallel tasks
  ReplayRun out;
  Replayer rep(g, r, w);
  rep.run(c, out);
  return out;
}

}  // namespace fleetsim::replay
