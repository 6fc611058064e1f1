#include "sim/serving/service.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <ostream>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/mig.hpp"
#include "sim/metrics/recorders.hpp"
#include "sim/serving/router.hpp"
#include "sim/serving/step_wrappers.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

using K = KeyKind;

/// Latest start of a request trace on the cluster clock (arrival_offset_s).
constexpr double kMaxArrivalOffsetS = 1e9;

const KeyRegistrar kKeys{{
    {"", "service", K::kTableArray, "", "",
     "LLM services served beside (or instead of) the training workload"},
    {"service[]", "name", K::kString, "", "", "service name (required, unique)"},
    {"service[]", "model", K::kPath, "", "", "the model's Hugging Face config.json (required)"},
    {"service[]", "profiles", K::kPath, "", "",
     "per-layer profile folder of the model on the GPU: <dtype>/ with meta.yaml and tp<N>/ (required)"},
    {"service[]", "gpu", K::kString, "", "",
     "GPU of each replica (catalog name; its memory sizes the KV cache)"},
    {"service[]", "replicas", K::kInt, "", "1", "replicas of the engine (the most, with the autoscaler)"},
    {"service[]", "min_replicas", K::kInt, "", "0",
     "autoscaler: replicas always on (0 = no autoscaler); more start when requests queue (the cluster "
     "holds `replicas` GPUs all the same)"},
    {"service[]", "scale_up_queue", K::kFloat, "requests", "4",
     "autoscaler: waiting requests per ready replica above which one more starts"},
    {"service[]", "scale_interval_s", K::kFloat, "s", "10", "autoscaler: time between decisions"},
    {"service[]", "model_load_s", K::kFloat, "s", "60",
     "autoscaler, failover: time a new replica takes to serve"},
    {"service[]", "mig", K::kString, "", "",
     "MIG instance per replica (e.g. \"3g.40gb\" or \"3g\"; tensor_parallel 1): its share of compute and "
     "bandwidth scales the step time, its memory holds weights and KV; empty = whole GPUs"},
    {"service[]", "mps", K::kFloat, "", "0",
     "MPS share of one GPU per replica, in (0, 1] (tensor_parallel 1): its compute share scales the step "
     "time, its share of memory holds weights and KV, each other replica on that GPU slows it by "
     "execution.colocation_slowdown; 0 = no MPS"},
    {"service[]", "prefill_replicas", K::kInt, "", "0",
     "disaggregation: replicas that only prefill (with decode_replicas, replaces replicas; 0 = colocated)"},
    {"service[]", "decode_replicas", K::kInt, "", "0",
     "disaggregation: replicas that decode after the KV transfer from a prefill replica"},
    {"service[]", "min_prefill_replicas", K::kInt, "", "0",
     "disaggregation autoscaler: prefill replicas always on (0 = all prefill_replicas, no autoscaling of "
     "the group); more start when arrivals queue on the prefill replicas"},
    {"service[]", "min_decode_replicas", K::kInt, "", "0",
     "disaggregation autoscaler: decode replicas always on (0 = all decode_replicas, no autoscaling of "
     "the group); more start when transferred requests queue on the decode replicas"},
    {"service[]", "kv_link_gbps", K::kFloat, "Gbit/s", "0",
     "disaggregation: per-GPU bandwidth of the prefill-to-decode KV transfer; 0 = from the placement "
     "(intra_node_gbps within a node, the NIC share between nodes; one node outside a cluster run)"},
    {"service[]", "tensor_parallel", K::kInt, "", "1",
     "GPUs per engine core (a profiled TP degree, or one derived from a profiled degree dividing it)"},
    {"service[]", "data_parallel", K::kInt, "", "1",
     "vLLM data_parallel_size: engine cores per replica, tensor_parallel GPUs each, with their own "
     "scheduler and KV cache; requests go to the least loaded (not with mig, mps, disaggregation or the "
     "autoscaler)"},
    {"service[]", "expert_parallel", K::kBool, "", "false",
     "vLLM enable_expert_parallel (MoE models): experts spread whole over the data_parallel x "
     "tensor_parallel GPUs, tokens all-gathered and outputs reduce-scattered over the engine cores"},
    {"service[]", "expert_popularity_cv", K::kFloat, "", "0",
     "expert parallelism: coefficient of variation of the experts' popularity under the router (0: every "
     "expert equally likely; the routing's multinomial noise is always counted); the busiest rank sets "
     "each MoE layer's time (sim/serving/README.md)"},
    {"service[]", "tp_link", K::kString, "", "the GPU's (catalog)",
     "links between a replica's GPUs, pricing its tensor- and expert-parallel collectives: nvswitch | "
     "nvlink-pair | pcie-p2p | pcie-host (sim/serving/README.md)"},
    {"service[]", "max_num_seqs", K::kInt, "", "256", "vLLM max_num_seqs: running requests per replica"},
    {"service[]", "max_num_batched_tokens", K::kInt, "", "2048",
     "vLLM max_num_batched_tokens: tokens per step"},
    {"service[]", "block_size", K::kInt, "tokens", "16", "KV cache block"},
    {"service[]", "gpu_memory_utilization", K::kFloat, "", "0.9", "share of GPU memory vLLM may use"},
    {"service[]", "non_kv_reserve_gib", K::kFloat, "GiB", "1.5",
     "per GPU, memory neither weights nor KV (activations, CUDA graphs): an estimate"},
    {"service[]", "kv_cache_gib", K::kFloat, "GiB", "0",
     "KV cache per replica; 0 = GPU memory x utilization - "
     "weights - reserve"},
    {"service[]", "prefix_caching", K::kBool, "", "true",
     "vLLM's automatic prefix caching (its default): cached prompt blocks named by the trace's block "
     "hashes are reused, and a preempted request finds its own blocks again unless reused meanwhile"},
    {"service[]", "hash_block_tokens", K::kInt, "tokens", "0", "tokens per trace block hash (0: block_size)",
     "", in_closed(0, 1e6)},
    {"service[]", "routing", K::kString, "", "round-robin (data_parallel > 1: vllm-dp)",
     "round-robin | least-outstanding | prefix-aware | vllm-dp (vLLM's data-parallel balancer: lowest 4 x "
     "waiting + running)"},
    {"service[]", "step_overhead_ms", K::kFloat, "ms", "0",
     "CPU time per engine step on top of the profiled GPU time"},
    {"service[]", "requests", K::kTable, "", "",
     "the request trace: [service.requests] format, path and the reader's keys (required)"},
    {"service[]", "arrival_offset_s", K::kFloat, "s", "0",
     "where the request trace starts on the cluster clock (readers shift a trace's first arrival to 0): "
     "arrivals are offset by it, so outages of its replicas (failures, drains at cluster time) meet the "
     "requests of that time; requests.csv's times are cluster times (>= 0)"},
    {"service[]", "slo_ttft_ms", K::kFloat, "ms", "0", "time-to-first-token target (0 = none)"},
    {"service[]", "slo_tpot_ms", K::kFloat, "ms", "0", "time-per-output-token target (0 = none)"},
}};

