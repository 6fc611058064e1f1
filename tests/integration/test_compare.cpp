// fleetsim compare, end to end through the real binary: a thin sweep (every policy x placement in its
// own process under runs/<id>/, resumable), comparison.csv, and failures (unknown names, a failing run)
// without comparison.csv.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "tests/test_util.hpp"
#include "tests/tiny_queue_case.hpp"
#include "workloads/base/text.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace {

// The tiny queueing case (tests/tiny_queue_case.hpp): fifo mean JCT 400 / 3, fifo-skip 90.
std::filesystem::path make_case() {
  return fleetsim::test::make_tiny_queue_case("compare", "[output]\ndir = \"out\"\n");
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("compare: 2 policies x 2 placements give 4 rows of summary keys") {
  const auto dir = make_case();
  const auto out = dir / "cmp";
  const auto r = run_fleetsim(
      "compare " + (dir / "s.toml").string() +
      " --policies fifo,fifo-skip --placements first-fit,consolidate --jobs 2 --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(has(r.output, "mean JCT h"));
  std::istringstream csv(read_file(out / "comparison.csv"));
  std::string header, line;
  std::getline(csv, header);
  // policy, placement, then summary.json's scalar keys in order: scenario, job_model, seed, jobs, ...
  CHECK(header.rfind("policy,placement,scenario,job_model,seed,jobs,completed,skipped,mean_jct_s,", 0) == 0);
  CHECK_FALSE(has(header, "skipped_reasons"));
  const auto cols = fleetsim::split(header, ',');
  auto col = [&](const std::string& name) {
    for (std::size_t i = 0; i < cols.size(); ++i)
      if (cols[i] == name) return i;
    FAIL("no column " << name);
    return std::size_t{0};
  };
  std::map<std::string, std::vector<std::string>> rows;
  while (std::getline(csv, line)) {
    auto f = fleetsim::split(line, ',');
    REQUIRE(f.size() == cols.size());
    rows[f[0] + "/" + f[1]] = f;
  }
  REQUIRE(rows.size() == 4);
  for (const auto* p : {"fifo", "fifo-skip"})
    for (const auto* q : {"first-fit", "consolidate"}) {
      const std::string key = std::string(p) + "/" + q;
      REQUIRE_MESSAGE(rows.count(key) == 1, key);
      const auto& f = rows[key];
      CHECK(f[col("jobs")] == "3");
      CHECK(f[col("completed")] == "3");
      CHECK(f[col("seed")] == "3");
      const double mean = std::stod(f[col("mean_jct_s")]);
      CHECK(mean == doctest::Approx(std::string(p) == "fifo" ? 400.0 / 3 : 90.0));
      CHECK(f[col("run_dir")].rfind("runs/c00", 0) == 0);  // compare is a sweep: runs/<id>/
      CHECK(std::filesystem::exists(out / f[col("run_dir")] / "jobs.csv"));
    }
  CHECK(std::filesystem::exists(out / "runs.csv"));  // the sweep's own results too
  CHECK(std::filesystem::exists(out / "paired.csv"));
  // No staging or log folders left behind.
  for (const auto& e : std::filesystem::directory_iterator(out))
    CHECK_MESSAGE(e.path().filename().string()[0] != '.', e.path());
  // A rerun reuses every completed run (same resolved scenarios) and writes the same comparison.
  const std::string first = read_file(out / "comparison.csv");
  const auto again = run_fleetsim(
      "compare " + (dir / "s.toml").string() +
      " --policies fifo,fifo-skip --placements first-fit,consolidate --no-plot --out " + out.string());
  REQUIRE_MESSAGE(again.code == 0, again.output);
  CHECK_MESSAGE(has(again.output, "0 to run"), again.output);
  CHECK(read_file(out / "comparison.csv") == first);
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: an unknown policy is exit 2 before anything runs") {
  const auto dir = make_case();
  const auto out = dir / "cmp";
  const auto r = run_fleetsim("compare " + (dir / "s.toml").string() + " --policies fifo,fifoo --out " +
                              out.string() + " --no-plot");
  CHECK(r.code == 2);
  CHECK(has(r.output, "unknown scheduling policy 'fifoo'"));
  CHECK(has(r.output, "did you mean 'fifo'"));
  CHECK(has(r.output, "valid:"));
  CHECK_FALSE(std::filesystem::exists(out / "comparison.csv"));
  CHECK_FALSE(std::filesystem::exists(out / "fifo__first-fit"));
  const auto p = run_fleetsim("compare " + (dir / "s.toml").string() +
                              " --policies fifo --placements nowhere --out " + out.string() + " --no-plot");
  CHECK(p.code == 2);
  CHECK(has(p.output, "unknown placement policy 'nowhere'"));
  const auto s = run_fleetsim("compare " + (dir / "s.toml").string() +
                              " --policies fifo --set scheduler.policy=fifo --out " + out.string());
  CHECK(s.code == 2);
  CHECK(has(s.output, "--policies"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("compare: a failing run is reported, exit 2, no comparison.csv") {
  const auto dir = make_case();
  const auto out = dir / "cmp";
  // A stale comparison.csv from an earlier compare must not survive a failed one.
  std::filesystem::create_directories(out);
  write_file(out / "comparison.csv", "stale\n");
  const auto r = run_fleetsim("compare " + (dir / "s.toml").string() +
                              " --policies fifo,fifo-skip --no-plot --set workload.path=" +
                              (dir / "missing.csv").string() + " --out " + out.string());
  CHECK(r.code == 2);
  CHECK(has(r.output, "missing.csv"));
  CHECK(has(r.output, "failed"));
  CHECK_FALSE(std::filesystem::exists(out / "comparison.csv"));
  std::filesystem::remove_all(dir);
}
