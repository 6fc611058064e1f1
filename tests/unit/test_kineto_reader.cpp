// Kineto trace reader and execution graph: categories (current, 2021, ROCm), distributedInfo,
// collective args, gzip, errors, and the graph's edges and lags. No simulation here.
#include <doctest/doctest.h>
#include <zlib.h>

#include <string>

#include "sim/replay/exec_graph.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/profiler/kineto_trace.hpp"

using namespace fleetsim;

namespace {

const char* kModern = R"J({
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2,
    "pg_config": [{"pg_name": "0", "pg_desc": "default_pg", "pg_size": 2, "ranks": [0, 1]}]},
  "deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85899345920, "numSms": 108}],
  "traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 100, "dur": 50,
     "args": {"External id": 7, "Input Dims": [[64, 128], [128, 32]], "Input type": ["float", "float"]}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 110, "dur": 5,
     "args": {"correlation": 11, "External id": 7}},
    {"ph": "X", "cat": "cuda_driver", "name": "cuLaunchKernel", "pid": 1, "tid": 1, "ts": 111, "dur": 2,
     "args": {"correlation": 12}},
    {"ph": "X", "cat": "kernel", "name": "ampere_sgemm_64x32", "pid": 0, "tid": 7, "ts": 120, "dur": 30,
     "args": {"device": 0, "stream": 7, "correlation": 11}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 125, "dur": 5,
     "args": {"correlation": 13}},
    {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*)",
           "pid" : 0, "tid" : 9, "ts" : 131, "dur" : 40, "args" : {
  "device" : 0, "stream" : 9, "correlation" : 13, "Collective name" : "allreduce",
                                                                      "In msg nelems" : 1024,
                                                                      "dtype" : "Float",
                                                                                "Group size" : 2,
                                                                                "Process Group Name" : "0"
}
},
    {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH", "pid": 0, "tid": 7, "ts": 150, "dur": 3,
     "args": {"device": 0, "stream": 7, "correlation": 14, "bytes": 4096}},
    {"ph": "f", "cat": "ac2g", "name": "ac2g", "id": 11, "pid": 0, "tid": 7, "ts": 120},
    {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 0, "dur": 500},
    {"ph": "X", "cat": "mystery", "name": "x", "pid": 1, "tid": 1, "ts": 1, "dur": 1}
  ]
})J";

}  // namespace

TEST_CASE("kineto reader: current categories, distributedInfo, collective args") {
  const KinetoTrace t = parse_kineto_trace(kModern, "modern.json");
  CHECK(t.rank == 1);
  CHECK(t.world_size == 2);
  REQUIRE(t.process_groups.size() == 1);
  CHECK(t.process_groups[0].ranks == std::vector<int>{0, 1});
  CHECK(t.device_name(0) == "NVIDIA A100-SXM4-80GB");
  CHECK(t.gpu_events == 3);
  CHECK(t.unknown_categories.at("mystery") == 1);
  const KinetoEvent* nccl = nullptr;
  for (const auto& e : t.events)
    if (e.cat == KinetoCat::kernel && e.stream == 9) nccl = &e;
  REQUIRE(nccl != nullptr);
  CHECK(nccl->collective == "allreduce");
  CHECK(nccl->bytes == doctest::Approx(4096));
  CHECK(nccl->group_size == 2);
  CHECK(nccl->process_group == "0");
  bool dims = false;
  for (const auto& e : t.events)
    dims = dims || (e.cat == KinetoCat::cpu_op && e.input_dims == "[[64,128],[128,32]]");
  CHECK(dims);
}

TEST_CASE("kineto reader: 2021 categories and ROCm names") {
  const char* old = R"J({"traceEvents": [
    {"ph": "X", "cat": "Operator", "name": "aten::add", "pid": 5, "tid": 5, "ts": 10, "dur": 20},
    {"ph": "X", "cat": "Runtime", "name": "hipLaunchKernel", "pid": 5, "tid": 5, "ts": 12, "dur": 4, "args": {"correlation": 3}},
    {"ph": "X", "cat": "Kernel", "name": "Cijk_Ailk_Bljk_SB_MT64x64", "pid": 2, "tid": 0, "ts": 20, "dur": 8,
     "args": {"device": 2, "stream": 0, "correlation": 3}},
    {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD", "pid": 2, "tid": 0, "ts": 30, "dur": 2, "args": {"device": 2, "stream": 0}},
    {"ph": "X", "cat": "Memset", "name": "Memset", "pid": 2, "tid": 0, "ts": 33, "dur": 1, "args": {"device": 2, "stream": 0}}
  ]})J";
  const KinetoTrace t = parse_kineto_trace(old, "old.json");
  CHECK(t.gpu_events == 3);
  CHECK(t.unknown_categories.empty());
  CHECK(t.events[0].cat == KinetoCat::cpu_op);
  CHECK(t.events[1].cat == KinetoCat::runtime);
  CHECK(t.events[2].cat == KinetoCat::kernel);
  CHECK(t.events[2].device == 2);
  CHECK(replay::classify_kernel(t.events[2].name) == replay::KernelClass::gemm);
  CHECK(t.events[3].cat == KinetoCat::memcpy);
  CHECK(t.events[4].cat == KinetoCat::memset);
}

