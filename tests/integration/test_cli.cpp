// The fleetsim program on bad input: one clear message naming file, line and field, exit code 2,
// and no output files presented as complete. Also determinism and overrides, end to end.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace {

constexpr const char* kScenario = R"(seed = 7
[cluster]
[[cluster.pool]]
name = "p"
nodes = 2
gpus_per_node = 4
gpu = "V100"
[workload]
format = "csv"
path = "trace.csv"
[workload.columns]
submit = "submit"
duration = "duration"
gpus = "gpus"
[scheduler]
policy = "fifo"
placement = "first-fit"
[output]
dir = "out"
)";

struct Case {
  std::filesystem::path dir;
  std::string scenario() const { return (dir / "s.toml").string(); }
  bool has_outputs() const {
    return std::filesystem::exists(dir / "out" / "jobs.csv") ||
           std::filesystem::exists(dir / "out" / "summary.json");
  }
};

Case make_case(const std::string& trace, const std::string& scenario = kScenario) {
  Case c{temp_dir("cli")};
  write_file(c.dir / "trace.csv", trace);
  write_file(c.dir / "s.toml", scenario);
  return c;
}

void expect_error(const Case& c, const std::string& extra, const std::vector<std::string>& needles) {
  const auto r = run_fleetsim("run " + c.scenario() + " " + extra);
  CHECK(r.code == 2);
  for (const auto& n : needles)
    CHECK_MESSAGE(r.output.find(n) != std::string::npos, "missing '" << n << "' in: " << r.output);
  CHECK(r.output.find("internal error") == std::string::npos);
  CHECK_FALSE(c.has_outputs());
}

}  // namespace

TEST_CASE("cli: a good run writes every output and exits 0") {
  auto c = make_case("submit,duration,gpus\n0,10,1\n5,20,8\n");
  const auto r = run_fleetsim("run " + c.scenario());
  CHECK(r.code == 0);
  CHECK(r.output.find("completed 2") != std::string::npos);
  for (const char* f : {"jobs.csv", "timeseries.csv", "summary.json", "skipped.csv"})
    CHECK(std::filesystem::exists(c.dir / "out" / f));
}

TEST_CASE("cli: malformed row names file, line and field") {
  expect_error(make_case("submit,duration,gpus\n0,10,1\n5,abc,1\n"), "", {"trace.csv:3", "duration"});
}

TEST_CASE("cli: row with too few fields") {
  expect_error(make_case("submit,duration,gpus\n0,10\n"), "", {"trace.csv:2"});
}

TEST_CASE("cli: negative duration") {
  expect_error(make_case("submit,duration,gpus\n0,-5,1\n"), "", {"trace.csv:2", "duration"});
}

TEST_CASE("cli: absurd GPU count") {
  expect_error(make_case("submit,duration,gpus\n0,5,1000000000\n"), "", {"trace.csv:2", "gpus"});
}

TEST_CASE("cli: bad date") {
  std::string sc = kScenario;
  sc.replace(sc.find("[workload.columns]"), 0, "time_format = \"%Y-%m-%d %H:%M:%S\"\n");
  expect_error(make_case("submit,duration,gpus\n2017-10-03 10:00:00,5,1\nnot-a-date,5,1\n", sc), "",
               {"trace.csv:3", "submit"});
}

TEST_CASE("cli: binary trace file") {
  std::string binary = "submit,duration,gpus\n0,1,1\n";
  binary[3] = '\0';
  binary += "\x01\x02\xff";
  expect_error(make_case(binary), "", {"trace.csv", "binary"});
}

TEST_CASE("cli: missing trace file") {
  auto c = make_case("");
  std::filesystem::remove(c.dir / "trace.csv");
  expect_error(c, "", {"trace.csv"});
}

TEST_CASE("cli: missing column") {
  expect_error(make_case("submit,duration,ngpu\n0,10,1\n"), "", {"trace.csv:1", "gpus"});
}

TEST_CASE("cli: empty trace") {
  expect_error(make_case("submit,duration,gpus\n"), "", {"trace.csv", "no jobs"});
}

TEST_CASE("cli: unknown policy suggests the closest") {
  expect_error(make_case("submit,duration,gpus\n0,1,1\n"), "--set scheduler.policy=fifo-skp",
               {"--set", "scheduler.policy", "fifo-skip"});
}

TEST_CASE("cli: unknown placement in the file names its line") {
  std::string sc = kScenario;
  sc.replace(sc.find("first-fit"), 9, "frist-fit");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "",
               {"s.toml:17", "scheduler.placement", "first-fit"});
}

TEST_CASE("cli: unknown GPU model") {
  std::string sc = kScenario;
  sc.replace(sc.find("\"V100\""), 6, "\"V1OO\"");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "", {"s.toml:7", "cluster.pool.0.gpu"});
}

