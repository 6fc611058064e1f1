// Training profiles and the "kernels" job model: parsing and its errors, the iteration-time
// composition (forward, backward, all-reduce hidden behind backward) on hand-computed roofline
// kernels, and run times from steps or scaled trace durations.
#include <doctest/doctest.h>

#include <sstream>

#include "models/calibration/calibration.hpp"
#include "models/job/job_model.hpp"
#include "models/job/training_profile.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

// One 4096^3 fp32 GEMM, twice per forward pass: compute-bound on every catalog GPU
// (2 x 4096^3 = 1.374e11 FLOP against 3 x 4096^2 x 4 B = 201 MB).
const char* kProfile = R"(
[[profile]]
name = "big-gemm"
match = ["BigGemm", "gemm job"]
grad_mb = 1000
overlap = 0.5
kernels = [
  { op = "linear", m = 4096, n = 4096, k = 4096, count = 2 },
]

[[profile]]
name = "tiny"
backward_factor = 1
other_ms = 5
kernels = [ { op = "relu", b = 1024, h = 1024 } ]
)";

constexpr double kGemmFlops = 2.0 * 4096 * 4096 * 4096;

std::string write_profile(const std::string& text) {
  const auto dir = test::temp_dir("profile");
  const auto path = dir / "profiles.toml";
  test::write_file(path, text);
  return path.string();
}

InputError profile_error(const std::string& text) {
  try {
    read_profiles(write_profile(text));
  } catch (const InputError& e) {
    return e;
  }
  FAIL("read_profiles did not throw");
  return InputError("", 0, "", "");
}

struct Models {
  KernelCalibration none;
  std::unique_ptr<KernelModel> kernels = kernel_models().create("roofline", none);
  std::unique_ptr<CollectiveModel> collectives = collective_models().create("nccl-default", {});
};

}  // namespace

TEST_CASE("profile: file is parsed with counts, overlap and gradient bytes") {
  const ProfileLibrary lib = read_profiles(write_profile(kProfile));
  REQUIRE(lib.profiles.size() == 2);
  const TrainingProfile& p = lib.profiles[0];
  CHECK(p.name == "big-gemm");
  CHECK(p.grad_bytes == doctest::Approx(1e9));
  CHECK(p.overlap == 0.5);
  CHECK(p.backward_factor == 2);
  REQUIRE(p.kernels.size() == 1);
  CHECK(p.kernels[0].count == 2);
  CHECK(p.kernels[0].kernel.flops() == doctest::Approx(kGemmFlops));
  CHECK(lib.profiles[1].other_s == doctest::Approx(0.005));
  // Selection: exact name, then case-insensitive substrings of the job's model.
  CHECK(lib.find("big-gemm") == &lib.profiles[0]);
  CHECK(lib.find("my biggemm (batch 4)") == &lib.profiles[0]);
  CHECK(lib.find("TINY") == &lib.profiles[1]);
  CHECK(lib.find("ResNet-50") == nullptr);
}

TEST_CASE("profile: bad files name the line and the key") {
  auto e =
      profile_error("[[profile]]\nname = \"x\"\nkernels = [ { op = \"conv9\", m = 1, n = 1, k = 1 } ]\n");
  CHECK(e.line() == 3);
  CHECK(std::string(e.what()).find("unknown kernel op 'conv9'") != std::string::npos);
  e = profile_error("[[profile]]\nname = \"x\"\noverlapp = 1\nkernels = [ { op = \"relu\", h = 4 } ]\n");
  CHECK(e.line() == 3);
  CHECK(e.field() == "profile.overlapp");
  e = profile_error("[[profile]]\nname = \"x\"\noverlap = 2\nkernels = [ { op = \"relu\", h = 4 } ]\n");
  CHECK(e.field() == "profile 'x'.overlap");
  e = profile_error("[[profile]]\nname = \"x\"\nkernels = [ { op = \"linear\", m = 4, n = 4 } ]\n");
  CHECK(std::string(e.what()).find("needs m, n and k") != std::string::npos);
  e = profile_error("[[profile]]\nname = \"x\"\n");
  CHECK(e.field() == "profile 'x'.kernels");
  e = profile_error(
      "[[profile]]\nname = \"x\"\nkernels = [ { op = \"relu\", h = 4 } ]\n"
      "[[profile]]\nname = \"X\"\nkernels = [ { op = \"relu\", h = 4 } ]\n");
  CHECK(std::string(e.what()).find("duplicate profile") != std::string::npos);
  e = profile_error("name = = 3\n");
  CHECK(e.line() == 1);
}

