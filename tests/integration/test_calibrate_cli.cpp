// fleetsim calibrate fit | eval | split, end to end through the binary: on small generated sweeps
// (hand-checkable), on bad input (exit 2, file:line:field, no outputs), and on the shared
// measurements for the memory-bound kernels (fit on a seeded half, measure on the other half).
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::shared_data_available;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;
namespace fs = std::filesystem;

namespace {

const char* kGemmHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,"
    "Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K\n";
const char* kMemHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid y,"
    "Grid z,Block x,Block y,Block z,CUDA Version,B,H,large\n";

/// GEMM rows on a T4: 10 us launch + flops at 6 TFLOP/s (a 74% efficient 8.1 TFLOP/s part).
std::string gemm_rows(const std::string& device, int count) {
  std::string out = kGemmHeader;
  for (int i = 0; i < count; ++i) {
    const long m = 256 + 128L * (i % 7), n = 512 + 256L * (i % 5), k = 384 + 128L * (i % 3);
    const double ms = 0.01 + 2.0 * static_cast<double>(m * n * k) / 6e12 * 1e3;
    out += "linear," + std::to_string(ms) + "," + device +
           ",p2.1.0,8902,\"volta_sgemm_128x64_tn\",1,1,1,1,1,256,1,1,cu121,;x,1," + std::to_string(m) + "," +
           std::to_string(n) + "," + std::to_string(k) + "\n";
  }
  return out;
}

/// relu rows: 5 us launch + 8 bytes per element at 250 GB/s.
std::string relu_rows(const std::string& device, int count) {
  std::string out = kMemHeader;
  for (int i = 0; i < count; ++i) {
    const long b = 64L << (i % 8), h = 1024 + 512L * (i % 3);
    const double ms = (5e-6 + 8.0 * static_cast<double>(b * h) / 250e9) * 1e3;
    out += "relu," + std::to_string(ms) + "," + device +
           ",p2.1.0,8902,\"k<4>(int, float)\",1,1,1,1,1,128,1,1,cu121," + std::to_string(b) + "," +
           std::to_string(h) + ",True\n";
  }
  return out;
}

int count_lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

std::string q(const fs::path& p) {
  return "'" + p.string() + "'";
}

}  // namespace

TEST_CASE("calibrate cli: fit then eval on generated sweeps writes predictions and summary") {
  const auto dir = temp_dir("calcli");
  write_file(dir / "linear_T4.csv", gemm_rows("Tesla T4", 40));
  write_file(dir / "elem_T4.csv", relu_rows("Tesla T4", 24));
  auto r = run_fleetsim("calibrate fit --out " + q(dir / "cal.json") + " " + q(dir / "linear_T4.csv") + " " +
                        q(dir / "elem_T4.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(r.output.find("64 kernel rows") != std::string::npos);
  const auto cal = nlohmann::json::parse(read_file(dir / "cal.json"));
  CHECK(cal["format"] == "fleetsim-calibration");
  CHECK(cal["sources"].size() == 2);

  // Eval on the same device, and on an L4 the calibration has never seen.
  write_file(dir / "linear_L4.csv", gemm_rows("NVIDIA L4", 5));
  r = run_fleetsim("calibrate eval --no-plot --calibration " + q(dir / "cal.json") + " --out " +
                   q(dir / "ev") + " " + q(dir / "linear_T4.csv") + " " + q(dir / "elem_T4.csv") + " " +
                   q(dir / "linear_L4.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const std::string pred = read_file(dir / "ev" / "predictions.csv");
  CHECK(pred.starts_with("device,op,shape,measured_ms,predicted_ms,ape_pct,label\n"));
  CHECK(count_lines(pred) == 1 + 40 + 24 + 5);
  CHECK(pred.find("L4,linear,B=1 M=256 N=512 K=384,") != std::string::npos);
  CHECK(pred.find(",extrapolated\n") != std::string::npos);
  const auto sum = nlohmann::json::parse(read_file(dir / "ev" / "summary.json"));
  std::set<std::string> groups;
  for (const auto& g : sum["groups"]) {
    groups.insert(g["device"].get<std::string>() + "/" + g["op"].get<std::string>());
    if (g["device"] == "T4") {
      // The generated data follow the calibrated model's form: the fit reproduces them closely.
      CHECK(g["mape_pct"].get<double>() < 5);
      CHECK(g["label"] != "extrapolated");
    }
    if (g["device"] == "L4") CHECK(g["label"] == "extrapolated");
  }
  CHECK(groups == std::set<std::string>{"T4/linear", "T4/relu", "T4/elementwise", "L4/linear"});
  CHECK(r.output.find("MAPE%") != std::string::npos);
}

TEST_CASE("calibrate cli: bad measurement files and calibrations exit 2 naming file and line") {
  const auto dir = temp_dir("calcli");
  std::string bad = gemm_rows("Tesla T4", 4);
  bad.replace(bad.find("\nlinear,") + 8, 3, "abc");  // line 2: Latency is not a number
  write_file(dir / "bad.csv", bad);
  auto r = run_fleetsim("calibrate fit --out " + q(dir / "cal.json") + " " + q(dir / "bad.csv"));
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("bad.csv:2") != std::string::npos, r.output);
  CHECK(r.output.find("Latency") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "cal.json"));

  write_file(dir / "notes.txt", "hello\nworld\n");
  r = run_fleetsim("calibrate fit --out " + q(dir / "cal.json") + " " + q(dir / "notes.txt"));
  CHECK(r.code == 2);
  CHECK(r.output.find("notes.txt") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "cal.json"));

  write_file(dir / "fake.json", "{\"format\": \"other\"}");
  write_file(dir / "ok.csv", gemm_rows("Tesla T4", 4));
  r = run_fleetsim("calibrate eval --no-plot --calibration " + q(dir / "fake.json") + " --out " +
                   q(dir / "ev") + " " + q(dir / "ok.csv"));
  CHECK(r.code == 2);
  CHECK(r.output.find("not a fleetsim calibration file") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "ev" / "predictions.csv"));

  write_file(dir / "gpu.csv", gemm_rows("Voodoo 5", 8));
  r = run_fleetsim("calibrate fit --out " + q(dir / "cal.json") + " " + q(dir / "gpu.csv"));
  CHECK(r.code == 2);
  CHECK(r.output.find("Voodoo 5") != std::string::npos);
}

