// "llm-synthetic": generated LLM training jobs (no file) for the `llm` job model. Poisson arrivals,
// `jobs` of them over `days` (the first at 0); each job is one of `llm_models` (weights
// `llm_model_weights`), trained with that model's Megatron layout (table below) on
//   GPUs = base x 2^k, k = 0, 1, ... with P(k) proportional to llm_gpus_decay^k, at most the model's
//          (and llm_max_gpus') cap,
// and a token budget drawn log-uniformly from the model's range times llm_tokens_scale;
// steps = ceil(tokens / (global batch x seq)). Ids "llm-<n>". Each job's model string carries its
// layout ("llama3-70b (tp 8, pp 4, seq 8192, batch 512)", workloads/jobs/llm_job.hpp).
//
// Where the defaults come from. Taken from the papers (qualitative shape only):
//   - Hu et al., "Characterization of Large Language Model Development in the Datacenter" (Acme,
//     NSDI'24; 4,704 A100s, six months): most jobs are small, and a few large pretraining jobs hold most
//     of the GPU time;
//   - Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning Research Clusters"
//     (arXiv 2410.21680, HPCA'25; Meta RSC-1/RSC-2, 11 months, 4 M jobs, 150 M A100 GPU-hours): smaller
//     jobs make up the majority of jobs, large jobs most of the GPU-hours.
// Assumed (not fitted to either study; the same as scripts/gen_llm_fleet.py, which wrote
// scenarios/llm/llm-fleet-jobs.csv): the four public model shapes and their layouts, the job mix
// 55/25/17/3 %, GPU counts (8-64, 16-64, 128-256, 512), each doubling of a job's GPUs half as likely
// (decay 0.5), token budgets (1-8, 1-10, 3-20, 5-15 B tokens) and 260 jobs over 30 days. Neither
// study's fleet is mostly multi-day training: theirs hold many short evaluation and debugging jobs
// (Kokolis: 150 M GPU-hours / 4 M jobs = 37.5 GPU-hours per job), which this generator leaves out.
//
// Sampling on Sampler (workloads/base/sampler.hpp: portable across standard libraries). Per job, in
// order: the inter-arrival gap (not for the first job), the model, the size doubling k, the tokens.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/sampler.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/llm_job.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

constexpr long kMaxLlmJobs = 10'000'000;

/// One model the generator knows: its Megatron layout and the range of its jobs.
struct LlmClass {
  const char* model;
  long tp, pp, seq, global_batch;
  long min_gpus, max_gpus;
  double tokens_lo, tokens_hi;  ///< token budget range (log-uniform)
};

// Layouts as in scenarios/llm/llm-fleet-jobs.csv (TP inside a DGX server, PP for the large models).
constexpr LlmClass kClasses[] = {
    {"llama3-8b", 2, 1, 8192, 256, 8, 64, 1e9, 8e9},
    {"llama2-13b", 4, 1, 4096, 256, 16, 64, 1e9, 10e9},
    {"llama3-70b", 8, 4, 8192, 512, 128, 256, 3e9, 20e9},
    {"llama3.1-405b", 8, 16, 4096, 1024, 512, 512, 5e9, 15e9},
};

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"workload", "days", K::kFloat, "days", "30", "span of the arrivals: Poisson at jobs / days",
     "llm-synthetic"},
    {"workload", "llm_models", K::kStringArray, "", "[llama3-8b, llama2-13b, llama3-70b, llama3.1-405b]",
     "models drawn per job (each must be one of these four; its config is <model>.json in "
     "execution.llm_models)",
     "llm-synthetic"},
    {"workload", "llm_model_weights", K::kNumberArray, "", "[55, 25, 17, 3] %",
     "their weights (assumed: many small jobs, few large ones, after Acme NSDI'24 and Meta RSC "
     "arXiv 2410.21680)",
     "llm-synthetic"},
    {"workload", "llm_gpus_decay", K::kFloat, "", "0.5",
     "GPUs = the model's smallest count x 2^k, P(k) ~ decay^k up to its largest (assumed)", "llm-synthetic"},
    {"workload", "llm_max_gpus", K::kInt, "", "512",
     "no job larger (the model's smallest count still applies)", "llm-synthetic"},
    {"workload", "llm_tokens_scale", K::kFloat, "", "1",
     "multiplies every model's token range (8B 1-8, 13B 1-10, 70B 3-20, 405B 5-15 B tokens; assumed)",
     "llm-synthetic"},
}};

struct LlmSyntheticConfig {
  long jobs = 260;
  double days = 30;
  std::uint64_t seed = 1;
  std::vector<std::string> models = {"llama3-8b", "llama2-13b", "llama3-70b", "llama3.1-405b"};
  std::vector<double> weights = {55, 25, 17, 3};
  double gpus_decay = 0.5;
  long max_gpus = 512;
  double tokens_scale = 1;
  std::vector<const LlmClass*> classes;  ///< resolved `models`