TEST_CASE("profile: iteration time on one GPU is forward plus backward of roofline kernels") {
  const ProfileLibrary lib = read_profiles(write_profile(kProfile));
  Models m;
  const GpuSpec& t4 = *find_gpu("T4");  // 8.1 TFLOP/s FP32
  const IterationTime it =
      iteration_time(lib.profiles[0], t4, 1, 1, *m.kernels, *m.collectives, fabric_for(t4));
  const double fwd = 2 * kGemmFlops / 8.1e12;  // 33.9 ms
  CHECK(it.forward_s == doctest::Approx(fwd).epsilon(1e-9));
  CHECK(it.backward_s == doctest::Approx(2 * fwd).epsilon(1e-9));
  CHECK(it.comm_s == 0);  // one GPU: no all-reduce
  CHECK(it.total_s == doctest::Approx(3 * fwd).epsilon(1e-9));
  // A memory-bound profile: relu over 1 Mi fp32 elements = 8 MiB moved at 320 GB/s, plus other_ms.
  const IterationTime tiny =
      iteration_time(lib.profiles[1], t4, 1, 1, *m.kernels, *m.collectives, fabric_for(t4));
  const double relu = 8.0 * 1024 * 1024 / 320e9;
  CHECK(tiny.forward_s == doctest::Approx(relu).epsilon(1e-9));
  CHECK(tiny.total_s == doctest::Approx(2 * relu + 0.005).epsilon(1e-9));
}

TEST_CASE("profile: all-reduce is hidden behind backward up to the overlap share") {
  const ProfileLibrary lib = read_profiles(write_profile(kProfile));
  Models m;
  const GpuSpec& a100 = *find_gpu("A100-80GB");
  const CommFabric fabric = fabric_for(a100, 100);
  const IterationTime it = iteration_time(lib.profiles[0], a100, 8, 2, *m.kernels, *m.collectives, fabric);
  const double comm = predict_analytic({Collective::all_reduce, 1e9, 8, 2}, fabric).seconds;
  CHECK(comm > 0);
  CHECK(it.comm_s == doctest::Approx(comm));
  CHECK(it.exposed_comm_s == doctest::Approx(std::max(0.0, comm - 0.5 * it.backward_s)));
  CHECK(it.total_s == doctest::Approx(it.forward_s + it.backward_s + it.exposed_comm_s));
  // 1 GB over 100 Gb/s NICs takes far longer than half the backward pass: some is exposed.
  CHECK(it.exposed_comm_s > 0);
  // The same job inside one node (NVLink) exposes less.
  const IterationTime local = iteration_time(lib.profiles[0], a100, 8, 1, *m.kernels, *m.collectives, fabric);
  CHECK(local.exposed_comm_s < it.exposed_comm_s);
}

// A profile measured on an A100-80GB (as `fleetsim profile-from-trace` writes them): a shaped GEMM,
// a shapeless element-wise kernel and a shapeless backward kernel, each with its measured ms.
const char* kMeasured = R"(
[[profile]]
name = "traced"
gpu = "A100-80GB"
grad_mb = 100
overlap = 0.25
other_ms = 2
kernels = [
  { op = "linear", m = 4096, n = 4096, k = 4096, count = 2, ms = 10, name = "ampere_sgemm_128x64_nn" },
  { op = "kernel", scale = "memory", count = 3, ms = 0.5, name = "vectorized_elementwise_kernel" },
]
backward_kernels = [
  { op = "kernel", scale = "fp32", count = 1, ms = 40 },
  { op = "kernel", scale = "fixed", count = 2, ms = 1 },
]
)";

