// Every output file's header is what sim/REFERENCE.md says (workloads/base/output_docs.hpp): each
// command is run on a tiny input through the real binary, and every CSV it writes must be declared
// for that command with its columns in order. A column added, renamed or moved in a writer without
// its declaration fails here, and so does an output file nobody declared.
#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <utility>

#include "sim/app/reference.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/output_docs.hpp"

using namespace fleetsim;
using namespace fleetsim::test;
namespace fs = std::filesystem;

namespace {

const std::string kServing = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving";

/// Checks every *.csv directly in `dir` against the declarations of `command` (or `also`, a command
/// whose files it writes too); returns the files.
std::set<std::string> check_csvs(const fs::path& dir, const std::string& command,
                                 const std::string& also = "") {
  std::set<std::string> seen;
  REQUIRE(fs::is_directory(dir));
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".csv") continue;
    const std::string name = e.path().filename().string();
    CAPTURE(command);
    CAPTURE(name);
    const OutputFileDoc* doc = find_output_doc(command, name);
    if (doc == nullptr && !also.empty()) doc = find_output_doc(also, name);
    REQUIRE_MESSAGE(doc != nullptr,
                    "undeclared output file: declare it with an OutputDocRegistrar beside its "
                    "writer and regenerate sim/REFERENCE.md (fleetsim docs)");
    const std::string text = read_file(e.path());
    const std::string header = text.substr(0, text.find('\n'));
    CHECK_MESSAGE(header_matches(*doc, header), "header '" << header << "' differs from its declaration");
    seen.insert(name);
  }
  return seen;
}

/// A tiny scenario: 4 nodes x 2 A100s, two 4-GPU jobs that span nodes and one that can never run.
/// `extra` is appended (features).
fs::path tiny_case(const std::string& tag, const std::string& execution, const std::string& extra) {
  const auto dir = temp_dir(tag);
  write_file(dir / "jobs.csv", "id,submit,duration,gpus\nA,0,600,4\nB,10,600,4\nC,20,100,99\n");
  write_file(dir / "s.toml",
             "seed = 1\n[cluster]\n[[cluster.pool]]\nnodes = 4\ngpus_per_node = 2\ngpu = \"A100-80GB\"\n"
             "[cluster.network]\nnodes_per_leaf = 2\noversubscription = 2.0\n"
             "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[workload.columns]\nid = \"id\"\n"
             "submit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
             "[scheduler]\npolicy = \"fifo-skip\"\nplacement = \"first-fit\"\n" +
                 execution + extra + "[output]\ndir = \"out\"\n");
  return dir;
}

/// A [[service]] of the tiny test model on one A100, fed by `dir`/r.jsonl (written here).
std::string service(const fs::path& dir) {
  write_file(dir / "r.jsonl",
             "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
             "{\"input_toks\": 40, \"output_toks\": 5, \"arrival_time_ns\": 200000000}\n");
  return "[[service]]\nname = \"tiny\"\nmodel = \"" + kServing + "/tiny-config.json\"\nprofiles = \"" +
         kServing +
         "/tiny/bf16\"\ngpu = \"A100-80GB\"\nreplicas = 1\nslo_ttft_ms = 1000\nslo_tpot_ms = 100\n"
         "[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n";
}

}  // namespace

TEST_CASE("output columns: fleetsim run with the network fidelity, failures and a service") {
  const auto dir = tiny_case("cols-run", "[execution]\nfidelity = \"network\"\n",
                             "[failures]\ntrace = \"faults.csv\"\ntrace_format = \"csv\"\n");
  write_file(dir / "faults.csv", "node,start,end,component\nn1,100,200,gpu\n");
  write_file(dir / "s.toml", read_file(dir / "s.toml") + service(dir));
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto seen = check_csvs(dir / "out", "fleetsim run");
  for (const char* f : {"jobs.csv", "timeseries.csv", "skipped.csv", "links.csv", "link_tiers.csv",
                        "failures.csv", "failure_jobs.csv", "requests.csv", "serving_timeseries.csv"})
    CHECK_MESSAGE(seen.count(f) == 1, f << " not written");
  fs::remove_all(dir);
}

TEST_CASE("output columns: fleetsim run in the delay fidelity (jobs.csv without the fabric's columns)") {
  const auto dir = tiny_case("cols-delay", "", "");
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "out", "fleetsim run").count("jobs.csv") == 1);
  fs::remove_all(dir);
}

