// Synthetic generator, throughput table and trace statistics.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tests/unit/test_workloads_util.hpp"
#include "workloads/jobs/trace_stats.hpp"
#include "workloads/throughputs/throughput_table.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

WorkloadConfig synthetic(long jobs, std::uint64_t seed) {
  auto c = config("synthetic", "");
  c.settings.set("jobs", static_cast<double>(jobs));
  c.settings.set("seed", static_cast<double>(seed));
  return c;
}

bool same(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.submit_s == b.submit_s && a.gpus == b.gpus && a.gpu_milli == b.gpu_milli &&
         a.duration_s == b.duration_s;
}

}  // namespace

TEST_CASE("synthetic: same seed gives identical jobs, another seed different ones") {
  const auto a = read_trace(synthetic(2000, 7));
  const auto b = read_trace(synthetic(2000, 7));
  const auto c = read_trace(synthetic(2000, 8));
  REQUIRE(a.size() == 2000);
  REQUIRE(b.size() == 2000);
  CHECK(std::equal(a.begin(), a.end(), b.begin(), same));
  CHECK(!std::equal(a.begin(), a.end(), c.begin(), same));
  CHECK(a[0].id == "job-0");
  CHECK(a[0].submit_s == 0);
  CHECK(a[1999].id == "job-1999");
  for (std::size_t i = 1; i < a.size(); ++i) CHECK(a[i].submit_s >= a[i - 1].submit_s);
}

TEST_CASE("synthetic: golden values (portable sampling on mt19937_64)") {
  // Pinned so that a change of sampling (or a standard library's) is noticed.
  const auto jobs = read_trace(synthetic(6, 1));
  REQUIRE(jobs.size() == 6);
  const double submit[] = {
      0, 1.274903093116146, 146.66390510689268, 207.17340116459809, 255.91342458645954, 273.15658543667786};
  const int gpus[] = {1, 1, 1, 1, 2, 1};
  const double duration[] = {355.31076812097535, 1207.7947649321256, 474.1633060204415,
                             666.1989528422182,  296.18043475421092, 1678.3572500981811};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    INFO("job " << i);
    CHECK(jobs[i].submit_s == doctest::Approx(submit[i]).epsilon(1e-12));
    CHECK(jobs[i].gpus == gpus[i]);
    CHECK(*jobs[i].duration_s == doctest::Approx(duration[i]).epsilon(1e-12));
  }
}

TEST_CASE("synthetic: arrival rate, GPU mix and durations follow the parameters (100k jobs)") {
  auto c = synthetic(100000, 42);
  c.settings.set("arrival_rate_per_hour", static_cast<double>(120));
  const auto jobs = read_trace(c);
  REQUIRE(jobs.size() == 100000);
  const double mean_gap =
      (jobs.back().submit_s - jobs.front().submit_s) / static_cast<double>(jobs.size() - 1);
  CHECK(mean_gap == doctest::Approx(3600.0 / 120).epsilon(0.05));

  const auto ones = std::count_if(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.gpus == 1; });
  CHECK(static_cast<double>(ones) / 100000.0 == doctest::Approx(0.70).epsilon(0.02));
  const auto thirty_two =
      std::count_if(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.gpus == 32; });
  CHECK(static_cast<double>(thirty_two) / 100000.0 == doctest::Approx(0.01).epsilon(0.15));

  std::vector<double> d;
  for (const auto& j : jobs) {
    REQUIRE(j.duration_s);
    d.push_back(*j.duration_s);
  }
  std::sort(d.begin(), d.end());
  CHECK(d.front() >= 10.0);
  CHECK(d.back() <= (14 * 24 * 3600.0));
  CHECK(d[d.size() / 2] == doctest::Approx(900.0).epsilon(0.05));
  CHECK(d.front() == 10.0);  // sigma 1.8: the clamp is reached
}

TEST_CASE("synthetic: one million jobs, ids unique and submit times sorted") {
  // Speed is measured by tests/bench (bench_core), not asserted here.
  const auto jobs = read_trace(synthetic(1000000, 3));
  REQUIRE(jobs.size() == 1000000);
  CHECK(jobs.front().id == "job-0");
  CHECK(jobs.back().id == "job-999999");
  bool sorted = true;
  for (std::size_t i = 1; i < jobs.size(); ++i) sorted = sorted && jobs[i - 1].submit_s <= jobs[i].submit_s;
  CHECK(sorted);
}

