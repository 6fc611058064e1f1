// Network fidelity end to end through the fleetsim binary: a job alone keeps the collective
// model's all-reduce time and the delay fidelity's completion time (across leaves and inside a
// node); two jobs sharing a 2:1 uplink each see their communication doubled; the chunked run is
// compared with an iteration-by-iteration run; links.csv / link_tiers.csv / summary.json "network";
// bad values name their key. The fabric fidelity's cases: test_fabric_cli.cpp.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "tests/network_cli_util.hpp"

using fleetsim::test::check_delay_timing;
using fleetsim::test::Cluster;
using fleetsim::test::column;
using fleetsim::test::links_gb;
using fleetsim::test::read_file;
using fleetsim::test::run;
using fleetsim::test::run_fleetsim;
using fleetsim::test::scenario;
using fleetsim::test::temp_dir;
using fleetsim::test::total;
using fleetsim::test::write_file;

namespace {

/// The collective model's ring all-reduce time for 1 GB (the default gradient) on V100s.
double model_allreduce_s(int ranks, int nodes) {
  fleetsim::CollectiveDesc d;
  d.bytes = 1e9;
  d.ranks = ranks;
  d.nodes = nodes;
  const fleetsim::GpuSpec* g = fleetsim::find_gpu("V100");
  REQUIRE(g != nullptr);
  return fleetsim::predict_analytic(d, fleetsim::fabric_for(*g, 100, 1, std::max(1, ranks / nodes))).seconds;
}

constexpr double kCompute = 0.5;  // execution.iteration_compute_s default

}  // namespace

