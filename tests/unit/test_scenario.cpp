// Scenario loader: every documented key is read, defaults, path resolution, --set overrides and
// every kind of bad input (errors name file, line and key, and suggest the closest valid key).
// Pure parsing: no SimGrid engine.
#include <doctest/doctest.h>

#include <filesystem>
#include <initializer_list>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "sim/config/scenario.hpp"
#include "tests/test_util.hpp"
#include "workloads/input_error.hpp"

using namespace fleetsim;

namespace {

constexpr const char* kName = "scen.toml";
constexpr const char* kBase = "/base/dir";

/// TOML text from lines: line i of the list is line i+1 of the file, so tests can name lines.
std::string lines(std::initializer_list<std::string_view> ls) {
  std::string out;
  for (auto l : ls) {
    out += l;
    out += '\n';
  }
  return out;
}

/// The smallest valid scenario.
const std::string kMinimal = lines({
    "[cluster]",               // 1
    "[[cluster.pool]]",        // 2
    "nodes = 2",               // 3
    "[workload]",              // 4
    "format = \"synthetic\"",  // 5
});

Scenario parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_scenario(text, kName, kBase, overrides);
}

std::optional<InputError> error_of(const std::string& text, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, kName, kBase, overrides);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

std::string what(const std::optional<InputError>& e) {
  return e ? std::string(e->what()) : std::string("<no error>");
}

}  // namespace

TEST_CASE("scenario: defaults of a minimal scenario") {
  const Scenario s = parse(kMinimal);
  CHECK(s.file == kName);
  CHECK(s.seed == 1);

  REQUIRE(s.cluster.pools.size() == 1);
  const PoolSpec& p = s.cluster.pools[0];
  CHECK(p.name == "pool0");
  CHECK(p.nodes == 2);
  CHECK(p.gpus_per_node == 8);
  CHECK(p.gpu == "A100-80GB");
  CHECK(p.cpus_per_node == 64);
  CHECK(p.memory_gib == doctest::Approx(512));
  REQUIRE(s.cluster.nodes.size() == 2);
  CHECK(s.cluster.nodes[1].gpus == 8);
  CHECK(s.cluster.nodes[1].cpu_milli == doctest::Approx(64000));
  CHECK(s.cluster.nodes[1].memory_mib == doctest::Approx(512 * 1024));
  CHECK(s.cluster.total_gpus() == 16);

  const NetworkSpec& n = s.cluster.network;
  CHECK(n.topology == Topology::kLeafSpine);
  CHECK(n.nodes_per_leaf == 16);
  CHECK(n.oversubscription == doctest::Approx(1.0));
  CHECK(n.nic_gbps == doctest::Approx(100));
  CHECK(n.intra_node == IntraNode::kNvlink);
  CHECK(n.intra_node_gbps == doctest::Approx(2400));
  CHECK(n.link_latency_s == doctest::Approx(1e-6));

  const WorkloadConfig& w = s.workload;
  CHECK(w.format == "synthetic");
  CHECK(w.path.empty());
  CHECK(w.throughputs.empty());
  CHECK(w.gpu_type == "v100");
  CHECK(w.time_format.empty());
  CHECK(w.delimiter == ',');
  CHECK(w.columns.empty());
  CHECK(w.scenario_file == kName);
  CHECK(s.workload_limit == 0);
  const SyntheticConfig def;
  CHECK(w.synthetic.jobs == def.jobs);
  CHECK(w.synthetic.arrival_rate_per_hour == doctest::Approx(def.arrival_rate_per_hour));
  CHECK(w.synthetic.gpus_values == def.gpus_values);
  CHECK(w.synthetic.gpus_weights == def.gpus_weights);
  CHECK(w.synthetic.duration_median_s == doctest::Approx(def.duration_median_s));
  CHECK(w.synthetic.duration_sigma == doctest::Approx(def.duration_sigma));
  CHECK(w.synthetic.duration_min_s == doctest::Approx(def.duration_min_s));
  CHECK(w.synthetic.duration_max_s == doctest::Approx(def.duration_max_s));
  CHECK(w.synthetic.seed == 1);  // the scenario seed

  CHECK(s.scheduler.policy == "fifo");
  CHECK(s.scheduler.placement == "first-fit");
  CHECK(s.execution.job_model == "auto");
  CHECK(s.execution.throughputs.empty());
  CHECK(s.execution.reference_gpu == "v100");
  CHECK(s.execution.restart_overhead_s == doctest::Approx(30));
  CHECK(s.execution.restart_s_per_gb == doctest::Approx(0));
  CHECK(s.execution.state_gb_per_gpu == doctest::Approx(0));
  CHECK(s.scheduler.options.empty());
  CHECK(s.scheduler.placement_options.empty());
  CHECK(s.output.dir == "results");
  CHECK(s.output.timeseries == true);
  CHECK(s.overridden.empty());
}

