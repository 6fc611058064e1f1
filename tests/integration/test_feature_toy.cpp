// A feature added from its own file (this one): it registers itself, attaches an observer and an
// execution hook, and writes its own file and summary entry; no runner code knows it. Each TEST_CASE
// runs in its own process (SimGrid's engine is one per process).
#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/app/feature.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/engine/hooks.hpp"
#include "sim/engine/observer.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"

using namespace fleetsim;

namespace {

/// Counts starts twice: as an observer (start times) and as an execution hook beside any other.
class ToyFeature final : public Feature, public SimObserver, public ExecutionHook {
 public:
  void attach(Simulation& sim) override {
    sim.add_observer(*this);
    sim.attach(static_cast<ExecutionHook&>(*this));
  }
  void on_job_started(const JobRecord& job) override { starts_.push_back(job.start_s); }
  void on_start(JobId /*id*/, const PlacementSummary& /*where*/) override { ++hook_starts_; }
  void write(FeatureOutputs& out, const JobTable& /*jobs*/) const override {
    {
      auto f = out.open("toy_starts.csv");
      f << "start_s\n";
      for (double t : starts_) f << t << '\n';
    }
    out.entry("toy") = {{"starts", starts_.size()}, {"hook_starts", hook_starts_}};
  }

 private:
  std::vector<double> starts_;
  long hook_starts_ = 0;
};

const FeatureRegistrar kToy{
    {"toy-starts",
     "test: counts job starts",
     {"toy_starts.csv"},
     {"serving"},
     [](const Scenario&) -> std::unique_ptr<Feature> { return std::make_unique<ToyFeature>(); }}};

const char* kOneNode4 = "[[cluster.pool]]\nname = \"n\"\nnodes = 1\ngpus_per_node = 4\ngpu = \"V100\"\n";

}  // namespace

TEST_CASE("a feature from its own file: attached, its file and summary entry written, last in order") {
  // fifo on one node of 4 GPUs: A (2 GPUs) 0..100, B (4) 100..150, C (1) waits behind B: 150..180.
  const auto dir = test::temp_dir("toy");
  test::write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\n");
  const std::string toml = std::string("[cluster]\n") + kOneNode4 +
                           "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n"
                           "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\n"
                           "gpus = \"gpus\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["toy"]["starts"] == 3);
  CHECK(summary["toy"]["hook_starts"] == 3);
  CHECK(test::read_file(dir / "out" / "toy_starts.csv") == "start_s\n0\n100\n150\n");
  // Its entry follows the run's own figures (and every shipped feature's, which this run has none of).
  CHECK(std::prev(summary.end()).key() == "toy");
  std::vector<std::string> names;
  for (const FeatureEntry* e : ordered_features()) names.push_back(e->name);
  CHECK(names ==
        std::vector<std::string>{"energy", "fabric", "network", "failures", "serving", "toy-starts"});
  std::filesystem::remove_all(dir);
}

TEST_CASE("execution hooks compose: the toy hook beside network fidelity's ptasks") {
  // Two 8-GPU jobs on two nodes each: network fidelity runs their all-reduces as SimGrid ptasks and
  // continues them chunk by chunk; the toy hook is asked too and never continues a job.
  const auto dir = test::temp_dir("toy-net");
  test::write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,100,16\nB,5,100,16\n");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"n\"\nnodes = 4\ngpus_per_node = 8\ngpu = \"A100-80GB\"\n"
      "[cluster.network]\nnodes_per_leaf = 2\n"
      "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n"
      "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n"
      "[execution]\nfidelity = \"network\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["completed"] == 2);
  CHECK(summary["toy"]["hook_starts"] == 2);
  CHECK(summary["network"]["ptasks"].get<long>() > 0);
  // Network entry first, then the toy's: features write in their declared order.
  std::vector<std::string> keys;
  for (const auto& [k, v] : summary.items()) keys.push_back(k);
  CHECK(std::find(keys.begin(), keys.end(), "network") < std::find(keys.begin(), keys.end(), "toy"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("feature order: after-declarations first, then names, unknown names and cycles refused") {
  const auto entry = [](std::string name, std::vector<std::string> after) {
    FeatureEntry e;
    e.name = std::move(name);
    e.after = std::move(after);
    return e;
  };
  std::vector<FeatureEntry> entries{entry("c", {"a"}), entry("b", {"c"}), entry("a", {}), entry("d", {})};
  std::vector<std::string> names;
  for (const auto* e : order_features(entries)) names.push_back(e->name);
  CHECK(names == std::vector<std::string>{"a", "c", "b", "d"});
  CHECK_THROWS_AS(order_features({entry("a", {"b"}), entry("b", {"a"})}), std::logic_error);
  CHECK_THROWS_AS(order_features({entry("a", {"nope"})}), std::logic_error);
  CHECK_THROWS_AS(order_features({entry("a", {}), entry("a", {})}), std::logic_error);
}
