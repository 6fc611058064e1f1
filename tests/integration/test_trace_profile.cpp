// fleetsim profile-from-trace: a training profile derived from a Kineto trace. A hand-made trace pins
// every derived figure (forward/backward split by the autograd ops, GEMM shape from the launching
// aten op, gradient bytes, overlap, other time); the shared traces check that the profile reproduces
// the measured step on the traced GPU and that a faster GPU never makes it slower.
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "models/calibration/calibration.hpp"
#include "models/job/training_profile.hpp"
#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;
using nlohmann::json;

namespace {

const std::string kShared = fleetsim::test::shared_dir() + "/kineto/hta/";

json event(const char* cat, const std::string& name, int tid, double ts, double dur,
           json args = json::object()) {
  json e = {{"ph", "X"},  {"cat", cat}, {"name", name}, {"pid", tid < 100 ? 1 : 0},
            {"tid", tid}, {"ts", ts},   {"dur", dur}};
  if (!args.empty()) e["args"] = std::move(args);
  return e;
}

// One step of 1000 µs on an A100-80GB. Forward (thread 1): aten::mm [64x128]x[128x32] launches a
// 100 µs SGEMM. Backward (thread 2, inside an autograd op): a 200 µs element-wise kernel and a
// 150 µs all-reduce of 1 Mi floats (4 MiB) on another stream. Compute [20,120] and [170,370];
// communication [300,450]: 70 µs of it overlaps compute, 80 µs is exposed.
std::string tiny_trace() {
  json t;
  t["distributedInfo"] = {{"rank", 0}, {"world_size", 2}, {"backend", "nccl"}};
  t["deviceProperties"] = json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}});
  json ev = json::array();
  ev.push_back(event("user_annotation", "ProfilerStep#1", 1, 0, 1000));
  ev.push_back(event("cpu_op", "aten::mm", 1, 5, 20,
                     {{"Input Dims", {{64, 128}, {128, 32}}}, {"Input type", {"float", "float"}}}));
  ev.push_back(event("cuda_runtime", "cudaLaunchKernel", 1, 10, 5, {{"correlation", 1}}));
  ev.push_back(event("kernel", "ampere_sgemm_64x32_nn", 107, 20, 100,
                     {{"device", 0}, {"stream", 7}, {"correlation", 1}}));
  ev.push_back(event("cpu_op", "autograd::engine::evaluate_function: MmBackward0", 2, 150, 40));
  ev.push_back(event("cuda_runtime", "cudaLaunchKernel", 2, 160, 5, {{"correlation", 2}}));
  ev.push_back(event("kernel", "vectorized_elementwise_kernel", 107, 170, 200,
                     {{"device", 0}, {"stream", 7}, {"correlation", 2}}));
  ev.push_back(event("cuda_runtime", "cudaLaunchKernel", 2, 180, 5, {{"correlation", 3}}));
  ev.push_back(event("kernel", "ncclKernel_AllReduce_RING_LL_Sum_float", 120, 300, 150,
                     {{"device", 0},
                      {"stream", 20},
                      {"correlation", 3},
                      {"Collective name", "allreduce"},
                      {"In msg nelems", 1 << 20},
                      {"dtype", "Float"},
                      {"Group size", 2}}));
  ev.push_back(event("cuda_runtime", "cudaDeviceSynchronize", 1, 200, 255, {{"correlation", 4}}));
  t["traceEvents"] = ev;
  return t.dump();
}

}  // namespace

TEST_CASE("profile-from-trace: hand-made trace gives hand-computed figures") {
  const auto dir = temp_dir("tprof");
  write_file(dir / "t.json", tiny_trace());
  const auto out = dir / "p.toml";
  const auto r = run_fleetsim("profile-from-trace " + (dir / "t.json").string() +
                              " --name tiny --match TinyNet --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const fleetsim::ProfileLibrary lib = fleetsim::read_profiles(out.string());
  REQUIRE(lib.profiles.size() == 1);
  const fleetsim::TrainingProfile& p = lib.profiles[0];
  CHECK(p.name == "tiny");
  CHECK(lib.find("TinyNet-v2") == &p);
  REQUIRE(p.gpu != nullptr);
  CHECK(p.gpu->name == "A100-80GB");
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].kernel.op == "linear");
  CHECK(p.kernels[0].kernel.m == 64);
  CHECK(p.kernels[0].kernel.k == 128);
  CHECK(p.kernels[0].kernel.n == 32);
  CHECK(p.kernels[0].ms == doctest::Approx(0.1));
  CHECK(p.kernels[0].count == doctest::Approx(1));
  REQUIRE(p.backward_kernels.size() == 1);
  CHECK(p.backward_kernels[0].kernel.op == "kernel");
  CHECK(p.backward_kernels[0].scale == fleetsim::KernelScale::memory);
  CHECK(p.backward_kernels[0].ms == doctest::Approx(0.2));
  CHECK(p.grad_bytes == doctest::Approx(4.0 * (1 << 20)).epsilon(1e-5));
  CHECK(p.overlap == doctest::Approx(70.0 / 200.0).epsilon(1e-5));       // hidden comm / backward
  CHECK(p.other_s == doctest::Approx((1000.0 - 100 - 200 - 80) / 1e6));  // the rest of the step
  // On the traced GPU alone the profile is the measured step minus its exposed communication.
  fleetsim::KernelCalibration none;
  const auto km = fleetsim::kernel_models().create("roofline", none);
  const auto cm = fleetsim::collective_models().create("nccl-default", {});
  const auto it = fleetsim::iteration_time(p, *p.gpu, 1, 1, *km, *cm, fleetsim::fabric_for(*p.gpu));
  CHECK(it.total_s == doctest::Approx(920e-6).epsilon(1e-6));
  CHECK(r.output.find("1 with GEMM shapes") != std::string::npos);

  // The file exists: a second run needs --append, and the same name is refused.
  auto again =
      run_fleetsim("profile-from-trace " + (dir / "t.json").string() + " --name tiny2 --out " + out.string());
  CHECK(again.code == 2);
  CHECK(again.output.find("--append") != std::string::npos);
  again = run_fleetsim("profile-from-trace " + (dir / "t.json").string() + " --name TINY --append --out " +
                       out.string());
  CHECK(again.code == 2);
  CHECK(again.output.find("already has a profile named 'tiny'") != std::string::npos);
  again = run_fleetsim("profile-from-trace " + (dir / "t.json").string() +
                       " --name tiny2 --append -q --out " + out.string());
  REQUIRE_MESSAGE(again.code == 0, again.output);
  CHECK(fleetsim::read_profiles(out.string()).profiles.size() == 2);
  fs::remove_all(dir);
}

