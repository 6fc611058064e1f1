#pragma once
// Capacity sizing of a service (issue 14, `fleetsim size`): SLO attainment against the number of
// replicas, at the trace's load and at multiples of it (arrivals compressed by the factor), and the
// fewest replicas meeting a target attainment at each load. A search over GPU types and replica layouts
// (TP degree, MIG instance) sizes each and picks the cheapest per load (`fleetsim size --layouts`).
#include <iosfwd>
#include <string>
#include <vector>

#include "sim/serving/service.hpp"

namespace fleetsim {

struct SizingPoint {
  double load = 1;  ///< arrival-rate multiple of the trace
  int replicas = 1;
  double gpus = 1;  ///< replicas x tensor_parallel (x the share of a MIG instance or MPS share)
  double attainment = 0;
  double ttft_p99_s = 0;
  double tpot_p99_s = 0;
};

struct SizingResult {
  std::vector<SizingPoint> curve;  ///< every point run, by load then replicas
  std::vector<int> fewest;         ///< per load: fewest replicas meeting the target (-1: none up to the max)
  std::string rejected_note;       ///< requests that never fit a replica (PreparedService), "" if none
};

/// A replica layout: `tensor_parallel` whole GPUs, or one MIG instance (tensor_parallel 1).
struct ReplicaLayout {
  int tensor_parallel = 1;
  std::string mig;  ///< "" or a MIG profile name ("3g", "3g.40gb")
  std::string name() const { return mig.empty() ? "tp" + std::to_string(tensor_parallel) : "mig:" + mig; }
};
/// "tp2" or "mig:3g"; throws InputError naming `option` otherwise.
ReplicaLayout parse_layout(const std::string& text, const std::string& option);
/// `spec` on `gpu` (a catalog name) with `layout`. Throws InputError when the GPU has no such MIG profile.
ServiceSpec with_layout(const ServiceSpec& spec, const std::string& gpu, const ReplicaLayout& layout);

/// For each load: replicas 1, 2, 4, ... (up to max_replicas) until the target is met, then bisection
/// down to the fewest meeting it, and one point past it. The curve holds every count run, in order.
SizingResult size_service(const ServiceSpec& spec, double target, const std::vector<double>& loads,
                          int max_replicas);

/// sizing.csv: load,replicas,gpus,slo_attainment,ttft_p99_s,tpot_p99_s
void write_sizing_csv(std::ostream& out, const SizingResult& r);
/// The same header and rows separately; each row starts with `prefix` (e.g. "H100,").
void write_sizing_csv_header(std::ostream& out);
void write_sizing_csv_rows(std::ostream& out, const SizingResult& r, const std::string& prefix);

}  // namespace fleetsim
