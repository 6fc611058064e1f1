// The chain from calibrated kernels to a job's iteration time, checked end to end against Gavel's
// measured rates (the `kernels` job model: scenarios/profiles/gavel.toml with the shipped
// calibration). Bounds are the figures this chain achieves; a change that makes them worse fails.
//  - One V100: every job type (26). host_op_s (training_profile.hpp) was fitted on the ResNet-18
//    and Transformer rows only; the other types are held out and bounded separately.
//  - 8 GPUs on 2 nodes (Gavel's unconsolidated table): Gavel's rate for N GPUs counts all N workers'
//    steps, so one worker's iteration is N / rate. The NIC is 10 Gbit/s: AWS's figure for the
//    p3.2xlarge instance Gavel prices its V100 workers with (scheduler/utils.py).
//  - The same all-reduce on the same NIC takes about as long on a calibrated (A100) and an
//    uncalibrated (H100) system: the NIC, not the calibration, bounds it.
#include <doctest/doctest.h>

#include <cmath>
#include <memory>
#include <string>

#include "models/calibration/calibration.hpp"
#include "models/job/training_profile.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"
#include "workloads/throughputs/throughput_table.hpp"

namespace {

using namespace fleetsim;

const std::string kTable = "throughputs/gavel_simulation_throughputs.json";

struct Chain {
  ProfileLibrary lib = read_profiles(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/profiles/gavel.toml");
  std::shared_ptr<Calibration> cal = std::make_shared<Calibration>(
      load_calibration(std::string(FLEETSIM_SOURCE_DIR) + "/models/calibrations/neusight-fp32.json"));
  std::unique_ptr<KernelModel> kernels = kernel_models().create("calibrated", cal->kernels, "", 0, "");
  std::unique_ptr<CollectiveModel> collectives;
  Chain() {
    CollectiveModelParams cp;
    cp.calibration = std::shared_ptr<const CollectiveCalibration>(cal, &cal->collectives);
    collectives = collective_models().create("calibrated", cp, "", 0, "");
  }
};

struct Mape {
  double sum = 0;
  int n = 0;
  void add(double ape) {
    sum += ape;
    ++n;
  }
  double value() const { return n > 0 ? sum / n : 0; }
};

bool fitted_type(const std::string& name) {
  return name.starts_with("ResNet-18") || name.starts_with("Transformer");
}

}  // namespace

TEST_CASE("gavel profiles: one V100, predicted iteration time against Gavel's measured rates") {
  fleetsim::test::require_shared(kTable);
  const Chain c;
  const ThroughputTable table = ThroughputTable::load(fleetsim::test::shared_path(kTable));
  const GpuSpec& v100 = *find_gpu("V100");
  Mape all, fit, held;
  double worst_small_batch = 0;  // ResNet-18 / Transformer at batch 16
  for (const auto& p : c.lib.profiles) {
    const auto rate = table.rate("v100", p.name, 1, true);
    if (!rate || *rate <= 0) continue;
    const double predicted =
        iteration_time(p, v100, 1, 1, *c.kernels, *c.collectives, fabric_for(v100)).total_s;
    const double err = 100 * (predicted * *rate - 1);
    all.add(std::abs(err));
    (fitted_type(p.name) ? fit : held).add(std::abs(err));
    if (p.name.find("batch size 16)") != std::string::npos)
      worst_small_batch = std::max(worst_small_batch, -err);
  }
  MESSAGE("V100 MAPE: all " << all.value() << "% (" << all.n << "), fitted types " << fit.value()
                            << "%, held-out types " << held.value() << "%");
  CHECK(all.n == 26);
  CHECK(all.value() < 30.0);        // 39.0% before the framework overhead; now 28.9%
  CHECK(fit.value() < 15.0);        // 13.1%
  CHECK(held.value() < 40.0);       // 38.7%, of which Recommendation (input pipeline, not modelled) -62..-75%
  CHECK(worst_small_batch < 15.0);  // ResNet-18 and Transformer at batch 16: -10%, was -69%/-68%
}

TEST_CASE("gavel profiles: 8 V100s on 2 nodes, one worker's iteration against Gavel's rate") {
  fleetsim::test::require_shared(kTable);
  const Chain c;
  const ThroughputTable table = ThroughputTable::load(fleetsim::test::shared_path(kTable));
  const GpuSpec& v100 = *find_gpu("V100");
  const CommFabric fabric = fabric_for(v100, 10);
  Mape all;
  for (const auto& p : c.lib.profiles) {
    const auto rate = table.rate("v100", p.name, 8, false);
    const auto one = table.rate("v100", p.name, 1, true);
    if (!rate || *rate <= 0 || !one || *one <= 0) continue;
    const double measured = 8 / *rate;  // Gavel: steps of all 8 workers per second
    CHECK(measured > 1 / *one);         // a worker is never faster than alone on one GPU
    const double predicted = iteration_time(p, v100, 8, 2, *c.kernels, *c.collectives, fabric).total_s;
    all.add(100 * std::abs(predicted / measured - 1));
  }
  MESSAGE("V100 x8, 2 nodes, 10 Gbit/s: MAPE " << all.value() << "% over " << all.n << " job types");
  CHECK(all.n == 19);
  CHECK(all.value() < 17.0);  // 100.9% before (1/rate, hierarchical all-reduce, no host time); now 15.7%
}

TEST_CASE("gavel profiles: a calibrated and an uncalibrated system agree on a NIC-bound all-reduce") {
  const Chain c;
  const CollectiveDesc d{Collective::all_reduce, 102.4e6, 8, 2};
  const double a100 = c.collectives->predict(d, fabric_for(*find_gpu("A100-40GB"), 100)).seconds;
  const double h100 = c.collectives->predict(d, fabric_for(*find_gpu("H100"), 100)).seconds;
  // 1.75 x 102.4 MB over one 12.5 GB/s NIC at 80%: 17.9 ms (was 11.1 ms on A100, 18.0 ms on H100)
  CHECK(a100 == doctest::Approx(17.9e-3).epsilon(0.02));
  CHECK(h100 == doctest::Approx(a100).epsilon(0.02));
}
