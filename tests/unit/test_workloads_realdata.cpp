// Real traces from ../shared/data (skipped with a message where that folder is absent).
#include <doctest/doctest.h>

#include <algorithm>

#include "tests/unit/test_workloads_util.hpp"
#include "workloads/jobs/trace_stats.hpp"
#include "workloads/throughputs/throughput_table.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {
const std::string kOpenb = "traces/alibaba-gpu-2023/";
const std::string kPhilly = "traces/philly-gavel-vc/";
const std::string kGavel = "throughputs/gavel_simulation_throughputs.json";

bool sorted_by_submit(const std::vector<JobSpec>& jobs) {
  return std::is_sorted(jobs.begin(), jobs.end(),
                        [](const JobSpec& a, const JobSpec& b) { return a.submit_s < b.submit_s; });
}
}  // namespace

TEST_CASE("real data: openb default pod list") {
  require_shared(kOpenb);
  const auto jobs = read_trace(config("openb", shared_data(kOpenb + "openb_pod_list_default.csv")));
  CHECK(jobs.size() == 8152);
  CHECK(sorted_by_submit(jobs));
  CHECK(jobs.front().submit_s == 0);
  CHECK(jobs.front().id == "openb-pod-0000");
  const auto s = compute_stats(jobs);
  MESSAGE(format_stats(s, "openb default"));
  CHECK(s.jobs_with_duration == 8152);
  CHECK(s.gpu_histogram.at(0) == 1088);
  CHECK(s.gpu_histogram.at(1) == 6989);
  CHECK(s.gpu_histogram.at(8) == 44);
  CHECK(s.span_s == 12901761);
  CHECK(s.single_node_jobs == 8152);
  for (const auto& j : jobs) {
    CHECK(j.gpus <= 8);
    CHECK((j.gpus == 0 ? j.gpu_milli == 0 : j.gpu_milli > 0));
  }
}

TEST_CASE("real data: openb variants (gpushare40 unsorted, multigpu20 without times)") {
  require_shared(kOpenb);
  const auto share = read_trace(config("openb", shared_data(kOpenb + "openb_pod_list_gpushare40.csv")));
  CHECK(share.size() == 8152);
  CHECK(sorted_by_submit(share));
  const auto multi = read_trace(config("openb", shared_data(kOpenb + "openb_pod_list_multigpu20.csv")));
  CHECK(multi.size() == 8324);
  CHECK(std::all_of(multi.begin(), multi.end(),
                    [](const JobSpec& j) { return j.submit_s == 0 && !j.duration_s; }));
}

TEST_CASE("real data: philly-gavel 6214e9 with Gavel throughputs") {
  require_shared(kPhilly);
  require_shared(kGavel);
  auto c = config("philly-gavel", shared_data(kPhilly + "6214e9.trace"));
  c.settings.set("throughputs", shared_data(kGavel));
  c.settings.set("gpu_type", "v100");
  const auto jobs = read_trace(c);
  CHECK(jobs.size() == 2000);
  CHECK(sorted_by_submit(jobs));
  CHECK(std::all_of(jobs.begin(), jobs.end(), [](const JobSpec& j) {
    return j.duration_s && *j.duration_s > 0 && j.steps && !j.model.empty();
  }));
  // First line: Transformer (batch size 128), 20851471 steps, 1 GPU, at 0.
  CHECK(jobs[0].model == "Transformer (batch size 128)");
  CHECK(*jobs[0].steps == 20851471);
  const auto table = ThroughputTable::load(c.settings.text("throughputs", ""));
  CHECK(*jobs[0].duration_s == doctest::Approx(20851471 / *table.rate("v100", jobs[0].model, 1)));
  MESSAGE(format_stats(compute_stats(jobs), "philly 6214e9 (v100)"));

  c.settings.erase("throughputs");
  const auto plain = read_trace(c);
  CHECK(plain.size() == 2000);
  CHECK(std::none_of(plain.begin(), plain.end(), [](const JobSpec& j) { return j.duration_s.has_value(); }));
}

TEST_CASE("real data: the other philly VCs on every GPU type of the table") {
  require_shared(kPhilly);
  require_shared(kGavel);
  for (const char* vc : {"103959", "2869ce"}) {
    for (const char* gpu : {"k80", "p100", "v100"}) {
      INFO(vc << " on " << gpu);
      auto c = config("philly-gavel", shared_data(kPhilly + vc + ".trace"));
      c.settings.set("throughputs", shared_data(kGavel));
      c.settings.set("gpu_type", gpu);
      const auto jobs = read_trace(c);
      CHECK(jobs.size() == (std::string(vc) == "103959" ? 986u : 533u));
      CHECK(std::all_of(jobs.begin(), jobs.end(),
                        [](const JobSpec& j) { return j.duration_s && *j.duration_s > 0; }));
    }
  }
}

TEST_CASE("real data: Gavel throughput table") {
  require_shared(kGavel);
  const auto t = ThroughputTable::load(shared_data(kGavel));
  CHECK(t.gpu_types() == std::vector<std::string>{"k80", "p100", "v100"});
  CHECK(t.job_types().size() == 26);
  CHECK(t.rate("v100", "ResNet-18 (batch size 16)", 1) == doctest::Approx(32.353384328946916));
  CHECK(t.scales("v100", "ResNet-50 (batch size 64)") == std::vector<int>{1, 2, 4, 8});
  CHECK(t.scales("v100", "A3C") == std::vector<int>{1});
  CHECK(t.rate("k80", "ResNet-50 (batch size 128)", 2) == 0.0);
  CHECK(!t.rate("k80", "ResNet-50 (batch size 128)", 2, false));
  const auto p = t.pair_rate("v100", "ResNet-18 (batch size 16)", 1, "ResNet-18 (batch size 64)", 1);
  REQUIRE(p);
  CHECK(p->first == doctest::Approx(32.353384328946916));
  CHECK(p->second == doctest::Approx(24.093231895382736));
}
