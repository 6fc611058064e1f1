// Collective models: names, hand-computed analytic times, protocol switch points, the fitter,
// calibrated interpolation/fallbacks, JSON and the readers' errors.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <unistd.h>

#include "models/collective/collective_model.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
namespace fs = std::filesystem;

namespace {

/// A temp directory removed when the test ends.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("fleetsim-coll-" + name + "-" + std::to_string(::getpid()))) {
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& rel, const std::string& text) const {
    const fs::path p = path / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
};

CommFabric simple_fabric() {
  CommFabric f;
  f.system = "test";
  f.intra_gbs = 100;
  f.intra_latency_s = 1e-6;
  f.inter_gbs = 25;
  f.inter_latency_s = 2.7e-6;
  f.nics_per_node = 8;
  f.gpus_per_nic = 1;
  return f;
}

template <typename F>
std::string input_error(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("collective names: nccl-tests and aicb spellings") {
  CHECK(parse_collective("CommType.all_reduce") == Collective::all_reduce);
  CHECK(parse_collective("allreduce") == Collective::all_reduce);
  CHECK(parse_collective("all_reduce_perf") == Collective::all_reduce);
  CHECK(parse_collective("AllGather") == Collective::all_gather);
  CHECK(parse_collective("reduce-scatter") == Collective::reduce_scatter);
  CHECK(parse_collective("alltoall_perf") == Collective::all_to_all);
  CHECK(parse_collective("sendrecv") == Collective::send_recv);
  CHECK(parse_collective("CommType.broadcast") == Collective::broadcast);
  CHECK_FALSE(parse_collective("CommType.epoch_end").has_value());
  for (auto op : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                  Collective::all_to_all, Collective::broadcast, Collective::send_recv})
    CHECK(parse_collective(to_string(op)) == op);
  auto msg = input_error([] { parse_collective("allreduc", "s.toml", 7, "op"); });
  CHECK(has(msg, "s.toml:7"));
  CHECK(has(msg, "did you mean 'all_reduce'"));
  CHECK(bus_factor(Collective::all_reduce, 8) == doctest::Approx(1.75));
  CHECK(bus_factor(Collective::all_gather, 4) == doctest::Approx(0.75));
  CHECK(bus_factor(Collective::send_recv, 4) == doctest::Approx(1.0));
}

TEST_CASE("collective fabric from the GPU catalog") {
  const GpuSpec& a100 = gpu_spec("A100-80GB");
  auto f = fabric_for(a100, 200, 8, 1);
  CHECK(f.intra_gbs == doctest::Approx(300));  // 600 GB/s both directions
  CHECK(f.inter_gbs == doctest::Approx(25));
  CHECK(f.nics_per_node == 8);
  CHECK(f.system == "A100-80GB");
  const GpuSpec& t4 = gpu_spec("T4");
  CHECK(fabric_for(t4, 100, 1, 8, 24).intra_gbs == doctest::Approx(24));
}

TEST_CASE("collective analytic ring all-reduce and all-gather by hand") {
  const CommFabric f = simple_fabric();
  // all-reduce, 4 ranks, 1 GB, Simple ring: 8.4 us + 6 hops x 1 us x 5.7 + 1.5 GB / (100 GB/s x 0.8)
  auto p = predict_analytic({Collective::all_reduce, 1e9, 4, 1}, f);
  CHECK(p.algorithm == "ring");
  CHECK(p.protocol == "Simple");
  CHECK(p.seconds == doctest::Approx(8.4e-6 + 34.2e-6 + 0.01875).epsilon(1e-9));
  // all-gather: 3 hops, 0.75 GB
  auto g = predict_analytic({Collective::all_gather, 1e9, 4, 1}, f);
  CHECK(g.seconds == doctest::Approx(8.4e-6 + 17.1e-6 + 0.75e9 / 80e9).epsilon(1e-9));
  // one rank: nothing to do
  CHECK(predict_analytic({Collective::all_reduce, 1e9, 1, 1}, f).seconds == 0.0);
  // no tree inside one node
  CHECK_FALSE(analytic_seconds({Collective::all_reduce, 1e3, 4, 1}, f, {}, true, CollectiveProtocol::ll));
}

