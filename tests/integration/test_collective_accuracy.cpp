// Accuracy of the calibrated collective model on the shared nccl-tests all-reduce tables
// (issue 4 item 3: time within 5% for 8 MiB - 1 GiB on 2-8 GPUs).
//
// Splits (rows are 1 MiB .. 1 GiB in 1 MiB steps, 2..8 GPUs in one server):
//  - "sizes": fit every 4th size (4, 8, ..., 1024 MiB) on every GPU count; predict the other
//    three quarters of the sizes on every count.
//  - "counts": fit every 4th size on 2, 4 and 8 GPUs only; predict every other row, including all
//    rows of the unseen counts 3, 5, 6, 7 (interpolated between fitted counts).
// Errors are |predicted / measured - 1| over held-out rows with 8 MiB <= size <= 1 GiB.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "tests/test_util.hpp"

using namespace fleetsim;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::vector<CollectiveSample> table(const std::string& sys) {
  fleetsim::test::require_shared("collectives/nccl-allreduce-" + sys);
  std::vector<CollectiveSample> all;
  for (int n = 2; n <= 8; ++n) {
    const std::string path = fleetsim::test::shared_dir() + "/collectives/nccl-allreduce-" + sys + "/AR_GPU" +
                             std::to_string(n) + "_1M_1024M_LUT";
    auto rows = read_nccl_tests(path);
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

bool fit_size(const CollectiveSample& s) {
  return std::fmod(s.bytes / kMiB, 4.0) == 0.0;
}

struct Stats {
  double max = 0, sum = 0;
  std::vector<double> errs;
  double mean() const { return errs.empty() ? 0 : sum / static_cast<double>(errs.size()); }
  double p95() const {
    if (errs.empty()) return 0;
    auto v = errs;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(0.95 * static_cast<double>(v.size() - 1))];
  }
  double over5() const {
    return errs.empty() ? 0
                        : static_cast<double>(
                              std::count_if(errs.begin(), errs.end(), [](double e) { return e > 0.05; })) /
                              static_cast<double>(errs.size());
  }
};

/// Fits on rows where `fit` holds, predicts the others (8 MiB..1 GiB) with the registered
/// "calibrated" model; returns stats per GPU count.
template <typename Fit>
std::map<int, Stats> evaluate(const std::vector<CollectiveSample>& rows, const std::string& system, Fit fit,
                              const char* label, const NodeTopology* topology = nullptr) {
  std::vector<CollectiveSample> train;
  for (const auto& s : rows)
    if (fit(s)) train.push_back(s);
  CollectiveModelParams params;
  auto cal = std::make_shared<CollectiveCalibration>(fit_collectives(train));
  if (topology != nullptr) cal->node_topology[system] = topology;
  params.calibration = cal;
  auto model = collective_models().create("calibrated", params);
  CommFabric fabric;
  fabric.system = system;
  std::map<int, Stats> out;
  for (const auto& s : rows) {
    if (fit(s) || s.bytes < 8 * kMiB || s.bytes > 1024 * kMiB) continue;
    const double pred = model->predict({s.op, s.bytes, s.ranks, 1}, fabric).seconds;
    const double e = std::abs(pred / s.seconds - 1);
    auto& st = out[s.ranks];
    st.errs.push_back(e);
    st.sum += e;
    st.max = std::max(st.max, e);
  }
  std::printf("\n%s all-reduce, split '%s' (%zu fit rows)\n  GPUs  held-out  mean%%   p95%%   max%%  >5%%\n",
              system.c_str(), label, train.size());
  for (const auto& [n, st] : out)
    std::printf("  %4d  %8zu  %5.2f  %5.2f  %5.2f  %4.1f%%\n", n, st.errs.size(), 100 * st.mean(),
                100 * st.p95(), 100 * st.max, 100 * st.over5());
  return out;
}

bool counts_fit(const CollectiveSample& s) {
  return fit_size(s) && (s.ranks == 2 || s.ranks == 4 || s.ranks == 8);
}

}  // namespace

TEST_CASE("collective accuracy: A100 held-out sizes, all counts within 5% (mean and p95)") {
  auto st = evaluate(table("a100"), "A100", fit_size, "sizes");
  REQUIRE(st.size() == 7);
  for (const auto& [n, s] : st) {
    CAPTURE(n);
    CHECK(s.mean() < 0.02);
    CHECK(s.p95() < 0.05);
    CHECK(s.max < 0.15);  // single outlier rows (e.g. 24 MiB on 8 GPUs runs 13% faster than 23 and 25 MiB)
  }
}

TEST_CASE("collective accuracy: A100 fit on 2-4-8 GPUs predicts unseen counts 3-5-6-7") {
  auto st = evaluate(table("a100"), "A100", counts_fit, "counts");
  REQUIRE(st.size() == 7);
  for (const auto& [n, s] : st) {
    CAPTURE(n);
    CHECK(s.mean() < 0.02);
    CHECK(s.p95() < 0.05);
    CHECK(s.max < 0.15);
  }
}

TEST_CASE("collective accuracy: V100 held-out sizes, all counts within 5% (mean and p95)") {
  auto st = evaluate(table("v100"), "V100", fit_size, "sizes");
  REQUIRE(st.size() == 7);
  for (const auto& [n, s] : st) {
    CAPTURE(n);
    CHECK(s.mean() < 0.01);
    CHECK(s.p95() < 0.05);
    CHECK(s.max < 0.40);  // 8 GPUs: 8-13 MiB run on a slower configuration than 14 MiB up
  }
}

