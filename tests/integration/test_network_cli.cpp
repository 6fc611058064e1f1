// Network fidelity end to end through the fleetsim binary: a job alone keeps the collective
// model's all-reduce time and the delay fidelity's completion time (across leaves and inside a
// node); two jobs sharing a 2:1 uplink each see their communication doubled; the chunked run is
// compared with an iteration-by-iteration run; links.csv / link_tiers.csv / summary.json "network";
// bad values name their key.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace {

struct Cluster {
  int nodes = 4, gpus = 1, per_leaf = 2;
  double oversubscription = 2.0;
  std::string policy = "fifo";
};

std::string scenario(const Cluster& c, const std::string& fidelity) {
  std::ostringstream s;
  s << "seed = 7\n[cluster]\n[[cluster.pool]]\nname = \"p\"\nnodes = " << c.nodes
    << "\ngpus_per_node = " << c.gpus
    << "\ngpu = \"V100\"\n[cluster.network]\nnodes_per_leaf = " << c.per_leaf
    << "\noversubscription = " << c.oversubscription << "\nnic_gbps = 100\n"
    << "[workload]\nformat = \"csv\"\npath = \"trace.csv\"\n[workload.columns]\nsubmit = \"submit\"\n"
    << "duration = \"duration\"\ngpus = \"gpus\"\n[scheduler]\npolicy = \"" << c.policy
    << "\"\nplacement = \"first-fit\"\n"
    << "[execution]\nfidelity = \"" << fidelity << "\"\n";
  return s.str();
}

/// `fleetsim run` of a scenario file with extra --set arguments into `out`, which it returns.
std::filesystem::path run_file(const std::string& file, const std::filesystem::path& out,
                               const std::string& sets = "") {
  const auto r = run_fleetsim("run " + file + " --quiet --out " + out.string() + " " + sets);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  return out;
}

/// Runs the scenario with extra --set arguments into dir/out_<tag>; returns that folder.
std::filesystem::path run(const std::filesystem::path& dir, const Cluster& c, const std::string& fidelity,
                          const std::string& tag, const std::string& sets = "") {
  write_file(dir / "s.toml", scenario(c, fidelity));
  return run_file((dir / "s.toml").string(), dir / ("out_" + tag), sets);
}

/// Gigabytes over all links in an output folder's links.csv (its last column).
double links_gb(const std::filesystem::path& out) {
  std::istringstream in(read_file(out / "links.csv"));
  std::string line;
  std::getline(in, line);
  double gb = 0;
  while (std::getline(in, line)) gb += std::stod(line.substr(line.rfind(',') + 1));
  return gb;
}

/// Column `name` of jobs.csv, one value per job (job ids have no commas here).
std::vector<double> column(const std::filesystem::path& out, const std::string& name) {
  std::istringstream in(read_file(out / "jobs.csv"));
  std::string line;
  std::getline(in, line);
  int col = -1, k = 0;
  std::istringstream h(line);
  for (std::string f; std::getline(h, f, ','); ++k)
    if (f == name) col = k;
  REQUIRE_MESSAGE(col >= 0, name);
  std::vector<double> v;
  while (std::getline(in, line)) {
    std::istringstream row(line);
    std::string f;
    for (int i = 0; i <= col; ++i) std::getline(row, f, ',');
    v.push_back(std::stod(f));
  }
  return v;
}

/// Sum of column `name` of jobs.csv.
double total(const std::filesystem::path& out, const std::string& name) {
  const auto v = column(out, name);
  return std::accumulate(v.begin(), v.end(), 0.0);
}

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
  const auto delay = run(dir, Cluster{}, "delay", "delay");
  const auto net = run(dir, Cluster{}, "network", "net");
  CHECK(column(net, "jct_s") == column(delay, "jct_s"));
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

// The fabric fidelity (fluid max-min rates, sim/network/fabric_fidelity.hpp) against delay and network.

