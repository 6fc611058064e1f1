// Writers of the replay outputs (see report.hpp).
#include "sim/replay/report.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace fleetsim::replay {
namespace {

nlohmann::json breakdown_json(const Breakdown& b) {
  nlohmann::json j;
  j["step_s"] = b.span;
  j["compute_s"] = b.compute;
  j["communication_s"] = b.communication;
  j["memcpy_memset_s"] = b.memory;
  j["idle_s"] = b.idle;
  j["communication_compute_overlap_s"] = b.overlap;
  j["exposed_communication_s"] = b.exposed_communication;
  j["idle_share"] = b.span > 0 ? b.idle / b.span : 0;
  j["critical_path_s"] = b.critical_path;
  return j;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot write " + path);
  f << text;
  if (!f) throw std::runtime_error("error writing " + path);
}

// JSON string escaping for kernel names.
void escape(std::string& out, std::string_view s) {
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
          out += buf;
        } else {
          out += c;
        }
    }
  }
}

}  // namespace

void write_replay_json(const ReplayReport& r, const std::string& path) {
  const ExecGraph& g = *r.graph;
  nlohmann::json j;
  j["traces"] = nlohmann::json::array();
  for (std::size_t i = 0; i < g.traces.size(); ++i)
    j["traces"].push_back({{"file", g.traces[i]->file},
                           {"rank", g.ranks[i]},
                           {"device", g.traces[i]->device_name(0)},
                           {"events", g.traces[i]->events.size()}});
  j["world_size"] = g.world_size;
  j["ranks_present"] = g.ranks.size();
  j["source_gpu"] = r.retiming->source_gpu;
  j["what_if"] = r.what_if->describe();
  if (r.cluster != nullptr) {
    auto net = [](const ClusterSpec& c) {
      return nlohmann::json{{"nic_gbps", c.network.nic_gbps},
                            {"intra_node_gbps", c.network.intra_node_gbps},
                            {"intra_node", to_string(c.network.intra_node)},
                            {"topology", to_string(c.network.topology)}};
    };
    const ClusterSpec& c = r.cluster->cluster;
    j["platform"] = {{"source", r.cluster->source},
                     {"nodes", c.nodes.size()},
                     {"gpus", c.total_gpus()},
                     {"gpu", c.pools.empty() ? std::string() : c.pools.front().gpu},
                     {"ranks_placed", r.cluster->ranks},
                     {"network", net(c)},
                     {"traced_network", net(r.cluster->traced)}};
  }
  j["baseline"] = r.what_if->baseline();
  j["graph"] = {{"nodes", boost::num_vertices(g.g)},
                {"edges", boost::num_edges(g.g)},
                {"lanes", g.lanes.size()},
                {"collectives_joined_across_ranks", g.matched_collectives},
                {"inferred_cross_stream_waits", g.inferred_waits}};
  j["steps"] = nlohmann::json::array();
  double sum_m = 0, sum_p = 0;
  for (const auto& s : r.steps) {
    nlohmann::json sj;
    sj["rank"] = s.rank;
    sj["step"] = s.name;
    sj["measured_s"] = s.measured;
    sj["predicted_s"] = s.predicted;
    sj["measured_end_s"] = s.measured_end;
    sj["predicted_end_s"] = s.predicted_end;
    sj["error_pct"] = s.measured > 0 ? 100.0 * (s.predicted - s.measured) / s.measured : 0.0;
    sj["measured"] = breakdown_json(s.measured_breakdown);
    sj["predicted"] = breakdown_json(s.predicted_breakdown);
    j["steps"].push_back(std::move(sj));
    sum_m += s.measured;
    sum_p += s.predicted;
  }
  j["total"] = {{"measured_s", sum_m}, {"predicted_s", sum_p}, {"speedup", sum_p > 0 ? sum_m / sum_p : 0.0}};
  j["notes"] = r.notes;
  j["timing_s"] = {{"parse", r.parse_s}, {"build", r.build_s}, {"simulate", r.simulate_s}};
  j["simgrid_ptasks"] = r.executions;
  write_text(path, j.dump(2) + "\n");
}

