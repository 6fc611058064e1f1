// Collective models: names, fabrics, the analytic NCCL-style model, calibrated curves and the
// registry. Readers, the fitter and JSON live in collective_data.cpp.
#include "models/collective/collective_model.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

constexpr std::array<Collective, 6> kAllOps{Collective::all_reduce,     Collective::all_gather,
                                            Collective::reduce_scatter, Collective::all_to_all,
                                            Collective::broadcast,      Collective::send_recv};

std::size_t index(CollectiveProtocol p) {
  return static_cast<std::size_t>(p);
}

/// Per-GPU NIC bandwidth (bytes/s) and NICs used by one node holding `g` ranks.
struct NodeNet {
  double per_gpu_bps;
  double node_bps;
};

NodeNet node_net(const CommFabric& f, int g) {
  const int per_nic = std::max(1, f.gpus_per_nic);
  const int wanted = (g + per_nic - 1) / per_nic;
  const int nics = std::max(1, std::min(std::max(1, f.nics_per_node), wanted));
  const double node = nics * f.inter_gbs * 1e9;
  return {node / std::max(1, g), node};
}

}  // namespace

std::string to_string(Collective op) {
  switch (op) {
    case Collective::all_reduce:
      return "all_reduce";
    case Collective::all_gather:
      return "all_gather";
    case Collective::reduce_scatter:
      return "reduce_scatter";
    case Collective::all_to_all:
      return "all_to_all";
    case Collective::broadcast:
      return "broadcast";
    case Collective::send_recv:
      return "send_recv";
  }
  return "?";
}

std::optional<Collective> parse_collective(std::string_view text) {
  std::string s = lower(trim(text));
  if (auto dot = s.rfind('.'); dot != std::string::npos) s = s.substr(dot + 1);  // CommType.x
  if (s.size() > 5 && s.ends_with("_perf")) s.resize(s.size() - 5);              // nccl-tests binary
  std::string key;
  for (char c : s)
    if (c != '_' && c != '-' && c != ' ') key += c;
  for (Collective op : kAllOps) {
    std::string name;
    for (char c : to_string(op))
      if (c != '_') name += c;
    if (key == name) return op;
  }
  if (key == "alltoallv" || key == "a2a") return Collective::all_to_all;
  if (key == "sendreceive" || key == "p2p" || key == "send" || key == "recv" || key == "isendirecv")
    return Collective::send_recv;
  return std::nullopt;
}