TEST_CASE("collective analytic protocol switch points LL to LL128 to Simple") {
  const CommFabric f = simple_fabric();
  // 4 ranks on one node: LL 12.6 us + 1.5 S / 40 GB/s; LL128 33.2 us + 1.5 S / 74 GB/s;
  // Simple 42.6 us + 1.5 S / 80 GB/s. LL = LL128 at S = 1.1956 MB, LL128 = Simple at 6.183 MB.
  auto proto = [&](double s) { return predict_analytic({Collective::all_reduce, s, 4, 1}, f).protocol; };
  CHECK(proto(1e3) == "LL");
  CHECK(proto(1.15e6) == "LL");
  CHECK(proto(1.25e6) == "LL128");
  CHECK(proto(6.0e6) == "LL128");
  CHECK(proto(6.4e6) == "Simple");
  CHECK(predict_analytic({Collective::all_reduce, 1e3, 4, 1}, f).seconds ==
        doctest::Approx(12.6e-6 + 1.5e3 / 40e9).epsilon(1e-9));
}

TEST_CASE("collective analytic multi-node tree latency and NIC-bound ring") {
  CommFabric f = simple_fabric();
  // 64 ranks on 8 nodes, 1 KiB: tree LL = 6.8 + 2 x (7 x 0.6... here 1 us intra, 3 x 2.7 us inter)
  f.intra_latency_s = 0.6e-6;
  auto t = predict_analytic({Collective::all_reduce, 1024, 64, 8}, f);
  CHECK(t.algorithm == "tree");
  CHECK(t.protocol == "LL");
  CHECK(t.seconds ==
        doctest::Approx(6.8e-6 + 2 * (7 * 0.6e-6 + 3 * 2.7e-6) + 2 * 63.0 / 64 * 1024 / (100e9 * 0.36))
            .epsilon(1e-9));
  // 16 ranks on 2 nodes, 2 NICs per node (50 GB/s per node < 100 GB/s NVLink), 1 GB: Simple ring
  f.nics_per_node = 2;
  auto r = predict_analytic({Collective::all_reduce, 1e9, 16, 2}, f);
  CHECK(r.algorithm == "ring");
  CHECK(r.protocol == "Simple");
  const double lat = 8.4e-6 + 28 * 0.6e-6 * 5.7 + 2 * 2.7e-6 * 5.7;
  CHECK(r.seconds == doctest::Approx(lat + 1.875e9 / (50e9 * 0.8)).epsilon(1e-9));
}

TEST_CASE("collective fitter recovers latency and bus bandwidth from synthetic samples") {
  std::vector<CollectiveSample> rows;
  const double mib = 1024.0 * 1024.0;
  for (int n : {2, 4}) {
    const double lat = n == 2 ? 20e-6 : 40e-6, bw = n == 2 ? 100e9 : 200e9;
    for (int k = 1; k <= 64; ++k) {
      const double s = k * mib;
      const double noise = (k % 2 == 0 ? 1.003 : 0.997);
      rows.push_back({"syn", k, "X", Collective::all_reduce, s, n, 1,
                      noise * (lat + bus_factor(Collective::all_reduce, n) * s / bw), ""});
    }
  }
  auto cal = fit_collectives(rows);
  REQUIRE(cal.curves.size() == 2);
  for (const auto& c : cal.curves) {
    CAPTURE(c.ranks);
    CHECK(c.system == "X");
    CHECK(c.samples == 64);
    CHECK(c.bands.size() >= 5);  // octaves 1-2, 2-4 ... 32-64 MiB, 64 MiB joins the last
    for (const auto& b : c.bands) {
      CHECK(b.samples >= 2);
      CHECK(b.busbw_gbs == doctest::Approx(c.ranks == 2 ? 100 : 200).epsilon(0.02));
    }
    // latency is identifiable where it is a visible share of the time (small sizes)
    CHECK(c.bands.front().latency_s == doctest::Approx(c.ranks == 2 ? 20e-6 : 40e-6).epsilon(0.15));
  }
  // 3 ranks: latency and 1/busbw halfway between 2 and 4
  const double s = 4 * mib;
  auto t3 = cal.fitted_seconds("X", Collective::all_reduce, s, 3);
  REQUIRE(t3);
  CHECK(*t3 ==
        doctest::Approx(30e-6 + bus_factor(Collective::all_reduce, 3) * s * 0.5 * (1 / 100e9 + 1 / 200e9))
            .epsilon(0.03));
  CHECK_FALSE(cal.fitted_seconds("Y", Collective::all_reduce, s, 3));
  CHECK(cal.match_system("x-80gb") == "X");
}