TEST_CASE("fabric cli: a job alone keeps the delay timing exactly, across leaves and inside a node") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n5000,700,4\n");
  for (const Cluster& c : {Cluster{}, Cluster{2, 4, 1, 2.0}}) {
    const auto delay = run(dir, c, "delay", "delay");
    const auto fabric = run(dir, c, "fabric", "fabric");
    CHECK(column(fabric, "jct_s") == column(delay, "jct_s"));
    CHECK(column(fabric, "end_s") == column(delay, "end_s"));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: a non-blocking fabric with one job per leaf shows no slowdown") {
  const auto dir = temp_dir("netcli");
  // 8 nodes x 2 GPUs, 2 nodes per leaf, 1:1: first-fit puts each 4-GPU job on its own leaf.
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,4\n0,1200,4\n0,900,4\n0,1500,4\n");
  const Cluster c{8, 2, 2, 1.0};
  const auto delay = run(dir, c, "delay", "delay");
  const auto fabric = run(dir, c, "fabric", "fabric");
  CHECK(column(fabric, "jct_s") == column(delay, "jct_s"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: two jobs sharing a NIC and a 2 to 1 uplink - slowed, the same bytes and report") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,3\n0,1000,3\n");
  const Cluster c{3, 2, 1, 2.0};
  const auto net = run(dir, c, "network", "net", "--set execution.chunk_jitter=0");
  const auto fabric = run(dir, c, "fabric", "fabric");
  const auto a = column(fabric, "jct_s"), b = column(net, "jct_s");
  REQUIRE(a.size() == 2);
  // In phase (equal chunks), the network fidelity's ptasks always overlap (communication doubled);
  // the fabric fidelity lets each use what the other leaves idle while it computes: slowed, less so.
  for (std::size_t k = 0; k < 2; ++k) {
    MESSAGE("job " << k << ": fabric " << a[k] << " s, network " << b[k] << " s");
    CHECK(a[k] > 1000);
    CHECK(a[k] <= b[k] * (1 + 1e-9));
  }
  // The same report: node 1's uplink tops links.csv, both jobs on the fabric, the same bytes.
  const std::string links = read_file(fabric / "links.csv");
  const std::string first = links.substr(links.find('\n') + 1, links.find('\n', links.find('\n') + 1));
  CHECK(first.find("leaf-1-uplink") != std::string::npos);
  CHECK(links_gb(fabric) == doctest::Approx(links_gb(net)).epsilon(1e-3));
  const auto sa = nlohmann::json::parse(read_file(fabric / "summary.json"));
  const auto sb = nlohmann::json::parse(read_file(net / "summary.json"));
  CHECK(sa["network"]["jobs_on_fabric"] == 2);
  CHECK(sa["network"]["ptasks"] == 0);
  for (const auto& [tier, v] : sb["network"]["tiers"].items()) CHECK(sa["network"]["tiers"].contains(tier));
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: mean JCT within a few percent of the network fidelity on a contended platform") {
  const auto dir = temp_dir("netcli");
  // 6 nodes x 2 GPUs, 2 nodes per leaf, 4:1 uplinks; jobs arriving out of phase, spanning leaves.
  write_file(dir / "trace.csv",
             "submit,duration,gpus\n0,1000,3\n40,800,3\n90,1200,5\n300,600,3\n700,900,4\n1100,500,3\n");
  const Cluster c{6, 2, 2, 4.0};
  const auto net = run(dir, c, "network", "net");
  const auto fabric = run(dir, c, "fabric", "fabric");
  const auto delay = run(dir, c, "delay", "delay");
  const double jobs = static_cast<double>(column(net, "jct_s").size());
  const double mn = total(net, "jct_s") / jobs, mf = total(fabric, "jct_s") / jobs,
               md = total(delay, "jct_s") / jobs;
  MESSAGE("mean JCT: delay " << md << " s, network " << mn << " s, fabric " << mf << " s");
  CHECK(mn > md);  // contended: the network fidelity slows jobs down
  CHECK(mf > md);
  CHECK(std::abs(mf - mn) / mn < 0.05);
  std::filesystem::remove_all(dir);
}

// tests/bench/network-1k-steady.toml: 40 long 16- and 32-GPU jobs randomly placed on 1,024 GPUs at
// 4:1, none queued, so both fidelities place every job alike and their communication times compare
// job by job, free of schedule chaos. Measured (README "Fidelity"): network within 1% of 256 chunks,
// fabric optimistic on communication here (joint on max-min -7.5% over 10 seeds, the default -10.1%),
// 1-2% on mean JCT. The bounds pin that known gap so that a change to either fidelity shows.
TEST_CASE("fabric cli: steady heavy contention - same placements, communication within the measured gap") {
  const auto dir = temp_dir("netcli");
  const std::string file = std::string(FLEETSIM_SOURCE_DIR) + "/tests/bench/network-1k-steady.toml";
  auto run_steady = [&](const std::string& tag, const std::string& sets) {
    return run_file(file, dir / tag, sets);
  };
  const auto delay = run_steady("delay", "--set execution.fidelity=delay");
  const auto net = run_steady("network", "--set execution.fidelity=network");
  const std::string max_min = " --set execution.fabric_allocation=max-min";
  const auto joint =
      run_steady("joint", "--set execution.fidelity=fabric --set execution.fabric_sharing=joint" + max_min);
  const auto worst = run_steady(
      "worst", "--set execution.fidelity=fabric --set execution.fabric_sharing=worst-link" + max_min);
  const auto cycle = run_steady("default", "--set execution.fidelity=fabric");
  CHECK(column(net, "start_s") == column(joint, "start_s"));
  CHECK(column(net, "nodes") == column(joint, "nodes"));
  CHECK(column(net, "start_s") == column(worst, "start_s"));
  CHECK(column(net, "wait_s") == std::vector<double>(40, 0.0));
  const double sn = total(net, "comm_s"), sj = total(joint, "comm_s"), sw = total(worst, "comm_s");
  const double tn = total(net, "jct_s"), tj = total(joint, "jct_s"), td = total(delay, "jct_s");
  MESSAGE("communication over network's: joint " << sj / sn << ", worst-link " << sw / sn
                                                 << "; mean JCT over delay: network " << tn / td << ", joint "
                                                 << tj / td);
  CHECK(tn / td > 1.05);  // heavily contended: the network fidelity slows jobs by 8%
  // worst-link counts a sharer whose rate another link sets by its mean load only: optimistic
  CHECK(sw / sn > 0.80);
  CHECK(sw / sn < 0.95);  // measured 0.871 (0.877 on the fair-bottleneck allocation)
  // joint lets those sharers come and go too, each once for all the ring's links it crosses
  CHECK(sj / sn > 0.90);
  CHECK(sj / sn < 0.98);  // measured 0.937 (0.940 on the fair-bottleneck allocation)
  CHECK(tj > td);
  CHECK(std::abs(tj / tn - 1) < 0.03);  // measured -1.4% (-1.3% on the fair-bottleneck allocation)
  // the default, joint-cycle on fair bottleneck, weighs each ring's time per byte towards the arrival
  // field by its share of time talking: more optimistic here, where every ring talks much of its time
  // (10 seeds: -10.1% against joint's -7.5%)
  const double sc = total(cycle, "comm_s"), tc = total(cycle, "jct_s");
  MESSAGE("default: communication over network's " << sc / sn << ", mean JCT " << tc / tn - 1);
  CHECK(sc / sn > 0.85);
  CHECK(sc / sn < sj / sn);             // measured 0.907
  CHECK(std::abs(tc / tn - 1) < 0.03);  // measured -2.1%  std::filesystem::remove_all(dir);
}

// tests/bench/network-1k-steady-mix.toml: 16 long jobs of 2 to 16 nodes (seed 1), randomly placed at
// 4:1, none queued. summary.json's network.comm_s_by_nodes sums jobs.csv's comm_s by the nodes each
// ring spans. On max-min, joint overcharges the narrow rings and undercharges the wide ones (1.106 for
// 2 nodes, 0.761 for 9-16; 40 seeds: +10.9% and -13.6%, README "Fidelity"): the network fidelity's
// SimGrid solver favours rings that cross few links. The fair-bottleneck allocation moves the rates
// towards that solver (1.081 and 0.874 here; 40 seeds: +5.1% and -4.6%); the default, joint-cycle on
// it, 1.052 and 0.903. The bounds pin all three.
TEST_CASE(
    "fabric cli: communication by ring width - the summary's buckets, and the allocations and sharings") {
  const auto dir = temp_dir("netcli");
  const std::string file = std::string(FLEETSIM_SOURCE_DIR) + "/tests/bench/network-1k-steady-mix.toml";
  const auto net = run_file(file, dir / "network", "--set execution.fidelity=network");
  const auto joint =
      run_file(file, dir / "joint", "--set execution.fidelity=fabric --set execution.fabric_sharing=joint");
  const auto max_min = run_file(file, dir / "max-min",
                                "--set execution.fidelity=fabric --set execution.fabric_sharing=joint "
                                "--set execution.fabric_allocation=max-min");  // the default until stop 32
  const auto cycle = run_file(file, dir / "cycle", "--set execution.fidelity=fabric");  // the default
  CHECK(column(net, "start_s") == column(joint, "start_s"));
  CHECK(column(net, "nodes") == column(joint, "nodes"));
  CHECK(column(net, "start_s") == column(max_min, "start_s"));
  auto by_width = [](const std::filesystem::path& out) {
    const auto j = nlohmann::json::parse(read_file(out / "summary.json"))["network"];
    // jobs.csv's comm_s summed by width equals the summary's buckets
    const auto nodes = column(out, "nodes"), comm = column(out, "comm_s");
    std::map<std::string, double> sums;
    for (std::size_t i = 0; i < nodes.size(); ++i)
      sums[nodes[i] <= 1   ? "1"
           : nodes[i] <= 2 ? "2"
           : nodes[i] <= 4 ? "3-4"
           : nodes[i] <= 8 ? "5-8"
                           : "9-16"] += comm[i];
    double all = 0;
    for (const auto& [bucket, v] : j["comm_s_by_nodes"].items()) {
      CAPTURE(bucket);
      CHECK(v.get<double>() == doctest::Approx(sums[bucket]).epsilon(1e-6));
      all += v.get<double>();
    }
    CHECK(all == doctest::Approx(j["comm_s_total"].get<double>()).epsilon(1e-12));
    return j["comm_s_by_nodes"];
  };
  const auto n = by_width(net), f = by_width(joint), m = by_width(max_min), c = by_width(cycle);
  REQUIRE(n["2"].get<double>() > 0);
  REQUIRE(n["9-16"].get<double>() > 0);
  auto ratio = [&](const nlohmann::json& x, const char* bucket) {
    return x[bucket].get<double>() / n[bucket].get<double>();
  };
  MESSAGE("over network: fair bottleneck 2 nodes " << ratio(f, "2") << ", 9-16 nodes " << ratio(f, "9-16")
                                                   << "; max-min " << ratio(m, "2") << ", "
                                                   << ratio(m, "9-16"));
  CHECK(ratio(m, "2") > 1.05);
  CHECK(ratio(m, "2") < 1.20);  // measured 1.106
  CHECK(ratio(m, "9-16") > 0.65);
  CHECK(ratio(m, "9-16") < 0.85);  // measured 0.761
  CHECK(ratio(f, "2") > 1.00);
  CHECK(ratio(f, "2") < ratio(m, "2"));  // measured 1.081
  CHECK(ratio(f, "9-16") > ratio(m, "9-16") + 0.05);
  CHECK(ratio(f, "9-16") < 0.95);  // measured 0.874
  // the default, joint-cycle on fair bottleneck: 1.052 and 0.903 here (40 seeds: +2.7% and -5.5%,
  // against joint's +5.1% and -4.6%)
  MESSAGE("default (joint-cycle on fair bottleneck): 2 nodes " << ratio(c, "2") << ", 9-16 nodes "
                                                               << ratio(c, "9-16"));
  CHECK(ratio(c, "2") > 1.00);
  CHECK(ratio(c, "2") < ratio(f, "2"));  // measured 1.052
  CHECK(ratio(c, "9-16") > 0.85);
  CHECK(ratio(c, "9-16") < 0.95);  // measured 0.903
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: doubling every link's capacity never slows a job") {
  const auto dir = temp_dir("netcli");
  std::mt19937 rng(3);
  for (int trial = 0; trial < 3; ++trial) {
    // Jobs that all fit at once (12 GPUs, at most 12 asked): the same placements at both speeds.
    std::ostringstream trace;
    trace << "submit,duration,gpus\n";
    int left = 12;
    while (left >= 2) {
      const int g = std::min(left, 2 + static_cast<int>(rng() % 3));
      trace << "0," << 300 + rng() % 1000 << ',' << g << '\n';
      left -= g;
    }
    write_file(dir / "trace.csv", trace.str());
    const Cluster c{6, 2, 2, 3.0};
    const auto slow = run(dir, c, "fabric", "slow");
    const auto fast = run(dir, c, "fabric", "fast",
                          "--set cluster.network.nic_gbps=200 --set cluster.network.intra_node_gbps=4800");
    const auto a = column(slow, "jct_s"), b = column(fast, "jct_s");
    REQUIRE(a.size() == b.size());
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(b[k] <= a[k] * (1 + 1e-12));
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: an unknown fidelity lists the valid ones") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n");
  write_file(dir / "s.toml", scenario(Cluster{}, "packet"));
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet");
  CHECK(r.code == 2);
  CHECK(r.output.find("execution.fidelity") != std::string::npos);
  for (const char* name : {"delay", "network", "fabric"}) CHECK(r.output.find(name) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("fabric cli: an unknown fabric sharing lists the valid ones and the closest") {
  const auto dir = temp_dir("netcli");
  write_file(dir / "trace.csv", "submit,duration,gpus\n0,1000,2\n");
  write_file(dir / "s.toml", scenario(Cluster{}, "fabric"));
  const auto r = run_fleetsim("run " + (dir / "s.toml").string() + " --quiet --out " +
                              (dir / "out").string() + " --set execution.fabric_sharing=worstlink");
  CHECK(r.code == 2);
  CHECK(r.output.find("execution.fabric_sharing") != std::string::npos);
  CHECK(r.output.find("did you mean 'worst-link'") != std::string::npos);
  for (const char* name : {"max-min", "mean-field", "arrival", "worst-link", "joint"})
    CHECK(r.output.find(name) != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(dir / "out" / "jobs.csv"));  // no partial output
  std::filesystem::remove_all(dir);
}
