#pragma once
// Collective communication models: how long an NCCL collective (all-reduce, all-gather, ...) takes
// on `ranks` GPUs spread over `nodes` servers.
//
// Two models, registered in collective_models():
//  - "nccl-default": an analytic NCCL-style model. For each algorithm (ring; tree for all-reduce) and
//    protocol (LL, LL128, Simple) the time is latency + bus bytes / (bandwidth x efficiency); the
//    fastest pair wins. Intra-node (NVLink/NVSwitch/PCIe) and inter-node (NIC, per rail) terms are
//    separate, so a multi-node collective is hierarchical: ring bandwidth is bounded by the node's
//    NICs, tree latency grows with log2(nodes).
//  - "calibrated": per (system, op, ranks) piecewise latency + bus-bandwidth curves fitted by
//    fit_collectives() to measured nccl-tests rows; counts between fitted counts are interpolated,
//    other ops on a calibrated system reuse its all-reduce bus bandwidth, an unmeasured multi-node
//    collective takes the slower of the calibrated intra-node part and the analytic ring's traffic
//    over the node's NICs (all-reduce, all-gather, reduce-scatter; all-to-all, broadcast and
//    send/recv add the two), and systems it has never seen fall back to "nccl-default".
//
// Readers turn nccl-tests output (its stdout table, or the LUT CSV files of shared/data) and aicb
// Megatron collective logs into CollectiveSample rows.
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/node_topology.hpp"
#include "workloads/base/registry.hpp"

namespace fleetsim {

enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, send_recv };

std::string to_string(Collective op);
/// Accepts "all_reduce", "allreduce", "all-reduce", "CommType.all_reduce", "all_reduce_perf",
/// "alltoall", "sendrecv", ... (case-insensitive); nullopt if unknown.
std::optional<Collective> parse_collective(std::string_view text);
/// Like parse_collective but raises InputError(file, line, field) listing valid names.
Collective parse_collective(std::string_view text, const std::string& file, long line,
                            const std::string& field);
/// nccl-tests bus-bandwidth factor: busbw = algbw x factor. all_reduce 2(n-1)/n; all_gather,
/// reduce_scatter and all_to_all (n-1)/n; broadcast and send_recv 1.
double bus_factor(Collective op, int ranks);

enum class CollectiveProtocol { ll, ll128, simple };
std::string to_string(CollectiveProtocol p);  ///< "LL", "LL128", "Simple"

/// The network a collective runs on.
struct CommFabric {
  std::string system;               ///< GPU/system name used to look up a calibration ("A100")
  std::string link;                 ///< link kind for a calibration lookup ("nvswitch", ...; "" = any)
  double intra_gbs = 150;           ///< per-GPU one-direction intra-node bandwidth, GB/s
  double intra_latency_s = 0.6e-6;  ///< per-hop intra-node latency (NCCL NVLink LL figure)
  double inter_gbs = 25;            ///< one NIC's bandwidth, GB/s (200 Gb/s)
  double inter_latency_s = 2.7e-6;  ///< per-hop inter-node latency (NCCL network LL figure)
  int nics_per_node = 1;
  int gpus_per_nic = 1;  ///< rail-optimised: GPUs sharing one NIC
  bool ll128 = true;     ///< NCCL enables LL128 on NVLink only: false for PCIe links
};

/// Fabric from catalog figures: NVLink (nvlink_gbs is both directions summed, so half of it per
/// direction) or PCIe (`pcie_gbs`) when the GPU has no NVLink; `nic_gbps` in Gbit/s per NIC.
CommFabric fabric_for(const GpuSpec& gpu, double nic_gbps = 200, int nics_per_node = 1, int gpus_per_nic = 1,
                      double pcie_gbs = 24);

struct CollectiveDesc {
  Collective op = Collective::all_reduce;
  double bytes = 0;  ///< message size per rank as nccl-tests reports it ("size")
  int ranks = 1;
  int nodes = 1;  ///< ranks are spread evenly over nodes
};