TEST_CASE("collective calibrated model: op fallback, hierarchical multi-node, unknown system") {
  std::vector<CollectiveSample> rows;
  for (int k = 1; k <= 16; ++k)
    rows.push_back(
        {"syn", k, "A100", Collective::all_reduce, k * 1e6, 8, 1, 10e-6 + 1.75 * k * 1e6 / 200e9, ""});
  CollectiveModelParams params;
  params.calibration = std::make_shared<const CollectiveCalibration>(fit_collectives(rows));
  auto model = collective_models().create("calibrated", params);
  CommFabric f = simple_fabric();
  f.system = "A100-80GB";
  auto ar = model->predict({Collective::all_reduce, 8e6, 8, 1}, f);
  CHECK(ar.seconds == doctest::Approx(10e-6 + 1.75 * 8e6 / 200e9).epsilon(0.01));
  // all-gather never measured: all-reduce latency and bus bandwidth with the (n-1)/n factor
  auto ag = model->predict({Collective::all_gather, 8e6, 8, 1}, f);
  CHECK(ag.seconds == doctest::Approx(10e-6 + 0.875 * 8e6 / 200e9).epsilon(0.01));
  // 2 nodes x 8: one ring over 16 ranks; each rank's 1.875 x 8 MB crosses the node's 8 x 25 GB/s
  // NICs (Simple, 80%), pipelined with the calibrated intra-node part: the slower one sets the time
  auto mn = model->predict({Collective::all_reduce, 8e6, 16, 2}, f);
  CHECK(mn.algorithm == "ring");
  const double nic = 1.875 * 8e6 / (200e9 * 0.8) + 2 * 2.7e-6 * 5.7;
  CHECK(nic > ar.seconds);
  CHECK(mn.seconds == doctest::Approx(nic).epsilon(0.01));
  // a system with no curves: the analytic model
  f.system = "H100";
  CHECK(model->predict({Collective::all_reduce, 8e6, 8, 1}, f).seconds ==
        doctest::Approx(predict_analytic({Collective::all_reduce, 8e6, 8, 1}, f).seconds));
}

TEST_CASE("collective registry names and errors") {
  CHECK(collective_models().contains("nccl-default"));
  CHECK(collective_models().contains("calibrated"));
  auto msg = input_error(
      [] { collective_models().create("nccl-defualt", CollectiveModelParams{}, "s.toml", 3, "model"); });
  CHECK(has(msg, "s.toml:3"));
  CHECK(has(msg, "did you mean 'nccl-default'"));
  CHECK(has(input_error([] { collective_models().create("calibrated", CollectiveModelParams{}); }),
            "calibration"));
  auto def = collective_models().create("nccl-default", CollectiveModelParams{});
  CHECK(def->predict({Collective::all_reduce, 1e9, 4, 1}, simple_fabric()).protocol == "Simple");
}

