// GPU catalog: lookups, aliases, case-insensitivity, suggestions and sanity of every entry.
#include <doctest/doctest.h>

#include <fstream>
#include <set>
#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

std::string canonical(const std::string& name) {
  const GpuSpec* g = find_gpu(name);
  return g == nullptr ? std::string("<none>") : g->name;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

InputError spec_error(const std::string& name, const std::string& file = "", long line = 0,
                      const std::string& key = "gpu") {
  try {
    gpu_spec(name, file, line, key);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("gpu_spec('" << name << "') did not throw");
  return InputError("", 0, "", "");
}

}  // namespace

TEST_CASE("catalog: required models are present under their canonical names") {
  for (const char* name : {"K80", "P4", "P100", "V100", "V100-16GB", "T4", "A10", "A100-40GB", "A100-80GB",
                           "H100", "H200", "L4", "MI250", "G2", "G3"}) {
    INFO(name);
    REQUIRE(find_gpu(name) != nullptr);
    CHECK(find_gpu(name)->name == name);
  }
}

TEST_CASE("catalog: aliases from traces resolve to canonical entries") {
  // openb (Alibaba) spellings
  CHECK(canonical("V100M16") == "V100-16GB");
  CHECK(canonical("V100M32") == "V100");
  CHECK(canonical("V100-32GB") == "V100");
  // A100 spellings
  CHECK(canonical("A100") == "A100-40GB");
  CHECK(canonical("A100-PCIE-40GB") == "A100-40GB");
  CHECK(canonical("A100-SXM4-80GB") == "A100-80GB");
  // Gavel's lower-case names
  CHECK(canonical("k80") == "K80");
  CHECK(canonical("p100") == "P100");
  CHECK(canonical("v100") == "V100");
  // nvidia-smi product names carry a vendor prefix
  CHECK(canonical("Tesla V100-SXM2-32GB") == "V100");
  CHECK(canonical("NVIDIA A100-SXM4-80GB") == "A100-80GB");
  CHECK(canonical("Tesla T4") == "T4");
  CHECK(canonical("AMD Instinct MI250") == "MI250");
}

TEST_CASE("catalog: lookup is case-insensitive and trims blanks") {
  CHECK(canonical("a100-80gb") == "A100-80GB");
  CHECK(canonical("H100-sxm") == "H100");
  CHECK(canonical("v100m16") == "V100-16GB");
  CHECK(canonical("  T4 ") == "T4");
  CHECK(canonical("mi250") == "MI250");
}

TEST_CASE("catalog: unknown names give nullptr from find_gpu") {
  CHECK(find_gpu("") == nullptr);
  CHECK(find_gpu("B300") == nullptr);
  CHECK(find_gpu("b200")->name == "B200");
  CHECK(find_gpu("mi300x")->name == "MI300X");
  CHECK(find_gpu("Tesla ") == nullptr);
  CHECK(find_gpu("V100M") == nullptr);
}

TEST_CASE("catalog: gpu_spec error names the key and suggests the closest model") {
  const InputError e = spec_error("A100-80G", "scen.toml", 12, "cluster.pool.0.gpu");
  CHECK(e.file() == "scen.toml");
  CHECK(e.line() == 12);
  CHECK(e.field() == "cluster.pool.0.gpu");
  const std::string msg = e.what();
  CHECK(contains(msg, "unknown GPU model 'A100-80G'"));
  CHECK(contains(msg, "(did you mean 'A100-80GB'?)"));
  CHECK(contains(msg, "; valid: " + join(gpu_names(), ", ")));

  // A typo of an alias suggests the canonical name behind it.
  CHECK(contains(spec_error("V100M166").what(), "did you mean 'V100-16GB'?"));
  CHECK(contains(spec_error("h1000").what(), "did you mean 'H100'?"));
  // Nothing close: no suggestion, but the list of valid names.
  const std::string far = spec_error("QuantumAccelerator9000").what();
  CHECK_FALSE(contains(far, "did you mean"));
  CHECK(contains(far, "valid: K80, "));
}

TEST_CASE("catalog: gpu_names lists canonical names in catalog order") {
  const auto names = gpu_names();
  REQUIRE(names.size() == gpu_catalog().size());
  for (std::size_t i = 0; i < names.size(); ++i) CHECK(names[i] == gpu_catalog()[i].name);
}

TEST_CASE("catalog: names and aliases are unique ignoring case") {
  std::set<std::string> seen;
  for (const auto& g : gpu_catalog()) {
    CHECK_MESSAGE(seen.insert(lower(g.name)).second, "duplicate spelling " << g.name);
    for (const auto& a : g.aliases) CHECK_MESSAGE(seen.insert(lower(a)).second, "duplicate spelling " << a);
  }
}

TEST_CASE("catalog: every entry has positive, plausible datasheet figures") {
  for (const auto& g : gpu_catalog()) {
    INFO(g.name);
    CHECK_FALSE(g.vendor.empty());
    CHECK(g.fp32_tflops > 0);
    CHECK(g.fp16_tflops >= g.fp32_tflops);
    CHECK(g.tf32_tflops >= 0);
    CHECK(g.bf16_tflops >= 0);
    if (g.tf32_tflops > 0) CHECK(g.tf32_tflops <= g.fp16_tflops);
    CHECK(g.memory_gib > 0);
    CHECK(g.memory_bw_gbs > 0);
    CHECK(g.sms > 0);
    CHECK(g.boost_clock_mhz > 0);
    CHECK(g.l2_mib > 0);
    CHECK(g.tdp_w > 0);
    CHECK(g.idle_w > 0);
    CHECK(g.idle_w < g.tdp_w);
    CHECK(g.nvlink_gen >= 0);
    if (g.nvlink_gen > 0) CHECK(g.nvlink_gbs > 0);
    // FP32 peak ~ 2 flops x FP32 lanes x clock: lanes per SM within 32..256 (CUs on AMD: 64..128 x2).
    const double lanes_per_sm = g.fp32_tflops * 1e12 / (2.0 * g.sms * g.boost_clock_mhz * 1e6);
    CHECK(lanes_per_sm >= 32);
    CHECK(lanes_per_sm <= 257);
  }
}

TEST_CASE(
    "catalog: only the unpublished Alibaba models, the RTX PRO 6000's peaks and Blackwell are estimates") {
  for (const auto& g : gpu_catalog()) {
    INFO(g.name);
    const bool alibaba = g.name == "G2" || g.name == "G3";
    // B200 and GB200: FP32, SMs, clock, L2 (and GB200's power) are not on NVIDIA's datasheets.
    const bool blackwell = g.name == "B200" || g.name == "GB200";
    CHECK(g.estimated == (alibaba || blackwell || g.name == "RTXPRO6000"));
    if (alibaba) CHECK(contains(g.vendor, "unpublished"));
  }
  // The RTX PRO 6000's memory is the datasheet's (the serving KV cache depends on it).
  CHECK(find_gpu("RTXPRO6000")->memory_gib == 96);
  CHECK(find_gpu("RTX4090")->memory_gib == 24);
  // The assumptions documented in the catalog: G2 is T4-class, G3 V100-class.
  CHECK(find_gpu("G2")->fp32_tflops == find_gpu("T4")->fp32_tflops);
  CHECK(find_gpu("G3")->fp32_tflops == find_gpu("V100")->fp32_tflops);
}

TEST_CASE("catalog: spot-check datasheet values") {
  CHECK(find_gpu("A100-80GB")->memory_bw_gbs == doctest::Approx(2039));
  CHECK(find_gpu("A100-80GB")->tdp_w == doctest::Approx(400));
  CHECK(find_gpu("H100")->fp32_tflops == doctest::Approx(67));
  CHECK(find_gpu("H100")->nvlink_gbs == doctest::Approx(900));
  CHECK(find_gpu("H200")->memory_bw_gbs == doctest::Approx(4800));
  CHECK(find_gpu("V100")->memory_gib == doctest::Approx(32));
  CHECK(find_gpu("V100-16GB")->memory_gib == doctest::Approx(16));
  CHECK(find_gpu("T4")->tdp_w == doctest::Approx(70));
  CHECK(find_gpu("L4")->fp32_tflops == doctest::Approx(30.3));
  CHECK(find_gpu("MI250")->vendor == "AMD");
}

TEST_CASE("catalog: NeuSight and nvidia-smi device strings resolve") {
  CHECK(canonical("Tesla V100-PCIE-32GB") == "V100-PCIE-32GB");
  CHECK(canonical("NVIDIA A100-PCIE-40GB") == "A100-40GB");
  CHECK(canonical("NVIDIA A100-SXM4-40GB") == "A100-SXM4-40GB");
  CHECK(canonical("NVIDIA A100 80GB PCIe") == "A100-80GB-PCIe");
  CHECK(canonical("NVIDIA H100 80GB HBM3") == "H100");
  CHECK(canonical("NVIDIA L4") == "L4");
  CHECK(canonical("Tesla P100-PCIE-16GB") == "P100");
  CHECK(canonical("Tesla P4") == "P4");
  CHECK(canonical("Tesla T4") == "T4");
  // The PCIe V100 is a slower part than the SXM2 one the Gavel/openb traces name.
  CHECK(find_gpu("V100-PCIE-32GB")->fp32_tflops < find_gpu("V100")->fp32_tflops);
}

namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = "/tmp/fleetsim_catalog_" + name;
  std::ofstream(path) << text;
  return path;
}