TEST_CASE("profile-from-trace: bad input exits 2 and writes nothing") {
  const auto dir = temp_dir("tprof-bad");
  json t = json::parse(tiny_trace());
  t["deviceProperties"][0]["name"] = "Acme Tensor Brick";
  write_file(dir / "unknown_gpu.json", t.dump());
  auto r = run_fleetsim("profile-from-trace " + (dir / "unknown_gpu.json").string() + " --name x --out " +
                        (dir / "a.toml").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("Acme Tensor Brick") != std::string::npos);
  CHECK(r.output.find("--source-gpu") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "a.toml"));
  // Named with --source-gpu it works.
  r = run_fleetsim("profile-from-trace " + (dir / "unknown_gpu.json").string() +
                   " --source-gpu H100 --name x -q --out " + (dir / "a.toml").string());
  CHECK_MESSAGE(r.code == 0, r.output);
  r = run_fleetsim("profile-from-trace " + (dir / "unknown_gpu.json").string() +
                   " --source-gpu H900 --name x --out " + (dir / "b.toml").string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(dir / "b.toml"));
  write_file(dir / "no_gpu.json",
             R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1,
    "tid": 1, "ts": 0, "dur": 5}]})");
  r = run_fleetsim("profile-from-trace " + (dir / "no_gpu.json").string() + " --name x --out " +
                   (dir / "c.toml").string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(dir / "c.toml"));
  fs::remove_all(dir);
}

TEST_CASE("profile-from-trace: shared traces reproduce their steps on the traced GPU") {
  fleetsim::test::require_shared();
  const auto dir = temp_dir("tprof-shared");
  fleetsim::KernelCalibration none;
  const auto km = fleetsim::kernel_models().create("roofline", none);
  const auto cm = fleetsim::collective_models().create("nccl-default", {});
  for (const char* name : {"negative_queue_length_values_check_rank0", "nccl_parser_config_nccl_data"}) {
    INFO(std::string(name));
    const auto out = dir / (std::string(name) + ".toml");
    const auto r =
        run_fleetsim("profile-from-trace " + kShared + name + ".json.gz --name job --out " + out.string());
    REQUIRE_MESSAGE(r.code == 0, r.output);
    const fleetsim::TrainingProfile p = fleetsim::read_profiles(out.string()).profiles.at(0);
    CHECK(!p.backward_kernels.empty());
    const auto traced = fleetsim::iteration_time(p, *p.gpu, 1, 1, *km, *cm, fleetsim::fabric_for(*p.gpu));
    // The summary line states the measured step without exposed communication: the profile matches it.
    const std::string needle = "measured step without exposed communication: ";
    const auto at = r.output.find(needle);
    REQUIRE(at != std::string::npos);
    const double measured_ms = std::stod(r.output.substr(at + needle.size()));
    CHECK(traced.total_s * 1e3 == doctest::Approx(measured_ms).epsilon(0.001));
    // A faster GPU never makes the iteration slower, a slower one never faster.
    const auto h100 = fleetsim::iteration_time(p, *fleetsim::find_gpu("H100"), 1, 1, *km, *cm,
                                               fleetsim::fabric_for(*fleetsim::find_gpu("H100")));
    const auto v100 = fleetsim::iteration_time(p, *fleetsim::find_gpu("V100"), 1, 1, *km, *cm,
                                               fleetsim::fabric_for(*fleetsim::find_gpu("V100")));
    CHECK(h100.total_s < traced.total_s);
    CHECK(v100.total_s > traced.total_s);
  }
  const auto grads =
      fleetsim::read_profiles((dir / "nccl_parser_config_nccl_data.toml").string()).profiles.at(0);
  CHECK(grads.grad_bytes > 1e8);  // 102 MB of all-reduce per step
  fs::remove_all(dir);
}