std::string request_format_names() {
  std::string out;
  for (const auto& e : request_readers().entries()) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

/// The service's router: `routing`, else vllm-dp for data-parallel ranks and round-robin otherwise.
std::string routing_of(const Options& t, int data_parallel) {
  if (data_parallel > 1 && !t.has("routing")) return "vllm-dp";
  std::string r = t.text("routing", "round-robin");
  if (!routers().contains(r)) throw t.error("routing", routers().unknown_message(r));
  return r;
}

void stats(nlohmann::ordered_json& j, const std::string& name, const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  j[name + "_mean_s"] = v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  j[name + "_p50_s"] = percentile(v, 50);
  j[name + "_p90_s"] = percentile(v, 90);
  j[name + "_p99_s"] = percentile(v, 99);
}

/// The KV link outside a cluster placement (or with kv_link_gbps set): kv_link_gbps per GPU, else one
/// node's intra-node link at the cluster's defaults (network.intra_node_gbps 2400 Gbit/s, one hop of
/// network.link_latency_s 1 us). Cluster runs replace it by the placement's links (sim/app).
KvLink default_kv_link(const ServiceSpec& spec) {
  const double gbps = spec.kv_link_gbps > 0 ? spec.kv_link_gbps : 2400;
  return {spec.tensor_parallel * gbps * 1e9 / 8, 1e-6};
}

/// The autoscaler runs (ServingEngineConfig): on the colocated replicas, or on either group.
bool autoscaled_service(const ServingEngineConfig& e) {
  auto scaled = [](int min, int size) { return min > 0 && min < size; };
  if (e.prefill_replicas == 0) return scaled(e.min_replicas, e.replicas);
  return scaled(e.min_prefill_replicas, e.prefill_replicas) ||
         scaled(e.min_decode_replicas, e.replicas - e.prefill_replicas);
}

}  // namespace