TEST_CASE("network cli: one job alone across leaves keeps the delay time and the model's all-reduce time") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n");
  const Cluster c{2, 1, 1, 2.0};  // one node per leaf: the ring crosses the spine
  const auto delay = run(dir, c, "delay", "delay");
  const auto net = run(dir, c, "network", "net");
  CHECK(column(net, "jct_s")[0] == doctest::Approx(column(delay, "jct_s")[0]).epsilon(1e-6));
  const double t = model_allreduce_s(2, 2);
  const double iterations = 1000 / (kCompute + t);
  CHECK(column(net, "comm_s")[0] == doctest::Approx(iterations * t).epsilon(0.02));
  // Delay runs write no network columns or files.
  CHECK(read_file(delay / "jobs.csv").find("comm_s") == std::string::npos);
  CHECK_FALSE(std::filesystem::exists(delay / "links.csv"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: one 8-GPU job alone inside a node keeps the model's all-reduce time") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,8\n");
  const auto net = run(dir, Cluster{1, 8, 1, 1.0}, "network", "net");
  CHECK(column(net, "jct_s")[0] == doctest::Approx(1000).epsilon(1e-6));
  const double t = model_allreduce_s(8, 1);
  CHECK(column(net, "comm_s")[0] == doctest::Approx(1000 / (kCompute + t) * t).epsilon(0.02));
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: jobs in disjoint leaves finish as in the delay fidelity") {
  const auto dir = temp_dir("netcli");
  // first-fit: job 0 on nodes 0-1 (leaf 0), job 1 on nodes 2-3 (leaf 1).
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n0,1500,2\n");
  check_delay_timing(dir, Cluster{}, "network");
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: two jobs sharing a node's NIC and a 2:1 uplink double their communication") {
  const auto dir = temp_dir("netcli");
  // 3 nodes x 2 GPUs, one node per leaf. first-fit: job 0 on node 0 (2) + node 1 (1), job 1 on
  // node 1 (1) + node 2 (2): both rings cross node 1's NIC and leaf uplink (2:1: 50 Gbit/s).
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,3\n0,1000,3\n");
  const Cluster c{3, 2, 1, 2.0};
  const auto delay = run(dir, c, "delay", "delay");
  CHECK(column(delay, "jct_s") == std::vector<double>{1000, 1000});
  const auto net = run(dir, c, "network", "net", "--set execution.chunk_jitter=0");
  // In phase (same start, same iteration, equal chunks): each gets half the shared links all the
  // time, so each job's communication share 1000 * t / (c + t) of the run takes twice as long.
  const auto alone = run(dir, Cluster{3, 2, 1, 2.0}, "network", "alone", "--set workload.limit=1");
  const double comm_alone = column(alone, "comm_s")[0];
  for (double jct : column(net, "jct_s")) CHECK(jct == doctest::Approx(1000 + comm_alone).epsilon(1e-4));
  for (double comm : column(net, "comm_s")) CHECK(comm == doctest::Approx(2 * comm_alone).epsilon(1e-4));
  // With the default jittered chunks the two jobs' blocks drift out of phase: each still talks
  // longer than alone, but overlaps only part of the time.
  const auto jittered = run(dir, c, "network", "jittered");
  for (double comm : column(jittered, "comm_s")) {
    CHECK(comm > comm_alone * 1.05);
    CHECK(comm < 2 * comm_alone * 0.98);
  }
  // Node 1's NIC and uplink carry both jobs: they top links.csv, at full use while both talk.
  const std::string links = read_file(net / "links.csv");
  CHECK(links.rfind("link,tier,capacity_gbps,mean_util,p99_util,gb\n", 0) == 0);
  const std::string first = links.substr(links.find('\n') + 1, links.find('\n', links.find('\n') + 1));
  CHECK(first.find("leaf-1-uplink") != std::string::npos);
  const auto summary = nlohmann::json::parse(read_file(net / "summary.json"));
  REQUIRE(summary.contains("network"));
  CHECK(summary["network"]["jobs_on_fabric"] == 2);
  CHECK(summary["network"]["hottest_links"].size() == 5);
  CHECK(summary["network"]["hottest_links"][0]["p99_util"].get<double>() ==
        doctest::Approx(1.0).epsilon(1e-3));
  CHECK(read_file(net / "link_tiers.csv").rfind("time_s,tier,util\n", 0) == 0);
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: jittered chunks are deterministic and differ from equal ones") {
  const auto dir = temp_dir("netcli");
  // Five 3-GPU jobs contending on 4 nodes of 2 GPUs, one node per leaf, 2:1 uplinks.
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,3\n20,800,3\n35,900,2\n300,600,3\n310,500,3\n");
  const Cluster c{4, 2, 1, 2.0};
  const auto a = run(dir, c, "network", "a");
  const auto b = run(dir, c, "network", "b");
  const auto equal = run(dir, c, "network", "equal", "--set execution.chunk_jitter=0");
  CHECK(read_file(a / "jobs.csv") == read_file(b / "jobs.csv"));
  CHECK(read_file(a / "links.csv") == read_file(b / "links.csv"));
  CHECK(read_file(a / "jobs.csv") != read_file(equal / "jobs.csv"));
  // The jitter moves when blocks overlap, not how much is sent: the fabric carries the same bytes.
  const double gb = links_gb(a);
  CHECK(gb > 0);
  CHECK(gb == doctest::Approx(links_gb(equal)).epsilon(1e-6));
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: chunked against iteration-by-iteration communication (the chunking error)") {
  const auto dir = temp_dir("netcli");
  // Out of phase: job 1 arrives 100.25 s later; both cross node 1's NIC and uplink.
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,3\n100.25,700,3\n");
  const Cluster c{3, 2, 1, 2.0};
  const auto chunked = run(dir, c, "network", "chunked");  // chunks_shared = 16, chunk_jitter = 0.5
  const auto equal = run(dir, c, "network", "equal", "--set execution.chunk_jitter=0");
  const auto fine = run(dir, c, "network", "fine", "--set execution.chunks_shared=1000000");
  const auto a = column(chunked, "jct_s"), e = column(equal, "jct_s"), b = column(fine, "jct_s");
  REQUIRE(a.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    const double err = (a[k] - b[k]) / b[k], err_equal = (e[k] - b[k]) / b[k];
    MESSAGE("job " << k << ": chunked JCT " << a[k] << " s (equal chunks " << e[k] << " s), per-iteration "
                   << b[k] << " s, error " << 100 * err << "% (equal chunks " << 100 * err_equal << "%)");
    // Measured: +1.3% and +1.8% (equal chunks: +2.7% and +3.9%): block-wise communication overlaps
    // more than interleaved iterations, so the chunked model is pessimistic, and less so when the
    // blocks do not stay in phase. Pinned, so that a change is noticed.
    CHECK(err >= 0);
    CHECK(err < 0.025);
    CHECK(err_equal > err);
    CHECK(err_equal < 0.05);
  }
  const auto sc = nlohmann::json::parse(read_file(chunked / "summary.json"));
  const auto sf = nlohmann::json::parse(read_file(fine / "summary.json"));
  CHECK(sc["network"]["ptasks"].get<long>() * 20 < sf["network"]["ptasks"].get<long>());
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: preemption in the compute and in the all-reduce phase keeps the delay timing") {
  const auto dir = temp_dir("netcli");
  // srtf on 4 GPUs: job 0 (3 GPUs) is preempted at 50 s by job 1 (in its compute phase: alone it
  // runs one chunk, all-reduce last) and at 960 s by job 2 (in its all-reduce, which started at
  // 930 s); each restart costs 30 s. Alone on the fabric, every job keeps its delay timing, and
  // job 0's all-reduce time still adds up to its share of the run (the part cut short is owed).
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,3\n50,100,3\n960,50,3\n");
  Cluster c{2, 2, 1, 2.0, "srtf"};
  const auto delay = run(dir, c, "delay", "delay");
  const auto net = run(dir, c, "network", "net");
  CHECK(column(delay, "end_s") == std::vector<double>{1210, 150, 1010});
  const auto ends = column(net, "end_s");
  REQUIRE(ends.size() == 3);
  for (std::size_t k = 0; k < 3; ++k)
    CHECK(ends[k] == doctest::Approx(column(delay, "end_s")[k]).epsilon(1e-6));
  CHECK(column(net, "restarts")[0] == 2);
  const double t = model_allreduce_s(3, 2);
  CHECK(column(net, "comm_s")[0] == doctest::Approx(1000 * t / (kCompute + t)).epsilon(1e-4));
  std::filesystem::remove_all(dir);
}

TEST_CASE("network cli: bad fidelity settings name the key") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n");
  write_file(dir / "s.toml", scenario(Cluster{}, "packet"));
  auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  CHECK(r.code == 2);
  CHECK(r.output.find("execution.fidelity") != std::string::npos);
  write_file(dir / "s.toml", scenario(Cluster{}, "network"));
  r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet --set execution.chunks_shared=0");
  CHECK(r.code == 2);
  CHECK(r.output.find("execution.chunks_shared") != std::string::npos);
  r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet --set execution.chunk_jitter=1");
  CHECK(r.code == 2);
  CHECK(r.output.find("execution.chunk_jitter") != std::string::npos);
  std::filesystem::remove_all(dir);
}
