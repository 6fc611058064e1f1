// The pollux policy (issue 13): Pollux's adaptive job (models/job/pollux_agent.hpp), its allocation
// search (sim/scheduling/policies/pollux_search.hpp) and the policy end to end on the tiny fixtures of
// tests/data/pollux (README there): hand-derived times, properties over random states, determinism.
#include <doctest/doctest.h>
#include <pagmo/utils/multi_objective.hpp>

#include <algorithm>

#include <filesystem>
#include <map>
#include <random>

#include "models/job/job_model.hpp"
#include "models/job/pollux_agent.hpp"
#include "models/job/pollux_app.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/scheduling/policies/pollux_search.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

std::string fixture(const std::string& name) {
  return std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/pollux/" + name;
}

PolluxApplication cifar() {
  return PolluxApplication::load(fixture("profiles/cifar10"), "test.toml");
}

struct FixtureRun {
  std::string text;  ///< jobs.csv
  std::map<std::string, test::JobRow> jobs;
};

/// Runs the fixture workload on one 4-GPU T4 node under `policy`.
FixtureRun run_fixture(const std::string& policy, const std::string& tag,
                       const std::string& job_model = "pollux", int seed = 1) {
  const auto dir = test::temp_dir(tag);
  const std::string toml =
      "seed = " + std::to_string(seed) +
      "\n[cluster]\n[[cluster.pool]]\nname = \"t4\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"T4\"\n"
      "[workload]\nformat = \"pollux\"\npath = \"" +
      fixture("workload.csv") + "\"\n[execution]\njob_model = \"" + job_model +
      "\"\nstart_overhead_s = 30\nrestart_overhead_s = 30\npollux_profiles = \"" + fixture("profiles") +
      "\"\n[scheduler]\npolicy = \"" + policy + "\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "p.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["completed"] == 3);
  FixtureRun r{test::read_file(dir / "out" / "jobs.csv"), test::read_jobs_csv(dir / "out" / "jobs.csv")};
  std::filesystem::remove_all(dir);
  return r;
}

pollux::SearchJob linear_job(int max_replicas, double age = 1e6) {
  pollux::SearchJob j;
  j.speedup = [](int /*nodes*/, int replicas) { return static_cast<double>(replicas); };
  j.max_replicas = max_replicas;
  j.age_s = age;
  return j;
}

}  // namespace

TEST_CASE(
    "pollux agent: a fixed-batch job trains as the pollux job model times it, epochs in whole seconds") {
  const PolluxApplication app = cifar();
  pollux::AdaptiveJob job(app, 128);
  job.reallocate({2});
  CHECK(job.global_batch() == 128);
  CHECK(job.atomic_batch() == 64);
  // Placement "2" at local 64: 0.22 s a step. Epoch 0 (gain 1): 100 steps = 22 s. Epoch 1 (gain 16/7):
  // 43.75 steps = 9.625 s, rounded to 10 s as the artifact does. The job model (no rounding): 31.625 s.
  CHECK(job.train(5) == doctest::Approx(5));
  CHECK(job.progress() == doctest::Approx(5 / 0.22));
  CHECK(job.train(1000) == doctest::Approx(27));
  CHECK(job.done());
  CHECK(job.epoch() == 2);
  CHECK(job.progress() == doctest::Approx(job.total_progress()));
  CHECK(job.train(10) == 0);
}

TEST_CASE("pollux agent: adaptive batch, linear until observed, then the goodput model's choice") {
  const PolluxApplication app = cifar();
  pollux::AdaptiveJob job(app, 0);
  CHECK_FALSE(job.speedup().has_value());
  job.reallocate({2});
  CHECK(job.global_batch() == 64);  // max(smallest batch 32, smallest local 32 x 2 GPUs)
  CHECK(job.max_profiled_replicas() == 0);
  job.train(1);
  CHECK(job.max_profiled_replicas() == 2);
  REQUIRE(job.speedup().has_value());
  auto sp = *job.speedup();
  CHECK(sp(1, 1) == doctest::Approx(1.0));
  CHECK(sp(0, 0) == 0);
  // Whatever it picks stays within the application's limits.
  CHECK(job.atomic_batch() >= app.min_local());
  CHECK(job.atomic_batch() <= app.max_local());
  CHECK(job.global_batch() >= app.init_batch());
  CHECK(job.global_batch() <= app.max_batch());
  job.set_progress(150);
  CHECK(job.epoch() == 1);
  CHECK_FALSE(job.done());
  job.reallocate({});
  CHECK(job.global_batch() == 0);
  CHECK(job.train(100) == 0);
}