InputError device_error(const std::string& path) {
  try {
    load_device_file(path);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("load_device_file('" << path << "') did not throw");
  return InputError("", 0, "", "");
}

}  // namespace

TEST_CASE("catalog: device file of a known GPU keeps its name and takes the file's figures") {
  const auto path = write_temp("t4.json", R"({"Device":"Tesla T4","Dev_Mem":15,"Mem_Bw":320,"Num_Sm":40,
    "Core_Per_SM":64,"Freq":1590,"SingleFLOPs":8141,"L2Cache":4})");
  const GpuSpec g = load_device_file(path);
  CHECK(g.name == "T4");
  CHECK(g.fp32_tflops == doctest::Approx(8.141));
  CHECK(g.memory_gib == 15);
  CHECK(g.memory_bw_gbs == 320);
  CHECK(g.sms == 40);
  CHECK(g.boost_clock_mhz == 1590);
  CHECK(g.tdp_w == find_gpu("T4")->tdp_w);  // not in the file: from the catalog
  CHECK(g.fp16_tflops == find_gpu("T4")->fp16_tflops);
}

TEST_CASE("catalog: device file of an unknown GPU is named by its Device string") {
  const auto path = write_temp("x.json", R"({"Device":"NVIDIA Future X1","Dev_Mem":192,"Mem_Bw":8000,
    "Num_Sm":160,"Core_Per_SM":128,"Freq":2100,"SingleFLOPs":90000,"L2Cache":96})");
  const GpuSpec g = load_device_file(path);
  CHECK(g.name == "NVIDIA Future X1");
  CHECK(g.vendor == "NVIDIA");
  CHECK(g.fp32_tflops == doctest::Approx(90));
  CHECK(g.fp16_tflops == doctest::Approx(90));
  CHECK(g.tf32_tflops == 0);
}

