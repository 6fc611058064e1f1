// Damaged inputs a new user met (issue 40), each kept as it was written: every one is refused with
// exit 2 naming the file, the entry and the field and writing nothing, or run and reported, never an
// "internal error" (exit 1) or a silent answer.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/test_util.hpp"

using namespace fleetsim::test;
namespace fs = std::filesystem;

namespace {

const std::string kServing = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";
const std::string kJobs = "id,submit,duration,gpus\nA,0,100,1\nB,10,100,2\n";
const std::string kColumns =
    "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n";

/// A folder with jobs.csv and s.toml = `toml`; fleetsim run on it (output in DIR/out).
struct Case {
  fs::path dir;
  CmdResult r;
};
Case run_scenario_text(const std::string& tag, const std::string& toml, const std::string& extra_name = "",
                       const std::string& extra = "") {
  Case c{temp_dir(tag), {}};
  write_file(c.dir / "jobs.csv", kJobs);
  if (!extra_name.empty()) write_file(c.dir / extra_name, extra);
  write_file(c.dir / "s.toml", toml);
  c.r = run_fleetsim("run " + (c.dir / "s.toml").string() + " --quiet --out " + (c.dir / "out").string());
  return c;
}

void check_refused(const Case& c, const std::string& file, const std::vector<std::string>& names) {
  INFO(c.r.output);
  CHECK(c.r.code == 2);
  CHECK(c.r.output.find(file) != std::string::npos);
  for (const auto& n : names) CHECK(c.r.output.find(n) != std::string::npos);
  CHECK((!fs::exists(c.dir / "out") || fs::is_empty(c.dir / "out")));
  CHECK(c.r.output.find("internal error") == std::string::npos);
}

std::string cluster(int gpus_per_node) {
  return "[cluster]\n[[cluster.pool]]\nnodes = 2\ngpus_per_node = " + std::to_string(gpus_per_node) +
         "\ngpu = \"A100-80GB\"\n";
}
std::string workload() {
  return "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n" + kColumns;
}
std::string service(const std::string& extra = "") {
  return "[[service]]\nname = \"chat\"\nmodel = \"" + kServing + "/tiny-config.json\"\nprofiles = \"" +
         kServing + "/tiny/bf16\"\ngpu = \"A100-80GB\"\n" + extra +
         "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n";
}

}  // namespace

TEST_CASE(
    "damaged: a StepFun fault event whose Class or Desc is a number or a list: exit 2 naming event and "
    "field") {
  for (const std::string& bad :
       {std::string("\"Class\": 7, \"Desc\": \"x\""), std::string("\"Class\": \"GPU\", \"Desc\": [1, 2]")}) {
    const std::string trace =
        "[{\"node_id\": \"n1\", \"event_time\": 0.5, \"event_type\": \"fault_start\", \"fault_type\": "
        "{\"Level\": \"L1\", \"Class\": \"GPU\"}},\n {\"node_id\": \"n2\", \"event_time\": 0.6, "
        "\"event_type\": "
        "\"fault_start\", \"fault_type\": {\"Level\": \"L1\", " +
        bad + "}}]\n";
    const auto c = run_scenario_text(
        "damaged-stepfun",
        cluster(1) + workload() + "[failures]\ntrace = \"faults.json\"\ntrace_format = \"stepfun\"\n",
        "faults.json", trace);
    const std::string field = bad.find("7") != std::string::npos ? "fault_type.Class" : "fault_type.Desc";
    check_refused(c, "faults.json", {"field '" + field + "'", "event 2", "expected a string"});
    fs::remove_all(c.dir);
  }
}

TEST_CASE("damaged: StepFun event_time of 1e308 days (infinite seconds): exit 2 naming the field") {
  const auto c = run_scenario_text(
      "damaged-stepfun-time",
      cluster(1) + workload() + "[failures]\ntrace = \"faults.json\"\ntrace_format = \"stepfun\"\n",
      "faults.json", "[{\"node_id\": \"n1\", \"event_time\": 1e308, \"event_type\": \"fault_start\"}]\n");
  check_refused(c, "faults.json", {"field 'event_time'", "finite"});
  fs::remove_all(c.dir);
}

TEST_CASE("damaged: gpus_per_node = 0 in every pool: exit 2 naming the key") {
  const auto c = run_scenario_text("damaged-nogpu", cluster(0) + workload());
  check_refused(c, "s.toml", {"cluster.pool.0.gpus_per_node", "no pool has GPUs"});
  fs::remove_all(c.dir);
  // With a service, the same key is named (not the service's GPU model).
  const auto s = run_scenario_text("damaged-nogpu-serve", cluster(0) + service(), "r.jsonl",
                                   "{\"input_toks\": 10, \"output_toks\": 5, \"arrival_time_ns\": 0}\n");
  check_refused(s, "s.toml", {"cluster.pool.0.gpus_per_node"});
  fs::remove_all(s.dir);
}

TEST_CASE("damaged: arrival_offset_s = 1e12 (times would lose their microseconds): exit 2 naming the key") {
  const auto c =
      run_scenario_text("damaged-offset", cluster(1) + service("arrival_offset_s = 1e12\n"), "r.jsonl",
                        "{\"input_toks\": 10, \"output_toks\": 5, \"arrival_time_ns\": 0}\n");
  check_refused(c, "s.toml", {"arrival_offset_s", "at most 1e9 s"});
  fs::remove_all(c.dir);
  // 1e9 s is accepted, and the request's TTFT is its own, not quantised (exactly what it is at offset 0).
  const auto at = [](const std::string& offset) {
    const auto k =
        run_scenario_text("offset-ok", cluster(1) + service("arrival_offset_s = " + offset + "\n"), "r.jsonl",
                          "{\"input_toks\": 10, \"output_toks\": 5, \"arrival_time_ns\": 0}\n");
    INFO(k.r.output);
    REQUIRE(k.r.code == 0);
    const auto j = nlohmann::json::parse(read_file(k.dir / "out" / "summary.json"));
    fs::remove_all(k.dir);
    return j["services"]["chat"]["ttft_mean_s"].get<double>();
  };
  CHECK(at("1e9") == doctest::Approx(at("0")).scale(1).epsilon(1e-6));  // within 1 us
}

TEST_CASE("damaged: a request that can never fit the KV cache is reported, not silently dropped") {
  // A 10 MiB KV cache: about 350,000 tokens of the tiny model.
  const auto c =
      run_scenario_text("damaged-kv", cluster(1) + service("kv_cache_gib = 0.01\n"), "r.jsonl",
                        "{\"input_toks\": 10, \"output_toks\": 5, \"arrival_time_ns\": 0}\n"
                        "{\"input_toks\": 10, \"output_toks\": 10000000, \"arrival_time_ns\": 1000}\n");
  INFO(c.r.output);
  REQUIRE(c.r.code == 0);
  CHECK(c.r.output.find("warning: service 'chat': 1 of 2 requests can never fit a replica's KV cache") !=
        std::string::npos);
  CHECK(c.r.output.find("request '1' (" + (c.dir / "r.jsonl").string() + ":2) needs 10000010 tokens") !=
        std::string::npos);
  const auto j = nlohmann::json::parse(read_file(c.dir / "out" / "summary.json"));
  CHECK(j["services"]["chat"]["completed"] == 1);
  CHECK(j["services"]["chat"]["rejected"] == 1);
  fs::remove_all(c.dir);
}
