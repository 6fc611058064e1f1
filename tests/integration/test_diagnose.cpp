// fleetsim diagnose end to end (each case runs the binary: replays fork their own SimGrid engines).
// Hand-built traces with one planted anti-pattern each: exactly that rule fires, with the hand-derived
// measurement and the hand-derived what-if speedup; a clean trace fires none. Bad input exits 2
// naming the file and field, with nothing written. On the shared Kineto traces the temporal and
// idle-time breakdowns are compared with HTA's own figures.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/test_util.hpp"

namespace fs = std::filesystem;
using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;
using nlohmann::json;

namespace {

// One rank's trace: `steps` ProfilerStep#N of `period` us each, filled by `body(builder, step start)`.
struct Trace {
  json ev = json::array();
  long corr = 1;
  int rank = 0;

  void step(int n, double ts, double dur) {
    ev.push_back({{"ph", "X"},
                  {"cat", "user_annotation"},
                  {"name", "ProfilerStep#" + std::to_string(n)},
                  {"pid", 1},
                  {"tid", 1},
                  {"ts", ts},
                  {"dur", dur}});
  }
  void cpu_op(const std::string& name, double ts, double dur, json args = json::object()) {
    ev.push_back({{"ph", "X"},
                  {"cat", "cpu_op"},
                  {"name", name},
                  {"pid", 1},
                  {"tid", 1},
                  {"ts", ts},
                  {"dur", dur},
                  {"args", args}});
  }
  void runtime(const std::string& name, double ts, double dur, long c = -1) {
    json args = json::object();
    if (c >= 0) args["correlation"] = c;
    ev.push_back({{"ph", "X"},
                  {"cat", "cuda_runtime"},
                  {"name", name},
                  {"pid", 1},
                  {"tid", 1},
                  {"ts", ts},
                  {"dur", dur},
                  {"args", args}});
  }
  // A launch call [ts, ts + call] and its kernel [kts, kts + kdur] on stream 7.
  void launch(double ts, double call, const std::string& kernel, double kts, double kdur,
              const std::string& cat = "kernel", const std::string& api = "cudaLaunchKernel") {
    const long c = corr++;
    runtime(api, ts, call, c);
    ev.push_back({{"ph", "X"},
                  {"cat", cat},
                  {"name", kernel},
                  {"pid", 0},
                  {"tid", 7},
                  {"ts", kts},
                  {"dur", kdur},
                  {"args", {{"device", 0}, {"stream", 7}, {"correlation", c}}}});
  }
  void sync(double ts, double dur) { runtime("cudaDeviceSynchronize", ts, dur); }

  std::string dump(const std::string& device, int world = 1) const {
    json t;
    t["distributedInfo"] = {{"rank", rank}, {"world_size", world}, {"backend", "nccl"}};
    t["deviceProperties"] = json::array({{{"id", 0}, {"name", device}}});
    t["traceEvents"] = ev;
    return t.dump();
  }
};

const std::string kA100 = "NVIDIA A100-SXM4-80GB";
const std::string kTensorGemm = "ampere_h16816gemm_256x128_ldg8_stages_32x3_nn";

// Three steps of `period` us; a warm-up launch before the first so every step has a host gap before it.
Trace steps(double period, const std::function<void(Trace&, double)>& body, int n = 3) {
  Trace t;
  t.launch(-50, 5, "void at::native::vectorized_elementwise_kernel<4, fill>", -40, 5);
  for (int i = 0; i < n; ++i) {
    const double s = i * period;
    t.step(i + 1, s, period);
    body(t, s);
  }
  return t;
}

// The clean pattern: two 450 us tensor-core GEMMs, a device synchronize; GPU busy 90%.
void clean_step(Trace& t, double s) {
  t.launch(s + 10, 5, kTensorGemm, s + 20, 450);
  t.launch(s + 16, 5, kTensorGemm, s + 470, 450);
  t.sync(s + 22, 900);
}

struct Diagnosed {
  int code = -1;
  std::string output;
  json summary;
  fs::path dir;
};

Diagnosed diagnose(const std::string& args, const fs::path& dir) {
  Diagnosed d;
  d.dir = dir / "out";
  const auto r = run_fleetsim("diagnose " + args + " --out " + d.dir.string() + " --parallel 2");
  d.code = r.code;
  d.output = r.output;
  if (d.code == 0) d.summary = json::parse(read_file(d.dir / "summary.json"));
  return d;
}

// Writes one single-rank job folder and diagnoses it.
Diagnosed one_job(const Trace& t, const std::string& device, const std::string& extra = "") {
  const auto dir = temp_dir("diagnose");
  fs::create_directories(dir / "job");
  write_file(dir / "job" / "rank0.json", t.dump(device));
  return diagnose((dir / "job").string() + " " + extra, dir);
}

std::vector<std::string> fired(const json& s) {
  std::vector<std::string> out;
  for (const auto& f : s["diagnosis"]["per_job"][0]["findings"]) out.push_back(f["rule"]);
  return out;
}

const json& finding(const json& s, const std::string& rule) {
  for (const auto& f : s["diagnosis"]["per_job"][0]["findings"])
    if (f["rule"] == rule) return f;
  FAIL("no finding " << rule);
  static json none;
  return none;
}

}  // namespace