TEST_CASE("scenario: the synthetic seed defaults to the scenario seed") {
  const Scenario s = parse("seed = 42\n" + kMinimal);
  CHECK(s.seed == 42);
  CHECK(s.workload.synthetic.seed == 42);
}

TEST_CASE("scenario: every documented key is read") {
  const std::string text = lines({
      "seed = 7",                             // 1
      "[cluster]",                            // 2
      "[[cluster.pool]]",                     // 3
      "name = \"v100s\"",                     // 4
      "nodes = 3",                            // 5
      "gpus_per_node = 4",                    // 6
      "gpu = \"v100\"",                       // 7  (alias, case-insensitive)
      "cpus_per_node = 32",                   // 8
      "memory_gib = 256",                     // 9  (integer accepted for a number)
      "[[cluster.pool]]",                     // 10
      "name = \"h\"",                         // 11
      "nodes = 2",                            // 12
      "gpus_per_node = 2",                    // 13
      "gpu = \"H100-SXM\"",                   // 14
      "cpus_per_node = 96",                   // 15
      "memory_gib = 1536.5",                  // 16
      "[cluster.network]",                    // 17
      "topology = \"fat-tree\"",              // 18
      "nodes_per_leaf = 2",                   // 19
      "oversubscription = 3",                 // 20
      "nic_gbps = 400",                       // 21
      "intra_node = \"nvswitch\"",            // 22
      "intra_node_gbps = 7200",               // 23
      "latency_us = 2.5",                     // 24
      "[workload]",                           // 25
      "format = \"csv\"",                     // 26
      "path = \"traces/jobs.csv\"",           // 27
      "throughputs = \"tp.json\"",            // 28
      "gpu_type = \"k80\"",                   // 29
      "time_format = \"%Y-%m-%d %H:%M:%S\"",  // 30
      "delimiter = \";\"",                    // 31
      "limit = 50",                           // 32
      "jobs = 77",                            // 33
      "arrival_rate_per_hour = 12.5",         // 34
      "gpus_values = [1, 2, 8]",              // 35
      "gpus_weights = [0.5, 1, 0.25]",        // 36
      "duration_median_s = 600",              // 37
      "duration_sigma = 1.25",                // 38
      "duration_min_s = 5",                   // 39
      "duration_max_s = 86400",               // 40
      "seed = 99",                            // 41
      "[workload.columns]",                   // 42
      "submit = \"c_submit\"",                // 43
      "duration = \"c_duration\"",            // 44
      "gpus = \"c_gpus\"",                    // 45
      "id = \"c_id\"",                        // 46
      "gpu_type = \"c_gpu_type\"",            // 47
      "user = \"c_user\"",                    // 48
      "gpu_milli = \"c_gpu_milli\"",          // 49
      "cpu_milli = \"c_cpu_milli\"",          // 50
      "memory_mib = \"c_memory_mib\"",        // 51
      "steps = \"c_steps\"",                  // 52
      "model = \"c_model\"",                  // 53
      "[scheduler]",                          // 54
      "policy = \"fifo-skip\"",               // 55
      "placement = \"consolidate\"",          // 56
      "[execution]",                          // 57
      "job_model = \"throughput\"",           // 58
      "throughputs = \"exec/tp.json\"",       // 59
      "reference_gpu = \"p100\"",             // 60
      "restart_overhead_s = 12.5",            // 61
      "restart_s_per_gb = 2",                 // 62
      "state_gb_per_gpu = 0.75",              // 63
      "[output]",                             // 64
      "dir = \"out/run1\"",                   // 65
      "timeseries = false",                   // 66
      "[scheduler.options]",                  // 67
      "alpha = 0.5",                          // 68
      "names = [\"a\", \"b\"]",               // 69
      "on = true",                            // 70
      "[scheduler.placement_options]",        // 71
      "spread = 3",                           // 72
  });
  const Scenario s = parse(text);
  CHECK(s.seed == 7);

  REQUIRE(s.cluster.pools.size() == 2);
  const PoolSpec& p0 = s.cluster.pools[0];
  CHECK(p0.name == "v100s");
  CHECK(p0.nodes == 3);
  CHECK(p0.gpus_per_node == 4);
  CHECK(p0.gpu == "V100");  // canonical catalog name
  CHECK(p0.cpus_per_node == 32);
  CHECK(p0.memory_gib == doctest::Approx(256));
  const PoolSpec& p1 = s.cluster.pools[1];
  CHECK(p1.name == "h");
  CHECK(p1.nodes == 2);
  CHECK(p1.gpus_per_node == 2);
  CHECK(p1.gpu == "H100");
  CHECK(p1.cpus_per_node == 96);
  CHECK(p1.memory_gib == doctest::Approx(1536.5));

  REQUIRE(s.cluster.nodes.size() == 5);
  CHECK(s.cluster.total_gpus() == 3 * 4 + 2 * 2);
  CHECK(s.cluster.nodes[0].gpu == "V100");
  CHECK(s.cluster.nodes[0].cpu_milli == doctest::Approx(32000));
  CHECK(s.cluster.nodes[0].memory_mib == doctest::Approx(256 * 1024));
  CHECK(s.cluster.nodes[4].gpu == "H100");
  CHECK(s.cluster.nodes[4].pool == 1);
  CHECK(s.cluster.nodes[4].memory_mib == doctest::Approx(1536.5 * 1024));
  CHECK(s.cluster.nodes[4].leaf == 2);  // nodes_per_leaf = 2: nodes 4 is on leaf 2
  CHECK(s.cluster.leaves() == 3);

  const NetworkSpec& n = s.cluster.network;
  CHECK(n.topology == Topology::kFatTree);
  CHECK(n.nodes_per_leaf == 2);
  CHECK(n.oversubscription == doctest::Approx(3.0));
  CHECK(n.nic_gbps == doctest::Approx(400));
  CHECK(n.intra_node == IntraNode::kNvswitch);
  CHECK(n.intra_node_gbps == doctest::Approx(7200));
  CHECK(n.link_latency_s == doctest::Approx(2.5e-6));  // microseconds -> seconds

  const WorkloadConfig& w = s.workload;
  CHECK(w.format == "csv");
  CHECK(w.path == "/base/dir/traces/jobs.csv");
  CHECK(w.throughputs == "/base/dir/tp.json");
  CHECK(w.gpu_type == "k80");
  CHECK(w.time_format == "%Y-%m-%d %H:%M:%S");
  CHECK(w.delimiter == ';');
  CHECK(s.workload_limit == 50);
  CHECK(w.synthetic.jobs == 77);
  CHECK(w.synthetic.arrival_rate_per_hour == doctest::Approx(12.5));
  CHECK(w.synthetic.gpus_values == std::vector<int>{1, 2, 8});
  REQUIRE(w.synthetic.gpus_weights.size() == 3);
  CHECK(w.synthetic.gpus_weights[0] == doctest::Approx(0.5));
  CHECK(w.synthetic.gpus_weights[1] == doctest::Approx(1.0));
  CHECK(w.synthetic.gpus_weights[2] == doctest::Approx(0.25));
  CHECK(w.synthetic.duration_median_s == doctest::Approx(600));
  CHECK(w.synthetic.duration_sigma == doctest::Approx(1.25));
  CHECK(w.synthetic.duration_min_s == doctest::Approx(5));
  CHECK(w.synthetic.duration_max_s == doctest::Approx(86400));
  CHECK(w.synthetic.seed == 99);
  const std::map<std::string, std::string> cols = {
      {"submit", "c_submit"},
      {"duration", "c_duration"},
      {"gpus", "c_gpus"},
      {"id", "c_id"},
      {"gpu_type", "c_gpu_type"},
      {"user", "c_user"},
      {"gpu_milli", "c_gpu_milli"},
      {"cpu_milli", "c_cpu_milli"},
      {"memory_mib", "c_memory_mib"},
      {"steps", "c_steps"},
      {"model", "c_model"},
  };
  CHECK(w.columns == cols);

  CHECK(s.scheduler.policy == "fifo-skip");
  CHECK(s.scheduler.placement == "consolidate");
  CHECK(s.execution.job_model == "throughput");
  CHECK(s.execution.throughputs == "/base/dir/exec/tp.json");
  CHECK(s.execution.reference_gpu == "p100");
  CHECK(s.execution.restart_overhead_s == doctest::Approx(12.5));
  CHECK(s.execution.restart_s_per_gb == doctest::Approx(2));
  CHECK(s.execution.state_gb_per_gpu == doctest::Approx(0.75));
  CHECK(s.output.dir == "/base/dir/out/run1");
  CHECK(s.output.timeseries == false);
  // Free-form policy knobs, kept as text with their lines.
  CHECK_FALSE(s.scheduler.options.empty());
  CHECK(s.scheduler.options.number("alpha", 0, "doc") == doctest::Approx(0.5));
  CHECK(s.scheduler.options.text("names", "", "doc") == "a,b");
  CHECK(s.scheduler.options.flag("on", false, "doc") == true);
  CHECK_NOTHROW(s.scheduler.options.check_all_used("test"));
  CHECK(s.scheduler.placement_options.number("spread", 0, "doc") == doctest::Approx(3));

  // Lines of keys, for later messages.
  CHECK(s.key_line("seed") == 1);
  CHECK(s.key_line("cluster.pool.0.nodes") == 5);
  CHECK(s.key_line("cluster.pool.1.gpu") == 14);
  CHECK(s.key_line("cluster.network.latency_us") == 24);
  CHECK(s.key_line("workload.seed") == 41);
  CHECK(s.key_line("workload.columns.model") == 53);
  CHECK(s.key_line("scheduler.placement") == 56);
  CHECK(s.key_line("output.timeseries") == 66);
  CHECK(s.key_line("no.such.key") == 0);
  CHECK(s.key_file("scheduler.placement") == kName);
}

