// Scenario loader, bad input: --set errors, unknown keys (named with file, line and the closest
// valid key), wrong types, out-of-range values, missing sections, syntax errors; and the key table.
// Pure parsing: no SimGrid engine.
#include <doctest/doctest.h>

#include <fstream>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/scenario.hpp"
#include "tests/scenario_util.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("scenario: --set errors") {
  SUBCASE("no '='") {
    const auto e = error_of(kMinimal, {"scheduler.policy"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->line() == 0);
    CHECK(contains(e->what(), "KEY=VALUE"));
  }
  SUBCASE("empty key") {
    const auto e = error_of(kMinimal, {"=fifo"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(contains(e->what(), "KEY=VALUE"));
  }
  SUBCASE("empty key segment") {
    const auto e = error_of(kMinimal, {"scheduler..policy=fifo"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "scheduler..policy");
    CHECK(contains(e->what(), "empty key segment"));
  }
  SUBCASE("index out of range") {
    const auto e = error_of(kMinimal, {"cluster.pool.2.nodes=1"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "cluster.pool.2.nodes");
    CHECK(contains(e->what(), "out of range (array has 1)"));
  }
  SUBCASE("negative index") {
    const auto e = error_of(kMinimal, {"cluster.pool.-1.nodes=1"});
    REQUIRE(e);
    CHECK(contains(e->what(), "out of range"));
  }
  SUBCASE("non-index on an array") {
    const auto e = error_of(kMinimal, {"cluster.pool.first.nodes=1"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "cluster.pool.first.nodes");
    CHECK(contains(e->what(), "'first' must be an array index"));
  }
  SUBCASE("setting below a value names the value") {
    const auto e = error_of(kMinimal, {"workload.format.kind=x"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "workload.format.kind");
    CHECK(contains(e->what(), "'workload.format' is a value, not a table"));
  }
  SUBCASE("setting below a top-level value") {
    const auto e = error_of("seed = 2\n" + kMinimal, {"seed.x=1"});
    REQUIRE(e);
    CHECK(contains(e->what(), "'seed' is a value, not a table"));
  }
  SUBCASE("unknown key suggests the closest") {
    const auto e = error_of(kMinimal, {"scheduler.polcy=fifo"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->line() == 0);
    CHECK(e->field() == "scheduler.polcy");
    CHECK(contains(e->what(), "did you mean 'policy'?"));
  }
  SUBCASE("wrong type names the key") {
    const auto e = error_of(kMinimal, {"cluster.pool.0.nodes=many"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->line() == 0);
    CHECK(e->field() == "cluster.pool.0.nodes");
    CHECK(contains(e->what(), "expected an integer"));
  }
  SUBCASE("unknown GPU from --set") {
    const auto e = error_of(kMinimal, {"cluster.pool.0.gpu=H1O0"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->field() == "cluster.pool.0.gpu");
    CHECK(contains(e->what(), "did you mean 'H100'?"));
  }
}

TEST_CASE("scenario: unknown key names file, line and key and suggests the closest") {
  const auto e = error_of(lines({
      "seed = 1",                // 1
      "[cluster]",               // 2
      "[[cluster.pool]]",        // 3
      "nodes = 2",               // 4
      "gpus_per_nod = 4",        // 5
      "[workload]",              // 6
      "format = \"synthetic\"",  // 7
  }));
  REQUIRE(e);
  CHECK(e->file() == kName);
  CHECK(e->line() == 5);
  CHECK(e->field() == "cluster.pool.0.gpus_per_nod");
  CHECK(contains(e->what(), "scen.toml:5"));
  CHECK(contains(e->what(), "did you mean 'gpus_per_node'?"));
  CHECK(contains(e->what(), "valid keys here: name, nodes, gpus_per_node"));
}

TEST_CASE("scenario: unknown keys at the top level and in sections") {
  {
    const auto e = error_of("sed = 3\n" + kMinimal);
    REQUIRE(e);
    CHECK(e->line() == 1);
    CHECK(e->field() == "sed");
    CHECK(contains(e->what(), "did you mean 'seed'?"));
  }
  {
    const auto e = error_of(kMinimal + lines({"[output]", "timeseris = true"}));
    REQUIRE(e);
    CHECK(e->line() == 7);
    CHECK(e->field() == "output.timeseris");
    CHECK(contains(e->what(), "did you mean 'timeseries'?"));
  }
  {
    const auto e = error_of(kMinimal + lines({"[workload.columns]", "sumbit = \"t\""}));
    REQUIRE(e);
    CHECK(e->line() == 7);
    CHECK(e->field() == "workload.columns.sumbit");
    CHECK(contains(e->what(), "did you mean 'submit'?"));
  }
  {  // nothing close: no suggestion, but the valid keys are listed
    const auto e = error_of(kMinimal + lines({"[scheduler]", "zzzzzzzzzz = 1"}));
    REQUIRE(e);
    CHECK(e->field() == "scheduler.zzzzzzzzzz");
    CHECK_FALSE(contains(e->what(), "did you mean"));
    CHECK(contains(e->what(), "valid keys here: policy, placement"));
  }
  {
    const auto e = error_of(kMinimal + lines({"[schedular]", "policy = \"fifo\""}));
    REQUIRE(e);
    CHECK(e->field() == "schedular");
    CHECK(contains(e->what(), "did you mean 'scheduler'?"));
  }
}

TEST_CASE("scenario: wrong types name the key and the line") {
  struct Case {
    std::string text;
    long line;
    std::string key;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {lines({"[cluster]", "[[cluster.pool]]", "nodes = \"four\"", "[workload]", "format = \"csv\""}), 3,
       "cluster.pool.0.nodes", "expected an integer"},
      {lines({"[cluster]", "[[cluster.pool]]", "nodes = 2.5", "[workload]", "format = \"csv\""}), 3,
       "cluster.pool.0.nodes", "expected an integer"},
      {kMinimal + "jobs = \"many\"\n", 6, "workload.jobs", "expected an integer"},
      {kMinimal + "arrival_rate_per_hour = \"x\"\n", 6, "workload.arrival_rate_per_hour",
       "expected a number"},
      {kMinimal + "gpus_values = 3\n", 6, "workload.gpus_values", "expected an array"},
      {kMinimal + "gpus_values = [1, \"2\"]\n", 6, "workload.gpus_values", "expected integers"},
      {kMinimal + "gpus_weights = [1, true]\n", 6, "workload.gpus_weights", "expected numbers"},
      {kMinimal + "path = 3\n", 6, "workload.path", "expected a string"},
      {kMinimal + "columns = \"x\"\n", 6, "workload.columns", "expected a table"},
      {kMinimal + "[workload.columns]\nsubmit = 1\n", 7, "workload.columns.submit", "expected a string"},
      {kMinimal + "[output]\ntimeseries = \"yes\"\n", 7, "output.timeseries", "expected true or false"},
      {"seed = \"one\"\n" + kMinimal, 1, "seed", "expected an integer"},
      {"cluster = 3\n[workload]\nformat = \"csv\"\n", 1, "cluster", "expected a table"},
      {lines({"[cluster]", "pool = 3", "[workload]", "format = \"csv\""}), 2, "cluster.pool",
       "expected an array of tables"},
      {lines({"[cluster]", "[[cluster.pool]]", "nodes = 1", "[cluster.network]", "latency_us = \"1us\"",
              "[workload]", "format = \"csv\""}),
       5, "cluster.network.latency_us", "expected a number"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    const auto e = error_of(c.text);
    REQUIRE(e);
    CHECK(e->file() == kName);
    CHECK(e->line() == c.line);
    CHECK(e->field() == c.key);
    CHECK_MESSAGE(contains(e->what(), c.expected), what(e));
  }
}

TEST_CASE("scenario: out-of-range values") {
  {
    const auto e = error_of("seed = -1\n" + kMinimal);
    REQUIRE(e);
    CHECK(e->field() == "seed");
    CHECK(e->line() == 1);
    CHECK(contains(e->what(), "must be >= 0"));
  }
  {
    const auto e = error_of(kMinimal + "limit = -2\n");
    REQUIRE(e);
    CHECK(e->field() == "workload.limit");
    CHECK(e->line() == 6);
  }
  {
    const auto e = error_of(kMinimal + "delimiter = \"ab\"\n");
    REQUIRE(e);
    CHECK(e->field() == "workload.delimiter");
    CHECK(e->line() == 6);
    CHECK(contains(e->what(), "one character"));
  }
  {
    const auto e = error_of(kMinimal + "[cluster.network]\nlatency_us = -1\n");
    REQUIRE(e);
    CHECK(e->field() == "cluster.network.latency_us");
    CHECK(e->line() == 7);
  }
  {  // validated when the pools are expanded
    const auto e = error_of(kMinimal, {"cluster.pool.0.nodes=0"});
    REQUIRE(e);
    CHECK(e->field() == "cluster.pool.0.nodes");
    CHECK(contains(e->what(), "must be >= 1"));
  }
  {
    const auto e = error_of(kMinimal, {"cluster.network.oversubscription=0.5"});
    REQUIRE(e);
    CHECK(e->field() == "cluster.network.oversubscription");
  }
  {  // in_closed(0, 1): 1 is valid, above it is not
    CHECK_FALSE(error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_overlap=1"}));
    const auto e = error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_overlap=1.5"});
    REQUIRE(e);
    CHECK(e->field() == "execution.fabric_overlap");
    CHECK(contains(e->what(), "must be in [0, 1], got 1.5"));
  }
  {  // the joint sharing needs at least one draw
    CHECK_FALSE(error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_draws=1"}));
    const auto e = error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_draws=0"});
    REQUIRE(e);
    CHECK(e->field() == "execution.fabric_draws");
    CHECK(contains(e->what(), "must be in [1, 65536], got 0"));
    // a huge count would not fit an int (it crashed the run before the bound)
    const auto big = error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_draws=3000000000"});
    REQUIRE(big);
    CHECK(big->field() == "execution.fabric_draws");
    const auto chunks =
        error_of(kMinimal, {"execution.fidelity=network", "execution.chunks_shared=3000000000"});
    REQUIRE(chunks);
    CHECK(chunks->field() == "execution.chunks_shared");
  }
  {  // the fabric's all-talking allocation: two names
    for (const char* ok : {"fair-bottleneck", "max-min"})
      CHECK_FALSE(error_of(kMinimal,
                           {"execution.fidelity=fabric", std::string("execution.fabric_allocation=") + ok}));
    const auto e = error_of(kMinimal, {"execution.fidelity=fabric", "execution.fabric_allocation=maxmin"});
    REQUIRE(e);
    CHECK(e->field() == "execution.fabric_allocation");
    CHECK(contains(e->what(), "fair-bottleneck"));
  }
  {  // in_half_open(0, 1): 0 is valid, 1 is not
    CHECK_FALSE(error_of(kMinimal, {"execution.fidelity=network", "execution.chunk_jitter=0"}));
    const auto e = error_of(kMinimal, {"execution.fidelity=network", "execution.chunk_jitter=1"});
    REQUIRE(e);
    CHECK(e->field() == "execution.chunk_jitter");
    CHECK(contains(e->what(), "must be in [0, 1), got 1"));
  }
}

TEST_CASE("scenario: restart costs must be >= 0") {
  for (const char* k : {"restart_overhead_s", "restart_s_per_gb", "state_gb_per_gpu"}) {
    CAPTURE(k);
    const auto e = error_of(kMinimal + "[execution]\n" + k + " = -1\n");
    REQUIRE(e);
    CHECK(e->field() == std::string("execution.") + k);
    CHECK(e->line() == 7);
    CHECK(contains(e->what(), "must be >= 0"));
  }
}

TEST_CASE("scenario: --set reaches policy options") {
  const Scenario s = parse(kMinimal, {"scheduler.options.alpha=2", "scheduler.placement_options.mode=x"});
  CHECK(s.scheduler.options.number("alpha", 0, "doc") == doctest::Approx(2));
  CHECK(s.scheduler.placement_options.text("mode", "", "doc") == "x");
}

TEST_CASE("scenario: missing sections and keys") {
  {
    const auto e = error_of("[workload]\nformat = \"csv\"\n");
    REQUIRE(e);
    CHECK(e->file() == kName);
    CHECK(e->field() == "cluster");
    CHECK(contains(e->what(), "missing [cluster]"));
  }
  {
    const auto e = error_of("[cluster]\n[[cluster.pool]]\nnodes = 1\n");
    REQUIRE(e);
    CHECK(e->field() == "workload");
    CHECK(contains(e->what(), "missing [workload]"));
  }
  {
    const auto e = error_of("[cluster]\n[[cluster.pool]]\nnodes = 1\n[workload]\npath = \"x.csv\"\n");
    REQUIRE(e);
    CHECK(e->field() == "workload.format");
    CHECK(contains(e->what(), "missing"));
  }
  {
    const auto e = error_of("[cluster]\n[workload]\nformat = \"csv\"\n");
    REQUIRE(e);
    CHECK(e->field() == "cluster.pool");
    CHECK(contains(e->what(), "the cluster is empty"));
  }
  {
    const auto e = error_of(lines({"[cluster]", "pool = []", "[workload]", "format = \"csv\""}));
    REQUIRE(e);
    CHECK(e->field() == "cluster.pool");
  }
  {
    const auto e = error_of(
        lines({"[cluster]", "[[cluster.pool]]", "gpus_per_node = 2", "[workload]", "format = \"csv\""}));
    REQUIRE(e);
    CHECK(e->field() == "cluster.pool.0.nodes");
    CHECK(e->file() == kName);
    CHECK(e->line() == 2);  // the [[cluster.pool]] header
    CHECK(contains(e->what(), "missing"));
  }
}

TEST_CASE("scenario: a cluster of more than a million nodes is an input error, not a hang") {
  const auto e = error_of(kMinimal, {"cluster.pool.0.nodes=99999999"});
  REQUIRE(e);
  CHECK(e->field() == "cluster.pool.0.nodes");
  CHECK(contains(e->what(), "at most 1000000"));
  CHECK_FALSE(error_of(kMinimal, {"cluster.pool.0.nodes=12500"}));
}

TEST_CASE("scenario: nodes_csv and pools together is an error") {
  const auto e = error_of(lines({
      "[cluster]",              // 1
      "nodes_csv = \"n.csv\"",  // 2
      "[[cluster.pool]]",       // 3
      "nodes = 2",              // 4
      "[workload]",             // 5
      "format = \"openb\"",     // 6
  }));
  REQUIRE(e);
  CHECK(e->file() == kName);
  CHECK(e->line() == 2);
  CHECK(e->field() == "cluster.nodes_csv");
  CHECK(contains(e->what(), "not both"));
}

TEST_CASE("scenario: unknown topology and intra_node") {
  {
    const auto e = error_of(kMinimal + lines({"[cluster.network]", "topology = \"torus\""}));
    REQUIRE(e);
    CHECK(e->file() == kName);
    CHECK(e->line() == 7);
    CHECK(e->field() == "cluster.network.topology");
    CHECK(contains(e->what(), "unknown topology 'torus'"));
    CHECK(contains(e->what(), "fat-tree, leaf-spine"));
  }
  {
    const auto e =
        error_of(kMinimal + lines({"[cluster.network]", "nic_gbps = 200", "intra_node = \"nvlnk\""}));
    REQUIRE(e);
    CHECK(e->line() == 8);
    CHECK(e->field() == "cluster.network.intra_node");
    CHECK(contains(e->what(), "'nvlnk'"));
    CHECK(contains(e->what(), "nvlink, nvswitch, pcie"));
  }
  {  // from --set
    const auto e = error_of(kMinimal, {"cluster.network.topology=ring"});
    REQUIRE(e);
    CHECK(e->file() == "--set");
    CHECK(e->line() == 0);
    CHECK(e->field() == "cluster.network.topology");
  }
}

TEST_CASE("scenario: TOML syntax error gives the line") {
  const auto e = error_of(lines({
      "seed = 1",          // 1
      "[cluster]",         // 2
      "[[cluster.pool]]",  // 3
      "nodes = = 2",       // 4
  }));
  REQUIRE(e);
  CHECK(e->file() == kName);
  CHECK(e->line() == 4);
  CHECK(contains(e->what(), "scen.toml:4"));

  const auto e2 = error_of("seed = 1\n[cluster\n");
  REQUIRE(e2);
  CHECK(e2->line() == 2);
}

TEST_CASE("scenario: unknown GPU suggests the closest") {
  const auto e = error_of(lines({
      "[cluster]",           // 1
      "[[cluster.pool]]",    // 2
      "nodes = 2",           // 3
      "gpu = \"A100-80G\"",  // 4
      "[workload]",          // 5
      "format = \"csv\"",    // 6
  }));
  REQUIRE(e);
  CHECK(e->file() == kName);
  CHECK(e->line() == 4);
  CHECK(e->field() == "cluster.pool.0.gpu");
  CHECK(contains(e->what(), "unknown GPU model 'A100-80G'"));
  CHECK(contains(e->what(), "did you mean 'A100-80GB'?"));
}

TEST_CASE("scenario: describe_scenario_keys lists every documented key once, by section") {
  const std::map<std::string, std::set<std::string>> expected = {
      {"(top level)", {"seed"}},
      {"[cluster]", {"nodes_csv"}},
      {"[cluster.pool[]]", {"name", "nodes", "gpus_per_node", "gpu", "cpus_per_node", "memory_gib"}},
      {"[cluster.network]",
       {"topology", "nodes_per_leaf", "oversubscription", "nic_gbps", "intra_node", "intra_node_gbps",
        "latency_us"}},
      {"[workload]",
       {"format", "path", "throughputs", "gpu_type", "time_format", "delimiter", "limit", "jobs",
        "arrival_rate_per_hour", "gpus_values", "gpus_weights", "duration_median_s", "duration_sigma",
        "duration_min_s", "duration_max_s", "seed"}},
      {"[workload.columns]",
       {"submit", "duration", "gpus", "id", "gpu_type", "user", "gpu_milli", "cpu_milli", "memory_mib",
        "steps", "model"}},
      {"[scheduler]", {"policy", "placement"}},  // options tables are free-form
      {"[execution]",
       {"job_model", "throughput_table", "pollux_profiles", "reference_gpu", "restart_overhead_s",
        "restart_s_per_gb", "state_gb_per_gpu"}},
      {"[output]", {"dir", "timeseries"}},
  };
  const std::string text = describe_scenario_keys();
  std::map<std::string, std::set<std::string>> got;
  std::string section;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      section = line;
      CHECK_MESSAGE(got.count(section) == 0, "section twice: " << section);
      got[section];
      continue;
    }
    std::istringstream words(line);
    std::string key;
    words >> key;
    std::string doc;
    std::getline(words, doc);
    CHECK_MESSAGE(doc.find_first_not_of(' ') != std::string::npos, "no description for " << key);
    CHECK_MESSAGE(got[section].insert(key).second, "key twice: " << section << " " << key);
  }
  // Every documented key is listed in its section (keys added later may join them).
  for (const auto& [sec, keys] : expected) {
    CAPTURE(sec);
    REQUIRE(got.count(sec) == 1);
    for (const auto& k : keys) CHECK_MESSAGE(got[sec].count(k) == 1, "missing: " << sec << " " << k);
  }
  // Units are documented.
  CHECK(contains(text, "default 1 = non-blocking"));
  CHECK(contains(text, "microseconds"));
}

TEST_CASE("scenario: sim/REFERENCE.md's key table is `fleetsim keys --markdown`") {
  std::ifstream in(std::string(FLEETSIM_SOURCE_DIR) + "/sim/REFERENCE.md");
  REQUIRE(in);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string readme = ss.str();
  const std::string begin_mark = "<!-- scenario-keys:";
  const std::string end_mark = "<!-- /scenario-keys -->";
  const auto b = readme.find(begin_mark);
  const auto e = readme.find(end_mark);
  REQUIRE(b != std::string::npos);
  REQUIRE(e != std::string::npos);
  const auto table_start = readme.find('\n', b) + 1;
  CHECK_MESSAGE(readme.substr(table_start, e - table_start) == describe_keys_markdown(),
                "sim/REFERENCE.md's scenario-key table is stale: replace it with `fleetsim keys --markdown`");
}