TEST_CASE("diagnose: a clean trace fires no rule, its breakdown is the hand-derived one") {
  const auto d = one_job(steps(1000, clean_step), kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary).empty());
  const auto& job = d.summary["diagnosis"]["per_job"][0];
  CHECK(job["measured_step_s"].get<double>() == doctest::Approx(1000e-6));
  CHECK(job["baseline_step_s"].get<double>() == doctest::Approx(1000e-6).epsilon(1e-6));
  const auto& r = job["per_rank"][0];
  CHECK(r["step_breakdown_s"]["compute"].get<double>() == doctest::Approx(900e-6));
  CHECK(r["step_breakdown_s"]["idle"].get<double>() == doctest::Approx(100e-6));
  CHECK(r["launch"]["short_kernel_share"].get<double>() == 0);
  // HTA's temporal breakdown drops the last step's GPU work: warm-up kernel at -40 to the end of step 2's
  // second GEMM at 1920: window 1960, busy 5 + 4 x 450.
  CHECK(r["hta_temporal_us"]["window"].get<double>() == doctest::Approx(1960));
  CHECK(r["hta_temporal_us"]["compute"].get<double>() == doctest::Approx(1805));
  CHECK(r["hta_temporal_us"]["idle"].get<double>() == doctest::Approx(155));
  // Idle gaps on the stream: -35 -> 20 (launch at 10 after the kernel ended: host wait, 55) and
  // 920 -> 1020 (host wait, 100).
  CHECK(r["hta_idle_us"]["host_wait"].get<double>() == doctest::Approx(155));
  CHECK(fs::exists(d.dir / "findings.csv"));
  CHECK(fs::exists(d.dir / "breakdown.csv"));
  CHECK(!fs::exists(d.dir / "fixes.csv"));
}

TEST_CASE("diagnose: input stall: DataLoader 100 us of an 1100 us step, prefetch gives 1.1x") {
  const auto trace = steps(1100, [](Trace& t, double s) {
    t.cpu_op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s, 100);
    clean_step(t, s + 100);
  });
  const auto d = one_job(trace, kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"input_stall"});
  const auto& f = finding(d.summary, "input_stall");
  CHECK(f["value"].get<double>() == doctest::Approx(100.0 / 1100));
  // The 100 us of loading leave every host gap before a step's first launch: period 1100 -> 1000 us.
  CHECK(f["predicted_step_s"].get<double>() == doctest::Approx(1000e-6).epsilon(1e-6));
  CHECK(f["speedup"].get<double>() == doctest::Approx(1.1).epsilon(1e-6));
}

TEST_CASE("diagnose: fp32 GEMMs on a V100: AMP re-times them by the fp16 tensor / fp32 peak ratio") {
  const auto trace = steps(1000, [](Trace& t, double s) {
    const json shape = {{"Input Dims", {{4096, 4096}, {4096, 4096}}}, {"Input type", {"float", "float"}}};
    t.cpu_op("aten::mm", s + 9, 8, shape);
    t.launch(s + 10, 5, "volta_sgemm_128x64_nn", s + 20, 450);
    t.cpu_op("aten::mm", s + 15, 8, shape);
    t.launch(s + 16, 5, "volta_sgemm_128x64_nn", s + 470, 450);
    t.sync(s + 22, 900);
  });
  const auto d = one_job(trace, "Tesla V100-SXM2-32GB");
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"no_tensor_cores"});
  const auto& f = finding(d.summary, "no_tensor_cores");
  CHECK(f["value"].get<double>() == doctest::Approx(0.9));
  // 4096^3 GEMMs are compute-bound on both sides of the roofline: each takes 15.7 / 125 of its time;
  // the host part of the period (100 us) stays: 1000 / (100 + 900 x 0.1256) = 4.69x.
  const double r = 15.7 / 125;
  CHECK(f["speedup"].get<double>() == doctest::Approx(1000 / (100 + 900 * r)).epsilon(1e-4));
}