TEST_CASE("collective calibration JSON round trip and errors") {
  std::vector<CollectiveSample> rows;
  for (int k = 1; k <= 40; ++k)
    rows.push_back(
        {"syn", k, "V100", Collective::all_reduce, k * 1e6, 4, 1, 30e-6 + 1.5 * k * 1e6 / 85e9, ""});
  auto cal = fit_collectives(rows);
  cal.analytic.ring[2].efficiency = 0.77;
  const auto j = to_json(cal);
  CHECK(j.at("format") == "fleetsim.collective-calibration");
  CHECK(j.at("analytic").at("ring").at("Simple").at("efficiency") == doctest::Approx(0.77));
  auto back = collective_calibration_from_json(nlohmann::json::parse(j.dump()), "cal.json");
  CHECK(to_json(back) == j);
  REQUIRE(back.curves.size() == 1);
  CHECK(back.curves[0].ranks == 4);
  CHECK(back.fitted_seconds("V100", Collective::all_reduce, 20e6, 4).value() ==
        doctest::Approx(cal.fitted_seconds("V100", Collective::all_reduce, 20e6, 4).value()));
  auto bad = j;
  bad["curves"][0]["bands"][0].erase("busbw_gbs");
  auto msg = input_error([&] { collective_calibration_from_json(bad, "cal.json"); });
  CHECK(has(msg, "cal.json"));
  CHECK(has(msg, "curves[0].bands[0].busbw_gbs"));
  bad = j;
  bad["curves"][0]["op"] = "allreduse";
  CHECK(has(input_error([&] { collective_calibration_from_json(bad, "cal.json"); }), "unknown collective"));
  bad = j;
  bad["format"] = "other";
  CHECK(has(input_error([&] { collective_calibration_from_json(bad, "cal.json"); }), "format"));
  TempDir dir("json");
  const std::string path = dir.write("cal.json", j.dump(2));
  CHECK(to_json(load_collective_calibration(path)) == j);
  CHECK(has(input_error([&] { load_collective_calibration(dir.write("broken.json", "{\"format\": ")); }),
            "invalid JSON"));
}