TEST_CASE("profile: measured kernels keep their ms on the traced GPU and scale to others") {
  const ProfileLibrary lib = read_profiles(write_profile(kMeasured));
  const TrainingProfile& p = lib.profiles.at(0);
  REQUIRE(p.gpu != nullptr);
  CHECK(p.gpu->name == "A100-80GB");
  CHECK(p.backward_factor == 0);
  REQUIRE(p.backward_kernels.size() == 2);
  CHECK(p.kernels[1].scale == KernelScale::memory);
  Models m;
  const GpuSpec& a100 = *p.gpu;
  const IterationTime same = iteration_time(p, a100, 1, 1, *m.kernels, *m.collectives, fabric_for(a100));
  CHECK(same.forward_s == doctest::Approx(2 * 0.010 + 3 * 0.0005).epsilon(1e-12));
  CHECK(same.backward_s == doctest::Approx(0.040 + 2 * 0.001).epsilon(1e-12));
  CHECK(same.total_s == doctest::Approx(0.0215 + 0.042 + 0.002).epsilon(1e-12));
  CHECK(same.label == PredictionLabel::measured);
  // On a V100: the GEMM by the roofline ratio (compute-bound: the FP32 peak ratio), the element-wise
  // kernel by the memory bandwidth ratio, the fp32 backward kernel by the FP32 peak ratio, the fixed
  // one not at all.
  const GpuSpec& v100 = *find_gpu("V100");
  const KernelDesc gemm = p.kernels[0].kernel;
  const double gemm_ratio = roofline_seconds(gemm, v100) / roofline_seconds(gemm, a100);
  CHECK(gemm_ratio == doctest::Approx(a100.fp32_tflops / v100.fp32_tflops));
  const IterationTime other = iteration_time(p, v100, 1, 1, *m.kernels, *m.collectives, fabric_for(v100));
  const double fwd = 2 * 0.010 * gemm_ratio + 3 * 0.0005 * a100.memory_bw_gbs / v100.memory_bw_gbs;
  const double bwd = 0.040 * a100.fp32_tflops / v100.fp32_tflops + 2 * 0.001;
  CHECK(other.forward_s == doctest::Approx(fwd).epsilon(1e-12));
  CHECK(other.backward_s == doctest::Approx(bwd).epsilon(1e-12));
  CHECK(other.label == PredictionLabel::extrapolated);
  // The all-reduce hides behind a quarter of the listed backward pass.
  const IterationTime eight =
      iteration_time(p, a100, 8, 2, *m.kernels, *m.collectives, fabric_for(a100, 100));
  CHECK(eight.exposed_comm_s == doctest::Approx(std::max(0.0, eight.comm_s - 0.25 * same.backward_s)));
}

TEST_CASE("profile: write_profile round-trips a measured profile") {
  const ProfileLibrary lib = read_profiles(write_profile(kMeasured));
  std::ostringstream out;
  write_profile(out, lib.profiles.at(0));
  const ProfileLibrary again = read_profiles(write_profile(out.str()));
  const TrainingProfile &a = lib.profiles[0], &b = again.profiles.at(0);
  CHECK(b.name == a.name);
  CHECK(b.gpu == a.gpu);
  CHECK(b.grad_bytes == doctest::Approx(a.grad_bytes));
  CHECK(b.overlap == doctest::Approx(a.overlap));
  CHECK(b.other_s == doctest::Approx(a.other_s));
  REQUIRE(b.kernels.size() == a.kernels.size());
  REQUIRE(b.backward_kernels.size() == a.backward_kernels.size());
  CHECK(b.kernels[0].kernel.m == 4096);
  CHECK(b.kernels[0].name == "ampere_sgemm_128x64_nn");
  CHECK(b.kernels[1].ms == doctest::Approx(0.5));
  CHECK(b.backward_kernels[1].scale == KernelScale::fixed);
  CHECK(b.backward_kernels[0].count == doctest::Approx(1));
}