void write_kernel_classes_csv(const ReplayReport& r, const std::string& path) {
  const ExecGraph& g = *r.graph;
  std::vector<long> count(kKernelClasses, 0);
  std::vector<double> meas(kKernelClasses, 0), pred(kKernelClasses, 0);
  double total = 0;
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
    const Node& n = g.g[v];
    if (n.kind == NodeKind::cpu) continue;
    const auto c = static_cast<std::size_t>(n.cls);
    ++count[c];
    meas[c] += r.measured->end[v] - r.measured->start[v];
    pred[c] += r.predicted->end[v] - r.predicted->start[v];
    total += r.measured->end[v] - r.measured->start[v];
  }
  std::string out = "class,kernels,measured_s,predicted_s,measured_share,speedup\n";
  for (int c = 0; c < kKernelClasses; ++c) {
    const auto ci = static_cast<std::size_t>(c);
    if (static_cast<KernelClass>(c) == KernelClass::cpu) continue;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s,%ld,%.9g,%.9g,%.6f,%.6f\n",
                  to_string(static_cast<KernelClass>(c)).c_str(), count[ci], meas[ci], pred[ci],
                  total > 0 ? meas[ci] / total : 0.0, pred[ci] > 0 ? meas[ci] / pred[ci] : 0.0);
    out += buf;
  }
  write_text(path, out);
}

void write_timeline(const ReplayReport& r, const std::string& path) {
  const ExecGraph& g = *r.graph;
  std::string out;
  out.reserve(boost::num_vertices(g.g) * 160 + 4096);
  out += "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  bool first = true;
  char buf[256];
  for (std::size_t l = 0; l < g.lanes.size(); ++l) {
    const Lane& lane = g.lanes[l];
    std::snprintf(buf, sizeof buf,
                  "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%zu,\"args\":{\"name\":\"",
                  first ? "" : ",\n", lane.rank, l);
    out += buf;
    escape(out, lane.gpu ? "gpu " + std::to_string(lane.device) + " stream " + std::to_string(lane.id)
                         : "cpu thread " + std::to_string(lane.id));
    out += "\"}}";
    first = false;
  }
  for (int rank : g.ranks) {
    std::snprintf(
        buf, sizeof buf,
        ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"args\":{\"name\":\"rank %d (replayed)\"}}",
        rank, rank);
    out += buf;
  }
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v) {
    const Node& n = g.g[v];
    const double ts = r.predicted->start[v] * 1e6, dur = (r.predicted->end[v] - r.predicted->start[v]) * 1e6;
    std::snprintf(
        buf, sizeof buf,
        ",\n{\"ph\":\"X\",\"pid\":%d,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f,\"cat\":\"%s\",\"name\":\"", n.rank,
        n.lane, ts, std::max(0.0, dur), to_string(n.cls).c_str());
    out += buf;
    const std::string_view name = g.event(n).name;
    escape(out, name.substr(0, 200));
    std::snprintf(buf, sizeof buf, "\",\"args\":{\"measured_ts_us\":%.3f,\"measured_dur_us\":%.3f}}",
                  r.measured->start[v] * 1e6, (r.measured->end[v] - r.measured->start[v]) * 1e6);
    out += buf;
  }
  out += "\n]}\n";
  write_text(path, out);
}

std::string format_table(const ReplayReport& r) {
  std::string out;
  char buf[256];
  std::snprintf(buf, sizeof buf, "%-6s %-22s %14s %14s %9s %8s %10s\n", "rank", "step", "measured_ms",
                "predicted_ms", "diff_%", "idle_%", "exp_comm_%");
  out += buf;
  for (const auto& s : r.steps) {
    const auto& b = s.predicted_breakdown;
    std::snprintf(buf, sizeof buf, "%-6d %-22s %14.3f %14.3f %+9.2f %8.1f %10.1f\n", s.rank,
                  s.name.substr(0, 22).c_str(), s.measured * 1e3, s.predicted * 1e3,
                  s.measured > 0 ? 100.0 * (s.predicted - s.measured) / s.measured : 0.0,
                  b.span > 0 ? 100.0 * b.idle / b.span : 0.0,
                  b.span > 0 ? 100.0 * b.exposed_communication / b.span : 0.0);
    out += buf;
  }
  return out;
}

}  // namespace fleetsim::replay