TEST_CASE("output columns: fleetsim sweep (with a case) and fleetsim compare") {
  const auto dir = tiny_case("cols-sweep", "", "");
  write_file(
      dir / "sweep.toml",
      "base = \"s.toml\"\nseeds = 2\n[grid]\n\"scheduler.placement\" = [\"first-fit\", \"consolidate\"]\n"
      "[[case]]\nname = \"fifo\"\n\"scheduler.policy\" = \"fifo\"\n"
      "[[case]]\nname = \"las\"\n\"scheduler.policy\" = \"las\"\n");
  auto r = run_fleetsim("sweep " + (dir / "sweep.toml").string() + " --out " + (dir / "sw").string() +
                        " --jobs 2");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "sw", "fleetsim sweep") ==
        std::set<std::string>{"aggregate.csv", "paired.csv", "runs.csv"});
  r = run_fleetsim("compare " + (dir / "s.toml").string() + " --policies fifo,las --no-plot --jobs 2 --out " +
                   (dir / "cmp").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  // compare is a sweep: its folder holds the sweep's files too
  const auto seen = check_csvs(dir / "cmp", "fleetsim compare", "fleetsim sweep");
  CHECK(seen.count("comparison.csv") == 1);
  fs::remove_all(dir);
}

TEST_CASE("output columns: fleetsim inflate, size, llm plan and replay") {
  const auto dir = tiny_case("cols-exp", "", "");
  write_file(dir / "s.toml", read_file(dir / "s.toml") + service(dir));
  auto r =
      run_fleetsim("inflate " + (dir / "s.toml").string() + " --placements first-fit,best-fit --seeds 2 " +
                   "--max-load 0.8 --no-plot --quiet --jobs 1 --out " + (dir / "inf").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "inf", "fleetsim inflate") ==
        std::set<std::string>{"inflation.csv", "inflation_summary.csv"});
  r = run_fleetsim("size " + (dir / "s.toml").string() + " --loads 1 --max-replicas 2 --quiet --out " +
                   (dir / "size").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "size", "fleetsim size") == std::set<std::string>{"sizing.csv"});
  r = run_fleetsim("llm plan --model " + kServing + "/tiny-config.json --gpu A100-80GB --nodes 1 " +
                   "--gpus-per-node 2 --steps 10 --seq 128 --global-batch 8 --top 1 --out " +
                   (dir / "plan").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "plan", "fleetsim llm plan") == std::set<std::string>{"plan.csv"});
  r = run_fleetsim("replay " + std::string(FLEETSIM_SOURCE_DIR) +
                   "/tests/data/kineto/two_streams_event_wait.json" + " --quiet --out " +
                   (dir / "replay").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(check_csvs(dir / "replay", "fleetsim replay") == std::set<std::string>{"kernel_classes.csv"});
  fs::remove_all(dir);
}

TEST_CASE("output columns: every declared output file is in the reference and one the cases above check") {
  // (command, file) pairs the cases of this file produce; a declaration outside it is not checked.
  const std::set<std::pair<std::string, std::string>> checked = {
      {"fleetsim run", "jobs.csv"},
      {"fleetsim run", "timeseries.csv"},
      {"fleetsim run", "skipped.csv"},
      {"fleetsim run", "links.csv"},
      {"fleetsim run", "link_tiers.csv"},
      {"fleetsim run", "failures.csv"},
      {"fleetsim run", "failure_jobs.csv"},
      {"fleetsim run", "requests.csv"},
      {"fleetsim run", "serving_timeseries.csv"},
      {"fleetsim sweep", "runs.csv"},
      {"fleetsim sweep", "aggregate.csv"},
      {"fleetsim sweep", "paired.csv"},
      {"fleetsim compare", "comparison.csv"},
      {"fleetsim inflate", "inflation.csv"},
      {"fleetsim inflate", "inflation_summary.csv"},
      {"fleetsim size", "sizing.csv"},
      {"fleetsim llm plan", "plan.csv"},
      {"fleetsim replay", "kernel_classes.csv"}};
  const std::string reference = reference_markdown();
  for (const auto& d : output_docs()) {
    CHECK_MESSAGE(checked.count({d.command, d.file}) == 1,
                  d.command << " " << d.file << " is declared but no case of test_output_columns writes it");
    CHECK(reference.find("**`" + d.file + "`**") != std::string::npos);
  }
  CHECK(output_docs().size() == checked.size());
}