TEST_CASE("node topology: NVLink rings of GPU subsets and per-ring interpolation") {
  const NodeTopology& dgx1 = node_topology("DGX1");
  std::vector<int> rings;
  for (int n = 2; n <= 8; ++n) rings.push_back(ring_capacity(dgx1, n));
  // Measured V100 bus bandwidth at 1 GiB, 2..8 GPUs: 22.6, 45, 85, 37, 46, 87, 135 GB/s.
  CHECK(rings == std::vector<int>{1, 2, 4, 0, 2, 4, 6});
  CHECK(ring_capacity(dgx1, 1) == 0);
  CHECK(ring_capacity(dgx1, 9) == 0);
  CHECK(ring_capacity(node_topology("nvswitch"), 5) == 1);
  // No NVLink ring but an NVLink path (4-0-3-2-1): only 5 GPUs of a DGX-1; never on a switched node.
  for (int n = 1; n <= 9; ++n) {
    CAPTURE(n);
    CHECK(nvlink_chain_only(dgx1, n) == (n == 5));
    CHECK_FALSE(nvlink_chain_only(node_topology("nvswitch"), n));
  }
  // A 4-GPU ring of single links: one Hamiltonian cycle, both ways.
  const NodeTopology square{"square", "", 4, false, {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}, {3, 0, 1}}};
  CHECK(ring_capacity(square, 4) == 2);
  CHECK(ring_capacity(square, 3) == 0);  // 0-1-2 has no link 2-0
  CHECK(nvlink_chain_only(square, 3));
  CHECK_FALSE(nvlink_chain_only(NodeTopology{"pair+1", "", 3, false, {{0, 1, 2}}}, 3));  // GPU 2 unlinked
  CHECK(has(input_error([] { node_topology("hypercube", "cal.json", 0, "node_topology.V100"); }),
            "valid: nvswitch, pcie, dgx1"));

  // Curves at 2 GPUs (20 GB/s, 10 us) and 4 GPUs (80 GB/s, 30 us): 20 GB/s per ring on both.
  std::vector<CollectiveSample> rows;
  for (int n : {2, 4})
    for (int k = 1; k <= 64; ++k) {
      const double bytes = k * 1e6, bw = n == 2 ? 20e9 : 80e9, lat = n == 2 ? 10e-6 : 30e-6;
      rows.push_back({"syn", k, "V100", Collective::all_reduce, bytes, n, 1,
                      lat + bus_factor(Collective::all_reduce, n) * bytes / bw, ""});
    }
  CollectiveCalibration cal = fit_collectives(rows);
  const double bytes = 32e6, f3 = bus_factor(Collective::all_reduce, 3);
  // Without the topology 1/busbw is interpolated: 1 / (0.5 / 20 + 0.5 / 80) = 32 GB/s.
  CHECK(cal.fitted_seconds("V100", Collective::all_reduce, bytes, 3).value() ==
        doctest::Approx(20e-6 + f3 * bytes / 32e9).epsilon(1e-3));
  // With it, 3 GPUs carry 2 rings of 20 GB/s: 40 GB/s.
  cal.node_topology["V100"] = &dgx1;
  CHECK(cal.fitted_seconds("V100", Collective::all_reduce, bytes, 3).value() ==
        doctest::Approx(20e-6 + f3 * bytes / 40e9).epsilon(1e-3));
  // 5 GPUs have no NVLink ring but a path: one chain, each link moving the buffer once each way
  // at one ring's 20 GB/s (the 2-GPU curve's), so bytes / 20 GB/s; latency clamped to 4 GPUs'.
  CHECK(cal.fitted_seconds("V100", Collective::all_reduce, bytes, 5).value() ==
        doctest::Approx(30e-6 + bytes / 20e9).epsilon(1e-3));
  // The topology survives the JSON round trip; an unknown name is an error naming the key.
  const auto j = to_json(cal);
  CHECK(j.at("node_topology").at("V100") == "dgx1");
  CHECK(collective_calibration_from_json(j, "cal.json").node_topology.at("V100") == &dgx1);
  auto bad = j;
  bad["node_topology"]["V100"] = "torus";
  CHECK(has(input_error([&] { collective_calibration_from_json(bad, "cal.json"); }), "node_topology.V100"));
}

TEST_CASE("collective reader: nccl-tests LUT CSV") {
  TempDir dir("lut");
  const std::string path = dir.write("nccl-allreduce-h100/AR_GPU4_1M_4M_LUT",
                                     "size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s)\n"
                                     "1048576,262144,float,50000,31.46,51000,30.8\n"
                                     "2097152,524288,float,60000,52.4,61000,51.5\n");
  auto rows = read_nccl_tests(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].ranks == 4);
  CHECK(rows[0].system == "H100");
  CHECK(rows[0].op == Collective::all_reduce);
  CHECK(rows[1].line == 3);
  CHECK(rows[1].seconds == doctest::Approx(60e-6));  // out-of-place column
  CHECK(read_nccl_tests(path, "DGX")[0].system == "DGX");
  const std::string bad = dir.write("x/AR_GPU2_LUT", "size(B),count,type,time(ns)\n1048576,1,float,abc\n");
  auto msg = input_error([&] { read_nccl_tests(bad); });
  CHECK(has(msg, "AR_GPU2_LUT:2"));
  CHECK(has(msg, "time(ns)"));
  auto noranks = input_error(
      [&] { read_nccl_tests(dir.write("x/results.csv", "size(B),count,type,time(ns)\n1,1,float,5\n")); });
  CHECK(has(noranks, "GPU<n>"));
  auto neither = input_error([&] { read_nccl_tests(dir.write("x/other.csv", "\nhello,world\n1,2\n")); });
  CHECK(has(neither, "other.csv:2"));
  CHECK(has(neither, "not an nccl-tests result"));
  CHECK(has(input_error([&] { read_nccl_tests((dir.path / "missing").string()); }), "cannot open"));
}