TEST_CASE("collective accuracy: V100 fit on 2-4-8 GPUs, seen counts within 5%, unseen counts miss") {
  auto st = evaluate(table("v100"), "V100", counts_fit, "counts");
  REQUIRE(st.size() == 7);
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    CHECK(st[n].mean() < 0.01);
    CHECK(st[n].p95() < 0.05);
  }
  // DGX-1 hybrid cube-mesh: bus bandwidth is not monotone in the GPU count (3: 45, 4: 86, 5: 37,
  // 6: 46, 7: 87 GB/s), so counts interpolated from 2, 4, 8 miss by 25-60%. Recorded, not hidden.
  for (int n : {3, 5, 6, 7}) {
    CAPTURE(n);
    CHECK(st[n].mean() > 0.05);
  }
}

TEST_CASE("collective accuracy: V100 with the DGX-1 NVLink topology, every unseen count within 5%") {
  // Rings over GPUs 0..n-1 of the hybrid cube-mesh: 1, 2, 4, 0, 2, 4, 6 for n = 2..8; the measured
  // 1 GiB bus bandwidth per ring is 22.6, 22.6, 21.3, -, 22.9, 21.8, 22.4 GB/s (5 GPUs: 37.2 GB/s,
  // 1.65 x one ring, where one chain gives 2(n-1)/n = 1.6 x).
  const NodeTopology& dgx1 = node_topology("dgx1");
  auto st = evaluate(table("v100"), "V100", counts_fit, "counts, dgx1 topology", &dgx1);
  REQUIRE(st.size() == 7);
  for (int n : {2, 4, 8}) {
    CAPTURE(n);
    CHECK(st[n].mean() < 0.01);
  }
  for (int n : {3, 7}) {
    CAPTURE(n);
    CHECK(st[n].mean() < 0.035);
    CHECK(st[n].p95() < 0.05);
  }
  CHECK(st[6].mean() < 0.05);  // 2 rings between the 4 of 4 GPUs and the 6 of 8: measured 4.5%
  CHECK(st[6].p95() < 0.06);
  // Five GPUs have no NVLink ring (GPU 4's only links into 0-4 go to GPU 0), so a ring would cross
  // the CPU sockets; NCCL runs one chain along the NVLink path 4-0-3-2-1 instead, at one ring of
  // two GPUs' bandwidth (nvlink_chain_only). Nothing fitted on five GPUs: measured 2.8% mean.
  CHECK(st[5].mean() < 0.035);
  CHECK(st[5].p95() < 0.05);
}

TEST_CASE("collective accuracy: aicb A100 all-reduce rows against the A100 table fit (context)") {
  CollectiveModelParams params;
  params.calibration = std::make_shared<const CollectiveCalibration>(fit_collectives(table("a100")));
  auto model = collective_models().create("calibrated", params);
  CommFabric fabric;
  fabric.system = "A100";
  fleetsim::test::require_shared("collectives/aicb_A100_collectives.csv");
  auto rows = read_aicb_csv(fleetsim::test::shared_dir() + "/collectives/aicb_A100_collectives.csv");
  REQUIRE(rows.size() > 5000);
  std::map<std::pair<int, double>, std::vector<double>> groups;
  for (const auto& s : rows)
    if (s.op == Collective::all_reduce) groups[{s.ranks, s.bytes}].push_back(s.seconds);
  std::printf(
      "\naicb A100 all-reduce vs A100 LUT fit (median of repeated rows)\n"
      "  ranks        bytes  rows  measured_us  predicted_us  ratio\n");
  bool saw_16m = false;
  for (auto& [key, ts] : groups) {
    std::sort(ts.begin(), ts.end());
    const double med = ts[ts.size() / 2];
    const double pred = model->predict({Collective::all_reduce, key.second, key.first, 1}, fabric).seconds;
    std::printf("  %5d  %11.0f  %4zu  %11.2f  %12.2f  %5.2f\n", key.first, key.second, ts.size(), med * 1e6,
                pred * 1e6, pred / med);
    if (key.first == 2 && key.second == 16 * kMiB) {
      saw_16m = true;
      CHECK(pred / med > 0.5);  // same order of magnitude inside training (contention, other streams)
      CHECK(pred / med < 1.5);
    }
  }
  CHECK(saw_16m);
}

TEST_CASE("collective accuracy: uncalibrated nccl-default against both tables (context)") {
  auto model = collective_models().create("nccl-default", CollectiveModelParams{});
  for (const auto& [sys, gpu] :
       {std::pair<std::string, std::string>{"a100", "A100-SXM4-40GB"}, {"v100", "V100"}}) {
    const CommFabric fabric = fabric_for(gpu_spec(gpu));
    std::map<int, Stats> st;
    for (const auto& s : table(sys)) {
      if (s.bytes < 8 * kMiB) continue;
      const double e = std::abs(model->predict({s.op, s.bytes, s.ranks, 1}, fabric).seconds / s.seconds - 1);
      auto& x = st[s.ranks];
      x.errs.push_back(e);
      x.sum += e;
      x.max = std::max(x.max, e);
    }
    std::printf("\nnccl-default on %s (%s, intra %.0f GB/s), 8 MiB..1 GiB\n  GPUs  mean%%   max%%\n",
                sys.c_str(), gpu.c_str(), fabric.intra_gbs);
    for (const auto& [n, x] : st) std::printf("  %4d  %5.1f  %5.1f\n", n, 100 * x.mean(), 100 * x.max);
    if (sys == "a100")
      for (const auto& [n, x] : st) {
        CAPTURE(n);
        CHECK(x.mean() < 0.25);  // NVSwitch: one bandwidth for every count
      }
  }
}
