#pragma once
// The links between the GPUs of one serving replica (tensor- and expert-parallel collectives), by
// kind, and the per-call time of a collective on them (sim/serving/README.md, "Tensor and expert
// parallelism"):
//  - nvswitch, nvlink-pair: fitted on Vidur's measured NCCL collectives of A100 and H100 servers
//    (../shared/data/serving/vidur-profiling/network, `fleetsim calibrate fit --collective-fit
//    regimes`; the fitted bands are built in, vidur_links.cpp); an NVLink GPU of another family
//    gets the analytic NCCL model on its catalog NVLink figure.
//  - pcie-p2p, pcie-host: no measurements; the analytic NCCL model (ring, LL or Simple: NCCL enables
//    LL128 on NVLink only) on a link derived from the PCIe generation: x16 lanes at the generation's
//    rate, 0.86 of it payload (256-byte TLPs after header, sequence number, LCRC, framing and
//    flow-control packets; Gen5 x16 RTX PRO 6000 hosts measure 53-56 GB/s of 63 with P2P writes),
//    NCCL's PCI hop latency (1 us). Without P2P (pcie-host) NCCL's SHM transport stages every chunk
//    and every flag in host memory: each crosses PCIe twice, so half the bandwidth and twice the hop
//    latency.
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"

namespace fleetsim {

enum class LinkKind { nvswitch, nvlink_pair, pcie_p2p, pcie_host };

std::string to_string(LinkKind k);  ///< "nvswitch", "nvlink-pair", "pcie-p2p", "pcie-host"
std::optional<LinkKind> parse_link_kind(std::string_view text);
/// Like parse_link_kind but raises InputError(file, line, field) listing the valid names.
LinkKind parse_link_kind(std::string_view text, const std::string& file, long line, const std::string& field);

/// The catalog's link kind for a GPU (GpuSpec::link when set; else nvswitch with NVLink, pcie-p2p
/// without).
LinkKind default_link_kind(const GpuSpec& gpu);

/// PCIe generation of a GPU's host link (GpuSpec::pcie_gen; else from pcie_gbs, NCCL's topology
/// figure: 48 GB/s Gen5, 24 GB/s Gen4; else 4).
int pcie_generation(const GpuSpec& gpu);
/// One direction of an x16 link of that generation, GB/s (Gen3 15.75, Gen4 31.5, Gen5 63, Gen6 121).
double pcie_x16_gbs(int generation);
/// Payload share of the raw PCIe rate (see the header comment).
inline constexpr double kPciePayloadShare = 0.86;

/// Vidur's collectives fitted by regime (nodes = 1): the built-in measured curves.
CollectiveCalibration vidur_link_calibration();

/// Per-call collective times between the GPUs of one replica.
class ReplicaLinks {
 public:
  /// `measured` overrides the built-in curves (a calibration with `link` labels); null = built-in.
  ReplicaLinks(const GpuSpec& gpu, LinkKind kind,
               std::shared_ptr<const CollectiveCalibration> measured = nullptr);
  /// Seconds for one call of `op` moving `bytes` (nccl-tests size: the whole buffer) among `ranks`
  /// GPUs of one server; 0 for one rank.
  double seconds(Collective op, double bytes, int ranks) const;
  LinkKind kind() const { return kind_; }
  /// The fabric the analytic model uses (measured curves apply where their system and link match).
  const CommFabric& fabric() const { return fabric_; }
  /// Where a call among `ranks` GPUs is priced from: "measured A100 nvswitch" or "analytic ...".
  std::string source(Collective op, int ranks) const;

 private:
  LinkKind kind_;
  CommFabric fabric_;       ///< the link for ranks within one NVLink island or PCIe
  CommFabric pcie_fabric_;  ///< nvlink-pair beyond 2 GPUs: pairs joined over PCIe (P2P)
  std::shared_ptr<const CollectiveCalibration> measured_;
  std::string measured_system_;  ///< "" when no measured curve fits this GPU and link
  std::unique_ptr<CollectiveModel> calibrated_;
};

}  // namespace fleetsim
