// "Nothing crashes on user input": a seeded mutation test of fleetsim's inputs through the real binary.
// Each case starts from a small valid input set (a scenario and the trace files it reads, a sweep file, an
// LLM config), applies one mutation per mutant to one of its files (delete or duplicate a line, replace a
// value with garbage, an empty string, a negative number, 0, NaN/inf, 1e308, a huge integer or a wrong
// type, truncate mid-line, add an unknown key, swap two CSV columns, insert binary bytes) and runs the
// command. Every mutant must end normally with 0 or 2; on 2 the message names an input file and a line or
// field and the output folder holds nothing; on 0 the outputs parse. A failing mutant is printed (case,
// index, file, mutation) and its folder kept, so it can be rerun by hand. Deterministic: std::mt19937_64
// seeded per case.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tests/fuzz_harness.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using fleetsim::test::read_file;
using fleetsim::test::write_file;
using namespace fleetsim::test::fuzz;

namespace {

const char* kTinyScenario = R"(seed = 3
[cluster]
[[cluster.pool]]
name = "p"
nodes = 2
gpus_per_node = 4
gpu = "V100"
[cluster.network]
nodes_per_leaf = 2
[workload]
format = "csv"
path = "trace.csv"
[workload.columns]
id = "id"
submit = "submit"
duration = "duration"
gpus = "gpus"
[scheduler]
policy = "las"
placement = "consolidate"
)";
const char* kTinyTrace = "id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\nD,25,300,8\n";
const char* kFailures = R"([failures]
trace = "faults.csv"
trace_format = "csv"
detection_s = 30
restart_s = 60
checkpoint = "fixed"
checkpoint_interval_s = 100
checkpoint_write_s = 10
spare_nodes = 1
)";
const char* kFaults = "node,start,end,component\nn0,40,500,gpu\nn1,60,90,nic\n";
const char* kRequests =
    "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
    "{\"input_toks\": 9, \"output_toks\": 1, \"arrival_time_ns\": 5000000}\n"
    "{\"input_toks\": 30, \"output_toks\": 5, \"arrival_time_ns\": 6000000}\n";

std::string serving_scenario() {
  return "seed = 2\n[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 2\ngpu = \"A10\"\n"
         "[[service]]\nname = \"tiny\"\nmodel = \"" +
         kServing + "/tiny-config.json\"\nprofiles = \"" + kServing +
         "/tiny/bf16\"\ngpu = \"A10\"\nreplicas = 2\nkv_cache_gib = 0.001\nrouting = \"least-outstanding\"\n"
         "slo_ttft_ms = 5\n[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n";
}

const std::vector<std::string> kRunOutputs = {"summary.json", "jobs.csv"};

}  // namespace