TEST_CASE(
    "diagnose: launch-bound: 40 kernels of 15 us behind 18 us launches, a CUDA graph gives 1000/807.5") {
  const auto trace = steps(1000, [](Trace& t, double s) {
    for (int i = 0; i < 40; ++i)
      t.launch(s + 10 + 20 * i, 18, "void at::native::vectorized_elementwise_kernel<4, add>", s + 20 + 20 * i,
               15);
    t.sync(s + 810, 7);
  });
  const auto d = one_job(trace, kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"launch_bound"});
  const auto& f = finding(d.summary, "launch_bound");
  CHECK(f["value"].get<double>() == doctest::Approx(1.0));
  CHECK(f["estimate"] == "upper bound");
  // Captured: the 40 launches cost nothing; kernels run back to back from launch + 10 us (the trace's
  // launch latency): 610 us, the synchronize returns 2 us later, the 193 us host gap after it stays:
  // 805 us from step 2 to 3. From step 1 to 2, 810 us: step 1's first kernel, now launched at the same
  // instant as the warm-up kernel, queues behind it (5 us). Period: the mean, 807.5 us.
  CHECK(f["predicted_step_s"].get<double>() == doctest::Approx(807.5e-6).epsilon(1e-6));
  CHECK(f["speedup"].get<double>() == doctest::Approx(1000.0 / 807.5).epsilon(1e-6));
}

TEST_CASE("diagnose: exposed communication: a 200 us all-reduce after the GEMM, its bound is 1.25x") {
  const auto trace = steps(1000, [](Trace& t, double s) {
    t.launch(s + 10, 5, kTensorGemm, s + 20, 600);
    t.launch(s + 16, 5, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", s + 620, 200);
    t.sync(s + 22, 800);
  });
  const auto d = one_job(trace, kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"exposed_communication"});
  const auto& f = finding(d.summary, "exposed_communication");
  CHECK(f["value"].get<double>() == doctest::Approx(0.2));
  CHECK(f["estimate"] == "upper bound");
  CHECK(f["speedup"].get<double>() == doctest::Approx(1.25).epsilon(1e-6));
  const auto& r = d.summary["diagnosis"]["per_job"][0]["per_rank"][0];
  CHECK(r["hta_temporal_us"]["communication"].get<double>() == doctest::Approx(400));  // steps 1-2
}

TEST_CASE("diagnose: synchronous host-to-device copy: async copy hides the next launch's latency") {
  const auto trace = steps(1000, [](Trace& t, double s) {
    t.launch(s + 10, 5, kTensorGemm, s + 20, 500);
    t.launch(s + 16, 526, "Memcpy HtoD (Pageable -> Device)", s + 520, 20, "gpu_memcpy", "cudaMemcpy");
    t.launch(s + 545, 5, kTensorGemm, s + 555, 400);
    t.sync(s + 550, 407);
  });
  const auto d = one_job(trace, kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"sync_copies"});
  const auto& f = finding(d.summary, "sync_copies");
  CHECK(f["value"].get<double>() == doctest::Approx(0.526));
  // The copy call returns after 2 us; the second GEMM is launched at 21 and starts when the copy ends
  // (540) instead of 555: period 985 us.
  CHECK(f["speedup"].get<double>() == doctest::Approx(1000.0 / 985).epsilon(1e-6));
}

TEST_CASE("diagnose: low utilization: one 300 us kernel per 1000 us step is not simulated") {
  const auto trace = steps(1000, [](Trace& t, double s) {
    t.launch(s + 10, 5, kTensorGemm, s + 20, 300);
    t.sync(s + 16, 306);
  });
  const auto d = one_job(trace, kA100);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"low_utilization"});
  const auto& f = finding(d.summary, "low_utilization");
  CHECK(f["value"].get<double>() == doctest::Approx(0.3));
  CHECK(!f.contains("speedup"));
  CHECK(f["not_simulated"].get<std::string>().find("symptom") != std::string::npos);
}