TEST_CASE("scenario: a tab delimiter is written as backslash-t") {
  const Scenario s = parse(kMinimal + "delimiter = \"\\\\t\"\n");
  CHECK(s.workload.delimiter == '\t');
}

TEST_CASE("scenario: execution.throughputs defaults to workload.throughputs") {
  const Scenario s = parse(kMinimal + "throughputs = \"t/tp.json\"\n");
  CHECK(s.workload.throughputs == "/base/dir/t/tp.json");
  CHECK(s.execution.throughputs == "/base/dir/t/tp.json");
}

TEST_CASE("scenario: relative paths resolve against the scenario folder, absolute ones are kept") {
  const Scenario s = parse(kMinimal + lines({
                                          "path = \"../up/jobs.csv\"",
                                          "throughputs = \"/abs/tp.json\"",
                                          "[output]",
                                          "dir = \"./o/../res\"",
                                      }));
  CHECK(s.workload.path == "/base/up/jobs.csv");
  CHECK(s.workload.throughputs == "/abs/tp.json");
  CHECK(s.output.dir == "/base/dir/res");

  // Without a base folder, paths are kept relative (to the cwd).
  const Scenario t = parse_scenario(kMinimal + "path = \"a/b.csv\"\n", kName, "");
  CHECK(t.workload.path == "a/b.csv");
}

