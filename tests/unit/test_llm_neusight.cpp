// NeuSight label folders in `fleetsim llm eval` (issue 18): file names -> cases (train/inf, -dp4,
// -tp4, -pp4_k), skipped fused and config-less labels, bad labels naming the file and key, and the
// shared measured end-to-end latencies (6 GPUs) against the prediction.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/llm/neusight.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;
namespace fs = std::filesystem;

namespace {

const char* kGpt2 =
    R"({"model_type": "gpt2", "n_layer": 4, "n_embd": 256, "n_head": 8, "vocab_size": 1000,
        "n_positions": 1024, "activation_function": "gelu_new"})";

/// labels/<gpu>/ with one label per name (e2e_latency 100 ms), and configs/tiny.json.
fs::path make_labels(const std::string& gpu, const std::vector<std::string>& names) {
  const auto dir = test::temp_dir("neusight");
  fs::create_directories(dir / "labels" / gpu);
  fs::create_directories(dir / "configs");
  test::write_file(dir / "configs" / "tiny.json", kGpt2);
  for (const auto& n : names)
    test::write_file(dir / "labels" / gpu / (n + ".json"), R"({"num_layer": 4, "e2e_latency": 100.0})");
  return dir;
}

}  // namespace

TEST_CASE("neusight labels: file names give the mode, batch and parallel layout") {
  const auto dir =
      make_labels("Tesla_V100-PCIE-32GB",
                  {"tiny-train-512-8", "tiny-inf-1024-4", "tiny-train-512-16-dp4", "tiny-train-512-16-tp4",
                   "tiny-train-512-4-pp4_2", "tiny-inf-512-8-fusion", "other-inf-512-8"});
  const auto r = read_neusight_labels((dir / "labels").string(), (dir / "configs").string(), TrainingSetup{});
  REQUIRE(r.cases.size() == 5);
  REQUIRE(r.skipped.size() == 2);
  std::map<std::string, const MeasuredCase*> by;
  for (const auto& c : r.cases) by[c.name] = &c;
  const auto& train = *by.at("V100-PCIE-32GB/tiny-train-512-8");
  CHECK(train.gpu == "V100-PCIE-32GB");  // "Tesla_" dropped, then the catalog's alias
  CHECK_FALSE(train.inference);
  CHECK_FALSE(train.optimizer);
  CHECK(train.setup.dtype == DType::fp32);
  CHECK(train.setup.seq == 512);
  CHECK(train.setup.global_batch == 8);
  CHECK(train.setup.micro_batch == 8);
  CHECK(train.measured_s == doctest::Approx(0.1));
  CHECK(train.model.layers == 4);
  CHECK(by.at("V100-PCIE-32GB/tiny-inf-1024-4")->inference);
  const auto& dp = *by.at("V100-PCIE-32GB/tiny-train-512-16-dp4");
  CHECK(dp.setup.dp == 4);
  CHECK(dp.setup.micro_batch == 4);
  CHECK(dp.family == "train+dp4");
  CHECK(by.at("V100-PCIE-32GB/tiny-train-512-16-tp4")->setup.tp == 4);
  const auto& pp = *by.at("V100-PCIE-32GB/tiny-train-512-4-pp4_2");
  CHECK(pp.setup.pp == 4);
  CHECK(pp.setup.micro_batch == 2);  // 2 micro-batches of the global 4
  CHECK(pp.setup.schedule == PipelineSchedule::gpipe);
  CHECK(r.skipped[0].reason.find("no model config") != std::string::npos);
  CHECK(r.skipped[1].reason.find("fusion") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE(
    "neusight labels: a bad label, an unknown GPU folder or a missing --configs names the file and key") {
  auto dir = make_labels("NVIDIA_A100-PCIE-40GB", {"tiny-inf-512-8"});
  test::write_file(dir / "labels" / "NVIDIA_A100-PCIE-40GB" / "tiny-inf-512-8.json",
                   R"({"e2e_latency": -1})");
  std::string what;
  try {
    read_neusight_labels((dir / "labels").string(), (dir / "configs").string(), TrainingSetup{});
  } catch (const InputError& e) {
    what = e.what();
  }
  CHECK(what.find("tiny-inf-512-8.json") != std::string::npos);
  CHECK(what.find("e2e_latency") != std::string::npos);
  fs::remove_all(dir);

  dir = make_labels("NVIDIA_Z9000", {"tiny-inf-512-8"});
  CHECK_THROWS_AS(
      read_neusight_labels((dir / "labels").string(), (dir / "configs").string(), TrainingSetup{}),
      InputError);
  CHECK_THROWS_AS(read_neusight_labels((dir / "labels").string(), "", TrainingSetup{}), InputError);
  fs::remove_all(dir);
}

TEST_CASE("neusight: shared end-to-end latencies on 6 GPUs, train and inference, mean APE under 9%") {
  test::require_shared("llm/neusight/labels");
  const auto dir = test::temp_dir("neusight-eval");
  const auto r = test::run_fleetsim(
      "llm eval --out " + (dir / "out").string() + " --calibration " + std::string(FLEETSIM_SOURCE_DIR) +
      "/models/calibrations/neusight-fp32.json --configs " + test::shared_path("llm/neusight/configs") + " " +
      test::shared_path("llm/neusight/labels"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  std::ifstream in(dir / "out" / "summary.json");
  const auto s = nlohmann::json::parse(in);
  const auto& all = s["overall"];
  MESSAGE("NeuSight MAPE " << all["mape_pct"].get<double>() << "% over " << all["cases"] << " cases");
  CHECK(all["cases"] == 50);
  CHECK(s["skipped"].size() == 9);  // 8 fused-kernel labels, 1 without a config (switch4)
  // Measured 8.55% (10.32% before the eager kernel lists; target 10%).
  CHECK(all["mape_pct"].get<double>() < 9.0);
  // Measured 7.05%: 4.09% before the eager kernels, when the missing element-wise kernels offset the
  // GEMM fits' over-prediction of V100 (the training sweeps run about 10% slower than NeuSight's
  // test rows of the same shapes; models/llm/README.md).
  CHECK(s["by_source_gpu"]["neusight/V100-PCIE-32GB"]["mape_pct"].get<double>() < 7.5);
  fs::remove_all(dir);
}