TEST_CASE("collective reader: nccl-tests stdout") {
  TempDir dir("stdout");
  const std::string text =
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg "
      "iters: 1 "
      "validation: 1 graph: 0\n"
      "#\n"
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid  41 on    node-a device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
      "#  Rank  1 Group  0 Pid  42 on    node-b device  0 [0x07] NVIDIA A100-SXM4-80GB\n"
      "node-a:41:41 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
      "#\n"
      "#                                                              out-of-place                       "
      "in-place\n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw "
      "  busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s) "
      " (GB/s)\n"
      "     1048576        131072     float    none      -1    45.10   23.25   11.63      0    44.20   23.72 "
      "  11.86      0\n"
      "     2097152        262144     float    none      -1    70.00   29.96   14.98      0    69.10   30.35 "
      "  15.17      0\n"
      "     4194304        524288     float    none      -1   120.50   34.81   17.40      0   119.80   35.01 "
      "  17.50      0\n"
      "# Out of bounds values : 0 OK\n"
      "# Avg bus bandwidth    : 14.7\n"
      "#\n"
      "# Collective test concluded: all_gather_perf\n";
  auto rows = read_nccl_tests(dir.write("ag.txt", text));
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].op == Collective::all_gather);
  CHECK(rows[0].ranks == 2);
  CHECK(rows[0].nodes == 2);
  CHECK(rows[0].system == "A100");
  CHECK(rows[2].bytes == 4194304);
  CHECK(rows[2].seconds == doctest::Approx(120.5e-6));
  CHECK(rows[2].line == 13);
  // no op named anywhere: all_reduce
  std::string plain = text;
  plain.replace(plain.find("all_gather_perf"), 15, "done");
  CHECK(read_nccl_tests(dir.write("plain.txt", plain))[0].op == Collective::all_reduce);
  // a broken time field names file and line
  std::string broken = text;
  broken.replace(broken.find("70.00"), 5, "7O.00");
  auto msg = input_error([&] { read_nccl_tests(dir.write("broken.txt", broken)); });
  CHECK(has(msg, "broken.txt:12"));
  CHECK(has(msg, "'time'"));
  CHECK(has(input_error([&] { read_nccl_tests(dir.write("hdr.txt", "# nThread 1\n# nothing here\n")); }),
            "no nccl-tests result table"));
}

TEST_CASE("collective reader: aicb CSV") {
  TempDir dir("aicb");
  const std::string head =
      "comm_type,comm_group,comm_group_size,msg_size,stage,dst,src,additional,_elapsed_time,algbw,busbw,"
      "count\n";
  const std::string path = dir.write(
      "a.csv",
      head +
          "CommType.all_reduce,CommGroup.tp_group,2,16777216,step,None,None,,0.187904,89.285,156.255,1\n"
          "CommType.epoch_end,None,None,0,,None,None,,0.0,0.0,0.0,1\n"
          "CommType.all_to_all,CommGroup.ep_group,None,8388608,fwd,None,None,,0.1,80,80,1\n"
          "CommType.all_gather,CommGroup.dp_group,4,1000,fwd,None,None,,0.05,0.02,0.015,1\n");
  auto rows = read_aicb_csv(path);
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].op == Collective::all_reduce);
  CHECK(rows[0].ranks == 2);
  CHECK(rows[0].seconds == doctest::Approx(0.187904e-3));  // milliseconds
  CHECK(rows[0].system == "A100");
  CHECK(rows[1].line == 5);
  auto msg = input_error([&] {
    read_aicb_csv(dir.write(
        "b.csv", head + "CommType.all_reduce,CommGroup.tp_group,2,lots,step,None,None,,0.1,1,1,1\n"));
  });
  CHECK(has(msg, "b.csv:2"));
  CHECK(has(msg, "msg_size"));
  CHECK(has(input_error([&] { read_aicb_csv(dir.write("c.csv", "a,b\n1,2\n")); }), "comm_type"));
}