TEST_CASE("cli: unknown scenario key suggests the closest") {
  std::string sc = kScenario;
  sc.replace(sc.find("gpus_per_node"), 13, "gpu_per_node");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "",
               {"s.toml:6", "gpu_per_node", "gpus_per_node"});
}

TEST_CASE("cli: impossible cluster") {
  std::string sc = kScenario;
  sc.replace(sc.find("nodes = 2"), 9, "nodes = 0");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "", {"cluster.pool.0.nodes"});
}

TEST_CASE("cli: wrong value type") {
  std::string sc = kScenario;
  sc.replace(sc.find("nodes = 2"), 9, "nodes = \"two\"");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "",
               {"s.toml:5", "cluster.pool.0.nodes", "integer"});
}

TEST_CASE("cli: a failed run keeps the previous complete outputs untouched") {
  auto c = make_case("submit,duration,gpus\n0,10,1\n");
  REQUIRE(run_fleetsim("run " + c.scenario()).code == 0);
  const std::string before = read_file(c.dir / "out" / "jobs.csv");
  write_file(c.dir / "trace.csv", "submit,duration,gpus\n0,10,1\n1,x,1\n");
  CHECK(run_fleetsim("run " + c.scenario()).code == 2);
  CHECK(read_file(c.dir / "out" / "jobs.csv") == before);
  // no staging leftovers
  int entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(c.dir / "out"))
    entries += e.path().filename().string()[0] == '.';
  CHECK(entries == 0);
}

TEST_CASE("cli: same scenario and seed give byte-identical jobs.csv") {
  std::string sc = kScenario;
  sc.replace(sc.find("format = \"csv\""), 14,
             "format = \"synthetic\"\njobs = 3000\narrival_rate_per_hour = 200");
  sc.replace(
      sc.find("[workload.columns]"),
      std::string("[workload.columns]\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n")
          .size(),
      "");
  sc.replace(sc.find("path = \"trace.csv\"\n"), 19, "");
  sc.replace(sc.find("policy = \"fifo\""), 15, "policy = \"fifo-skip\"");
  auto c = make_case("", sc);
  REQUIRE(run_fleetsim("run " + c.scenario() + " --quiet --out " + (c.dir / "a").string()).code == 0);
  REQUIRE(run_fleetsim("run " + c.scenario() + " --quiet --out " + (c.dir / "b").string()).code == 0);
  const std::string a = read_file(c.dir / "a" / "jobs.csv");
  CHECK(a.size() > 1000);
  CHECK(a == read_file(c.dir / "b" / "jobs.csv"));
  CHECK(read_file(c.dir / "a" / "timeseries.csv") == read_file(c.dir / "b" / "timeseries.csv"));
  // A different seed gives a different workload.
  REQUIRE(
      run_fleetsim("run " + c.scenario() + " --quiet --set seed=8 --out " + (c.dir / "c").string()).code ==
      0);
  CHECK(a != read_file(c.dir / "c" / "jobs.csv"));
}

TEST_CASE("cli: --quiet prints nothing on success and --set overrides pool size") {
  auto c = make_case("submit,duration,gpus\n0,10,16\n");
  auto r = run_fleetsim("run " + c.scenario() + " --quiet");
  CHECK(r.code == 0);
  CHECK(r.output.empty());
  // 16 GPUs do not fit 2 nodes x 4 GPUs: skipped. With 4 nodes they fit.
  CHECK(read_file(c.dir / "out" / "summary.json").find("\"skipped\": 1") != std::string::npos);
  r = run_fleetsim("run " + c.scenario() + " --quiet --set cluster.pool.0.nodes=4");
  CHECK(r.code == 0);
  CHECK(read_file(c.dir / "out" / "summary.json").find("\"completed\": 1") != std::string::npos);
}

TEST_CASE("cli: usage errors exit 2") {
  CHECK(run_fleetsim("").code == 2);
  CHECK(run_fleetsim("frobnicate").code == 2);
  CHECK(run_fleetsim("run").code == 2);
  CHECK(run_fleetsim("policies").code == 0);
}

TEST_CASE("cli: a policy option nobody reads is an error naming --set and the valid options") {
  expect_error(make_case("submit,duration,gpus\n0,1,1\n"),
               "--set scheduler.policy=tiresias --set scheduler.options.thresholds=5",
               {"--set", "scheduler.options.thresholds", "thresholds_gpu_s"});
}

TEST_CASE("cli: a bad policy option value in the file names its line") {
  std::string sc = kScenario;
  sc += "[scheduler.options]\nthresholds_gpu_s = \"abc\"\n";
  sc.replace(sc.find("policy = \"fifo\""), 15, "policy = \"tiresias\"");
  expect_error(make_case("submit,duration,gpus\n0,1,1\n", sc), "", {"s.toml:21", "thresholds_gpu_s"});
}
