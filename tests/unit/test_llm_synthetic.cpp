// The llm-synthetic generator: determinism, the configured mix over many jobs, layouts the llm job
// model accepts, and bad keys naming file, line and key.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "models/job/job_model.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/unit/test_workloads_util.hpp"
#include "workloads/jobs/llm_job.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

/// A [workload] table as the scenario loader hands it over: values with their lines in "s.toml".
WorkloadConfig llm_synthetic(const std::map<std::string, std::string>& scalars,
                             const std::map<std::string, std::vector<std::string>>& arrays = {}) {
  std::map<std::string, Options::Value> values;
  long line = 10;
  for (const auto& [k, v] : scalars) values[k] = Options::Value{v, line++, "", {}, {}};
  for (const auto& [k, v] : arrays) values[k] = Options::Value{"", line++, "", v, {}};
  WorkloadConfig c;
  c.format = "llm-synthetic";
  c.scenario_file = "s.toml";
  c.seed = 18;
  c.settings = Options(std::move(values), "s.toml", "workload");
  return c;
}

bool same(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.submit_s == b.submit_s && a.gpus == b.gpus && a.model == b.model &&
         a.steps == b.steps;
}

LlmJobLayout layout(const JobSpec& j) {
  std::string why;
  const auto l = parse_llm_job(j.model, why);
  REQUIRE_MESSAGE(l.has_value(), why);
  return *l;
}

}  // namespace

TEST_CASE("llm-synthetic: same seed gives identical jobs, another seed different ones") {
  const auto a = read_trace(llm_synthetic({{"jobs", "500"}, {"seed", "3"}}));
  const auto b = read_trace(llm_synthetic({{"jobs", "500"}, {"seed", "3"}}));
  const auto c = read_trace(llm_synthetic({{"jobs", "500"}, {"seed", "4"}}));
  REQUIRE(a.size() == 500);
  CHECK(std::equal(a.begin(), a.end(), b.begin(), same));
  CHECK(!std::equal(a.begin(), a.end(), c.begin(), same));
  CHECK(a.front().id == "llm-0");
  CHECK(a.front().submit_s == 0);
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i].submit_s >= a[i - 1].submit_s);
  // Without a seed key: the scenario seed (18 here), the same as seed = 18.
  const auto d = read_trace(llm_synthetic({{"jobs", "50"}}));
  const auto e = read_trace(llm_synthetic({{"jobs", "50"}, {"seed", "18"}}));
  CHECK(std::equal(d.begin(), d.end(), e.begin(), same));
}

TEST_CASE("llm-synthetic: the configured mix, sizes, tokens and arrival rate over 20,000 jobs") {
  const long n = 20000;
  const auto jobs = read_trace(llm_synthetic({{"jobs", std::to_string(n)}, {"days", "100"}, {"seed", "5"}}));
  REQUIRE(jobs.size() == static_cast<std::size_t>(n));
  std::map<std::string, double> share;
  std::map<long, double> small_sizes;  // llama3-8b: 8, 16, 32, 64 GPUs
  double small = 0, small_tokens = 0;
  for (const JobSpec& j : jobs) {
    const LlmJobLayout l = layout(j);
    share[l.model] += 1.0 / n;
    // Every layout fits the job's GPUs: TP x PP divides them, the batch splits over DP.
    CHECK(j.gpus % (l.tp * l.pp) == 0);
    CHECK(l.global_batch % (j.gpus / (l.tp * l.pp)) == 0);
    CHECK(j.gpus <= 512);
    const double tokens = *j.steps * static_cast<double>(l.global_batch * l.seq);
    if (l.model == "llama3-8b") {
      small += 1, small_sizes[j.gpus] += 1, small_tokens += tokens;
      CHECK(tokens >= 1e9);
      CHECK(tokens < 8e9 + static_cast<double>(l.global_batch * l.seq));  // ceil to whole steps
    }
    if (l.model == "llama3.1-405b") CHECK(j.gpus == 512);
  }
  // Job mix 55/25/17/3 %: binomial sd <= 0.0036 at n = 20,000; tolerance 0.012 (> 3 sd).
  CHECK(share["llama3-8b"] == doctest::Approx(0.55).epsilon(0.012 / 0.55));
  CHECK(share["llama2-13b"] == doctest::Approx(0.25).epsilon(0.012 / 0.25));
  CHECK(share["llama3-70b"] == doctest::Approx(0.17).epsilon(0.012 / 0.17));
  CHECK(share["llama3.1-405b"] == doctest::Approx(0.03).epsilon(0.006 / 0.03));
  // Sizes of llama3-8b jobs: decay 0.5 over 4 doublings -> 8/15, 4/15, 2/15, 1/15.
  const double expect[] = {8.0 / 15, 4.0 / 15, 2.0 / 15, 1.0 / 15};
  for (int k = 0; k < 4; ++k) {
    INFO("gpus " << (8 << k));
    CHECK(small_sizes[8L << k] / small == doctest::Approx(expect[k]).epsilon(0.02 / expect[k]));
  }
  // Tokens log-uniform in [1, 8] B: mean (8 - 1) / ln 8 = 3.366 B (sd of the mean ~0.9%), plus half a
  // step of rounding up (1 M tokens).
  CHECK(small_tokens / small == doctest::Approx(7e9 / std::log(8.0) + 0.5 * 256 * 8192).epsilon(0.03));
  // Poisson arrivals: mean gap = 100 days / 20,000 jobs (sd of the mean ~0.7%).
  const double mean_gap = jobs.back().submit_s / static_cast<double>(n - 1);
  CHECK(mean_gap == doctest::Approx(100 * 86400.0 / n).epsilon(0.03));
}

