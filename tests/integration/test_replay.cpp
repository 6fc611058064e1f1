// fleetsim replay end to end (each case runs the binary: one SimGrid engine per process).
// Hand-made tiny traces pin stream serialization, event waits, cross-rank collective matching and
// CPU launch gaps; the shared Kineto traces check the baseline (within 2% of the measured steps)
// and the what-if sanity rules.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
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

const std::string kFixtures = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/kineto/";
const std::string kShared = fleetsim::test::shared_dir() + "/kineto/hta/";

struct Replayed {
  int code = -1;
  std::string output;
  json report;
  json timeline;
};

Replayed replay(const std::string& args) {
  const auto dir = temp_dir("replay");
  Replayed r;
  const auto res = run_fleetsim("replay " + args + " --out " + (dir / "out").string());
  r.code = res.code;
  r.output = res.output;
  if (r.code == 0) {
    r.report = json::parse(read_file(dir / "out" / "replay.json"));
    r.timeline = json::parse(read_file(dir / "out" / "timeline.json"));
    CHECK(fs::exists(dir / "out" / "kernel_classes.csv"));
  }
  fs::remove_all(dir);
  return r;
}

// Predicted start/end (µs) of the first timeline event whose name contains `name`.
std::pair<double, double> span_of(const json& timeline, const std::string& name) {
  for (const auto& e : timeline["traceEvents"])
    if (e["ph"] == "X" && e["name"].get<std::string>().find(name) != std::string::npos)
      return {e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>()};
  FAIL("no event named " << name);
  return {0, 0};
}

double step(const json& report, std::size_t i, const char* field = "predicted_s") {
  return report["steps"][i][field].get<double>();
}

// One rank of a 2-rank job: a gemm of `gemm_us`, then an all-reduce launched at `coll_launch`.
std::string rank_trace(int rank, double coll_launch, double coll_start, double coll_dur) {
  json t;
  t["distributedInfo"] = {{"rank", rank}, {"world_size", 2}, {"backend", "nccl"}};
  t["deviceProperties"] = json::array({{{"id", 0}, {"name", "NVIDIA A100-SXM4-80GB"}}});
  json ev = json::array();
  ev.push_back({{"ph", "X"},
                {"cat", "user_annotation"},
                {"name", "ProfilerStep#1"},
                {"pid", 1},
                {"tid", 1},
                {"ts", 0},
                {"dur", 1000}});
  ev.push_back({{"ph", "X"},
                {"cat", "cuda_runtime"},
                {"name", "cudaLaunchKernel"},
                {"pid", 1},
                {"tid", 1},
                {"ts", 10},
                {"dur", 5},
                {"args", {{"correlation", 1}}}});
  ev.push_back({{"ph", "X"},
                {"cat", "kernel"},
                {"name", "ampere_gemm_rank" + std::to_string(rank)},
                {"pid", 0},
                {"tid", 7},
                {"ts", 20},
                {"dur", coll_launch - 30},
                {"args", {{"device", 0}, {"stream", 7}, {"correlation", 1}}}});
  ev.push_back({{"ph", "X"},
                {"cat", "cuda_runtime"},
                {"name", "cudaLaunchKernel"},
                {"pid", 1},
                {"tid", 1},
                {"ts", coll_launch},
                {"dur", 5},
                {"args", {{"correlation", 2}}}});
  ev.push_back({{"ph", "X"},
                {"cat", "kernel"},
                {"name", "ncclKernel_AllReduce_RING_LL_Sum_float_r" + std::to_string(rank)},
                {"pid", 0},
                {"tid", 7},
                {"ts", coll_start},
                {"dur", coll_dur},
                {"args",
                 {{"device", 0},
                  {"stream", 7},
                  {"correlation", 2},
                  {"Collective name", "allreduce"},
                  {"In msg nelems", 1 << 20},
                  {"dtype", "Float"},
                  {"Group size", 2}}}});
  ev.push_back({{"ph", "X"},
                {"cat", "cuda_runtime"},
                {"name", "cudaDeviceSynchronize"},
                {"pid", 1},
                {"tid", 1},
                {"ts", coll_launch + 10},
                {"dur", coll_start + coll_dur - coll_launch - 10 + 2},
                {"args", {{"correlation", 3}}}});
  t["traceEvents"] = ev;
  return t.dump();
}