TEST_CASE("pollux search: objectives by hand on two jobs and two 4-GPU nodes") {
  std::mt19937_64 rng(1);
  std::vector<pollux::SearchJob> jobs{linear_job(8, 100), linear_job(8, 100)};
  jobs[1].restarts = 1;
  const pollux::AllocState base{4, 0, 0, 0};  // job 0 on node 0, job 1 waiting
  pollux::AllocationSearch s(jobs, {4, 4}, base, {}, rng);
  // Both on 4 GPUs: scaled speedup 4 x 2 nodes / 8 GPUs = 1; job 1 changed: x (100 - 30) / 130.
  const auto f = s.evaluate({4, 0, 0, 4});
  const double s1 = 70.0 / 130.0;
  CHECK(f[0] == doctest::Approx(-2.0 / (1.0 / (1 + 1e-3) + 1.0 / (s1 + 1e-3))));
  CHECK(f[1] == doctest::Approx(-1.0));  // speedups 8 / 8 GPUs in use
  // Job 1 without GPUs: its power-mean term is 1 / 1e-3; one node in use.
  const auto g = s.evaluate(base);
  CHECK(g[0] == doctest::Approx(-2.0 / (1.0 / (1 + 1e-3) + 1.0 / 1e-3)));
  CHECK(g[1] == doctest::Approx(-1.0));
}

TEST_CASE("pollux search: repair keeps capacity, caps and one distributed job per node on random states") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int nj = 1 + static_cast<int>(rng() % 6), nn = 1 + static_cast<int>(rng() % 20);
    std::vector<int> gpus(static_cast<std::size_t>(nn));
    for (auto& g : gpus) g = 1 + static_cast<int>(rng() % 8);
    std::vector<pollux::SearchJob> jobs;
    for (int j = 0; j < nj; ++j) jobs.push_back(linear_job(1 + static_cast<int>(rng() % 40)));
    pollux::SearchSettings settings;
    pollux::AllocationSearch search(jobs, gpus, pollux::AllocState(static_cast<std::size_t>(nj * nn), 0),
                                    settings, rng);
    pollux::AllocState s(static_cast<std::size_t>(nj * nn));
    for (auto& v : s) v = static_cast<std::uint8_t>(rng() % 10);
    search.repair(s);
    std::vector<int> distributed_on(static_cast<std::size_t>(nn), 0), used(static_cast<std::size_t>(nn), 0);
    for (int j = 0; j < nj; ++j) {
      int total = 0, nodes = 0;
      for (int n = 0; n < nn; ++n) {
        total += s[static_cast<std::size_t>(j * nn + n)];
        nodes += s[static_cast<std::size_t>(j * nn + n)] > 0 ? 1 : 0;
        used[static_cast<std::size_t>(n)] += s[static_cast<std::size_t>(j * nn + n)];
      }
      CHECK(total <= jobs[static_cast<std::size_t>(j)].max_replicas);
      CHECK(nodes <= settings.max_nodes_per_job);
      if (nodes > 1)
        for (int n = 0; n < nn; ++n)
          distributed_on[static_cast<std::size_t>(n)] += s[static_cast<std::size_t>(j * nn + n)] > 0;
    }
    for (int n = 0; n < nn; ++n) {
      CHECK(used[static_cast<std::size_t>(n)] <= gpus[static_cast<std::size_t>(n)]);
      CHECK(distributed_on[static_cast<std::size_t>(n)] <= 1);
    }
  }
}

