// `fleetsim llm` reads inputs as public tools write them: GPU names in any spelling the catalog
// resolves (NeuSight's label folders), vTrain's multi-node CSV (a leading "Parameters (billion)"
// column, a byte-order mark, other header spellings), a cluster-only --platform scenario; and it
// says when a case does not fit in memory or spans servers of the default platform.
#include <doctest/doctest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "models/llm/neusight.hpp"
#include "models/llm/vtrain.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;
namespace fs = std::filesystem;

namespace {

// vTrain's multi-node header with four made-up rows (two on 16 GPUs, two on 8; the last needs full
// recomputation to fit in 40 GB: 183 GB of activations without, 55 GB with selective).
const char* kMultiNode =
    "\xEF\xBB\xBFParameters (billion),# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
    "sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\r\n"
    "0.4,16,64,4,1024,16,24,1024,2,4,2,900.0\r\n"
    "0.4,16,32,2,1024,16,24,1024,8,2,1,700.5\r\n"
    "1.2,8,16,2,2048,16,24,1024,1,8,1,800.25\r\n"
    "1.2,8,128,16,2048,16,24,2048,1,8,1,9000\r\n";

/// These cases check the CSV and JSON outputs: the plot script is a no-op (it takes seconds per run).
void no_plots(const fs::path& dir) {
  test::write_file(dir / "noplot.py", "\n");
  ::setenv("FLEETSIM_PLOT_LLM_EVAL", (dir / "noplot.py").c_str(), 1);
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("gpu names: any spelling the catalog resolves, and what was repaired") {
  const GpuMatch h100 = resolve_gpu("NVIDIA_H100_80GB_HBM3");
  REQUIRE(h100.gpu != nullptr);
  CHECK(h100.gpu->name == "H100");
  CHECK(h100.repaired.find("vendor prefix 'nvidia'") != std::string::npos);
  CHECK(h100.repaired.find("'_'") != std::string::npos);
  const GpuMatch pcie = resolve_gpu("NVIDIA_A100_80GB_PCIe");
  REQUIRE(pcie.gpu != nullptr);
  CHECK(pcie.gpu->name == "A100-80GB-PCIe");
  CHECK(resolve_gpu("Tesla_T4").gpu->name == "T4");
  CHECK(resolve_gpu("NVIDIA A100-SXM4-80GB").gpu->name == "A100-80GB");
  CHECK(resolve_gpu("nvidia  tesla v100-sxm2-32gb").gpu->name == "V100");
  CHECK(resolve_gpu("AMD Instinct MI250").gpu->name == "MI250");
  // A catalog name or alias as written: nothing repaired (case is not a repair).
  CHECK(resolve_gpu("A100-80GB").repaired.empty());
  CHECK(resolve_gpu("h100").repaired.empty());
  CHECK(resolve_gpu("NVIDIA_Z9000").gpu == nullptr);
  CHECK(find_gpu("") == nullptr);
  CHECK_THROWS_WITH_AS(gpu_spec("NVIDIA_Z9000", "f", 0, "gpu"), doctest::Contains("unknown GPU model"),
                       InputError);
}

TEST_CASE("neusight labels: folders named NVIDIA_H100_80GB_HBM3 and NVIDIA_A100_80GB_PCIe") {
  const auto dir = test::temp_dir("neusight-names");
  fs::create_directories(dir / "configs");
  test::write_file(dir / "configs" / "tiny.json",
                   R"({"model_type": "gpt2", "n_layer": 4, "n_embd": 256, "n_head": 8, "vocab_size": 1000,
                       "n_positions": 1024, "activation_function": "gelu_new"})");
  for (const char* gpu : {"NVIDIA_H100_80GB_HBM3", "NVIDIA_A100_80GB_PCIe"}) {
    fs::create_directories(dir / "labels" / gpu);
    test::write_file(dir / "labels" / gpu / "tiny-train-512-16-dp4.json", R"({"e2e_latency": 50.0})");
  }
  no_plots(dir);
  const auto r = read_neusight_labels((dir / "labels").string(), (dir / "configs").string(), TrainingSetup{});
  REQUIRE(r.cases.size() == 2);
  CHECK(r.cases[0].gpu == "A100-80GB-PCIe");
  CHECK(r.cases[1].gpu == "H100");
  CHECK(r.cases[1].setup.dp == 4);
  REQUIRE(r.repaired.size() == 2);
  CHECK(r.repaired[1].find("read as 'H100'") != std::string::npos);
  // The CLI takes them and says what it repaired.
  const auto out = test::run_fleetsim("llm eval --out " + (dir / "out").string() + " --configs " +
                                      (dir / "configs").string() + " " + (dir / "labels").string());
  REQUIRE_MESSAGE(out.code == 0, out.output);
  CHECK(out.output.find("read as 'A100-80GB-PCIe'") != std::string::npos);
  const auto summary = nlohmann::json::parse(read(dir / "out" / "summary.json"));
  CHECK(summary["notes"].size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("vtrain csv: the multi-node file's leading Parameters column, BOM, CRLF and other spellings") {
  const auto dir = test::temp_dir("vtrain-multi");
  test::write_file(dir / "multi.csv", kMultiNode);
  std::vector<std::string> notes;
  const auto cases = read_vtrain_csv((dir / "multi.csv").string(), TrainingSetup{}, &notes);
  REQUIRE(cases.size() == 4);
  CHECK(cases[0].setup.tp == 2);
  CHECK(cases[0].setup.dp == 4);
  CHECK(cases[0].setup.pp == 2);
  CHECK(cases[0].family == "tp+dp+pp");
  CHECK(cases[1].measured_s == doctest::Approx(0.7005));
  CHECK(cases[2].model.hidden == 2048);
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].find("Parameters (billion)") != std::string::npos);
  // Reordered columns in other spellings, no GPU count, the time in seconds.
  test::write_file(dir / "variant.csv",
                   "TP,DP,PP,Global_Batch_Size,Micro_Batch_Size,Hidden_Size,Num_Attention_Heads,Num_Layers,"
                   "Seq_Len,Iteration Time (s)\n2,2,1,8,2,1024,16,4,512,0.25\n");
  const auto variant = read_vtrain_csv((dir / "variant.csv").string(), TrainingSetup{});
  REQUIRE(variant.size() == 1);
  CHECK(variant[0].setup.gpus() == 4);
  CHECK(variant[0].setup.seq == 512);
  CHECK(variant[0].measured_s == doctest::Approx(0.25));
  // What cannot be repaired: a missing column, a GPU count that is not tp x dp x pp, a short row.
  test::write_file(dir / "bad.csv", "# GPUs,global batch,micro batch\n1,2,3\n");
  CHECK_THROWS_WITH_AS(read_vtrain_csv((dir / "bad.csv").string(), TrainingSetup{}),
                       doctest::Contains("missing column(s) 'hidden size'"), InputError);
  test::write_file(dir / "gpus.csv",
                   "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,"
                   "tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)\n"
                   "8,8,1,1024,16,4,512,2,2,1,100\n");
  try {
    read_vtrain_csv((dir / "gpus.csv").string(), TrainingSetup{});
    FAIL("no InputError");
  } catch (const InputError& e) {
    CHECK(e.line() == 2);
    CHECK(e.field() == "# GPUs");
  }
  fs::remove_all(dir);
}

TEST_CASE("llm eval: multi-node cases warn on the default platform, not on a cluster-only --platform") {
  const auto dir = test::temp_dir("llm-eval-multi");
  no_plots(dir);
  test::write_file(dir / "multi.csv", kMultiNode);
  const std::string csv = (dir / "multi.csv").string();
  auto r = test::run_fleetsim("llm eval --out " + (dir / "a").string() + " " + csv);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(r.output.find("2 cases span more than one 8-GPU server of the default platform") !=
        std::string::npos);
  CHECK(r.output.find("Parameters (billion)") != std::string::npos);
  const std::string pred = read(dir / "a" / "predictions.csv");
  CHECK(
      pred.starts_with("source,case,family,gpu,measured_ms,predicted_ms,ape_pct,recompute,memory_gb,fits\n"));
  CHECK(pred.find(",full,") != std::string::npos);  // vTrain's runs checkpoint activations
  CHECK(nlohmann::json::parse(read(dir / "a" / "summary.json"))["multi_node_on_default_platform"] == 2);
  // A scenario with only [cluster] (and --set on it) is a platform: no warning.
  test::write_file(
      dir / "cluster.toml",
      "[cluster]\n[[cluster.pool]]\nname = \"a\"\nnodes = 4\ngpus_per_node = 8\ngpu = \"A100-80GB\"\n"
      "[cluster.network]\nnic_gbps = 200\nnics_per_node = 4\n");
  r = test::run_fleetsim("llm eval --out " + (dir / "b").string() + " --platform " +
                         (dir / "cluster.toml").string() + " --set cluster.network.nic_gbps=400 " + csv);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(r.output.find("default platform") == std::string::npos);
  // The shipped vTrain platform reads as one too.
  r = test::run_fleetsim("llm eval --out " + (dir / "c").string() + " --platform " +
                         std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/llm/vtrain-a100.toml " + csv);
  CHECK_MESSAGE(r.code == 0, r.output);
  // A case that does not fit as set up is predicted, flagged and counted; auto makes it fit.
  r = test::run_fleetsim("llm eval --out " + (dir / "d").string() +
                         " --gpu A100-SXM4-40GB --recompute none " + csv);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto s = nlohmann::json::parse(read(dir / "d" / "summary.json"));
  CHECK(s["fits"]["not_fitting"].get<int>() >= 1);
  CHECK(r.output.find("do not fit in the GPU's memory") != std::string::npos);
  CHECK(read(dir / "d" / "predictions.csv").find(",0\n") != std::string::npos);
  r = test::run_fleetsim("llm eval --out " + (dir / "e").string() +
                         " --gpu A100-SXM4-40GB --recompute auto " + csv);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(nlohmann::json::parse(read(dir / "e" / "summary.json"))["fits"]["not_fitting"] == 0);
  // A scenario without [cluster] is refused naming the key; nothing written.
  test::write_file(dir / "empty.toml", "seed = 1\n");
  r = test::run_fleetsim("llm eval --out " + (dir / "f").string() + " --platform " +
                         (dir / "empty.toml").string() + " " + csv);
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(dir / "f" / "predictions.csv"));
  fs::remove_all(dir);
}

TEST_CASE("llm predict: memory parts, fits, and the chosen recomputation in prediction.json") {
  const auto dir = test::temp_dir("llm-predict-mem");
  const std::string model = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/llm/gpt3-175b.json";
  auto r = test::run_fleetsim("llm predict --model " + model +
                              " --tp 8 --pp 8 --dp 8 --seq 2048 --global-batch 512 --micro-batch 2 --zero 1 "
                              "--recompute auto --out " +
                              (dir / "a").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto j = nlohmann::json::parse(read(dir / "a" / "prediction.json"));
  CHECK(j["fits"] == true);
  CHECK(j["setup"]["recompute"] == "auto");
  CHECK(j["setup"]["recompute_used"] == "selective");  // none needs 111 GB of activations
  CHECK(j["memory_breakdown_gb"]["activations"].get<double>() > 60);
  CHECK(r.output.find("recompute selective): fits") != std::string::npos);
  r = test::run_fleetsim(
      "llm predict --model " + model +
      " --tp 8 --pp 8 --dp 8 --seq 2048 --global-batch 512 --micro-batch 2 --zero 1 --out " +
      (dir / "b").string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(r.output.find("does not fit in memory") != std::string::npos);
  CHECK(nlohmann::json::parse(read(dir / "b" / "prediction.json"))["fits"] == false);
  fs::remove_all(dir);
}
