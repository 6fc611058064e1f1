// Scenario loader: every documented key is read, defaults, path resolution and --set overrides
// (bad input: test_scenario_errors.cpp). Pure parsing: no SimGrid engine.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/scenario.hpp"
#include "sim/engine/engine_config.hpp"
#include "tests/scenario_util.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

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
  // Only the keys the file gives are in the reader's bag; readers apply their own defaults.
  CHECK_FALSE(w.settings.has("throughputs"));
  CHECK_FALSE(w.settings.has("columns"));
  CHECK_FALSE(w.settings.has("jobs"));
  CHECK(w.scenario_file == kName);
  CHECK(s.workload_limit == 0);
  CHECK(w.seed == 1);  // the scenario seed, the synthetic generator's default

  CHECK(s.scheduler.policy == "fifo");
  CHECK(s.scheduler.placement == "first-fit");
  CHECK(s.execution.job_model == "auto");
  CHECK_FALSE(s.execution.settings.has("throughput_table"));
  CHECK(EngineConfig::from(s.execution.settings).restart_overhead_s == doctest::Approx(30));
  CHECK(EngineConfig::from(s.execution.settings).restart_s_per_gb == doctest::Approx(0));
  CHECK(EngineConfig::from(s.execution.settings).state_gb_per_gpu == doctest::Approx(0));
  CHECK(s.scheduler.options.empty());
  CHECK(s.scheduler.placement_options.empty());
  CHECK(s.output.dir == "results");
  CHECK(s.output.timeseries == true);
  CHECK(s.overridden.empty());
}

TEST_CASE("scenario: the synthetic seed defaults to the scenario seed") {
  const Scenario s = parse("seed = 42\n" + kMinimal);
  CHECK(s.seed == 42);
  CHECK(s.workload.seed == 42);
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
      "throughput_table = \"exec/tp.json\"",  // 59
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
  const Options& o = w.settings;
  CHECK(o.text("throughputs", "") == "/base/dir/tp.json");
  CHECK(o.text("gpu_type", "") == "k80");
  CHECK(o.text("time_format", "") == "%Y-%m-%d %H:%M:%S");
  CHECK(o.text("delimiter", "") == ";");
  CHECK(s.workload_limit == 50);
  CHECK(o.integer("jobs", 0) == 77);
  CHECK(o.number("arrival_rate_per_hour", 0) == doctest::Approx(12.5));
  CHECK(o.numbers("gpus_values", {}) == std::vector<double>{1, 2, 8});
  REQUIRE(o.numbers("gpus_weights", {}).size() == 3);
  CHECK(o.numbers("gpus_weights", {})[0] == doctest::Approx(0.5));
  CHECK(o.numbers("gpus_weights", {})[1] == doctest::Approx(1.0));
  CHECK(o.numbers("gpus_weights", {})[2] == doctest::Approx(0.25));
  CHECK(o.number("duration_median_s", 0) == doctest::Approx(600));
  CHECK(o.number("duration_sigma", 0) == doctest::Approx(1.25));
  CHECK(o.number("duration_min_s", 0) == doctest::Approx(5));
  CHECK(o.number("duration_max_s", 0) == doctest::Approx(86400));
  CHECK(o.integer("seed", 0) == 99);
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
  CHECK(o.entries("columns") == cols);

  CHECK(s.scheduler.policy == "fifo-skip");
  CHECK(s.scheduler.placement == "consolidate");
  CHECK(s.execution.job_model == "throughput");
  CHECK(s.execution.settings.text("throughput_table", "") == "/base/dir/exec/tp.json");
  CHECK(s.execution.settings.text("reference_gpu", "") == "p100");
  CHECK(EngineConfig::from(s.execution.settings).restart_overhead_s == doctest::Approx(12.5));
  CHECK(EngineConfig::from(s.execution.settings).restart_s_per_gb == doctest::Approx(2));
  CHECK(EngineConfig::from(s.execution.settings).state_gb_per_gpu == doctest::Approx(0.75));
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
  CHECK(s.workload.settings.text("delimiter", "") == "\\t");
}

TEST_CASE("scenario: execution.throughputs is retired with the names that replace it") {
  try {
    parse(kMinimal + "[execution]\nthroughputs = \"t/tp.json\"\n");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(e.field() == "execution.throughputs");
    CHECK(e.line() == 7);
    CHECK(std::string(e.what()).find("execution.throughput_table") != std::string::npos);
    CHECK(std::string(e.what()).find("execution.pollux_profiles") != std::string::npos);
  }
}

TEST_CASE("scenario: relative paths resolve against the scenario folder, absolute ones are kept") {
  const Scenario s = parse(kMinimal + lines({
                                          "path = \"../up/jobs.csv\"",
                                          "throughputs = \"/abs/tp.json\"",
                                          "[output]",
                                          "dir = \"./o/../res\"",
                                      }));
  CHECK(s.workload.path == "/base/up/jobs.csv");
  CHECK(s.workload.settings.text("throughputs", "") == "/abs/tp.json");
  CHECK(s.output.dir == "/base/dir/res");

  // Without a base folder, paths are kept relative (to the cwd).
  const Scenario t = parse_scenario(kMinimal + "path = \"a/b.csv\"\n", kName, "");
  CHECK(t.workload.path == "a/b.csv");
}

TEST_CASE("scenario: --set paths resolve against the cwd, i.e. are kept as given") {
  const Scenario s = parse(kMinimal, {"workload.path=data/x.csv", "workload.throughputs=t.json",
                                      "execution.throughput_table=e/t.json", "output.dir=outdir"});
  CHECK(s.workload.path == "data/x.csv");
  CHECK(s.workload.settings.text("throughputs", "") == "t.json");
  CHECK(s.execution.settings.text("throughput_table", "") == "e/t.json");
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
  CHECK(s.workload.seed == 5);  // the synthetic generator's default seed

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
  CHECK(s.workload.settings.numbers("gpus_values", {}) == std::vector<double>{1, 4});
  REQUIRE(s.workload.settings.numbers("gpus_weights", {}).size() == 2);
  CHECK(s.workload.settings.numbers("gpus_weights", {})[1] == doctest::Approx(1.5));
  CHECK(s.workload.settings.integer("jobs", 0) == 12);
  CHECK(s.cluster.pools[0].memory_gib == doctest::Approx(100.5));
  CHECK(s.workload.settings.text("gpu_type", "") == "123");
}