TEST_CASE("fuzz: mutants of the quickstart scenario exit 0 or 2, never crash") {
  std::string toml = read_file(kSource + "/scenarios/quickstart.toml");
  replace_all(toml, "../results/quickstart", "res");
  const FuzzCase c{"quickstart",
                   {{"quickstart.toml", toml}},
                   "run {d}/quickstart.toml --set workload.limit=40 --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 80 / kScale, 1) == 0);
}

TEST_CASE("fuzz: mutants of a tiny CSV-trace scenario and its trace exit 0 or 2, never crash") {
  const FuzzCase c{"tiny",
                   {{"s.toml", kTinyScenario}, {"trace.csv", kTinyTrace}},
                   "run {d}/s.toml --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 100 / kScale, 2) == 0);
}

TEST_CASE("fuzz: mutants of a failures scenario and its fault trace exit 0 or 2, never crash") {
  const FuzzCase c{"failures",
                   {{"s.toml", std::string(kTinyScenario) + kFailures},
                    {"trace.csv", kTinyTrace},
                    {"faults.csv", kFaults}},
                   "run {d}/s.toml --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 100 / kScale, 3) == 0);
}

TEST_CASE("fuzz: mutants of a serving scenario and its request JSONL exit 0 or 2, never crash") {
  const FuzzCase c{"serving",
                   {{"s.toml", serving_scenario()}, {"r.jsonl", kRequests}},
                   "run {d}/s.toml --out {o} -q",
                   {"summary.json", "requests.csv"}};
  CHECK(fuzz(c, 80 / kScale, 4) == 0);
}

TEST_CASE("fuzz: mutants of fleetsim size's scenario exit 0 or 2, never crash") {
  const FuzzCase c{"size",
                   {{"s.toml", serving_scenario()}, {"r.jsonl", kRequests}},
                   "size {d}/s.toml --service tiny --max-replicas 4 --out {o} -q",
                   {"sizing.csv"}};
  CHECK(fuzz(c, 40 / kScale, 5) == 0);
}

TEST_CASE("fuzz: mutants of a sweep file and its base scenario exit 0 or 2, never crash") {
  const std::string sweep =
      "base = \"s.toml\"\nseeds = 1\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n"
      "[baseline]\n\"scheduler.policy\" = \"fifo\"\n";
  const FuzzCase c{"sweep",
                   {{"sweep.toml", sweep}, {"s.toml", kTinyScenario}, {"trace.csv", kTinyTrace}},
                   "sweep {d}/sweep.toml --out {o} -q --jobs 1",
                   {"runs.csv", "aggregate.csv"}};
  CHECK(fuzz(c, 40 / kScale, 6) == 0);
}

TEST_CASE("fuzz: mutants of an LLM config for fleetsim llm predict exit 0 or 2, never crash") {
  const FuzzCase c{
      "llm",
      {{"config.json", read_file(kSource + "/tests/data/llm/llama3-70b.json")}},
      "llm predict --model {d}/config.json --tp 8 --pp 4 --seq 2048 --global-batch 64 --gpu H100 --out {o}",
      {"prediction.json"}};
  CHECK(fuzz(c, 60 / kScale, 7) == 0);
}

// Regressions of what the fuzzer found (each was a hang, an exit 1 or an internal error before the fix).

TEST_CASE("fuzz regression: an integer key beyond its type's range is refused, not wrapped around") {
  // nodes = 9999999999999 used to wrap to 1,316,134,911 nodes: the run hung building the cluster.
  const auto dir = fleetsim::test::temp_dir("fuzz-range");
  std::string toml = kTinyScenario;
  replace_all(toml, "nodes = 2", "nodes = 9999999999999");
  write_file(dir / "s.toml", toml);
  write_file(dir / "trace.csv", kTinyTrace);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:5: field 'cluster.pool.0.nodes': out of range: 9999999999999") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a sweep whose every run rejects the base's trace exits 2 and writes nothing") {
  // Before: exit 1 ("2 of 2 runs failed") with runs.csv, aggregate.csv and runs/ left behind; and a trace
  // with invalid UTF-8 made writing run.json throw (exit 1, "internal error: ... invalid UTF-8 byte").
  for (const std::string& trace : {std::string("id,submit,duration,gpus\nA,0,oops,2\n"),
                                   std::string("id,submit,duration,gpus\nA,0,1\xff\xfe,2\n")}) {
    const auto dir = fleetsim::test::temp_dir("fuzz-sweep");
    write_file(dir / "s.toml", kTinyScenario);
    write_file(dir / "trace.csv", trace);
    write_file(dir / "sweep.toml",
               "base = \"s.toml\"\nseeds = 1\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n");
    const auto r = fleetsim::test::run_fleetsim("sweep " + (dir / "sweep.toml").string() + " --out " +
                                                (dir / "out").string() + " -q --jobs 1");
    CHECK(r.code == 2);
    CHECK(r.output.find("every run rejected its input") != std::string::npos);
    CHECK(r.output.find("trace.csv:2: field 'duration'") != std::string::npos);
    CHECK(r.output.find("internal error") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out"));
    fs::remove_all(dir);
  }
}

TEST_CASE("fuzz regression: a job duration of 1e308 s is refused with its line, not simulated forever") {
  // Before: with checkpoints (the failures case) the run never ended.
  const auto dir = fleetsim::test::temp_dir("fuzz-duration");
  write_file(dir / "s.toml", std::string(kTinyScenario) + kFailures);
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,1e308,2\nB,10,50,4\n");
  write_file(dir / "faults.csv", kFaults);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("trace.csv:2: field 'duration': duration 1e+308 s is beyond 1e12 s") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a mistyped input path is named by the scenario's file, line and key") {
  // Before: "DIR/garbage: trace file not found", naming neither the scenario nor workload.path; the same
  // for a service's model or profiles (fleetsim run and fleetsim size).
  const auto dir = fleetsim::test::temp_dir("fuzz-path");
  std::string toml = kTinyScenario;
  replace_all(toml, "path = \"trace.csv\"", "path = \"garbage\"");
  write_file(dir / "s.toml", toml);
  auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                        (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:12: field 'workload.path': not found: " + (dir / "garbage").string()) !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  std::string serving = serving_scenario();
  replace_all(serving, "/tiny/bf16", "/tiny/nope");
  write_file(dir / "serve.toml", serving);
  write_file(dir / "r.jsonl", kRequests);
  r = fleetsim::test::run_fleetsim("size " + (dir / "serve.toml").string() + " --service tiny --out " +
                                   (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("serve.toml:10: field 'service.0.profiles': not found: ") != std::string::npos,
                r.output);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE(
    "fuzz regression: with failures on, a job larger than the cluster is skipped, not an internal error") {
  // Before: the run ended with "internal error: job 1 has not arrived or has finished" (exit 1) while
  // writing failures_jobs: the failure hook read the record of a job skipped at arrival.
  const auto dir = fleetsim::test::temp_dir("fuzz-skip");
  write_file(dir / "s.toml", std::string(kTinyScenario) + kFailures);
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,100,2\nB,10,50,64\n");
  write_file(dir / "faults.csv", kFaults);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK_MESSAGE(r.code == 0, r.output);
  CHECK(read_file(dir / "out" / "skipped.csv").find("B,") != std::string::npos);
  CHECK(nlohmann::json::parse(read_file(dir / "out" / "summary.json"))["completed"] == 1);
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a KV cache larger than the replica's GPU memory is refused, not allocated") {
  // Before: kv_cache_gib = 9999999999999 ended in "internal error: std::bad_alloc" (exit 1).
  const auto dir = fleetsim::test::temp_dir("fuzz-kv");
  std::string toml = serving_scenario();
  replace_all(toml, "kv_cache_gib = 0.001", "kv_cache_gib = 9999999999999");
  write_file(dir / "s.toml", toml);
  write_file(dir / "r.jsonl", kRequests);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("s.toml:13: field 'service.0.kv_cache_gib': 9999999999999 GiB is more than the "
                              "replica's memory (1 x 24 GiB)") != std::string::npos,
                r.output);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}
