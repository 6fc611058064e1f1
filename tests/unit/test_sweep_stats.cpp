// Statistics of sweeps (sim/experiments/sweep_stats.hpp) and the sweep file's expansion (sweep_spec.hpp).
#include <doctest/doctest.h>

#include <filesystem>

#include "sim/experiments/sweep_spec.hpp"
#include "sim/experiments/sweep_stats.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

TEST_CASE("sweep stats: Student t quantiles match the tables") {
  CHECK(t95(1) == doctest::Approx(12.7062).epsilon(1e-4));
  CHECK(t95(4) == doctest::Approx(2.7764).epsilon(1e-4));
  CHECK(t95(29) == doctest::Approx(2.0452).epsilon(1e-4));
  CHECK(t95(100000) == doctest::Approx(1.95996).epsilon(1e-4));
}

TEST_CASE("sweep stats: mean, sample std, 95% interval, min, max") {
  const SampleStats s = sample_stats({2, 4, 4, 4, 5, 5, 7, 9});
  CHECK(s.n == 8);
  CHECK(s.mean == doctest::Approx(5));
  CHECK(s.std == doctest::Approx(2.138090).epsilon(1e-6));
  CHECK(s.ci95 == doctest::Approx(2.364624 * 2.138090 / std::sqrt(8.0)).epsilon(1e-5));
  CHECK(s.min == 2);
  CHECK(s.max == 9);
  const SampleStats one = sample_stats({3});
  CHECK(one.n == 1);
  CHECK(one.std == 0);
  CHECK(one.ci95 == 0);
  CHECK(sample_stats({}).n == 0);
}

TEST_CASE("sweep stats: a setting paired with itself gives 0 +- 0") {
  const std::vector<double> x = {10, 12, 9, 15, 11};
  const PairedStats p = paired_stats(x, x);
  CHECK(p.diff.n == 5);
  CHECK(p.diff.mean == 0);
  CHECK(p.diff.ci95 == 0);
  REQUIRE(p.has_relative);
  CHECK(p.relative.mean == 0);
  CHECK(p.relative.ci95 == 0);
  // A constant 10% cut is -10% +- 0; a zero baseline leaves out the relative difference.
  const PairedStats q = paired_stats({9, 18, 27}, {10, 20, 30});
  CHECK(q.relative.mean == doctest::Approx(-10));
  CHECK(q.relative.ci95 == doctest::Approx(0).epsilon(1e-9));
  CHECK_FALSE(paired_stats({1, 2}, {0, 2}).has_relative);
}

TEST_CASE("sweep spec: grid x cases x seeds expand in a fixed order with padded ids") {
  const auto dir = test::temp_dir("sweepspec");
  test::write_file(dir / "s.toml", "");
  const SweepSpec spec = parse_sweep(R"(base = "s.toml"
seeds = [3, 10]
[grid]
"scheduler.policy" = ["fifo", "las"]
cluster.pool.0.nodes = [8, 16, 32]
[baseline]
"scheduler.policy" = "las"
)",
                                     "sw.toml", dir.string());
  REQUIRE(spec.grid.size() == 2);
  CHECK(spec.grid[0].key == "scheduler.policy");
  CHECK(spec.grid[1].key == "cluster.pool.0.nodes");
  CHECK(spec.grid[0].baseline == 1);
  CHECK(spec.line_of("cluster.pool.0.nodes") == 5);
  const auto combos = sweep_combinations(spec);
  REQUIRE(combos.size() == 6);
  CHECK(combos[1].label() == "scheduler.policy=fifo cluster.pool.0.nodes=16");
  const auto runs = sweep_runs(spec, combos);
  REQUIRE(runs.size() == 12);
  CHECK(runs[0].id == "c000-s03");
  CHECK(runs[1].id == "c000-s10");
  CHECK(runs[11].overrides.back() == "seed=10");
  CHECK(runs[0].overrides[0] == "scheduler.policy='fifo'");
  CHECK(runs[0].overrides[1] == "cluster.pool.0.nodes=8");
  std::filesystem::remove_all(dir);
}

TEST_CASE("sweep spec: malformed sweep files name the file, line and key") {
  const auto dir = test::temp_dir("sweepspec");
  test::write_file(dir / "s.toml", "");
  auto error = [&](const std::string& text) -> std::string {
    try {
      parse_sweep(text, "sw.toml", dir.string());
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error("base = \"nope.toml\"\n").find("sw.toml:1: field 'base'") != std::string::npos);
  CHECK(error("base = \"s.toml\"\n[grid]\n\"scheduler.policy\" = []\n")
            .find("sw.toml:3: field 'scheduler.policy': empty list") != std::string::npos);
  CHECK(error("base = \"s.toml\"\n[grid]\nseed = [1, 2]\n").find("'seeds = N'") != std::string::npos);
  CHECK(error("base = \"s.toml\"\nseedz = 3\n").find("did you mean 'seeds'") != std::string::npos);
  CHECK(error("base = \"s.toml\"\n[grid]\n\"a.b\" = 3\n").find("takes a list") != std::string::npos);
  CHECK(error("base = \"s.toml\"\n[grid]\n\"a.b\" = [1, 1]\n").find("given twice") != std::string::npos);
  std::filesystem::remove_all(dir);
}