double request_tpot(const ServingRequest& r, const RequestOutcome& o) {
  return r.output_tokens > 1 ? (o.end_s - o.first_token_s) / (r.output_tokens - 1) : 0.0;
}

ServiceSpec service_spec(const Options& t, const Options& requests, int index, std::uint64_t seed,
                         const std::string& scenario_file) {
  ServiceSpec s;
  s.options = t;
  auto required = [&](const char* key) {
    const std::string v = t.text(key, "");
    if (v.empty()) throw t.error(key, "missing (service " + std::to_string(index) + ")");
    return v;
  };
  auto positive = [&](const char* key, int fallback) {
    const int v = t.int32(key, fallback);
    if (v < 1) throw t.error(key, "must be >= 1");
    return v;
  };
  s.name = required("name");
  s.model = required("model");
  s.profiles = required("profiles");
  s.gpu = required("gpu");
  if (find_gpu(s.gpu) == nullptr) {
    const InputError at = t.error("gpu", "");
    gpu_spec(s.gpu, at.file(), at.line(), "service." + std::to_string(index) + ".gpu");
  }
  s.engine.replicas = positive("replicas", 1);
  const int prefill = t.int32("prefill_replicas", 0), decode = t.int32("decode_replicas", 0);
  if (prefill < 0 || decode < 0 || (prefill > 0) != (decode > 0))
    throw t.error(prefill > 0 ? "decode_replicas" : "prefill_replicas",
                  "prefill_replicas and decode_replicas must both be >= 1 (or both 0: colocated)");
  if (prefill > 0) {
    if (t.has("replicas")) throw t.error("replicas", "give prefill_replicas and decode_replicas instead");
    if (t.int32("min_replicas", 0) > 0)
      throw t.error("min_replicas",
                    "a disaggregated service scales each group: give min_prefill_replicas and/or "
                    "min_decode_replicas instead");
    if (prefill > std::numeric_limits<int>::max() - decode)
      throw t.error("decode_replicas", "prefill_replicas + decode_replicas must fit in a 32-bit int");
    s.engine.prefill_replicas = prefill;
    s.engine.replicas = prefill + decode;
    const int min_prefill = t.int32("min_prefill_replicas", 0);
    const int min_decode = t.int32("min_decode_replicas", 0);
    if (min_prefill < 0 || min_prefill > prefill)
      throw t.error("min_prefill_replicas", "must be in 0..prefill_replicas");
    if (min_decode < 0 || min_decode > decode)
      throw t.error("min_decode_replicas", "must be in 0..decode_replicas");
    s.engine.min_prefill_replicas = min_prefill;
    s.engine.min_decode_replicas = min_decode;
  } else {
    for (const char* key : {"min_prefill_replicas", "min_decode_replicas"})
      if (t.has(key))
        throw t.error(key,
                      "only with prefill_replicas and decode_replicas (a colocated service: min_replicas)");
  }
  s.kv_link_gbps = t.number("kv_link_gbps", 0);
  if (!(s.kv_link_gbps >= 0)) throw t.error("kv_link_gbps", "must be >= 0");
  const int min_replicas = t.int32("min_replicas", 0);
  if (min_replicas < 0 || min_replicas > s.engine.replicas)
    throw t.error("min_replicas", "must be in 0..replicas");
  s.engine.min_replicas = min_replicas;
  s.engine.scale_up_queue = t.number("scale_up_queue", 4);
  s.engine.scale_interval_s = t.number("scale_interval_s", 10);
  s.engine.model_load_s = t.number("model_load_s", 60);
  if (!(s.engine.scale_interval_s > 0)) throw t.error("scale_interval_s", "must be > 0");
  if (!(s.engine.scale_up_queue >= 0) || !(s.engine.model_load_s >= 0))
    throw t.error(s.engine.model_load_s >= 0 ? "scale_up_queue" : "model_load_s", "must be >= 0");
  s.tensor_parallel = positive("tensor_parallel", 1);
  s.data_parallel = positive("data_parallel", 1);
  s.expert_parallel = t.flag("expert_parallel", false);
  if (s.data_parallel > 1) {
    for (const char* key : {"mig", "mps", "prefill_replicas", "min_replicas"})
      if (t.has(key)) throw t.error(key, "not with data_parallel > 1");
  }
  s.mig = t.text("mig", "");
  if (!s.mig.empty()) {
    const std::string canonical = gpu_spec(s.gpu).name;
    const MigProfile* m = find_mig(canonical, s.mig);
    if (m == nullptr) {
      std::string valid;
      for (const auto& p : mig_profiles(canonical)) valid += (valid.empty() ? "" : ", ") + p.name;
      throw t.error("mig", "unknown MIG profile '" + s.mig + "' for " + canonical +
                               (valid.empty() ? " (it has no MIG)" : " (valid: " + valid + ")"));
    }
    if (s.tensor_parallel != 1) throw t.error("tensor_parallel", "must be 1 with a MIG instance");
    s.mig = m->name;
    s.mig_share = m->compute_share();
    s.mig_memory_gib = m->memory_gib;
  }
  s.mps_share = t.number("mps", 0);
  if (!(s.mps_share >= 0 && s.mps_share <= 1)) throw t.error("mps", "must be in (0, 1] (0 = no MPS)");
  if (s.mps_share > 0 && !s.mig.empty()) throw t.error("mps", "give mig or mps, not both");
  if (s.mps_share > 0 && s.tensor_parallel != 1) throw t.error("tensor_parallel", "must be 1 with mps");
  s.engine.max_num_seqs = positive("max_num_seqs", 256);
  s.engine.max_num_batched_tokens = positive("max_num_batched_tokens", 2048);
  s.engine.block_size = positive("block_size", 16);
  s.engine.hash_block_tokens = t.int32("hash_block_tokens", 0);
  s.engine.prefix_caching = t.flag("prefix_caching", true);
  s.engine.routing = routing_of(t, s.data_parallel);
  s.engine.router_options = t;
  s.engine.step_overhead_s = t.number("step_overhead_ms", 0) / 1000;
  s.gpu_memory_utilization = t.number("gpu_memory_utilization", 0.9);
  if (!(s.gpu_memory_utilization > 0 && s.gpu_memory_utilization <= 1))
    throw t.error("gpu_memory_utilization", "must be in (0, 1]");
  s.non_kv_reserve_gib = t.number("non_kv_reserve_gib", 1.5);
  s.kv_cache_gib = t.number("kv_cache_gib", 0);
  s.slo_ttft_s = t.number("slo_ttft_ms", 0) / 1000;
  s.slo_tpot_s = t.number("slo_tpot_ms", 0) / 1000;
  if (s.non_kv_reserve_gib < 0 || s.kv_cache_gib < 0 || s.slo_ttft_s < 0 || s.slo_tpot_s < 0 ||
      s.engine.step_overhead_s < 0)
    throw t.error(s.kv_cache_gib < 0 ? "kv_cache_gib" : "slo_ttft_ms", "must be >= 0");
  s.arrival_offset_s = t.number("arrival_offset_s", 0);
  if (!(s.arrival_offset_s >= 0) || !std::isfinite(s.arrival_offset_s))
    throw t.error("arrival_offset_s", "must be a finite number of seconds >= 0");
  // Times are doubles of seconds: beyond 1e9 s their resolution falls below 0.12 us (at 1e12 s, 0.12
  // ms: token times would be quantised).
  if (s.arrival_offset_s > kMaxArrivalOffsetS)
    throw t.error(
        "arrival_offset_s",
        "must be at most 1e9 s (31.7 years; times keep 0.12 us resolution), got " + fmt(s.arrival_offset_s));
  s.requests.format = requests.text("format", "");
  if (s.requests.format.empty())
    throw t.error("requests", "missing [service.requests] format (" + request_format_names() + ")");
  s.requests.path = requests.text("path", "");
  s.requests.seed = seed;
  s.requests.settings = requests;
  s.requests.scenario_file = scenario_file;
  return s;
}

