// fleetsim sweep, end to end through the real binary: every combination x seed in its own process,
// runs.csv / aggregate.csv / paired.csv, byte-identical whatever --jobs, resuming, failures recorded,
// bad input refused before anything runs, and intervals that shrink as 1/sqrt(seeds).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>

#include "sim/experiments/sweep_stats.hpp"
#include "tests/test_util.hpp"
#include "tests/text_checks.hpp"
#include "tests/tiny_queue_case.hpp"
#include "workloads/base/text.hpp"

using fleetsim::test::contains;
using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;
namespace fs = std::filesystem;

namespace {

// The tiny queueing case (tests/tiny_queue_case.hpp): fifo JCTs 100, 140, 160 (mean 400/3); fifo-skip
// 100, 140, 30 (mean 90).
fs::path make_case(const std::string& sweep) {
  return fleetsim::test::make_tiny_sweep_case("sweep", sweep);
}

/// CSV rows (no quoted commas in the cells read here) as maps column -> cell.
std::vector<std::map<std::string, std::string>> rows(const fs::path& csv) {
  std::istringstream in(read_file(csv));
  std::string line;
  std::getline(in, line);
  const auto head = fleetsim::split(line, ',');
  std::vector<std::map<std::string, std::string>> out;
  while (std::getline(in, line)) {
    const auto f = fleetsim::split(line, ',');
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < head.size() && i < f.size(); ++i) row[head[i]] = f[i];
    out.push_back(row);
  }
  return out;
}

std::string sweep(const fs::path& dir, const std::string& args) {
  return "sweep " + (dir / "sweep.toml").string() + " --out " + (dir / "out").string() + " " + args;
}

constexpr const char* kPolicySweep = R"(base = "s.toml"
seeds = 3
[grid]
"scheduler.policy" = ["fifo", "fifo-skip"]
"scheduler.placement" = ["first-fit", "consolidate"]
)";

}  // namespace