// A two-rank all-reduce: rank 0 arrives at 100, rank 1 at 400, transfer 50 µs.
std::string two_ranks(const fs::path& dir) {
  write_file(dir / "r0.json", rank_trace(0, 100, 110, 340));
  write_file(dir / "r1.json", rank_trace(1, 400, 400, 50));
  return (dir / "r0.json").string() + " " + (dir / "r1.json").string();
}

}  // namespace

TEST_CASE("replay: the baseline reproduces a hand-made trace exactly") {
  const auto r = replay(kFixtures + "two_streams_event_wait.json");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK(step(r.report, 0) == doctest::Approx(400e-6).epsilon(1e-9));
  CHECK(step(r.report, 0, "measured_s") == doctest::Approx(400e-6));
  CHECK(r.output.find("unknown category 'some_future_category'") != std::string::npos);
}

TEST_CASE("replay: stream serialization and event waits") {
  // gemm twice as slow: the elementwise kernel on stream 20 waits (event) for the gemm on stream 7,
  // and the device synchronize waits for both.
  const auto r = replay(kFixtures + "two_streams_event_wait.json --set speedup.gemm=0.5");
  REQUIRE_MESSAGE(r.code == 0, r.output);
  const auto gemm = span_of(r.timeline, "sgemm");
  const auto add = span_of(r.timeline, "elementwise_kernel_add");
  CHECK(gemm.second - gemm.first == doctest::Approx(200));
  CHECK(add.first >= gemm.second);
  CHECK(add.first == doctest::Approx(gemm.second + 2));
  const auto sync = span_of(r.timeline, "cudaDeviceSynchronize");
  CHECK(sync.second >= add.second);
  CHECK(step(r.report, 0) == doctest::Approx(500e-6).epsilon(1e-6));
}

TEST_CASE("replay: launch gaps from CPU latency") {
  // Launch-bound step: 5 µs kernels launched 50 µs apart. Halving the CPU overhead shrinks the
  // step; the GPU-bound fixture does not move; a kernel never starts before its launch.
  json t;
  json ev = json::array();
  ev.push_back({{"ph", "X"},
                {"cat", "user_annotation"},
                {"name", "ProfilerStep#1"},
                {"pid", 1},
                {"tid", 1},
                {"ts", 0},
                {"dur", 300}});
  for (int i = 0; i < 4; ++i) {
    const double l = 10 + 60.0 * i;
    ev.push_back({{"ph", "X"},
                  {"cat", "cuda_runtime"},
                  {"name", "cudaLaunchKernel"},
                  {"pid", 1},
                  {"tid", 1},
                  {"ts", l},
                  {"dur", 8},
                  {"args", {{"correlation", i + 1}}}});
    ev.push_back({{"ph", "X"},
                  {"cat", "kernel"},
                  {"name", "elementwise_kernel_" + std::to_string(i)},
                  {"pid", 0},
                  {"tid", 7},
                  {"ts", l + 6},
                  {"dur", 5},
                  {"args", {{"device", 0}, {"stream", 7}, {"correlation", i + 1}}}});
  }
  ev.push_back({{"ph", "X"},
                {"cat", "cuda_runtime"},
                {"name", "cudaDeviceSynchronize"},
                {"pid", 1},
                {"tid", 1},
                {"ts", 260},
                {"dur", 4},
                {"args", {{"correlation", 9}}}});
  t["traceEvents"] = ev;
  const auto dir = temp_dir("gaps");
  write_file(dir / "gaps.json", t.dump());
  const auto base = replay((dir / "gaps.json").string());
  const auto fast = replay((dir / "gaps.json").string() + " --set launch_overhead_scale=0.5");
  REQUIRE_MESSAGE(base.code == 0, base.output);
  REQUIRE(fast.code == 0);
  CHECK(step(base.report, 0) == doctest::Approx(300e-6));
  CHECK(step(fast.report, 0) < step(base.report, 0));
  CHECK(step(fast.report, 0) > 0.5 * step(base.report, 0));
  CHECK(base.report["steps"][0]["measured"]["idle_s"].get<double>() > 200e-6);
  const auto launch = span_of(fast.timeline, "cudaLaunchKernel");
  const auto k0 = span_of(fast.timeline, "elementwise_kernel_0");
  CHECK(k0.first >= launch.first);
  // GPU-bound: the same knob leaves the fixture's step unchanged.
  const auto gpu_bound = replay(kFixtures + "two_streams_event_wait.json --set launch_overhead_scale=0.5");
  REQUIRE(gpu_bound.code == 0);
  CHECK(step(gpu_bound.report, 0) == doctest::Approx(400e-6));
  fs::remove_all(dir);
}