PreparedService prepare_service(const ServiceSpec& spec) {
  PreparedService p;
  ServingStepOptions step_options;
  // The TP (and DP) ranks' links: the link kind's measured or first-principles collectives
  // (models/collective/serving_links.hpp), the catalog's kind for the GPU unless tp_link names one.
  const GpuSpec& gpu_of = gpu_spec(spec.gpu);
  const std::string link_name = spec.options.text("tp_link", "");
  LinkKind link = default_link_kind(gpu_of);
  if (!link_name.empty()) {
    const auto parsed = parse_link_kind(link_name);
    if (!parsed)
      throw spec.options.error("tp_link", "unknown link kind '" + link_name +
                                              "' (valid: nvswitch, nvlink-pair, pcie-p2p, pcie-host)");
    link = *parsed;
  }
  step_options.links = std::make_shared<const ReplicaLinks>(gpu_of, link);
  step_options.tp_fabric = step_options.links->fabric();
  step_options.data_parallel = spec.data_parallel;
  step_options.expert_parallel = spec.expert_parallel;
  step_options.expert_popularity_cv = spec.options.number("expert_popularity_cv", 0);
  if (!(step_options.expert_popularity_cv >= 0))
    throw spec.options.error("expert_popularity_cv", "must be >= 0");
  if (const std::string why =
          layout_problem(spec.model, spec.tensor_parallel, spec.data_parallel, spec.expert_parallel);
      !why.empty())
    throw spec.options.error(why.starts_with("num_experts") ? "expert_parallel" : "tensor_parallel", why);
  p.model = ServingStepModel::load(spec.profiles, spec.model, spec.tensor_parallel, step_options);
  // A TP degree derived from a smaller profiled one needs the profiled GPU's multiprocessors.
  if (const GpuSpec* profiled = find_gpu(p.model->model().profiled_gpu);
      spec.tensor_parallel > 1 && profiled != nullptr && profiled->sms > 0) {
    step_options.profiled_sms = profiled->sms;
    p.model = ServingStepModel::load(spec.profiles, spec.model, spec.tensor_parallel, step_options);
  }
  if (spec.expert_parallel && !p.model->model().moe)
    throw spec.options.error("expert_parallel", "model " + p.model->model().name + " has no experts");
  const GpuSpec& gpu = gpu_spec(spec.gpu);
  p.gpu = gpu.name;
  if (const GpuSpec* from = find_gpu(p.model->model().profiled_gpu);
      from != nullptr && from->name != gpu.name) {
    const bool known = (from->bf16_tflops > 0 || from->fp16_tflops > 0) &&
                       (gpu.bf16_tflops > 0 || gpu.fp16_tflops > 0) && from->memory_bw_gbs > 0 &&
                       gpu.memory_bw_gbs > 0;
    if (!known)
      throw spec.options.error("gpu", "cannot extrapolate the " + from->name + " profiles to " + gpu.name +
                                          ": the catalog lacks its FP16/BF16 peak or memory bandwidth");
    p.extrapolated_from = from->name;
    p.model = std::make_unique<ExtrapolatedStepModel>(std::move(p.model), *from, gpu);
  }
  if (spec.mig_share < 1) p.model = std::make_unique<SliceStepModel>(std::move(p.model), spec.mig_share);
  if (spec.mps_share > 0 && spec.mps_share < 1)
    p.model = std::make_unique<SliceStepModel>(std::move(p.model), spec.mps_share);
  const ServingModelFacts& facts = p.model->model();
  constexpr double kGiB = 1024.0 * 1024 * 1024;
  const double memory_gib = !spec.mig.empty()    ? spec.mig_memory_gib
                            : spec.mps_share > 0 ? spec.mps_share * gpu.memory_gib
                                                 : gpu.memory_gib;
  // A cache beyond the replica's GPU memory is a typo (kv_cache_gib = 9999999999999 allocated its blocks:
  // std::bad_alloc).
  if (spec.kv_cache_gib > spec.tensor_parallel * memory_gib)
    throw spec.options.error("kv_cache_gib",
                             fmt(spec.kv_cache_gib) + " GiB is more than the replica's memory (" +
                                 std::to_string(spec.tensor_parallel) + " x " + fmt(memory_gib) + " GiB)");
  double kv_bytes = spec.kv_cache_gib * kGiB;
  if (kv_bytes <= 0)
    kv_bytes =
        spec.tensor_parallel * (memory_gib * spec.gpu_memory_utilization - spec.non_kv_reserve_gib) * kGiB -
        (facts.weight_bytes - facts.expert_weight_bytes * (1.0 - 1.0 / spec.data_parallel));  // per DP rank
  if (kv_bytes <= 0 || facts.kv_bytes_per_token <= 0)
    throw spec.options.error("tensor_parallel",
                             "model " + facts.name + " (" + fmt(facts.weight_bytes / kGiB, 1) +
                                 " GiB of weights) does not fit " + std::to_string(spec.tensor_parallel) +
                                 " x " + gpu.name + " (" + fmt(gpu.memory_gib) +
                                 " GiB) with room for a KV cache");
  p.engine = spec.engine;
  p.engine.replicas = spec.engine.replicas * spec.data_parallel;  // an engine replica per DP rank
  // An MoE model's DP ranks share the experts (1/DP of them each) and step together.
  if (spec.data_parallel > 1 && facts.moe) p.engine.lockstep = spec.data_parallel;
  p.engine.kv_blocks = static_cast<long>(kv_bytes / facts.kv_bytes_per_token) / p.engine.block_size;
  p.engine.kv_bytes_per_token = facts.kv_bytes_per_token;
  p.engine.kv_link = default_kv_link(spec);
  p.requests = read_requests(spec.requests);
  const long long kv_tokens = static_cast<long long>(p.engine.kv_blocks) * p.engine.block_size;
  for (const auto& r : p.requests) {
    const long long need = static_cast<long long>(std::max(1, r.input_tokens)) + std::max(1, r.output_tokens);
    if (need <= kv_tokens) continue;
    if (p.rejected++ == 0)
      p.rejected_note = "request '" + r.id + "' (" + spec.requests.path + ":" +
                        std::to_string(r.source_line) + ") needs " + std::to_string(need) +
                        " tokens of KV cache";
  }
  if (p.rejected > 0)
    p.rejected_note = "service '" + spec.name + "': " + std::to_string(p.rejected) + " of " +
                      std::to_string(p.requests.size()) + " requests can never fit a replica's KV cache (" +
                      std::to_string(p.engine.kv_blocks) + " blocks of " +
                      std::to_string(p.engine.block_size) + " tokens = " + std::to_string(kv_tokens) +
                      " tokens) and are not served (no times in requests.csv, "
                      "summary 'rejected'); the first: " +
                      p.rejected_note;
  if (spec.arrival_offset_s > 0)
    for (auto& r : p.requests) r.arrival_s += spec.arrival_offset_s;  // onto the cluster clock
  return p;
}