TEST_CASE("catalog: bad device files name the file and the key") {
  auto e = device_error(write_temp("nokey.json", R"({"Device":"Tesla T4","Dev_Mem":15})"));
  CHECK(contains(e.what(), "fleetsim_catalog_nokey.json"));
  CHECK(e.field() == "Mem_Bw");
  e = device_error(write_temp("str.json", R"({"Device":"Tesla T4","Dev_Mem":"lots","Mem_Bw":1,
    "Num_Sm":1,"Freq":1,"SingleFLOPs":1,"L2Cache":1})"));
  CHECK(e.field() == "Dev_Mem");
  CHECK(contains(e.what(), "expected a number"));
  e = device_error(write_temp("notjson.json", "Device,Mem_Bw\nT4,320\n"));
  CHECK(contains(e.what(), "not a JSON device file"));
  e = device_error("/nonexistent/dev.json");
  CHECK(contains(e.what(), "cannot open"));
}

TEST_CASE("catalog: every shared NeuSight device file loads and matches the catalog entry") {
  fleetsim::test::require_shared("microbench/neusight/devices");
  const std::string dir = fleetsim::test::shared_dir() + "/microbench/neusight/devices";
  const auto devices = load_device_dir(dir);
  REQUIRE(devices.size() == 9);
  for (const auto& g : devices) {
    INFO(g.name);
    const GpuSpec* known = find_gpu(g.name);
    REQUIRE(known != nullptr);  // all nine are catalog GPUs
    // Same part: FP32 peaks and bandwidths agree within 15% (NeuSight uses base-clock figures).
    CHECK(g.fp32_tflops == doctest::Approx(known->fp32_tflops).epsilon(0.15));
    CHECK(g.memory_bw_gbs == doctest::Approx(known->memory_bw_gbs).epsilon(0.15));
  }
}