TEST_CASE("llm-synthetic: keys change the mix, the caps and the token budgets") {
  const auto jobs = read_trace(llm_synthetic(
      {{"jobs", "2000"}, {"llm_max_gpus", "16"}, {"llm_gpus_decay", "0"}, {"llm_tokens_scale", "2"}},
      {{"llm_models", {"llama3-8b", "llama2-13b"}}, {"llm_model_weights", {"1", "0"}}}));
  for (const JobSpec& j : jobs) {
    const LlmJobLayout l = layout(j);
    CHECK(l.model == "llama3-8b");
    CHECK(j.gpus == 8);  // decay 0: always the smallest count
    const double tokens = *j.steps * static_cast<double>(l.global_batch * l.seq);
    CHECK(tokens >= 2e9);
  }
}

TEST_CASE("llm-synthetic: bad keys name the scenario file, line and key") {
  // Lines: scalars from 10 in key order, then arrays.
  check_names(read_error(llm_synthetic({{"days", "0"}})), "s.toml", 10, "workload.days");
  check_names(read_error(llm_synthetic({{"jobs", "0"}})), "s.toml", 10, "workload.jobs");
  check_names(read_error(llm_synthetic({{"llm_tokens_scale", "-1"}})), "s.toml", 10,
              "workload.llm_tokens_scale");
  auto e = read_error(llm_synthetic({}, {{"llm_models", {"llama3-8b", "gpt-5"}}}));
  check_names(e, "s.toml", 10, "workload.llm_models");
  CHECK(contains(e.what(), "gpt-5"));
  CHECK(contains(e.what(), "llama3.1-405b"));  // lists the known ones
  check_names(read_error(llm_synthetic({}, {{"llm_model_weights", {"1", "2"}}})), "s.toml", 10,
              "workload.llm_model_weights");
  check_names(read_error(llm_synthetic({}, {{"llm_model_weights", {"0", "0", "0", "0"}}})), "s.toml", 10,
              "workload.llm_model_weights");
}

TEST_CASE("scenarios/llm-fleet-synthetic.toml: 520 generated jobs the llm model can time on H100 and B200") {
  const Scenario sc = load_scenario(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/llm-fleet-synthetic.toml");
  CHECK(sc.workload.format == "llm-synthetic");
  const auto jobs = load_jobs(sc);
  REQUIRE(jobs.size() == 520);
  JobModelParams p;
  p.settings = sc.execution.settings;
  p.workload = sc.workload.settings;
  p.scenario_file = sc.file;
  p.nic_gbps = sc.cluster.network.nic_gbps;  // the scenario's fabric, as a run passes it
  p.nics_per_node = sc.cluster.network.nics_per_node;
  p.gpus_per_nic = sc.cluster.gpus_per_nic(sc.cluster.pools.front().gpus_per_node);
  p.intra_node_gbps = sc.cluster.network.intra_node_gbps;
  const auto m = job_models().create("llm", p);
  std::string why;
  double lo = 1e9, hi = 0;
  for (const JobSpec& j : jobs) {
    INFO(j.model);
    CHECK(m->can_time(j, why));
    const int nodes = (j.gpus + 7) / 8;
    const auto h100 = m->run_time_s(j, PlacementSummary{"H100", j.gpus, nodes, 1, 1000, {}}, why);
    const auto b200 = m->run_time_s(j, PlacementSummary{"B200", j.gpus, nodes, 1, 1000, {}}, why);
    REQUIRE_MESSAGE(h100, why);
    REQUIRE_MESSAGE(b200, why);
    lo = std::min(lo, *h100 / *b200), hi = std::max(hi, *h100 / *b200);
  }
  // bf16 kernels at the tensor-core peaks (B200 2.27x H100's; same NVLink 4 fabric here, the default
  // 61 us host launch per kernel, which does not shrink on B200, and the least recomputation that
  // fits; the scenario's 8 x 400 Gbit/s NICs a server): measured 1.75-2.24x per job.
  MESSAGE("B200 / H100 per job: " << lo << "-" << hi << "x");
  CHECK(lo > 1.4);
  CHECK(hi < 2.25);
}