double slo_attainment(const ServiceSpec& spec, const std::vector<ServingRequest>& requests,
                      const ServingResult& result) {
  if (requests.empty()) return 0;
  long good = 0;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const RequestOutcome& o = result.requests[i];
    if (o.end_s < 0) continue;
    const double a = o.first_token_s - requests[i].arrival_s, b = request_tpot(requests[i], o);
    if ((spec.slo_ttft_s <= 0 || a <= spec.slo_ttft_s) && (spec.slo_tpot_s <= 0 || b <= spec.slo_tpot_s))
      ++good;
  }
  return static_cast<double>(good) / static_cast<double>(requests.size());
}

ServiceRun run_service(const ServiceSpec& spec) {
  return run_service(spec, prepare_service(spec));
}

ServiceRun run_service(const ServiceSpec& spec, PreparedService p) {
  const auto t0 = std::chrono::steady_clock::now();
  ServiceRun run;
  const ServingModelFacts& facts = p.model->model();
  const ServingEngineConfig& engine = p.engine;
  run.kv_blocks = engine.kv_blocks;
  run.requests = std::move(p.requests);
  run.result = simulate_serving(run.requests, *p.model, engine);

  // Summary.
  std::vector<double> ttft, tpots, e2e;
  long completed = 0, good = 0, out_tokens = 0;
  double first = INFINITY, last = 0;
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const ServingRequest& r = run.requests[i];
    const RequestOutcome& o = run.result.requests[i];
    first = std::min(first, r.arrival_s);
    if (o.end_s < 0) continue;
    ++completed;
    last = std::max(last, o.end_s);
    out_tokens += r.output_tokens;
    const double a = o.first_token_s - r.arrival_s, b = request_tpot(r, o);
    ttft.push_back(a);
    tpots.push_back(b);
    e2e.push_back(o.end_s - r.arrival_s);
    if ((spec.slo_ttft_s <= 0 || a <= spec.slo_ttft_s) && (spec.slo_tpot_s <= 0 || b <= spec.slo_tpot_s))
      ++good;
  }
  const double span = completed > 0 ? last - first : 0;
  auto& j = run.summary;
  j["model"] = facts.name;
  j["gpu"] = p.gpu;
  const int dp = std::max(1, spec.data_parallel);
  j["replicas"] = engine.replicas / dp;
  j["tensor_parallel"] = spec.tensor_parallel;
  j["data_parallel"] = dp;
  j["expert_parallel"] = spec.expert_parallel;
  j["mig"] = spec.mig;
  j["mps"] = spec.mps_share;
  j["prefill_replicas"] = engine.prefill_replicas;
  j["decode_replicas"] = engine.prefill_replicas > 0 ? engine.replicas - engine.prefill_replicas : 0;
  {
    std::vector<double> xfer;
    for (const auto& o : run.result.requests)
      if (o.decode_replica >= 0) xfer.push_back(o.kv_transfer_s);
    if (engine.prefill_replicas > 0) stats(j, "kv_transfer", xfer);
  }
  j["extrapolated"] = !p.extrapolated_from.empty();
  j["profiled_gpu"] = p.extrapolated_from.empty() ? p.gpu : p.extrapolated_from;
  j["kv_blocks_per_replica"] = engine.kv_blocks;
  j["requests"] = static_cast<long>(run.requests.size());
  j["completed"] = completed;
  j["rejected"] = p.rejected;
  stats(j, "ttft", ttft);
  stats(j, "tpot", tpots);
  stats(j, "e2e", e2e);
  j["slo_ttft_s"] = spec.slo_ttft_s;
  j["slo_tpot_s"] = spec.slo_tpot_s;
  j["slo_attainment"] =
      run.requests.empty() ? 0.0 : static_cast<double>(good) / static_cast<double>(run.requests.size());
  j["goodput_rps"] = span > 0 ? static_cast<double>(good) / span : 0.0;
  j["output_tokens_per_s"] = span > 0 ? static_cast<double>(out_tokens) / span : 0.0;
  const bool autoscaled = autoscaled_service(engine);
  j["autoscaled"] = autoscaled;
  j["peak_replicas"] = autoscaled ? run.result.peak_replicas : engine.replicas / dp;
  j["gpu_share_per_replica"] = replica_gpu_share(spec);
  j["gpu_hours"] =
      (autoscaled ? run.result.replica_s : engine.replicas * span) * replica_gpu_share(spec) / dp / 3600;
  j["busy_share"] = span > 0 ? run.result.busy_s / (engine.replicas * span) : 0.0;
  j["steps"] = run.result.steps;
  j["wall_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

double replica_gpu_share(const ServiceSpec& spec) {
  if (!spec.mig.empty()) return spec.mig_share;
  if (spec.mps_share > 0) return spec.mps_share;
  return spec.tensor_parallel * spec.data_parallel;
}

std::vector<ReplicaDemand> replica_demands(const ServiceSpec& spec) {
  const InputError at = spec.options.error("replicas", "");
  ReplicaDemand d;
  d.service = spec.name;
  d.gpu = gpu_spec(spec.gpu).name;
  d.gpus = spec.mig.empty() && spec.mps_share <= 0 ? spec.tensor_parallel : 1;
  const double share = !spec.mig.empty() ? spec.mig_share : spec.mps_share > 0 ? spec.mps_share : 1.0;
  d.gpu_milli = static_cast<int>(std::floor(1000 * share + 1e-9));
  d.shared = spec.mps_share > 0;
  d.file = at.file();
  d.line = at.line();
  d.load_s = spec.engine.model_load_s;
  // One demand per engine core (DP rank): the engine's replica index is the demand's.
  return std::vector<ReplicaDemand>(static_cast<std::size_t>(spec.engine.replicas * spec.data_parallel), d);
}

}  // namespace fleetsim