TEST_CASE("diagnose: rank imbalance: 1200 vs 1600 us of compute, balancing to the median gives 3000/2800") {
  const auto dir = temp_dir("diagnose");
  fs::create_directories(dir / "job");
  for (int rank = 0; rank < 2; ++rank) {
    const double gemm = rank == 0 ? 1200 : 1600;
    Trace rt = steps(3000, [&](Trace& t, double s) {
      t.launch(s + 10, 5, kTensorGemm, s + 20, gemm);
      t.launch(s + 16, 5, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", s + 20 + gemm,
               1670 - 20 - gemm);
      t.sync(s + 22, 1650);
    });
    rt.rank = rank;
    write_file(dir / "job" / ("rank" + std::to_string(rank) + ".json"), rt.dump(kA100, 2));
  }
  const auto d = diagnose((dir / "job").string(), dir);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  CHECK(fired(d.summary) == std::vector<std::string>{"rank_imbalance"});
  const auto& f = finding(d.summary, "rank_imbalance");
  CHECK(f["value"].get<double>() == doctest::Approx(1600.0 / 1400 - 1));
  CHECK(f["speedup"].get<double>() == doctest::Approx(3000.0 / 2800).epsilon(1e-3));
}

TEST_CASE("diagnose: fleet ranking: GPU-hours saved = GPU-hours x (1 - 1/speedup), the rerun sees the fix") {
  const auto dir = temp_dir("diagnose");
  fs::create_directories(dir / "stall");
  fs::create_directories(dir / "clean");
  write_file(dir / "stall" / "rank0.json",
             steps(1100, [](Trace& t, double s) {
               t.cpu_op("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", s, 100);
               clean_step(t, s + 100);
             }).dump(kA100));
  write_file(dir / "clean" / "rank0.json", steps(1000, clean_step).dump(kA100));
  // 8 stall jobs of 8 GPUs x 11 h, 4 clean ones, one unknown model: arriving together on 16 GPUs, they queue.
  std::ostringstream jobs;
  jobs << "id,submit,gpus,duration,model\n";
  for (int i = 0; i < 12; ++i)
    jobs << "j" << i << "," << i << ",8,39600," << (i < 8 ? "stall" : "clean") << "\n";
  jobs << "x,20,8,3600,unknown\n";
  write_file(dir / "jobs.csv", jobs.str());
  write_file(dir / "fleet.toml",
             "seed = 1\n[cluster]\n[[cluster.pool]]\nname = \"a\"\nnodes = 2\ngpus_per_node = 8\ngpu = "
             "\"A100-80GB\"\n"
             "[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n[scheduler]\npolicy = \"fifo\"\n");
  const auto d = diagnose((dir / "stall").string() + " " + (dir / "clean").string() + " --jobs " +
                              (dir / "jobs.csv").string() + " --scenario " + (dir / "fleet.toml").string(),
                          dir);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  const auto& fleet = d.summary["fleet"];
  CHECK(fleet["unmatched_rows"] == 1);
  CHECK(fleet["total_gpu_hours"].get<double>() == doctest::Approx(12 * 88 + 8));
  REQUIRE(fleet["ranking"].size() == 1);
  CHECK(fleet["ranking"][0]["fix"] == "input_stall");
  CHECK(fleet["ranking"][0]["gpu_hours_saved"].get<double>() ==
        doctest::Approx(8 * 88 * (1 - 1 / 1.1)).epsilon(1e-5));
  CHECK(fs::exists(d.dir / "fixes.csv"));
  const auto& rerun = d.summary["rerun"];
  CHECK(rerun["jobs_changed"] == 8);
  CHECK(rerun["mean_jct_s"]["fixed"].get<double>() < rerun["mean_jct_s"]["baseline"].get<double>());
  CHECK(rerun["mean_wait_s"]["fixed"].get<double>() < rerun["mean_wait_s"]["baseline"].get<double>());
  CHECK(fs::exists(d.dir / "fleet_baseline" / "summary.json"));
  CHECK(fs::exists(d.dir / "fleet_fixed" / "jobs.csv"));
}

TEST_CASE("diagnose: bad input exits 2 naming file and field, and writes nothing") {
  const auto dir = temp_dir("diagnose");
  const std::string good = steps(1000, clean_step).dump(kA100);
  fs::create_directories(dir / "trunc");
  write_file(dir / "trunc" / "rank0.json", good.substr(0, good.size() / 2));
  auto d = diagnose((dir / "trunc").string(), dir);
  CHECK(d.code == 2);
  CHECK(d.output.find("rank0.json") != std::string::npos);
  CHECK(!fs::exists(d.dir / "findings.csv"));

  write_file(dir / "r0.json", good);
  write_file(dir / "absent.csv", "job,rank,path\nj,0,r0.json\nj,1,nope.json\n");
  d = diagnose((dir / "absent.csv").string(), dir);
  CHECK(d.code == 2);
  CHECK(d.output.find("absent.csv:3: field 'path'") != std::string::npos);
  CHECK(!fs::exists(d.dir));

  Trace r2 = steps(1000, clean_step);
  r2.rank = 2;
  write_file(dir / "r2.json", r2.dump(kA100, 3));
  write_file(dir / "gap.csv", "job,rank,path\nj,0,r0.json\nj,2,r2.json\n");
  d = diagnose((dir / "gap.csv").string(), dir);
  CHECK(d.code == 2);
  CHECK(d.output.find("field 'rank'") != std::string::npos);
  CHECK(d.output.find("rank 1 is missing") != std::string::npos);
  CHECK(!fs::exists(d.dir));

  write_file(dir / "jobs.csv", "id,model,gpus\nj0,r0,8\n");
  d = diagnose((dir / "r0.json").string() + " --jobs " + (dir / "jobs.csv").string(), dir);
  CHECK(d.code == 2);
  CHECK(d.output.find("jobs.csv:1: field 'duration'") != std::string::npos);
  CHECK(!fs::exists(d.dir));

  d = diagnose((dir / "r0.json").string() + " --threshold input_stall.min_shar=0.1", dir);
  CHECK(d.code == 2);
  CHECK(d.output.find("input_stall.min_share") != std::string::npos);
}