struct CollectivePrediction {
  double seconds = 0;
  std::string algorithm;  ///< "ring", "tree", "none" (one rank)
  std::string protocol;   ///< "LL", "LL128", "Simple"
};

/// One protocol's constants for one algorithm (analytic model). Latency of a collective =
/// base_latency_s + hops x (fabric hop latency x hop_latency_factor); bandwidth = link x efficiency.
struct ProtocolParams {
  double base_latency_s = 0;
  double hop_latency_factor = 1;
  double efficiency = 1;
};

/// Analytic constants, indexed by CollectiveProtocol. Defaults follow NCCL's tuning tables
/// (src/graph/tuning.cc: baseLat, hwLat NVLink/NET ratios, LL 1/2 and LL128 120/128 payload) with
/// an extra achievable-bandwidth factor so that Simple ring busbw is ~80% of the link figure.
struct AnalyticParams {
  std::array<ProtocolParams, 3> ring{{{6.6e-6, 1.0, 0.40}, {14.0e-6, 3.2, 0.74}, {8.4e-6, 5.7, 0.80}}};
  std::array<ProtocolParams, 3> tree{{{6.8e-6, 1.0, 0.36}, {14.0e-6, 2.1, 0.67}, {8.4e-6, 6.7, 0.72}}};
};

/// One size band of a fitted curve: time = latency_s + bus_factor x bytes / (busbw_gbs x 1e9).
struct CollectiveBand {
  double min_bytes = 0;  ///< smallest sample size in the band (inclusive)
  double max_bytes = 0;  ///< largest sample size in the band (inclusive)
  double latency_s = 0;
  double busbw_gbs = 0;
  int samples = 0;
  std::string protocol;  ///< the NCCL protocol regime a regime fit labels the band with ("" if none)
};

/// Measured behaviour of one (system, op, ranks, nodes): bands sorted by size, contiguous.
struct CollectiveCurve {
  std::string system;
  std::string link;  ///< link kind the curve was measured on ("" = not recorded)
  Collective op = Collective::all_reduce;
  int ranks = 0;
  int nodes = 1;
  int samples = 0;
  std::vector<CollectiveBand> bands;
  /// Band used for `bytes` (the first below its range, the last above it).
  const CollectiveBand& band_for(double bytes) const;
};

struct CollectiveCalibration {
  AnalyticParams analytic;
  std::vector<CollectiveCurve> curves;
  /// Node topology of a system's servers (`calibrate fit --node-topology SYSTEM=NAME`): between
  /// measured GPU counts the bus bandwidth is interpolated per NVLink ring
  /// (models/hardware/node_topology.hpp).
  std::map<std::string, const NodeTopology*> node_topology;  ///< values never null
  /// Systems with at least one curve (case-insensitive match, also by prefix: "A100-80GB" uses "A100").
  std::string match_system(std::string_view system) const;
  /// Fitted time on a calibrated system; interpolates between fitted rank counts (latency and
  /// 1/busbw linear in ranks, clamped outside; 1/busbw per ring when the system's node topology is
  /// known and both counts have NVLink rings); nullopt if (system, op, nodes) has no curve.
  /// `link` (a link kind, "" = any) restricts the curves to those measured on that link.
  std::optional<double> fitted_seconds(const std::string& system, Collective op, double bytes, int ranks,
                                       int nodes = 1, const std::string& link = "") const;
};

struct CollectiveSample {
  std::string file;
  long line = 0;
  std::string system;  ///< e.g. "A100" (from the directory name, the device line, or the caller)
  Collective op = Collective::all_reduce;
  double bytes = 0;
  int ranks = 0;
  int nodes = 1;
  double seconds = 0;
  std::string link;  ///< link kind ("nvswitch", "nvlink-pair", ...; "" = not recorded)
};