TEST_CASE("scenario: --set paths resolve against the cwd, i.e. are kept as given") {
  const Scenario s = parse(kMinimal, {"workload.path=data/x.csv", "workload.throughputs=t.json",
                                      "execution.throughputs=e/t.json", "output.dir=outdir"});
  CHECK(s.workload.path == "data/x.csv");
  CHECK(s.workload.throughputs == "t.json");
  CHECK(s.execution.throughputs == "e/t.json");
  CHECK(s.output.dir == "outdir");
  // An overridden absolute path stays absolute.
  const Scenario t = parse(kMinimal, {"workload.path=/abs/x.csv"});
  CHECK(t.workload.path == "/abs/x.csv");
}

TEST_CASE("scenario: cluster.nodes_csv resolves against the scenario folder") {
  const std::string base = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data";
  const Scenario s = parse_scenario(lines({
                                        "[cluster]",
                                        "nodes_csv = \"platform/openb_nodes_small.csv\"",
                                        "[workload]",
                                        "format = \"openb\"",
                                    }),
                                    kName, base);
  REQUIRE(s.cluster.nodes.size() == 7);
  CHECK(s.cluster.nodes[0].name == "n-00");
  CHECK(s.cluster.nodes[0].gpu == "P100");
  CHECK(s.cluster.nodes[3].gpus == 8);
  CHECK(s.cluster.nodes[5].gpus == 0);

  // Relative to another folder, the file is not found: proof that base_dir is used.
  CHECK_THROWS_AS(parse_scenario(lines({
                                     "[cluster]",
                                     "nodes_csv = \"platform/openb_nodes_small.csv\"",
                                     "[workload]",
                                     "format = \"openb\"",
                                 }),
                                 kName, "/nonexistent-fleetsim-dir"),
                  InputError);
}