// HTA v0.6.0 (github.com/facebookresearch/HolisticTraceAnalysis at f4d0062) run on the shared traces with
// Debian's python3, pandas 1.5.3 and numpy 1.24.2 (sim/diagnosis/README.md, "Side by side with HTA"):
// get_temporal_breakdown() and get_idle_time_breakdown(consecutive_kernel_delay=30), idle summed over
// streams. Microseconds: window (HTA's kernel_time), idle, compute, non-compute, host wait, kernel wait,
// other.
TEST_CASE("diagnose: temporal and idle breakdowns agree with HTA's on the shared traces within 1%") {
  fleetsim::test::require_shared("kineto/hta");
  const std::map<std::string, std::vector<double>> hta = {
      {"amd_trace_mi250_minitoy_train_ROCm6_2_kineto", {8911, 8780, 96, 35, 8780, 0, 0}},
      {"critical_path_alexnet_benchmark_result_2869224_1695835535_trace",
       {12996011, 12929684, 10630, 55697, 12855007 + 12011718, 104 + 3, 0}},
      {"critical_path_cuda_event_sync_event_sync_trace", {263, 207, 49, 7, 212, 0, 0}},
      {"critical_path_simple_add_benchmark_result_493459_1694039959_trace",
       {16464339, 16414376, 10670, 39293, 15976739 + 13582776, 91 + 8, 0}},
      {"nccl_parser_config_nccl_data", {435586, 338781, 75169, 21636, 357247 + 381499, 2155, 0}},
      {"negative_queue_length_values_check_rank0",
       {1016554, 705853, 143836, 166865, 628598 + 792592 + 62901, 17159 + 85 + 1000 + 75 + 12,
        691231 + 7135 + 675305 + 673182 + 665192}},
      {"timeline_analysis_sampled_rank-0",
       {600058, 321378, 106252, 172428, 596037 + 148934 + 213825, 70 + 6 + 9 + 1985, 34 + 47865 + 261740}},
      {"trace_filter_sampled_rank-1",
       {600674, 328671, 135548, 136455, 596313 + 156827 + 251860, 100 + 9 + 1816, 53028 + 281064 + 23247}},
  };
  const auto dir = temp_dir("diagnose-hta");
  std::string args;
  for (const auto& [name, v] : hta)
    args += fleetsim::test::shared_path("kineto/hta/" + name + ".json.gz") + " ";
  const auto d = diagnose(args + "--quiet", dir);
  REQUIRE_MESSAGE(d.code == 0, d.output);
  long compared = 0;
  for (const auto& job : d.summary["diagnosis"]["per_job"]) {
    const auto& want = hta.at(job["job"]);
    const auto& r = job["per_rank"][0];
    const std::vector<double> got = {r["hta_temporal_us"]["window"],  r["hta_temporal_us"]["idle"],
                                     r["hta_temporal_us"]["compute"], r["hta_temporal_us"]["non_compute"],
                                     r["hta_idle_us"]["host_wait"],   r["hta_idle_us"]["kernel_wait"],
                                     r["hta_idle_us"]["other"]};
    for (std::size_t i = 0; i < want.size(); ++i) {
      INFO(job["job"] << " figure " << i);
      // Within 1% of the window (a category HTA finds near zero is compared on the same scale).
      CHECK(std::abs(got[i] - want[i]) <= 0.01 * want[0]);
      CHECK(std::abs(got[i] - want[i]) <= 0.01 * std::max(want[i], 1.0) + 1);
      ++compared;
    }
  }
  CHECK(compared == 56);
}