TEST_CASE("calibrate cli: split halves each (device, op) group, seeded and complete") {
  const auto dir = temp_dir("calcli");
  std::string rows = relu_rows("Tesla T4", 21);
  rows += relu_rows("NVIDIA L4", 10).substr(std::string(kMemHeader).size());
  write_file(dir / "elem.csv", rows);
  auto r = run_fleetsim("calibrate split --seed 7 --out " + q(dir / "a") + " " + q(dir / "elem.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const std::string fit = read_file(dir / "a" / "elem.fit.csv"),
                    hold = read_file(dir / "a" / "elem.holdout.csv");
  CHECK(count_lines(fit) == 1 + 11 + 5);  // ceil(21/2) T4 rows, 5 L4 rows, plus the header
  CHECK(count_lines(hold) == 1 + 10 + 5);
  CHECK(fit.starts_with(kMemHeader));
  // Every data row lands in exactly one half.
  std::multiset<std::string> all, parts;
  auto add = [](std::multiset<std::string>& s, const std::string& text) {
    std::size_t pos = text.find('\n') + 1;
    while (pos < text.size()) {
      const std::size_t end = text.find('\n', pos);
      s.insert(text.substr(pos, end - pos));
      pos = end + 1;
    }
  };
  add(all, rows);
  add(parts, fit);
  add(parts, hold);
  CHECK(all == parts);
  // Same seed, same split; another seed, another split.
  r = run_fleetsim("calibrate split --seed 7 --out " + q(dir / "b") + " " + q(dir / "elem.csv"));
  CHECK(read_file(dir / "b" / "elem.fit.csv") == fit);
  r = run_fleetsim("calibrate split --seed 8 --out " + q(dir / "c") + " " + q(dir / "elem.csv"));
  CHECK(read_file(dir / "c" / "elem.fit.csv") != fit);
}

TEST_CASE("calibrate cli: memory-bound kernels on the shared data, fit on half, within 10 percent") {
  fleetsim::test::require_shared();
  const auto dir = temp_dir("calmem");
  const std::string test = fleetsim::test::shared_dir() + "/microbench/neusight/test/";
  auto r = run_fleetsim("calibrate split --seed 42 --out " + q(dir) + " " + test + "elem.csv " + test +
                        "ln.csv " + test + "softmax.csv");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  r = run_fleetsim("calibrate fit --out " + q(dir / "cal.json") + " " + q(dir / "elem.fit.csv") + " " +
                   q(dir / "ln.fit.csv") + " " + q(dir / "softmax.fit.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  r = run_fleetsim("calibrate eval --no-plot --calibration " + q(dir / "cal.json") + " --out " +
                   q(dir / "ev") + " " + q(dir / "elem.holdout.csv") + " " + q(dir / "ln.holdout.csv") + " " +
                   q(dir / "softmax.holdout.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  MESSAGE(r.output);
  const auto sum = nlohmann::json::parse(read_file(dir / "ev" / "summary.json"));
  int checked = 0;
  for (const auto& g : sum["groups"]) {
    const std::string op = g["op"];
    if (op != "elementwise" && op != "ln" && op != "softmax") continue;
    INFO(g["device"].get<std::string>() << " " << op);
    CHECK(g["mape_pct"].get<double>() <= 10.0);
    CHECK(g["mape_pct"].get<double>() < g["roofline_mape_pct"].get<double>());
    ++checked;
  }
  CHECK(checked == 6 * 3);  // six devices x {elementwise, ln, softmax}
}

TEST_CASE("calibrate cli: --node-topology is kept in the calibration, bad values exit 2") {
  fleetsim::test::require_shared();
  const auto dir = temp_dir("calcli");
  const std::string v100 = fleetsim::test::shared_dir() + "/collectives/nccl-allreduce-v100";
  auto r = run_fleetsim("calibrate fit -q --out " + q(dir / "cal.json") + " " + v100 +
                        " --node-topology V100=dgx1");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto cal = nlohmann::json::parse(read_file(dir / "cal.json"));
  CHECK(cal["collectives"]["node_topology"]["V100"] == "dgx1");
  for (const char* bad : {"V100=torus", "H100=dgx1", "dgx1"}) {
    CAPTURE(bad);
    r = run_fleetsim("calibrate fit -q --out " + q(dir / "bad.json") + " " + v100 + " --node-topology " +
                     bad);
    CHECK(r.code == 2);
    CHECK(r.output.find("--node-topology") != std::string::npos);
    CHECK_FALSE(fs::exists(dir / "bad.json"));
  }
}