/// nccl-tests results: either the LUT CSV (`size(B),count,type,time(ns),busbw(GB/s),...`, ranks
/// from "GPU<n>" in the file name, out-of-place time, all_reduce) or nccl-tests stdout (the
/// `#  size count type redop root time algbw busbw #wrong ...` table; ranks from the "# Rank"
/// device lines, op from the "*_perf" binary name, else all_reduce). `system` overrides the
/// detected system ("A100" from a "nccl-allreduce-a100" directory or an "NVIDIA A100" device).
std::vector<CollectiveSample> read_nccl_tests(const std::string& path, const std::string& system = "");
/// aicb collective log (comm_type, comm_group_size, msg_size, _elapsed_time, algbw, busbw, ...).
/// _elapsed_time is taken as milliseconds: the file's algbw equals msg_size / _elapsed_time / 1e6.
/// Rows without a usable op (epoch_end), size 0 or an unknown group size are skipped.
std::vector<CollectiveSample> read_aicb_csv(const std::string& path, const std::string& system = "A100");

/// Vidur's collective profiles (`<setup>/all_reduce.csv`, `send_recv.csv`: `time_stats.<op>.median`
/// ms by `size` bytes, `num_workers`, `devices_per_node`): one sample per row at the median, ranks =
/// num_workers, nodes = num_workers / devices_per_node. The setup folder names the system and link
/// ("a100_dgx": A100 over NVSwitch, "h100_pairwise_nvlink": H100 NVLink pairs); `system` overrides.
std::vector<CollectiveSample> read_vidur_network(const std::string& path, const std::string& system = "");

/// How fit_collectives cuts a curve into bands.
enum class CollectiveFit {
  octaves,  ///< octave size bands, merged until each has two distinct sizes
  regimes,  ///< at most three bands with breakpoints placed where NCCL's protocol changes (a kink)
};
/// Fits one curve per (system, link, op, ranks, nodes): bands by `fit`, latency and bus bandwidth
/// per band by least squares on relative error.
CollectiveCalibration fit_collectives(const std::vector<CollectiveSample>& samples,
                                      CollectiveFit fit = CollectiveFit::octaves);
/// The regime fit of one curve's sorted (bytes, seconds) rows: up to `max_bands` contiguous bands
/// (breakpoints by exhaustive search), each a latency + bytes x bus_factor / bus bandwidth line
/// fitted on relative error, labelled LL / LL128 / Simple by size order.
std::vector<CollectiveBand> fit_regimes(const std::vector<std::pair<double, double>>& bytes_seconds,
                                        double bus_factor, int max_bands = 3);

nlohmann::json to_json(const CollectiveCalibration& cal);
/// Raises InputError(file, 0, field, ...) on a missing or bad field.
CollectiveCalibration collective_calibration_from_json(const nlohmann::json& j, const std::string& file = "");
CollectiveCalibration load_collective_calibration(const std::string& path);

class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  virtual CollectivePrediction predict(const CollectiveDesc& desc, const CommFabric& fabric) const = 0;
};

/// The analytic model on its own (no registry look-up), for callers and tests.
CollectivePrediction predict_analytic(const CollectiveDesc& desc, const CommFabric& fabric,
                                      const AnalyticParams& params = {});
/// One algorithm/protocol pair of the analytic model; nullopt if the algorithm does not apply
/// (tree: all-reduce across two or more nodes only).
std::optional<double> analytic_seconds(const CollectiveDesc& desc, const CommFabric& fabric,
                                       const AnalyticParams& params, bool tree, CollectiveProtocol p);

struct CollectiveModelParams {
  std::shared_ptr<const CollectiveCalibration> calibration;  ///< used if set
  std::string calibration_file;                              ///< else loaded from here (JSON)
};

using CollectiveModelRegistry = Registry<CollectiveModel, const CollectiveModelParams&>;
CollectiveModelRegistry& collective_models();

struct CollectiveModelRegistrar {
  CollectiveModelRegistrar(std::string name, std::string description, CollectiveModelRegistry::Factory f) {
    collective_models().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
