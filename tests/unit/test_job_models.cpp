// Job models on hand-made throughput tables: run time = steps / rate, the unconsolidated rate for
// jobs spread over nodes, spec-ratio extrapolation, and co-location speed from pair entries.
#include <doctest/doctest.h>

#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"

using namespace fleetsim;

namespace {

JobModelParams table_params();

const std::string kTable = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/workloads/throughputs_small.json";

JobSpec job(const std::string& model, int gpus, double steps) {
  JobSpec j;
  j.model = model;
  j.gpus = gpus;
  j.steps = steps;
  j.duration_s = 123;
  return j;
}

PlacementSummary on(const std::string& gpu, int gpus, int nodes) {
  PlacementSummary p;
  p.gpu_type = gpu;
  p.gpus = gpus;
  p.nodes = nodes;
  return p;
}

double time_of(const JobModel& m, const JobSpec& j, const PlacementSummary& p) {
  std::string why;
  const auto t = m.run_time_s(j, p, why);
  REQUIRE_MESSAGE(t.has_value(), why);
  return *t;
}

JobModelParams table_params() {
  JobModelParams p;
  p.settings.set("throughput_table", kTable);
  return p;
}

}  // namespace

TEST_CASE("job model trace: the recorded duration whatever the placement") {
  const auto m = job_models().create("trace", JobModelParams{});
  CHECK(time_of(*m, job("x", 1, 1), on("V100", 1, 1)) == 123);
  CHECK(time_of(*m, job("x", 1, 1), on("K80", 8, 2)) == 123);
  JobSpec no_duration;
  std::string why;
  CHECK_FALSE(m->can_time(no_duration, why));
}

TEST_CASE("job model throughput: steps over the measured rate, consolidated or not") {
  const auto m = job_models().create("throughput", table_params());
  // ResNet-50 bs64 x4 on V100: 32 steps/s in one node, 25 steps/s spread: 3200 steps -> 100 s / 128 s.
  CHECK(time_of(*m, job("ResNet-50 (batch size 64)", 4, 3200), on("V100", 4, 1)) == doctest::Approx(100));
  CHECK(time_of(*m, job("ResNet-50 (batch size 64)", 4, 3200), on("V100", 4, 2)) == doctest::Approx(128));
  // Transformer bs128 x1 on K80: 2 steps/s -> 1000 steps take 500 s.
  CHECK(time_of(*m, job("Transformer (batch size 128)", 1, 1000), on("K80", 1, 1)) == doctest::Approx(500));
  // H100 is not in the table: the V100 rate scaled by the FP32 peak ratio.
  const double ratio = gpu_spec("H100").fp32_tflops / gpu_spec("V100").fp32_tflops;
  CHECK(time_of(*m, job("ResNet-50 (batch size 64)", 1, 1000), on("H100", 1, 1)) ==
        doctest::Approx(1000 / (10.0 * ratio)));
}

TEST_CASE("job model throughput: co-location speed from the table's pair entries") {
  const auto m = job_models().create("throughput", table_params());
  // ResNet-50 alone 10 steps/s, beside Transformer 6 steps/s -> speed 0.6; Transformer 12.5 -> 4: 0.32.
  const auto r = m->colocated_speed(job("ResNet-50 (batch size 64)", 1, 1),
                                    job("Transformer (batch size 128)", 1, 1), "V100");
  REQUIRE(r.has_value());
  CHECK(*r == doctest::Approx(0.6));
  const auto t = m->colocated_speed(job("Transformer (batch size 128)", 1, 1),
                                    job("ResNet-50 (batch size 64)", 1, 1), "V100");
  REQUIRE(t.has_value());
  CHECK(*t == doctest::Approx(0.32));
  // No pair entry: nullopt (the scenario's colocation_slowdown applies).
  CHECK_FALSE(m->colocated_speed(job("A3C", 1, 1), job("A3C", 1, 1), "V100").has_value());
}