TEST_CASE("kineto reader: gzip files and the shipped fixture") {
  const auto dir = test::temp_dir("kineto-gz");
  const auto path = (dir / "t.json.gz").string();
  gzFile g = gzopen(path.c_str(), "wb");
  REQUIRE(g != nullptr);
  const std::string text = kModern;
  gzwrite(g, text.data(), static_cast<unsigned>(text.size()));
  gzclose(g);
  const KinetoTrace t = read_kineto_trace(path);
  CHECK(t.gpu_events == 3);
  // Truncated gzip: a clear InputError.
  const std::string gz = test::read_file(path);
  test::write_file(dir / "cut.json.gz", gz.substr(0, gz.size() / 2));
  CHECK_THROWS_AS(read_kineto_trace((dir / "cut.json.gz").string()), InputError);
  const KinetoTrace fx =
      read_kineto_trace(std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/kineto/two_streams_event_wait.json");
  CHECK(fx.gpu_events == 2);
  std::filesystem::remove_all(dir);
}

TEST_CASE("kineto reader: malformed input gives clear errors") {
  auto message = [](const std::string& text) {
    try {
      parse_kineto_trace(text, "bad.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("this is not json").find("not a Kineto trace") != std::string::npos);
  CHECK(message(R"J({"traceEvents": [{"ph": "X", "cat": "kernel")J").find("truncated") != std::string::npos);
  CHECK(message(R"J({"foo": 1})J").find("traceEvents") != std::string::npos);
  CHECK(message("[1, 2, 3]").find("not a Kineto trace") != std::string::npos);
  CHECK(message("").find("not a Kineto trace") != std::string::npos);
  // Events with wrong types are skipped, not fatal.
  const KinetoTrace t = parse_kineto_trace(
      R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": 5, "ts": "x", "dur": null}, 7, "s"]})J",
      "odd.json");
  CHECK(t.events.size() <= 1);
  // A complete event with a time that is not a number, or a negative duration, is skipped and counted
  // (fleetsim replay warns with the count), never replayed.
  const KinetoTrace u = parse_kineto_trace(
      R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "a", "ts": "nan", "dur": 3},
        {"ph": "X", "cat": "kernel", "name": "b", "ts": 1, "dur": -5},
        {"ph": "X", "cat": "kernel", "name": "c", "ts": 2, "dur": 4}]})J",
      "odd.json");
  REQUIRE(u.events.size() == 1);
  CHECK(u.events[0].dur == 4);
  CHECK(u.unknown_categories.at("<X event with a non-finite ts or dur, or a negative dur>") == 2);
  CHECK_THROWS_AS(read_kineto_trace("/nonexistent/trace.json"), InputError);
  // Bad JSON inside values the reader does not use is still an error.
  CHECK(message(R"J({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,
    "args": {"grid": [1, tru]}}]})J")
            .find("invalid or truncated JSON") != std::string::npos);
  CHECK(message(R"J({"traceEvents": [{"ph": "i", "args": {"x": [}}}]})J").find("invalid or truncated JSON") !=
        std::string::npos);
  CHECK(message(R"J({"traceEvents": []} x)J").find("invalid or truncated JSON") != std::string::npos);
}

TEST_CASE("kineto reader: escapes, shapes with non-integers and repeated keys read as before") {
  const KinetoTrace t = parse_kineto_trace(
      R"J({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "a\u0062c", "ts": 1, "dur": 2,
     "args": {"Input Dims": [[1.5, 2], [-0, 1e3]], "Input type": ["fl\"oat"]}},
    {"ph": "X", "cat": "cpu_op", "name": "x", "ts": 1, "dur": 2,
     "args": {"Input Dims": [[1, 2] , [ 3 ]], "Input type": ["float", "int"]}}],
  "traceEvents": 7,
  "distributedInfo": {"rank": 3, "world_size": 4, "pg_config": [{"pg_name": "a", "pg_name": "b", "ranks": [1, "x", 2.7]}]}})J",
      "odd.json");
  REQUIRE(t.events.size() == 2);
  CHECK(t.events[0].name == "abc");
  CHECK(t.events[0].input_dims == "[[1.5,2],[0,1000.0]]");  // as simdjson's DOM serializer writes it
  CHECK(t.events[0].input_types == R"(["fl\"oat"])");
  CHECK(t.events[1].input_dims == "[[1,2],[3]]");
  CHECK(t.rank == 3);
  REQUIRE(t.process_groups.size() == 1);
  CHECK(t.process_groups[0].name == "a");  // the first of repeated keys, as a DOM lookup
  CHECK(t.process_groups[0].ranks == std::vector<int>{1, 0, 2});
}

TEST_CASE("execution graph: no GPU events is an error") {
  const KinetoTrace t = parse_kineto_trace(
      R"J({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]})J",
      "cpu.json");
  try {
    replay::build_exec_graph({&t});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("no GPU events") != std::string::npos);
  }
}

TEST_CASE("execution graph: launch, stream order and binding lags") {
  const KinetoTrace t = parse_kineto_trace(kModern, "modern.json");
  const replay::ExecGraph g = replay::build_exec_graph({&t});
  // CPU nodes: the two runtime launches (the nested cuLaunchKernel folds into its parent).
  long cpu = 0, launch_edges = 0, stream_edges = 0;
  for (std::size_t v = 0; v < boost::num_vertices(g.g); ++v)
    cpu += g.g[v].kind == replay::NodeKind::cpu ? 1 : 0;
  CHECK(cpu == 2);
  for (auto [ei, ee] = boost::edges(g.g); ei != ee; ++ei) {
    const auto& e = g.g[*ei];
    if (e.kind == replay::EdgeKind::launch) ++launch_edges;
    if (e.kind == replay::EdgeKind::stream_order) ++stream_edges;
    // Every lag is non-negative and no larger than what the trace shows.
    CHECK(e.lag >= 0);
  }
  CHECK(launch_edges == 2);  // gemm and nccl have launches; the memcpy has none
  CHECK(stream_edges == 1);  // gemm -> memcpy on stream 7
  // Whole-trace step (no ProfilerStep annotation).
  REQUIRE(g.steps.size() == 1);
  CHECK(g.steps[0].whole_trace);
}