Collective parse_collective(std::string_view text, const std::string& file, long line,
                            const std::string& field) {
  if (auto op = parse_collective(text)) return *op;
  std::vector<std::string> names;
  for (Collective op : kAllOps) names.push_back(to_string(op));
  std::string msg = "unknown collective '" + std::string(text) + "'";
  if (auto best = closest(text, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
  throw InputError(file, line, field, msg + "; valid: " + join(names, ", "));
}

double bus_factor(Collective op, int ranks) {
  const double n = std::max(1, ranks);
  switch (op) {
    case Collective::all_reduce:
      return 2.0 * (n - 1) / n;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all:
      return (n - 1) / n;
    case Collective::broadcast:
    case Collective::send_recv:
      return 1.0;
  }
  return 1.0;
}

std::string to_string(CollectiveProtocol p) {
  switch (p) {
    case CollectiveProtocol::ll:
      return "LL";
    case CollectiveProtocol::ll128:
      return "LL128";
    case CollectiveProtocol::simple:
      return "Simple";
  }
  return "?";
}

CommFabric fabric_for(const GpuSpec& gpu, double nic_gbps, int nics_per_node, int gpus_per_nic,
                      double pcie_gbs) {
  CommFabric f;
  f.system = gpu.name;
  if (gpu.nvlink_gbs > 0) {
    f.intra_gbs = gpu.nvlink_gbs / 2;  // catalog figure sums both directions
    f.intra_latency_s = 0.6e-6;
  } else {
    f.intra_gbs = pcie_gbs;
    f.intra_latency_s = 1.0e-6;  // NCCL hwLat PCI, LL
  }
  f.inter_gbs = nic_gbps / 8;
  f.nics_per_node = std::max(1, nics_per_node);
  f.gpus_per_nic = std::max(1, gpus_per_nic);
  return f;
}

// ---------------------------------------------------------------------------------------------
// Analytic model
// ---------------------------------------------------------------------------------------------

std::optional<double> analytic_seconds(const CollectiveDesc& d, const CommFabric& f,
                                       const AnalyticParams& params, bool tree, CollectiveProtocol p) {
  const int n = std::max(1, d.ranks);
  if (n <= 1) return 0.0;
  const int m = std::clamp(d.nodes, 1, n);
  const int g = (n + m - 1) / m;  // ranks per node
  // NCCL builds trees across nodes; inside one server the ring (NVLink/NVSwitch) is used.
  if (tree && (d.op != Collective::all_reduce || m == 1)) return std::nullopt;
  if (p == CollectiveProtocol::ll128 && !f.ll128) return std::nullopt;
  const ProtocolParams& pp = (tree ? params.tree : params.ring)[index(p)];
  const double intra_bps = f.intra_gbs * 1e9;
  const NodeNet net = node_net(f, g);
  const double lat_intra = f.intra_latency_s * pp.hop_latency_factor;
  const double lat_inter = f.inter_latency_s * pp.hop_latency_factor;
  const double S = std::max(0.0, d.bytes);

  if (tree) {
    // NCCL tree: a chain inside each node, a (double) binary tree across nodes; up then down.
    const double depth = (g - 1) * lat_intra + std::ceil(std::log2(m)) * lat_inter;
    const double bw = m > 1 ? std::min(intra_bps, net.node_bps) : intra_bps;
    return pp.base_latency_s + 2 * depth + bus_factor(d.op, n) * S / (bw * pp.efficiency);
  }
  if (d.op == Collective::all_to_all) {
    // Pairwise exchange: (g-1)/n of the data stays inside the node, (n-g)/n leaves it.
    const double t_in = (g - 1.0) / n * S / intra_bps;
    const double t_out = m > 1 ? (n - g) * 1.0 / n * S / net.per_gpu_bps : 0.0;
    const double lat = (g - 1) * lat_intra + (n - g) * lat_inter;
    return pp.base_latency_s + lat + std::max(t_in, t_out) / pp.efficiency;
  }
  if (d.op == Collective::send_recv) {
    const double bw = m > 1 ? std::min(intra_bps, net.per_gpu_bps * std::max(1, g)) : intra_bps;
    return pp.base_latency_s + (m > 1 ? lat_inter : lat_intra) + S / (bw * pp.efficiency);
  }
  // Ring: every rank forwards bus_factor x S; a ring crossing m nodes uses each node's NICs.
  const int passes = d.op == Collective::all_reduce ? 2 : 1;
  const int inter_hops = m > 1 ? passes * (m - 1) : 0;
  const int intra_hops = passes * (n - 1) - inter_hops;
  const double bw = m > 1 ? std::min(intra_bps, net.node_bps) : intra_bps;
  return pp.base_latency_s + intra_hops * lat_intra + inter_hops * lat_inter +
         bus_factor(d.op, n) * S / (bw * pp.efficiency);
}

CollectivePrediction predict_analytic(const CollectiveDesc& d, const CommFabric& f,
                                      const AnalyticParams& params) {
  if (d.ranks <= 1) return {0.0, "none", "Simple"};
  CollectivePrediction best{std::numeric_limits<double>::infinity(), "", ""};
  for (bool tree : {false, true}) {
    for (CollectiveProtocol p :
         {CollectiveProtocol::ll, CollectiveProtocol::ll128, CollectiveProtocol::simple}) {
      auto t = analytic_seconds(d, f, params, tree, p);
      if (t && *t < best.seconds) {
        const bool p2p = d.op == Collective::all_to_all || d.op == Collective::send_recv;
        best = {*t, tree ? "tree" : (p2p ? "p2p" : "ring"), to_string(p)};
      }
    }
  }
  return best;
}

// ---------------------------------------------------------------------------------------------
// Calibrated curves
// ---------------------------------------------------------------------------------------------

const CollectiveBand& CollectiveCurve::band_for(double bytes) const {
  auto it = std::upper_bound(bands.begin(), bands.end(), bytes,
                             [](double b, const CollectiveBand& band) { return b < band.min_bytes; });
  if (it == bands.begin()) return bands.front();
  return *std::prev(it);
}

namespace {

bool iequal_prefix(std::string_view a, std::string_view b) {  // is b a prefix of a?
  if (b.size() > a.size()) return false;
  for (std::size_t i = 0; i < b.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

}  // namespace

std::string CollectiveCalibration::match_system(std::string_view system) const {
  if (system.empty()) return "";
  const std::string* prefix = nullptr;
  for (const auto& c : curves) {
    if (c.system.empty()) continue;
    if (c.system.size() == system.size() && iequal_prefix(system, c.system)) return c.system;
    if (prefix == nullptr && (iequal_prefix(system, c.system) || iequal_prefix(c.system, system)))
      prefix = &c.system;
  }
  return prefix != nullptr ? *prefix : "";
}

namespace {

struct BandValue {
  double latency_s;
  double sec_per_bus_byte;
};

BandValue value_of(const CollectiveBand& b) {
  return {b.latency_s, 1.0 / (b.busbw_gbs * 1e9)};
}

/// Latency and bus-byte cost for (system, op, nodes) at `ranks`, interpolated between fitted counts:
/// linearly in ranks, or, when the system's node topology gives NVLink rings for all the counts
/// involved (one node), per ring: cost x rings is interpolated and divided by the rings at `ranks`;
/// a count with an NVLink path but no ring (nvlink_chain_only) runs as one chain.
bool same_link(const std::string& curve, const std::string& wanted) {
  return wanted.empty() || curve == wanted;
}

std::optional<BandValue> curve_value(const CollectiveCalibration& cal, const std::string& system,
                                     Collective op, double bytes, int ranks, int nodes,
                                     const std::string& link = "") {
  const CollectiveCurve* below = nullptr;
  const CollectiveCurve* above = nullptr;
  for (const auto& c : cal.curves) {
    if (c.op != op || c.nodes != nodes || c.bands.empty() || c.system != system || !same_link(c.link, link))
      continue;
    if (c.ranks == ranks) return value_of(c.band_for(bytes));
    if (c.ranks < ranks && (below == nullptr || c.ranks > below->ranks)) below = &c;
    if (c.ranks > ranks && (above == nullptr || c.ranks < above->ranks)) above = &c;
  }
  if (below == nullptr && above == nullptr) return std::nullopt;
  // A switched node has one ring at every count: per-ring interpolation is then the plain one.
  const NodeTopology* topo = nullptr;
  if (auto it = cal.node_topology.find(system); nodes == 1 && it != cal.node_topology.end())
    topo = it->second;
  bool per_ring = topo != nullptr && ring_capacity(*topo, ranks) > 0;
  for (const CollectiveCurve* c : {below, above})
    per_ring = per_ring && (c == nullptr || ring_capacity(*topo, c->ranks) > 0);
  const auto scale = [&](const CollectiveCurve* c) {  // bus-byte cost x rings at c's count
    BandValue v = value_of(c->band_for(bytes));
    if (per_ring) v.sec_per_bus_byte *= ring_capacity(*topo, c->ranks);
    return v;
  };
  // No NVLink ring but an NVLink path: NCCL's one-channel chain (node_topology.hpp) moves the
  // buffer over each link once each way, i.e. bus_factor(all_reduce) x one ring's bus bandwidth.
  // One ring's cost comes from the fitted count with the fewest rings (two GPUs on a DGX-1), whose
  // channels carry the whole buffer as the chain does; latency is interpolated as usual.
  const CollectiveCurve* single = nullptr;
  if (topo != nullptr && nvlink_chain_only(*topo, ranks))
    for (const auto& c : cal.curves) {
      if (c.op != op || c.nodes != nodes || c.bands.empty() || c.system != system || !same_link(c.link, link))
        continue;
      const int rings = ring_capacity(*topo, c.ranks);
      if (rings > 0 && (single == nullptr || rings < ring_capacity(*topo, single->ranks))) single = &c;
    }
  BandValue v;
  if (below == nullptr || above == nullptr) {
    v = scale(below != nullptr ? below : above);
  } else {
    const BandValue lo = scale(below), hi = scale(above);
    const double w = static_cast<double>(ranks - below->ranks) / (above->ranks - below->ranks);
    v = BandValue{lo.latency_s + w * (hi.latency_s - lo.latency_s),
                  lo.sec_per_bus_byte + w * (hi.sec_per_bus_byte - lo.sec_per_bus_byte)};
  }
  if (per_ring) v.sec_per_bus_byte /= ring_capacity(*topo, ranks);
  if (single != nullptr)
    v.sec_per_bus_byte = value_of(single->band_for(bytes)).sec_per_bus_byte *
                         ring_capacity(*topo, single->ranks) / bus_factor(Collective::all_reduce, ranks);
  return v;
}

}  // namespace

std::optional<double> CollectiveCalibration::fitted_seconds(const std::string& system, Collective op,
                                                            double bytes, int ranks, int nodes,
                                                            const std::string& link) const {
  const std::string sys = match_system(system);
  if (sys.empty()) return std::nullopt;
  auto v = curve_value(*this, sys, op, bytes, ranks, nodes, link);
  if (!v) return std::nullopt;
  return v->latency_s + bus_factor(op, ranks) * bytes * v->sec_per_bus_byte;
}

// ---------------------------------------------------------------------------------------------
// Models and registry
// ---------------------------------------------------------------------------------------------

CollectiveModelRegistry& collective_models() {
  static CollectiveModelRegistry registry("collective model");
  return registry;
}

namespace {

class NcclDefaultModel final : public CollectiveModel {
 public:
  explicit NcclDefaultModel(AnalyticParams p) : params_(p) {}
  CollectivePrediction predict(const CollectiveDesc& d, const CommFabric& f) const override {
    return predict_analytic(d, f, params_);
  }

 private:
  AnalyticParams params_;
};

class CalibratedModel final : public CollectiveModel {
 public:
  explicit CalibratedModel(std::shared_ptr<const CollectiveCalibration> cal) : cal_(std::move(cal)) {}

  CollectivePrediction predict(const CollectiveDesc& d, const CommFabric& f) const override {
    CollectivePrediction out = predict_analytic(d, f, cal_->analytic);  // labels and fallback
    if (d.ranks <= 1) return out;
    const std::string sys = cal_->match_system(f.system);
    if (sys.empty()) return out;
    const int n = d.ranks;
    const int m = std::clamp(d.nodes, 1, n);
    if (auto t = intra(sys, d.op, d.bytes, n, m, f.link)) {  // measured at this node count
      out.seconds = *t;
      return out;
    }
    if (m == 1) return out;
    // Several nodes, never measured: the calibrated intra-node collective over g ranks and the
    // analytic inter-node traffic over the node's NICs (the same NIC term as "nccl-default", so a
    // calibrated and an uncalibrated system with the same NICs agree once the NIC dominates).
    const int g = (n + m - 1) / m;
    const double t_intra = g > 1 ? intra(sys, d.op, d.bytes, g, 1, f.link).value_or(0.0) : 0.0;
    const NodeNet net = node_net(f, g);
    const ProtocolParams& pp = cal_->analytic.ring[index(CollectiveProtocol::simple)];
    const double lat = f.inter_latency_s * pp.hop_latency_factor;
    double t_inter = 0;
    switch (d.op) {
      case Collective::all_to_all:
        t_inter = (n - g) * 1.0 / n * d.bytes / net.per_gpu_bps + (m - 1) * lat;
        break;
      case Collective::send_recv:
        t_inter = d.bytes / std::min(net.node_bps, f.inter_gbs * 1e9) + lat;
        break;
      case Collective::broadcast:
        t_inter = d.bytes / net.node_bps + (m - 1) * lat;
        break;
      default:
        // NCCL runs one ring over all n ranks (it has no reduce-scatter / all-reduce / all-gather
        // hierarchy without CollNet): every rank forwards bus_factor(n) x bytes, and all of it
        // crosses the node's NICs, which its g ranks share. The intra-node hops are pipelined with
        // the NIC hops, so the slower of the two sets the time, as in the analytic ring.
        t_inter = bus_factor(d.op, n) * d.bytes / (net.node_bps * pp.efficiency) +
                  (d.op == Collective::all_reduce ? 2 : 1) * (m - 1) * lat;
        out.seconds = std::max(t_intra, t_inter);
        out.algorithm = "ring";
        return out;
    }
    out.seconds = t_intra + t_inter;
    out.algorithm = "hierarchical";
    return out;
  }

 private:
  /// Fitted time for (op) on `ranks` over `nodes`, or the system's all-reduce bus bandwidth and
  /// latency applied to another op when that op was never measured.
  std::optional<double> intra(const std::string& sys, Collective op, double bytes, int ranks, int nodes,
                              const std::string& link) const {
    if (auto v = curve_value(*cal_, sys, op, bytes, ranks, nodes, link))
      return v->latency_s + bus_factor(op, ranks) * bytes * v->sec_per_bus_byte;
    if (op == Collective::all_reduce) return std::nullopt;
    if (auto v = curve_value(*cal_, sys, Collective::all_reduce, bytes, ranks, nodes, link))
      return v->latency_s + bus_factor(op, ranks) * bytes * v->sec_per_bus_byte;
    return std::nullopt;
  }

  std::shared_ptr<const CollectiveCalibration> cal_;
};

const CollectiveModelRegistrar kDefault{
    "nccl-default",
    "analytic NCCL-style ring/tree x LL/LL128/Simple model with "
    "NCCL's default latencies; no calibration",
    [](const CollectiveModelParams& p) -> std::unique_ptr<CollectiveModel> {
      return std::make_unique<NcclDefaultModel>(p.calibration ? p.calibration->analytic : AnalyticParams{});
    }};

const CollectiveModelRegistrar kCalibrated{
    "calibrated",
    "piecewise latency + bus-bandwidth curves fitted to nccl-tests results (calibration JSON); "
    "analytic fallback for unmeasured systems",
    [](const CollectiveModelParams& p) -> std::unique_ptr<CollectiveModel> {
      auto cal = p.calibration;
      if (!cal) {
        if (p.calibration_file.empty())
          throw InputError("", 0, "calibration",
                           "the 'calibrated' collective model needs a calibration (JSON from "
                           "fit_collectives / to_json)");
        cal = std::make_shared<const CollectiveCalibration>(load_collective_calibration(p.calibration_file));
      }
      return std::make_unique<CalibratedModel>(std::move(cal));
    }};

}  // namespace

}  // namespace fleetsim