TEST_CASE("replay: a collective cannot finish before the slowest rank arrives") {
  const auto dir = temp_dir("xrank");
  // rank 0 arrives at 100 and waits; rank 1 arrives at 400; the transfer takes 50 µs.
  const std::string both = two_ranks(dir);
  const auto base = replay(both);
  REQUIRE_MESSAGE(base.code == 0, base.output);
  CHECK(base.report["graph"]["collectives_joined_across_ranks"] == 2);
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(step(base.report, i) == doctest::Approx(step(base.report, i, "measured_s")).epsilon(1e-9));
  // Rank 1's gemm twice as slow: rank 1 arrives later, and rank 0's all-reduce ends later with it.
  const auto slow = replay(both + " --set speedup.gemm=0.5");
  REQUIRE(slow.code == 0);
  const auto c0 = span_of(slow.timeline, "_r0");
  const auto c1 = span_of(slow.timeline, "_r1");
  CHECK(c1.first > 400);
  CHECK(c0.second >= c1.first);
  CHECK(c0.second == doctest::Approx(c1.second));
  CHECK(step(slow.report, 0) > step(base.report, 0));
  fs::remove_all(dir);
}

TEST_CASE("replay: a collective's transfer runs on the platform's network") {
  const auto dir = temp_dir("fabric");
  const std::string both = two_ranks(dir);
  // Default platform (the traces: world size 2 -> one node of 2 A100-80GB, NVLink 300 GB/s per
  // direction): the replayed collective takes its measured time.
  const auto base = replay(both);
  REQUIRE_MESSAGE(base.code == 0, base.output);
  CHECK(base.report["platform"]["nodes"] == 1);
  CHECK(base.report["platform"]["gpus"] == 2);
  CHECK(base.report["simgrid_ptasks"] == 1);
  CHECK(span_of(base.timeline, "_r1").first == doctest::Approx(400));
  CHECK(span_of(base.timeline, "_r1").second == doctest::Approx(450));
  CHECK(span_of(base.timeline, "_r0").second == doctest::Approx(450));
  // Inside one node the NIC is not used; half the NVLink bandwidth: the ring 0 -> 1 -> 0 crosses
  // two GPU links per flow (latency 2 x 0.25 µs); bytes were calibrated to 50 µs, so the transfer
  // takes 0.5 + 2 x 49.5 = 99.5 µs.
  const auto nic = replay(both + " --set network.nic_gbps=50");
  REQUIRE(nic.code == 0);
  CHECK(span_of(nic.timeline, "_r1").second == doctest::Approx(450));
  const auto nvlink = replay(both + " --set network.intra_node_gbps=1200");
  REQUIRE(nvlink.code == 0);
  CHECK(span_of(nvlink.timeline, "_r1").second == doctest::Approx(499.5));
  CHECK(span_of(nvlink.timeline, "_r0").second == doctest::Approx(499.5));

  // Two nodes of one GPU each (scenario): flows cross GPU link, NIC, NIC, GPU link (latency
  // 0.25 + 1 + 1 + 0.25 = 2.5 µs); the 100 Gbit/s NIC is the bottleneck. As traced: 50 µs.
  write_file(dir / "two-nodes.toml", R"(
[cluster]
[[cluster.pool]]
name = "n"
nodes = 2
gpus_per_node = 1
gpu = "A100-80GB"
[cluster.network]
nic_gbps = 100
)");
  const std::string scen = both + " --scenario " + (dir / "two-nodes.toml").string();
  const auto two = replay(scen);
  REQUIRE_MESSAGE(two.code == 0, two.output);
  CHECK(two.report["platform"]["nodes"] == 2);
  CHECK(span_of(two.timeline, "_r1").second == doctest::Approx(450));
  for (std::size_t i = 0; i < 2; ++i)
    CHECK(step(two.report, i) == doctest::Approx(step(two.report, i, "measured_s")).epsilon(1e-9));
  // Half the NIC: SimGrid's flows take 2.5 + 2 x 47.5 = 97.5 µs.
  const auto half = replay(scen + " --set network.nic_gbps=50");
  REQUIRE(half.code == 0);
  CHECK(span_of(half.timeline, "_r1").second == doctest::Approx(497.5));
  CHECK(span_of(half.timeline, "_r0").second == doctest::Approx(497.5));
  // Twice the NIC: the GPU links (300 GB/s) are far from binding: 2.5 + 47.5 / 2 = 26.25 µs.
  const auto twice = replay(scen + " --set network.nic_gbps=200");
  REQUIRE(twice.code == 0);
  CHECK(span_of(twice.timeline, "_r1").second == doctest::Approx(426.25));
  fs::remove_all(dir);
}