  static LlmSyntheticConfig from(const WorkloadConfig& w) {
    const Options& o = w.settings;
    LlmSyntheticConfig c;
    c.jobs = static_cast<long>(o.integer("jobs", c.jobs));
    c.days = o.number("days", c.days);
    c.seed = static_cast<std::uint64_t>(o.integer("seed", static_cast<long long>(w.seed)));
    c.models = o.texts("llm_models", c.models);
    c.weights = o.numbers("llm_model_weights", o.has("llm_models") ? std::vector<double>{} : c.weights);
    c.gpus_decay = o.number("llm_gpus_decay", c.gpus_decay);
    c.max_gpus = static_cast<long>(o.integer("llm_max_gpus", c.max_gpus));
    c.tokens_scale = o.number("llm_tokens_scale", c.tokens_scale);
    c.validate(o);
    return c;
  }

 private:
  void validate(const Options& o) {
    auto check = [&](bool ok, const char* key, const std::string& msg) {
      if (!ok) throw o.error(key, msg);
    };
    check(jobs >= 1 && jobs <= kMaxLlmJobs, "jobs",
          "must be in [1, " + std::to_string(kMaxLlmJobs) + "], got " + std::to_string(jobs));
    check(std::isfinite(days) && days > 0, "days", "must be a finite number > 0, got " + fmt(days));
    check(!models.empty(), "llm_models", "must not be empty");
    std::string known;
    for (const LlmClass& k : kClasses) known += std::string(known.empty() ? "" : ", ") + k.model;
    for (const std::string& m : models) {
      const std::string name = lower(trim(m));
      const auto it = std::find_if(std::begin(kClasses), std::end(kClasses),
                                   [&](const LlmClass& k) { return name == k.model; });
      check(it != std::end(kClasses), "llm_models", "unknown model '" + m + "'; known: " + known);
      classes.push_back(&*it);
    }
    if (weights.empty()) weights.assign(models.size(), 1.0);  // llm_models without weights: uniform
    check(weights.size() == models.size(), "llm_model_weights",
          "has " + std::to_string(weights.size()) + " weights for " + std::to_string(models.size()) +
              " llm_models");
    double total = 0;
    for (double x : weights) {
      check(std::isfinite(x) && x >= 0, "llm_model_weights",
            "weights must be finite and >= 0, got " + fmt(x));
      total += x;
    }
    check(total > 0, "llm_model_weights", "weights must not all be 0");
    check(std::isfinite(gpus_decay) && gpus_decay >= 0, "llm_gpus_decay",
          "must be a finite number >= 0, got " + fmt(gpus_decay));
    check(max_gpus >= 1 && max_gpus <= kMaxGpusPerJob, "llm_max_gpus",
          "must be in [1, " + std::to_string(kMaxGpusPerJob) + "], got " + std::to_string(max_gpus));
    check(std::isfinite(tokens_scale) && tokens_scale > 0, "llm_tokens_scale",
          "must be a finite number > 0, got " + fmt(tokens_scale));
  }
};

/// Cumulative weights of k = 0..n-1 doublings, P(k) ~ decay^k.
std::vector<double> doubling_weights(int n, double decay) {
  std::vector<double> cum;
  double total = 0, w = 1;
  for (int k = 0; k < n; ++k, w *= decay) cum.push_back(total += (k == 0 ? 1.0 : w));
  return cum;
}

class LlmSyntheticReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const LlmSyntheticConfig c = LlmSyntheticConfig::from(config);
    std::vector<double> model_cum;
    double total = 0;
    for (double w : c.weights) model_cum.push_back(total += w);
    // Per class: how many doublings fit under its cap (and llm_max_gpus).
    std::vector<std::vector<double>> size_cum;
    for (const LlmClass* k : c.classes) {
      const long cap = std::max(k->min_gpus, std::min(k->max_gpus, c.max_gpus));
      int n = 1;
      while (k->min_gpus << n <= cap) ++n;
      size_cum.push_back(doubling_weights(n, c.gpus_decay));
    }
    const double mean_gap_s = c.days * 86400.0 / static_cast<double>(c.jobs);

    Sampler s(c.seed);
    std::vector<JobSpec> jobs(static_cast<std::size_t>(c.jobs));
    double t = 0;
    for (std::size_t n = 0; n < jobs.size(); ++n) {
      JobSpec& j = jobs[n];
      if (n > 0) t += s.exponential(mean_gap_s);
      const std::size_t m = s.pick(model_cum);
      const LlmClass& k = *c.classes[m];
      const long gpus = k.min_gpus << s.pick(size_cum[m]);
      const double lo = std::log(k.tokens_lo * c.tokens_scale), hi = std::log(k.tokens_hi * c.tokens_scale);
      const double tokens = std::exp(lo + (hi - lo) * s.uniform());
      LlmJobLayout l;
      l.model = k.model;
      l.tp = k.tp, l.pp = k.pp, l.seq = k.seq, l.global_batch = k.global_batch;
      j.id = "llm-" + std::to_string(n);
      j.submit_s = t;
      j.gpus = static_cast<int>(gpus);
      j.model = format_llm_job(l);
      j.steps = std::ceil(tokens / (static_cast<double>(k.global_batch) * static_cast<double>(k.seq)));
      j.source_line = 0;
    }
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{
    "llm-synthetic",
    "generated LLM training jobs (llm job model): Poisson arrivals, weighted models with their layouts, "
    "GPU doublings, token budgets (seeded, portable)",
    [] { return std::make_unique<LlmSyntheticReader>(); }};

}  // namespace
}  // namespace fleetsim