TEST_CASE("profile: measured-profile keys are checked") {
  const std::string head = "[[profile]]\nname = \"x\"\n";
  CHECK(std::string(profile_error(head + "gpu = \"A100-80GB\"\nkernels = [ { op = \"kernel\", scale = "
                                         "\"memory\" } ]\n")
                        .what())
            .find("needs ms and scale") != std::string::npos);
  CHECK(profile_error(head +
                      "gpu = \"A100-80GB\"\nkernels = [ { op = \"relu\", b = 1, h = 8, ms = 1, scale = "
                      "\"memory\" } ]\n")
            .field() == "profile 'x'.kernels.scale");
  CHECK(profile_error(head + "kernels = [ { op = \"kernel\", scale = \"memory\", ms = 1 } ]\n").field() ==
        "profile 'x'.gpu");
  CHECK(profile_error(head +
                      "gpu = \"A100-80GB\"\nbackward_factor = 2\nbackward_kernels = [ { op = \"kernel\", "
                      "scale = \"fixed\", ms = 1 } ]\n")
            .field() == "profile 'x'.backward_factor");
  const InputError unknown =
      profile_error(head + "gpu = \"A100-90GB\"\nkernels = [ { op = \"relu\", b = 1, h = 8 } ]\n");
  CHECK(unknown.field() == "profile 'x'.gpu");
  CHECK(unknown.line() == 3);
  CHECK(profile_error(head +
                      "gpu = \"A100-80GB\"\nkernels = [ { op = \"kernel\", scale = \"disk\", ms = 1 } ]\n")
            .field() == "profile 'x'.kernels.scale");
  // A shapeless entry takes no shape keys.
  CHECK(profile_error(head +
                      "gpu = \"A100-80GB\"\nkernels = [ { op = \"kernel\", scale = \"memory\", ms = 1, "
                      "h = 8 } ]\n")
            .field() == "profile 'x'.kernels.h");
}

TEST_CASE("job model kernels: steps x iteration, or the trace duration scaled from the reference GPU") {
  JobModelParams p;
  p.settings.set("profiles", write_profile(kProfile));
  p.settings.set("kernel_model", "roofline");
  p.settings.set("collective_model", "nccl-default");
  p.settings.set("reference_gpu", "V100");  // 15.7 TFLOP/s FP32
  const auto model = job_models().create("kernels", p);
  PlacementSummary on_t4;
  on_t4.gpu_type = "T4";
  JobSpec job;
  job.model = "gemm job 7";
  job.steps = 1000;
  std::string why;
  auto t = model->run_time_s(job, on_t4, why);
  REQUIRE(t.has_value());
  CHECK(*t == doctest::Approx(1000 * 3 * 2 * kGemmFlops / 8.1e12).epsilon(1e-9));
  // On 4 GPUs: steps count all workers' iterations (Gavel's unit), so each worker runs a quarter.
  PlacementSummary on_4 = on_t4;
  on_4.gpus = 4;
  job.gpus = 4;
  const auto shape = model->iteration_shape(job, on_4);
  REQUIRE(shape.has_value());
  t = model->run_time_s(job, on_4, why);
  REQUIRE(t.has_value());
  CHECK(*t == doctest::Approx(1000 * (shape->compute_s + shape->exposed_comm_s) / 4).epsilon(1e-9));
  job.gpus = 1;
  // Duration measured on a V100: compute-bound, so it scales by the FP32 peak ratio.
  job.steps.reset();
  job.duration_s = 1000;
  t = model->run_time_s(job, on_t4, why);
  REQUIRE(t.has_value());
  CHECK(*t == doctest::Approx(1000 * 15.7 / 8.1).epsilon(1e-9));
  // No profile for the job's model: skipped with the reason.
  job.model = "ResNet-50";
  CHECK_FALSE(model->can_time(job, why));
  CHECK(why == "no training profile matches model 'ResNet-50'");
  CHECK_FALSE(model->run_time_s(job, on_t4, why).has_value());
}

TEST_CASE("job model kernels: missing profile file and unknown model names are input errors") {
  JobModelParams p;
  p.scenario_file = "s.toml";
  CHECK_THROWS_WITH_AS(job_models().create("kernels", p),
                       doctest::Contains("s.toml: field 'execution.profiles'"), InputError);
  p.settings.set("profiles", write_profile(kProfile));
  p.settings.set("kernel_model", "rooftop");
  CHECK_THROWS_WITH_AS(job_models().create("kernels", p), doctest::Contains("roofline"), InputError);
}

TEST_CASE("calibration file: wrong format and missing file are named") {
  const auto dir = test::temp_dir("cal");
  test::write_file(dir / "x.json", R"({"format": "something-else"})");
  CHECK_THROWS_WITH_AS(load_calibration((dir / "x.json").string()),
                       doctest::Contains("not a fleetsim calibration file"), InputError);
  CHECK_THROWS_WITH_AS(load_calibration((dir / "none.json").string()), doctest::Contains("cannot open"),
                       InputError);
  // Round trip of an empty calibration.
  Calibration c;
  c.sources = {"a.csv"};
  save_calibration(c, (dir / "c.json").string());
  CHECK(load_calibration((dir / "c.json").string()).sources == std::vector<std::string>{"a.csv"});
}