TEST_CASE("replay: --scenario errors name the file and key, exit 2, write nothing") {
  const auto dir = temp_dir("scen");
  const std::string both = two_ranks(dir);
  write_file(dir / "bad.toml", "[cluster]\n[[cluster.pool]]\nnodes = 2\n[cluster.network]\nnic_gbs = 100\n");
  auto r = run_fleetsim("replay " + both + " --scenario " + (dir / "bad.toml").string() + " --out " +
                        (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("bad.toml") != std::string::npos);
  CHECK(r.output.find("cluster.network.nic_gbs") != std::string::npos);
  CHECK(r.output.find("nic_gbps") != std::string::npos);  // the suggestion
  CHECK_FALSE(fs::exists(dir / "o"));
  // Fewer GPUs than the world size.
  write_file(dir / "small.toml", "[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 1\n");
  r = run_fleetsim("replay " + both + " --scenario " + (dir / "small.toml").string() + " --out " +
                   (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("small.toml") != std::string::npos);
  CHECK(r.output.find("world size is 2") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "o"));
  fs::remove_all(dir);
}

TEST_CASE("replay: bad input exits 2 with a clear message") {
  const auto dir = temp_dir("bad");
  write_file(dir / "not.json", "hello");
  auto r = run_fleetsim("replay " + (dir / "not.json").string() + " --out " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("not a Kineto trace") != std::string::npos);
  write_file(
      dir / "cpu.json",
      R"J({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1}]})J");
  r = run_fleetsim("replay " + (dir / "cpu.json").string() + " --out " + (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("no GPU events") != std::string::npos);
  r = run_fleetsim("replay " + kFixtures + "two_streams_event_wait.json --set speedup.tensor=2 --out " +
                   (dir / "o").string());
  CHECK(r.code == 2);
  CHECK(r.output.find("speedup.gemm") != std::string::npos);
  r = run_fleetsim("replay " + kFixtures + "two_streams_event_wait.json --gpu NoSuchGPU --out " +
                   (dir / "o").string());
  CHECK(r.code == 2);
  CHECK_FALSE(fs::exists(dir / "o" / "replay.json"));
  fs::remove_all(dir);
}

TEST_CASE("replay: every shared trace's baseline is within 2% of the measured steps") {
  fleetsim::test::require_shared();
  for (const auto& f : fs::directory_iterator(kShared)) {
    const auto r = replay(f.path().string());
    REQUIRE_MESSAGE(r.code == 0, f.path().string() << ": " << r.output);
    for (const auto& s : r.report["steps"]) {
      INFO(f.path().filename().string() << " " << s["step"].get<std::string>());
      CHECK(std::abs(s["error_pct"].get<double>()) < 2.0);
    }
  }
  // The two ranks of the 128-GPU job together (collectives joined across ranks).
  const auto two = replay(kShared + "timeline_analysis_sampled_rank-0.json.gz " + kShared +
                          "trace_filter_sampled_rank-1.json.gz");
  REQUIRE(two.code == 0);
  CHECK(two.report["graph"]["collectives_joined_across_ranks"].get<long>() > 0);
  for (const auto& s : two.report["steps"]) CHECK(std::abs(s["error_pct"].get<double>()) < 2.0);
}

TEST_CASE("replay: what-if sanity on shared traces") {
  fleetsim::test::require_shared();
  const std::string job = kShared + "negative_queue_length_values_check_rank0.json.gz";
  const auto base = replay(job);
  REQUIRE(base.code == 0);
  // A faster GPU never makes a step end later (steps are measured between boundaries that all move
  // earlier, so one step's length may grow by what the previous step gained; the total shrinks).
  const auto h100 = replay(job + " --gpu H100");
  REQUIRE_MESSAGE(h100.code == 0, h100.output);
  double total_base = 0, total_h100 = 0;
  for (std::size_t i = 0; i < base.report["steps"].size(); ++i) {
    CHECK(step(h100.report, i, "predicted_end_s") <= step(base.report, i, "predicted_end_s") + 1e-9);
    total_base += step(base.report, i);
    total_h100 += step(h100.report, i);
  }
  CHECK(total_h100 < total_base);
  // Removing communication gives at most the time with it.
  const auto nocomm = replay(job + " --set speedup.communication=inf");
  REQUIRE(nocomm.code == 0);
  for (std::size_t i = 0; i < base.report["steps"].size(); ++i) {
    CHECK(step(nocomm.report, i, "predicted_end_s") <= step(base.report, i, "predicted_end_s") + 1e-9);
    CHECK(nocomm.report["steps"][i]["predicted"]["communication_s"].get<double>() == doctest::Approx(0));
  }
  // World size 16: two nodes of 8 GPUs; the collectives' rings cross the NICs, so a slower NIC
  // never makes a step end earlier and a faster one never later.
  CHECK(base.report["platform"]["nodes"] == 2);
  CHECK(base.report["simgrid_ptasks"].get<long>() > 0);
  const auto slow_nic = replay(job + " --set network.nic_gbps=50");
  const auto fast_nic = replay(job + " --set network.nic_gbps=400");
  REQUIRE(slow_nic.code == 0);
  REQUIRE(fast_nic.code == 0);
  for (std::size_t i = 0; i < base.report["steps"].size(); ++i) {
    CHECK(step(slow_nic.report, i, "predicted_end_s") >= step(base.report, i, "predicted_end_s") - 1e-9);
    CHECK(step(fast_nic.report, i, "predicted_end_s") <= step(base.report, i, "predicted_end_s") + 1e-9);
  }
  CHECK(slow_nic.report["total"]["predicted_s"].get<double>() >
        base.report["total"]["predicted_s"].get<double>());
  // Doubling the NIC does not change a single-GPU trace.
  const std::string single =
      kShared + "critical_path_simple_add_benchmark_result_493459_1694039959_trace.json.gz";
  const auto s0 = replay(single);
  const auto s1 = replay(single + " --set network.nic_gbps=400");
  REQUIRE(s0.code == 0);
  REQUIRE(s1.code == 0);
  CHECK(step(s1.report, 0) == step(s0.report, 0));
}

TEST_CASE("replay --summary: fleet view over many traces") {
  fleetsim::test::require_shared();
  const auto r = run_fleetsim("replay --summary " + kShared + "*.json.gz");
  CHECK(r.code == 0);
  CHECK(r.output.find("GPU idle share") != std::string::npos);
  CHECK(r.output.find("exposed communication share") != std::string::npos);
}
