#include "models/collective/serving_links.hpp"

#include <array>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

constexpr std::array<LinkKind, 4> kKinds{LinkKind::nvswitch, LinkKind::nvlink_pair, LinkKind::pcie_p2p,
                                         LinkKind::pcie_host};

/// The measured system whose curves stand for this GPU: its family (A100, H100 for Hopper).
std::string measured_family(const GpuSpec& gpu) {
  const std::string n = lower(gpu.name);
  if (n.starts_with("a100")) return "A100";
  if (n.starts_with("h100") || n.starts_with("h200") || n.starts_with("h800")) return "H100";
  return "";
}

CommFabric pcie(const GpuSpec& gpu, bool p2p) {
  CommFabric f;
  f.system = gpu.name;
  f.link = to_string(p2p ? LinkKind::pcie_p2p : LinkKind::pcie_host);
  const double link = pcie_x16_gbs(pcie_generation(gpu)) * kPciePayloadShare;
  // Host bounce: every chunk and flag crosses PCIe twice (GPU -> host memory -> GPU).
  f.intra_gbs = p2p ? link : link / 2;
  f.intra_latency_s = p2p ? 1.0e-6 : 2.0e-6;  // NCCL's PCI hop latency (tuning.cc hwLat, LL)
  f.ll128 = false;                            // NCCL enables LL128 on NVLink only
  return f;
}

}  // namespace

std::string to_string(LinkKind k) {
  switch (k) {
    case LinkKind::nvswitch:
      return "nvswitch";
    case LinkKind::nvlink_pair:
      return "nvlink-pair";
    case LinkKind::pcie_p2p:
      return "pcie-p2p";
    case LinkKind::pcie_host:
      return "pcie-host";
  }
  return "?";
}

std::optional<LinkKind> parse_link_kind(std::string_view text) {
  const std::string t = lower(trim(text));
  for (LinkKind k : kKinds)
    if (t == to_string(k)) return k;
  return std::nullopt;
}

LinkKind parse_link_kind(std::string_view text, const std::string& file, long line,
                         const std::string& field) {
  if (auto k = parse_link_kind(text)) return *k;
  std::vector<std::string> names;
  for (LinkKind k : kKinds) names.push_back(to_string(k));
  throw InputError(file, line, field,
                   "unknown link kind '" + std::string(text) + "' (valid: " + join(names, ", ") + ")");
}

LinkKind default_link_kind(const GpuSpec& gpu) {
  if (auto k = parse_link_kind(gpu.link)) return *k;
  return gpu.nvlink_gbs > 0 ? LinkKind::nvswitch : LinkKind::pcie_p2p;
}

int pcie_generation(const GpuSpec& gpu) {
  if (gpu.pcie_gen > 0) return gpu.pcie_gen;
  if (gpu.pcie_gbs >= 40) return 5;
  if (gpu.pcie_gbs >= 20) return 4;
  if (gpu.pcie_gbs > 0) return 3;
  return 4;
}

double pcie_x16_gbs(int generation) {
  switch (generation) {
    case 1:
      return 4.0;  // 2.5 GT/s, 8b/10b
    case 2:
      return 8.0;
    case 3:
      return 15.75;  // 8 GT/s, 128b/130b
    case 4:
      return 31.5;
    case 5:
      return 63.0;
    default:
      return generation > 5 ? 121.0 : 31.5;  // Gen6: 64 GT/s PAM4 with FLIT overhead
  }
}

ReplicaLinks::ReplicaLinks(const GpuSpec& gpu, LinkKind kind,
                           std::shared_ptr<const CollectiveCalibration> measured)
    : kind_(kind), pcie_fabric_(pcie(gpu, true)), measured_(std::move(measured)) {
  const bool nvlink = kind == LinkKind::nvswitch || kind == LinkKind::nvlink_pair;
  if (nvlink && gpu.nvlink_gbs > 0) {
    fabric_ = fabric_for(gpu);
    fabric_.link = to_string(kind);
  } else if (nvlink) {  // an NVLink link kind named for a GPU the catalog gives no NVLink figure
    fabric_ = fabric_for(gpu);
    fabric_.intra_gbs = 150;
    fabric_.link = to_string(kind);
  } else {
    fabric_ = pcie(gpu, kind == LinkKind::pcie_p2p);
  }
  if (!measured_) measured_ = std::make_shared<const CollectiveCalibration>(vidur_link_calibration());
  const std::string family = measured_family(gpu);
  std::string wanted = family.empty() ? gpu.name : family;
  const std::string sys = measured_->match_system(wanted);
  for (const auto& c : measured_->curves)
    if (!sys.empty() && c.system == sys && c.link == fabric_.link && c.nodes == 1 &&
        (c.op == Collective::all_reduce || c.op == Collective::send_recv))
      measured_system_ = sys;
  CollectiveModelParams params;
  params.calibration = measured_;
  calibrated_ = collective_models().create("calibrated", params, "", 0, "collective model");
}

double ReplicaLinks::seconds(Collective op, double bytes, int ranks) const {
  if (ranks <= 1 || bytes <= 0) return 0;
  const CollectiveDesc d{op, bytes, ranks, 1};
  if (!measured_system_.empty()) {
    CommFabric f = fabric_;
    f.system = measured_system_;
    return calibrated_->predict(d, f).seconds;
  }
  const CommFabric& f = kind_ == LinkKind::nvlink_pair && ranks > 2 ? pcie_fabric_ : fabric_;
  return predict_analytic(d, f, measured_->analytic).seconds;
}

std::string ReplicaLinks::source(Collective op, int ranks) const {
  if (!measured_system_.empty()) return "measured " + measured_system_ + " " + fabric_.link;
  const CommFabric& f = kind_ == LinkKind::nvlink_pair && ranks > 2 ? pcie_fabric_ : fabric_;
  return "analytic " + to_string(op) + " on " + f.link + " (" + fmt(f.intra_gbs, 1) + " GB/s, " +
         fmt(f.intra_latency_s * 1e6, 1) + " us a hop)";
}

}  // namespace fleetsim