TEST_CASE("throughput table: lookups") {
  const auto t = ThroughputTable::load(fixture("throughputs_small.json"));
  CHECK(t.gpu_types() == std::vector<std::string>{"k80", "v100"});
  CHECK(t.job_types() ==
        std::vector<std::string>{"A3C", "ResNet-50 (batch size 64)", "Transformer (batch size 128)"});
  CHECK(t.size() == 12);
  CHECK(t.rate("v100", "ResNet-50 (batch size 64)", 1) == 10.0);
  CHECK(t.rate("V100", "ResNet-50 (batch size 64)", 4) == 32.0);
  CHECK(t.rate("v100", "ResNet-50 (batch size 64)", 4, false) == 25.0);
  CHECK(t.rate("k80", "ResNet-50 (batch size 64)", 4) == 0.0);  // measured 0: kept
  CHECK(!t.rate("v100", "ResNet-50 (batch size 64)", 2));
  CHECK(!t.rate("v100", "A3C", 2));
  CHECK(!t.rate("a100", "A3C", 1));
  CHECK(!t.rate("v100", "BERT", 1));
  CHECK(!t.rate("v100", "A3C", 0));
  CHECK(!t.rate("v100_unconsolidated", "A3C", 1));
  CHECK(t.scales("v100", "ResNet-50 (batch size 64)") == std::vector<int>{1, 4});

  auto r = t.rate_up_to("v100", "ResNet-50 (batch size 64)", 8);
  REQUIRE(r);
  CHECK(r->rate == 32.0);
  CHECK(r->scale == 4);
  r = t.rate_up_to("v100", "ResNet-50 (batch size 64)", 3);
  REQUIRE(r);
  CHECK(r->scale == 1);
  r = t.rate_up_to("k80", "ResNet-50 (batch size 64)", 4);  // 0 at 4 -> scale 1
  REQUIRE(r);
  CHECK(r->rate == 2.5);
  CHECK(r->scale == 1);
  CHECK(!t.rate_up_to("v100", "BERT", 4));

  const auto p = t.pair_rate("v100", "ResNet-50 (batch size 64)", 1, "Transformer (batch size 128)", 1);
  REQUIRE(p);
  CHECK(p->first == 6.0);
  CHECK(p->second == 4.0);
  CHECK(!t.pair_rate("v100", "ResNet-50 (batch size 64)", 1, "A3C", 1));
  CHECK(!t.pair_rate("k80", "ResNet-50 (batch size 64)", 1, "Transformer (batch size 128)", 1));
}

TEST_CASE("throughput table: malformed JSON names the line") {
  try {
    (void)ThroughputTable::parse("{\n\"v100\": {\n\n  \"('A3C', 1)\" {\"null\": 1}\n}}", "t.json");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    check_names(e, "t.json", 4, "");
  }
  CHECK_THROWS_AS((void)ThroughputTable::parse("[]", "t.json"), InputError);
  CHECK_THROWS_AS((void)ThroughputTable::parse(R"j({"v100": {"('A3C', 1)": {"x": 1}}})j", "t.json"),
                  InputError);
  CHECK_THROWS_AS((void)ThroughputTable::parse(R"j({"v100": {"('A3C', 1)": {"null": "fast"}}})j", "t.json"),
                  InputError);
  CHECK_THROWS_AS(
      (void)ThroughputTable::parse(R"j({"v100": {"('A3C', 1)": {"null": 1, "('A3C', 1)": [1]}}})j", "t.json"),
      InputError);
  CHECK_THROWS_AS(
      (void)ThroughputTable::parse(
          R"j({"v100": {"('A3C', 1)": {"null": 1}}, "V100": {"('A3C', 1)": {"null": 2}}})j", "t.json"),
      InputError);
}

TEST_CASE("trace stats: counts, percentiles, GPU-hours and the text table") {
  std::vector<JobSpec> jobs(5);
  const double submits[] = {100, 0, 50, 3700, 10};
  const int gpus[] = {1, 2, 1, 0, 8};
  const int milli[] = {1000, 1000, 500, 0, 1000};
  const double durations[] = {3600, 1800, 7200, 100, -1};
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    jobs[i].submit_s = submits[i];
    jobs[i].gpus = gpus[i];
    jobs[i].gpu_milli = milli[i];
    if (durations[i] >= 0) jobs[i].duration_s = durations[i];
  }
  jobs[4].steps = 1000;
  jobs[2].single_node = true;
  const TraceStats s = compute_stats(jobs);
  CHECK(s.jobs == 5);
  CHECK(s.first_submit_s == 0);
  CHECK(s.last_submit_s == 3700);
  CHECK(s.span_s == 3700);
  CHECK(s.gpu_histogram == std::map<int, std::size_t>{{0, 1}, {1, 2}, {2, 1}, {8, 1}});
  CHECK(s.fractional_gpu_jobs == 1);
  CHECK(s.single_node_jobs == 1);
  CHECK(s.jobs_with_steps == 1);
  CHECK(s.jobs_with_duration == 4);
  // Sorted durations 100, 1800, 3600, 7200; linear interpolation between order statistics.
  CHECK(s.duration_p10_s == doctest::Approx(100 + 0.3 * 1700));
  CHECK(s.duration_p50_s == doctest::Approx(2700));
  CHECK(s.duration_p90_s == doctest::Approx(3600 + 0.7 * 3600));
  CHECK(s.duration_p99_s == doctest::Approx(3600 + 0.97 * 3600));
  CHECK(s.duration_max_s == 7200);
  CHECK(s.duration_mean_s == doctest::Approx(12700.0 / 4));
  CHECK(s.gpu_hours == doctest::Approx(1.0 + 2 * 0.5 + 0.5 * 2.0));

  const std::string text = format_stats(s, "tiny trace");
  MESSAGE(text);
  CHECK(contains(text, "tiny trace"));
  CHECK(contains(text, "jobs"));
  CHECK(contains(text, "1 h  (0 s .. 3700 s)"));  // span 3700 s
  CHECK(contains(text, "0 (CPU only)"));
  CHECK(contains(text, "duration p50"));
  CHECK(contains(text, "2700 s"));
  CHECK(contains(text, "45 min"));
  CHECK(contains(text, "GPU-h"));

  CHECK(compute_stats({}).jobs == 0);
  CHECK(contains(format_stats(compute_stats({}), "empty"), "jobs"));
  CHECK(human_duration(42) == "42 s");
  CHECK(human_duration(90) == "1.5 min");
  CHECK(human_duration(5400) == "1.5 h");
  CHECK(human_duration(3 * 86400) == "3 d");
}
