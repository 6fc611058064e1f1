#pragma once
// A `[[service]]` of a scenario (issue 14): an LLM served by replicas of a vLLM-style engine, fed by a
// request trace, judged against a TTFT/TPOT SLO. Its keys are declared in service.cpp.
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics/energy.hpp"
#include "sim/serving/service_hook.hpp"
#include "sim/serving/serving_engine.hpp"
#include "workloads/base/options.hpp"

namespace fleetsim {

struct ServiceSpec {
  std::string name;
  std::string model;     ///< Hugging Face config.json
  std::string profiles;  ///< per-layer profile folder (<dtype>/ with meta.yaml and tp<N>/)
  std::string gpu;       ///< catalog GPU name (memory for the KV cache)
  int tensor_parallel = 1;
  int data_parallel = 1;         ///< engine cores per replica (vLLM data_parallel_size), TP GPUs each
  bool expert_parallel = false;  ///< MoE experts spread over data_parallel x TP GPUs
  std::string mig;               ///< MIG instance per replica ("3g.40gb"); empty: whole GPUs
  double mig_share = 1;          ///< its share of the GPU's compute (and of the cluster GPU it holds)
  double mig_memory_gib = 0;
  double mps_share = 0;     ///< MPS share of one GPU per replica; 0: no MPS
  double kv_link_gbps = 0;  ///< disaggregation: per-GPU KV link, Gbit/s; 0: from the placement
  double gpu_memory_utilization = 0.9;
  double non_kv_reserve_gib = 1.5;  ///< per GPU: activations, CUDA graphs, allocator slack
  double kv_cache_gib = 0;          ///< per replica; 0 = from memory
  ServingEngineConfig engine;
  RequestTraceConfig requests;
  double arrival_offset_s = 0;  ///< the trace's first arrival on the cluster clock (readers start it at 0)
  double slo_ttft_s = 0;        ///< 0: no TTFT target
  double slo_tpot_s = 0;        ///< 0: no TPOT target
  Options options;              ///< the table, for messages (file, line, key)
};

/// GPUs one replica counts for in GPU-hours: tensor_parallel x data_parallel whole GPUs; a MIG instance its
/// profile's compute share, compute slices / the GPU's slices (3g.40gb on an A100 = 3/7: the slices partition
/// the GPU's SMs, so the instances that fill a GPU sum to 1, which their memory shares need not, e.g.
/// 3g.40gb + 4g.40gb); an MPS share its share.
double replica_gpu_share(const ServiceSpec& spec);

/// The cluster GPUs each replica of `spec` holds (for ServiceReservations).
std::vector<ReplicaDemand> replica_demands(const ServiceSpec& spec);

/// Reads one [[service]] table (index i). Throws InputError naming file, line and key.
ServiceSpec service_spec(const Options& table, const Options& requests, int index, std::uint64_t seed,
                         const std::string& scenario_file);

/// What a service needs before it runs: the step model, the engine settings with the KV cache sized
/// from GPU memory, and the requests. Throws InputError on bad input (nothing has run).
struct PreparedService {
  std::unique_ptr<ServingStepModel> model;
  ServingEngineConfig engine;
  std::vector<ServingRequest> requests;  ///< arrivals on the cluster clock (+ arrival_offset_s)
  std::string gpu;                       ///< canonical catalog name
  std::string extrapolated_from;  ///< the profiled GPU when the service runs on another one ("" if not)
  /// Requests whose prompt and output tokens can never fit one replica's KV cache: never served
  /// (summary `rejected`), and a warning naming the first (warn_rejected).
  long rejected = 0;
  std::string rejected_note;
};
PreparedService prepare_service(const ServiceSpec& spec);

/// Share of `requests` (all of them: unfinished ones miss) meeting the spec's TTFT and TPOT targets.
double slo_attainment(const ServiceSpec& spec, const std::vector<ServingRequest>& requests,
                      const ServingResult& result);

/// One service's run: per-request rows and the summary block.
struct ServiceRun {
  std::vector<ServingRequest> requests;
  ServingResult result;
  long kv_blocks = 0;
  bool extrapolated = false;
  nlohmann::ordered_json summary;
};

/// Loads the model and the requests, runs the replicas, and summarises (summary block keys:
/// requests, completed, ttft/tpot/e2e {mean,p50,p90,p99}_s, slo_attainment, goodput_rps,
/// output_tokens_per_s, gpu_share_per_replica, gpu_hours, kv_blocks_per_replica, steps, wall_s).
ServiceRun run_service(const ServiceSpec& spec);
/// The same on a service prepared beforehand (prepare_service: bad input surfaces before anything runs).
ServiceRun run_service(const ServiceSpec& spec, PreparedService prepared);

/// (service_outputs.cpp) Energy a service's replicas draw on the GPUs they hold, in the [power] model of the
/// training side (sim/metrics/energy.hpp), kWh: each replica's GPU share (replica_gpu_share) x (the catalog
/// idle_w while it is on + (busy_fraction x tdp_w - idle_w) while it runs a step). The cluster's energy block
/// counts those GPUs as idle (reservations are not jobs); this is the service's own figure.
double service_gpu_energy_kwh(const ServiceSpec& spec, const ServiceRun& run, const PowerConfig& power);

/// A finished request's time per output token after the first, s (0 for a single output token).
double request_tpot(const ServingRequest& r, const RequestOutcome& o);

/// requests.csv (service_outputs.cpp):
/// service,request_id,arrival_s,first_token_s,end_s,input_tokens,output_tokens,ttft_s,
/// tpot_s,e2e_s,replica,preemptions,cached_tokens,decode_replica,kv_transfer_s (empty times for requests
/// that never finished; the last two empty unless disaggregated).
void write_requests_header(std::ostream& out);
void write_requests_rows(std::ostream& out, const ServiceSpec& spec, const ServiceRun& run);

/// serving_timeseries.csv: service,t_s,replica,running,waiting,kv_used (each replica sampled at its
/// first step of every second).
void write_serving_series_header(std::ostream& out);
void write_serving_series_rows(std::ostream& out, const ServiceSpec& spec, const ServiceRun& run);

}  // namespace fleetsim