TEST_CASE("pollux search: two-objective fronts equal pagmo's fast non-dominated sorting on random points") {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const std::size_t n = 2 + rng() % 200;
    std::vector<pollux::Objectives> f(n);
    std::vector<std::vector<double>> g(n);
    // Few distinct values, so that ties and duplicates are common.
    const auto levels = 2 + rng() % 30;
    for (std::size_t i = 0; i < n; ++i) {
      f[i] = {static_cast<double>(rng() % levels), static_cast<double>(rng() % levels)};
      g[i] = {f[i][0], f[i][1]};
    }
    const auto ours = pollux::non_dominated_fronts_2d(f);
    auto theirs = std::get<0>(pagmo::fast_non_dominated_sorting(g));
    for (auto& front : theirs) std::sort(front.begin(), front.end());
    REQUIRE(ours.size() == theirs.size());
    for (std::size_t k = 0; k < ours.size(); ++k)
      CHECK(ours[k] == std::vector<std::size_t>(theirs[k].begin(), theirs[k].end()));
  }
}

TEST_CASE("pollux search: finds the fair optimum of two linearly scaling jobs") {
  std::mt19937_64 rng(3);
  const std::vector<pollux::SearchJob> jobs{linear_job(8), linear_job(8)};
  pollux::AllocationSearch search(jobs, {4, 4}, pollux::AllocState(4, 0), {}, rng);
  std::size_t best = 99;
  const auto front = search.run({pollux::AllocState(4, 0)}, best);
  REQUIRE(best < front.size());
  const auto& s = front[best];
  // Power mean p = -1 of linear speedups: 4 GPUs each is best (one node each: two distributed jobs
  // cannot share a node).
  CHECK(s[0] + s[1] == 4);
  CHECK(s[2] + s[3] == 4);
}

TEST_CASE("pollux policy: fixture workload on one 4-GPU node, hand-derived ncf job, deterministic") {
  // n (ncf: one GPU at its trace batch) arrives at 5 s, is placed at the first round (60 s), pays 30 s
  // and trains 1,000 steps x 0.02 s: it ends at 110 s.
  const FixtureRun a = run_fixture("pollux", "pollux-policy-a");
  const auto& jobs = a.jobs;
  CHECK(jobs.at("n").start == 60);
  CHECK(jobs.at("n").end == doctest::Approx(110));
  CHECK(jobs.at("a").start == 60);
  CHECK(jobs.at("b").start == 60);
  CHECK(a.text == run_fixture("pollux", "pollux-policy-b").text);
}

TEST_CASE("pollux policy: needs the pollux job model") {
  const auto dir = test::temp_dir("pollux-policy-bad");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"t4\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"T4\"\n"
      "[workload]\nformat = \"pollux\"\npath = \"" +
      fixture("workload.csv") +
      "\"\n[execution]\njob_model = \"trace\"\n[scheduler]\npolicy = \"pollux\"\n[output]\ndir = \"out\"\n";
  CHECK_THROWS_WITH_AS(
      [&] {
        const Scenario sc = parse_scenario(toml, (dir / "p.toml").string(), dir.string());
        RunOptions opt;
        opt.quiet = true;
        run_scenario(sc, opt);
      }(),
      doctest::Contains("job_model = \"pollux\""), InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("pollux policy: a genetic-search size outside int's range is an error naming the knob") {
  // population = 3e9 was cast from a double to int: undefined behaviour, then a search of garbage size
  const auto dir = test::temp_dir("pollux-policy-big");
  for (const std::string knob :
       {"population = 3000000000", "generations = -3000000000", "population = 2.5"}) {
    CAPTURE(knob);
    const std::string toml =
        "[cluster]\n[[cluster.pool]]\nname = \"t4\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"T4\"\n"
        "[workload]\nformat = \"pollux\"\npath = \"" +
        fixture("workload.csv") + "\"\n[execution]\njob_model = \"pollux\"\npollux_profiles = \"" +
        fixture("profiles") + "\"\n[scheduler]\npolicy = \"pollux\"\n[scheduler.options]\n" + knob +
        "\n[output]\ndir = \"out\"\n";
    try {
      const Scenario sc = parse_scenario(toml, (dir / "p.toml").string(), dir.string());
      RunOptions opt;
      opt.quiet = true;
      run_scenario(sc, opt);
      FAIL("no error");
    } catch (const InputError& e) {
      CHECK(e.field() == "scheduler.options." + knob.substr(0, knob.find(' ')));
      CHECK(e.line() == 16);  // the knob's line in the scenario
    }
    CHECK_FALSE(std::filesystem::exists(dir / "out" / "jobs.csv"));
  }
  std::filesystem::remove_all(dir);
}