TEST_CASE("sweep: 2 x 2 combinations x 3 seeds give runs, aggregates with intervals and paired differences") {
  const auto dir = make_case(kPolicySweep);
  const auto r = run_fleetsim(sweep(dir, "--jobs 2"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(contains(r.output, "± "));
  CHECK(contains(
      r.output,
      "scheduler.policy: fifo-skip vs fifo at scheduler.placement=first-fit: -32.5% ± 0.0% mean_jct_s "
      "(n=3)"));
  const auto runs = rows(dir / "out" / "runs.csv");
  REQUIRE(runs.size() == 12);
  CHECK(runs[0].at("run") == "c000-s1");
  CHECK(runs[0].at("scheduler.policy") == "fifo");
  CHECK(runs[0].at("scheduler.placement") == "first-fit");
  CHECK(runs[11].at("run") == "c003-s3");
  CHECK(runs[11].at("seed") == "3");
  for (const auto& row : runs) {
    CHECK(row.at("status") == "ok");
    CHECK(std::stod(row.at("mean_jct_s")) ==
          doctest::Approx(row.at("scheduler.policy") == "fifo" ? 400.0 / 3 : 90.0));
    CHECK(row.count("wall_s") == 0);
    CHECK(fs::exists(dir / "out" / "runs" / row.at("run") / "jobs.csv"));
    CHECK(fs::exists(dir / "out" / "runs" / row.at("run") / "scenario.toml"));
  }
  CHECK(contains(read_file(dir / "out" / "runs" / "c001-s2" / "scenario.toml"), "placement = 'consolidate'"));
  bool seen = false;
  for (const auto& row : rows(dir / "out" / "aggregate.csv"))
    if (row.at("metric") == "mean_jct_s" && row.at("combination") == "c002") {
      seen = true;
      CHECK(row.at("n") == "3");
      CHECK(std::stod(row.at("mean")) == doctest::Approx(90));
      CHECK(row.at("ci95") == "0");
    }
  CHECK(seen);
  seen = false;
  for (const auto& row : rows(dir / "out" / "paired.csv"))
    if (row.at("metric") == "mean_jct_s" && row.at("key") == "scheduler.placement" &&
        row.at("context") == "scheduler.policy=fifo") {
      seen = true;  // placement cannot matter on one node: 0 +- 0
      CHECK(row.at("setting") == "consolidate");
      CHECK(row.at("mean_rel_pct") == "0");
      CHECK(row.at("ci95_rel_pct") == "0");
    }
  CHECK(seen);
  fs::remove_all(dir);
}

TEST_CASE("sweep: runs.csv is byte-identical with 1 and 2 workers, and a rerun resumes") {
  const auto dir = make_case(kPolicySweep);
  REQUIRE(run_fleetsim(sweep(dir, "--jobs 1 -q")).code == 0);
  const std::string one = read_file(dir / "out" / "runs.csv");
  const std::string agg = read_file(dir / "out" / "aggregate.csv");
  const auto again = run_fleetsim(sweep(dir, "--jobs 2"));
  REQUIRE(again.code == 0);
  CHECK(contains(again.output, "0 to run, 12 done before"));
  fs::remove_all(dir / "out");
  REQUIRE(run_fleetsim(sweep(dir, "--jobs 2 -q")).code == 0);
  CHECK(read_file(dir / "out" / "runs.csv") == one);
  CHECK(read_file(dir / "out" / "aggregate.csv") == agg);
  // A run whose folder was lost, and a changed grid, are run again; the rest are kept.
  fs::remove_all(dir / "out" / "runs" / "c001-s2");
  write_file(dir / "sweep.toml", std::string(kPolicySweep) + "\"cluster.pool.0.nodes\" = [2]\n");
  const auto changed = run_fleetsim(sweep(dir, "--jobs 2"));
  REQUIRE(changed.code == 0);
  CHECK_MESSAGE(contains(changed.output, "12 to run, 0 done before"), changed.output);
  write_file(dir / "sweep.toml", kPolicySweep);
  CHECK(contains(run_fleetsim(sweep(dir, "")).output, "12 to run"));  // the resolved scenarios changed back
  CHECK(contains(run_fleetsim(sweep(dir, "")).output, "0 to run"));
  CHECK(contains(run_fleetsim(sweep(dir, "--force")).output, "12 to run"));
  CHECK(read_file(dir / "out" / "runs.csv") == one);
  fs::remove_all(dir);
}

TEST_CASE("sweep: a failing run is recorded with its error and does not stop the others") {
  const auto dir = make_case("");
  write_file(dir / "sweep.toml", "base = \"s.toml\"\nseeds = 2\n[grid]\n\"workload.path\" = [\"" +
                                     (dir / "trace.csv").string() + "\", \"" +
                                     (dir / "missing.csv").string() + "\"]\n");
  const auto r = run_fleetsim(sweep(dir, "--jobs 2"));
  CHECK(r.code == 1);
  CHECK(contains(r.output, "2 of 4 runs failed"));
  const std::string csv = read_file(dir / "out" / "runs.csv");
  CHECK(contains(csv, "c000-s1,c000,"));
  CHECK(contains(csv, ",ok,,"));
  CHECK(contains(csv, ",failed,"));
  CHECK(contains(csv, "missing.csv"));
  for (const auto& e : fs::directory_iterator(dir / "out" / "runs" / "c001-s1"))
    CHECK_MESSAGE(e.path().filename().string()[0] != '.', e.path());
  // The failed runs are tried again on a rerun; the good ones are kept.
  CHECK(contains(run_fleetsim(sweep(dir, "")).output, "2 to run, 2 done before"));
  fs::remove_all(dir);
}

TEST_CASE("sweep: bad keys and values are exit 2 naming the sweep file, line, key and combination") {
  const auto dir = make_case("");
  const std::string sw = (dir / "sweep.toml").string();
  auto check = [&](const std::string& text, const std::vector<std::string>& parts) {
    write_file(dir / "sweep.toml", text);
    const auto r = run_fleetsim(sweep(dir, ""));
    CHECK_MESSAGE(r.code == 2, text);
    for (const auto& p : parts) CHECK_MESSAGE(contains(r.output, p), r.output);
    CHECK_FALSE(fs::exists(dir / "out"));
  };
  check("base = \"s.toml\"\n[grid]\n\"scheduler.policy\" = [\"fifo\"]\n\"cluster.pool.0.nodez\" = [1]\n",
        {sw + ":4: field 'cluster.pool.0.nodez'", "combination c000", "did you mean 'nodes'"});
  check("base = \"s.toml\"\n[grid]\n\"cluster.pool.0.nodes\" = []\n",
        {sw + ":3: field 'cluster.pool.0.nodes'", "empty list"});
  check("base = \"s.toml\"\n[grid]\n\"cluster.pool.0.nodes\" = [1,\n  \"two\"]\n",
        {sw + ":3: field 'cluster.pool.0.nodes'", "combination c001 (cluster.pool.0.nodes=two)",
         "expected an integer"});
  check("base = \"nothere.toml\"\n", {sw + ":1: field 'base'", "not found"});
  check("base = \"s.toml\"\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"fifoo\"]\n",
        {sw + ":3: field 'scheduler.policy'", "combination c001", "unknown scheduling policy 'fifoo'"});
  check("base = \"s.toml\"\n[[case]]\nname = \"a\"\n\"workload.limit\" = \"ten\"\n",
        {sw + ":4: field 'workload.limit'", "combination c000 (workload.limit=ten)"});
  fs::remove_all(dir);
}

TEST_CASE("sweep: more than 1000 runs states its run count and starts only with --yes") {
  const auto dir =
      make_case("base = \"s.toml\"\nseeds = 501\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n");
  const std::string sw = (dir / "sweep.toml").string();
  for (const char* backend : {"", "--slurm-array", "--jobs 1"}) {
    const auto r = run_fleetsim(sweep(dir, backend));
    CHECK_MESSAGE(r.code == 2, backend);
    CHECK_MESSAGE(contains(r.output, sw + ": field '--yes': this sweep is 1002 runs (2 combinations x 501 "
                                          "seeds), more than 1000: add --yes"),
                  r.output);
    CHECK_FALSE(fs::exists(dir / "out"));  // nothing written, nothing run
  }
  // Confirmed: the array script lists all 1002 runs (written, not run).
  const auto yes = run_fleetsim(sweep(dir, "--slurm-array --yes"));
  REQUIRE_MESSAGE(yes.code == 0, yes.output);
  CHECK(contains(yes.output, "#SBATCH --array=0-1001\n"));
  // 1000 runs (the limit) need no --yes.
  fs::remove_all(dir / "out");
  write_file(dir / "sweep.toml",
             "base = \"s.toml\"\nseeds = 500\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n");
  const auto at = run_fleetsim(sweep(dir, "--slurm-array"));
  REQUIRE_MESSAGE(at.code == 0, at.output);
  CHECK(contains(at.output, "#SBATCH --array=0-999\n"));
  fs::remove_all(dir);
}

TEST_CASE("sweep: two identical cases are paired as 0 +- 0") {
  const auto dir = make_case(
      "base = \"s.toml\"\nseeds = [1, 2, 5]\n[[case]]\nname = \"a\"\n[[case]]\nname = \"b\"\n"
      "\"scheduler.policy\" = \"fifo\"\n");
  const auto r = run_fleetsim(sweep(dir, ""));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(contains(r.output, "case: b vs a: +0.0% ± 0.0% mean_jct_s (n=3)"));
  const auto runs = rows(dir / "out" / "runs.csv");
  REQUIRE(runs.size() == 6);
  CHECK(runs[5].at("case") == "b");
  CHECK(runs[5].at("run") == "c001-s5");
  fs::remove_all(dir);
}

TEST_CASE("sweep: the 95% interval shrinks as 1/sqrt(seeds) on the synthetic workload") {
  const auto dir = temp_dir("sweepci");
  const std::string base = std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/quickstart.toml";
  std::map<int, std::map<std::string, fleetsim::SampleStats>> at;
  for (const int seeds : {8, 32}) {
    write_file(dir / "sweep.toml", "base = \"" + base + "\"\nseeds = " + std::to_string(seeds) +
                                       "\nmetrics = [\"gpu_utilization\", \"mean_jct_s\"]\n[grid]\n"
                                       "\"workload.jobs\" = [500]\n");
    const auto r = run_fleetsim(sweep(dir, "-q"));  // the 32-seed sweep reuses the first 8 runs
    REQUIRE_MESSAGE(r.code == 0, r.output);
    for (const auto& row : rows(dir / "out" / "aggregate.csv")) {
      auto& s = at[seeds][row.at("metric")];
      s.n = std::stoul(row.at("n"));
      s.std = std::stod(row.at("std"));
      s.ci95 = std::stod(row.at("ci95"));
    }
  }
  // ci = t(n-1) std / sqrt(n): with the seeds' spread about the same, 4x the seeds halves the
  // interval, and the smaller t quantile shrinks it a little more (to 1 / 2.32).
  const double expected = fleetsim::t95(7) / fleetsim::t95(31) * 2;
  for (const char* m : {"gpu_utilization", "mean_jct_s"}) {
    CAPTURE(m);
    CHECK(at[8][m].n == 8);
    CHECK(at[32][m].n == 32);
    CHECK(at[8][m].std > 0);
    CHECK(at[32][m].std / at[8][m].std == doctest::Approx(1).epsilon(0.25));
    CHECK(at[8][m].ci95 / at[32][m].ci95 == doctest::Approx(expected).epsilon(0.25));
  }
  fs::remove_all(dir);
}