TEST_CASE("scenario: load_scenario reads a file and resolves paths against its folder") {
  const auto dir = fleetsim::test::temp_dir("scenario");
  const auto file = dir / "s.toml";
  fleetsim::test::write_file(file, kMinimal + "path = \"jobs.csv\"\n");
  const Scenario s = load_scenario(file.string(), {"scheduler.policy=fifo-skip"});
  CHECK(s.file == file.string());
  CHECK(s.workload.path == (dir / "jobs.csv").lexically_normal().string());
  CHECK(s.scheduler.policy == "fifo-skip");
  std::filesystem::remove_all(dir);

  try {
    load_scenario((dir / "missing.toml").string());
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == (dir / "missing.toml").string());
    CHECK(contains(e.what(), "cannot open"));
  }
}

TEST_CASE("scenario: --set on nested keys") {
  const std::string text = kMinimal + lines({
                                          "[scheduler]",
                                          "policy = \"fifo\"",
                                      });
  const Scenario s = parse(
      text, {
                "cluster.pool.0.nodes=64", "cluster.network.oversubscription=2.5", "workload.path=x.csv",
                "scheduler.policy=fifo-skip",           // bare string
                "scheduler.placement=\"consolidate\"",  // quoted string
                "output.timeseries=false",              // boolean
                " seed = 5 ",                           // spaces are trimmed
            });
  CHECK(s.cluster.pools[0].nodes == 64);
  CHECK(s.cluster.nodes.size() == 64);
  CHECK(s.cluster.network.oversubscription == doctest::Approx(2.5));
  CHECK(s.workload.path == "x.csv");
  CHECK(s.scheduler.policy == "fifo-skip");
  CHECK(s.scheduler.placement == "consolidate");
  CHECK(s.output.timeseries == false);
  CHECK(s.seed == 5);
  CHECK(s.workload.synthetic.seed == 5);

  // Overridden keys report "--set" (line 0); the others still name the file and line.
  CHECK(s.key_file("cluster.pool.0.nodes") == "--set");
  CHECK(s.key_line("cluster.pool.0.nodes") == 0);
  CHECK(s.key_file("scheduler.policy") == "--set");
  CHECK(s.key_line("scheduler.policy") == 0);
  CHECK(s.key_file("workload.format") == kName);
  CHECK(s.key_line("workload.format") == 5);
  CHECK(s.overridden.count("cluster.network.oversubscription") == 1);
  CHECK(s.overridden.count("workload.format") == 0);
}

TEST_CASE("scenario: --set appends a pool at index == size") {
  const Scenario s = parse(
      kMinimal, {"cluster.pool.1.nodes=3", "cluster.pool.1.gpu=H100", "cluster.pool.1.gpus_per_node=4"});
  REQUIRE(s.cluster.pools.size() == 2);
  CHECK(s.cluster.pools[1].name == "pool1");
  CHECK(s.cluster.pools[1].nodes == 3);
  CHECK(s.cluster.pools[1].gpu == "H100");
  CHECK(s.cluster.nodes.size() == 5);
  CHECK(s.cluster.total_gpus() == 2 * 8 + 3 * 4);
  CHECK(s.key_file("cluster.pool.1.gpu") == "--set");
}

TEST_CASE("scenario: --set creates the pool array when the file has none") {
  const Scenario s =
      parse(lines({"[cluster]", "[workload]", "format = \"synthetic\""}), {"cluster.pool.0.nodes=4"});
  REQUIRE(s.cluster.pools.size() == 1);
  CHECK(s.cluster.pools[0].nodes == 4);
  CHECK(s.cluster.nodes.size() == 4);
}

TEST_CASE("scenario: --set values in TOML syntax: numbers, arrays, quoted look-alikes") {
  const Scenario s =
      parse(kMinimal, {"workload.gpus_values=[1, 4]", "workload.gpus_weights=[3, 1.5]", "workload.jobs=12",
                       "cluster.pool.0.memory_gib=100.5", "workload.gpu_type=\"123\""});
  CHECK(s.workload.synthetic.gpus_values == std::vector<int>{1, 4});
  REQUIRE(s.workload.synthetic.gpus_weights.size() == 2);
  CHECK(s.workload.synthetic.gpus_weights[1] == doctest::Approx(1.5));
  CHECK(s.workload.synthetic.jobs == 12);
  CHECK(s.cluster.pools[0].memory_gib == doctest::Approx(100.5));
  CHECK(s.workload.gpu_type == "123");
}

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
       {"job_model", "throughputs", "reference_gpu", "restart_overhead_s", "restart_s_per_gb",
        "state_gb_per_gpu"}},
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
