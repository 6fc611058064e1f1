// Tensor- and expert-parallel serving layouts: the collectives between a replica's GPUs
// (models/collective/serving_links.hpp) against Vidur's measured NCCL calls with the sizes split into
// fitted and held-out halves, hand-derived PCIe prices and a TP=2 decode step over PCIe, the TP=k
// layer derived from the TP=1 profile against Vidur's measured TP rows, and the busiest expert-parallel
// rank under a skewed expert popularity.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "models/collective/collective_model.hpp"
#include "models/collective/serving_links.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/serving/parallel_layout.hpp"
#include "models/serving/step_model.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;
namespace fs = std::filesystem;

namespace {

const std::string kNetwork = "serving/vidur-profiling/network";
const std::string kCompute = "serving/vidur-profiling/compute";
const std::string kData = std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/serving/";

using CurveKey = std::tuple<std::string, std::string, int, int>;  // system, link, op, ranks

std::map<CurveKey, std::vector<std::pair<double, double>>> vidur_curves() {
  std::map<CurveKey, std::vector<std::pair<double, double>>> curves;
  std::vector<fs::path> files;
  for (const auto& setup : fs::directory_iterator(test::shared_path(kNetwork)))
    for (const auto& f : fs::directory_iterator(setup.path()))
      if (f.path().extension() == ".csv") files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files)
    for (const auto& s : read_vidur_network(f.string()))
      if (s.nodes == 1 && s.ranks > 1)
        curves[{s.system, s.link, static_cast<int>(s.op), s.ranks}].emplace_back(s.bytes, s.seconds);
  for (auto& [key, rows] : curves) std::sort(rows.begin(), rows.end());
  return curves;
}

double band_seconds(const std::vector<CollectiveBand>& bands, Collective op, int ranks, double bytes) {
  CollectiveCurve c;
  c.bands = bands;
  const CollectiveBand& b = c.band_for(bytes);
  return b.latency_s + bus_factor(op, ranks) * bytes / (b.busbw_gbs * 1e9);
}

GpuSpec pcie_gpu(int generation) {
  GpuSpec g;
  g.name = "PCIeCard";
  g.pcie_gen = generation;
  return g;
}

}  // namespace

TEST_CASE("serving links: regime fit on half of Vidur's message sizes, checked on the held-out half") {
  test::require_shared(kNetwork);
  // Per curve (GPU, link, op, ranks; one server): the distinct sizes in order, even positions
  // fitted, odd positions held out; the held-out rows from 4 KiB up are predicted.
  int curves = 0;
  long rows = 0, within = 0;
  for (const auto& [key, xt] : vidur_curves()) {
    const auto op = static_cast<Collective>(std::get<2>(key));
    const int ranks = std::get<3>(key);
    std::vector<double> sizes;
    for (const auto& r : xt)
      if (sizes.empty() || r.first != sizes.back()) sizes.push_back(r.first);
    std::vector<std::pair<double, double>> fit, held;
    for (const auto& r : xt) {
      const auto pos = std::lower_bound(sizes.begin(), sizes.end(), r.first) - sizes.begin();
      (pos % 2 == 0 ? fit : held).push_back(r);
    }
    const auto bands = fit_regimes(fit, bus_factor(op, ranks));
    std::vector<double> ape;
    for (const auto& [bytes, seconds] : held)
      if (bytes >= 4096) ape.push_back(std::abs(band_seconds(bands, op, ranks, bytes) / seconds - 1));
    REQUIRE(!ape.empty());
    std::sort(ape.begin(), ape.end());
    const double median = ape[ape.size() / 2];
    const auto ok = std::count_if(ape.begin(), ape.end(), [](double e) { return e <= 0.10; });
    MESSAGE(std::get<0>(key) << " " << std::get<1>(key) << " " << to_string(op) << " x" << ranks << ": "
                             << bands.size() << " bands, held-out " << ape.size() << " rows, median APE "
                             << fmt(100 * median, 1) << "%, within 10%: " << ok << " ("
                             << fmt(100.0 * ok / ape.size(), 1) << "%)");
    CHECK(median <= 0.10);
    ++curves;
    rows += static_cast<long>(ape.size());
    within += ok;
  }
  CHECK(curves >= 14);
  MESSAGE("all curves: " << within << " of " << rows << " held-out rows within 10% ("
                         << fmt(100.0 * within / rows, 1) << "%)");
  CHECK(within >= 0.85 * rows);
}

TEST_CASE("serving links: the built-in curves are the regime fit of the shared measurements") {
  test::require_shared(kNetwork);
  std::vector<CollectiveSample> samples;
  for (const auto& setup : fs::directory_iterator(test::shared_path(kNetwork)))
    for (const auto& f : fs::directory_iterator(setup.path()))
      if (f.path().extension() == ".csv")
        for (auto& s : read_vidur_network(f.path().string())) samples.push_back(std::move(s));
  const CollectiveCalibration refit = fit_collectives(samples, CollectiveFit::regimes);
  const CollectiveCalibration built = vidur_link_calibration();
  int matched = 0;
  for (const auto& c : refit.curves) {
    if (c.nodes != 1) continue;
    const auto it = std::find_if(built.curves.begin(), built.curves.end(), [&](const CollectiveCurve& b) {
      return b.system == c.system && b.link == c.link && b.op == c.op && b.ranks == c.ranks;
    });
    INFO(c.system << " " << c.link << " " << to_string(c.op) << " x" << c.ranks);
    REQUIRE(it != built.curves.end());
    REQUIRE(it->bands.size() == c.bands.size());
    for (std::size_t i = 0; i < c.bands.size(); ++i) {
      CHECK(it->bands[i].min_bytes == c.bands[i].min_bytes);
      CHECK(it->bands[i].latency_s == doctest::Approx(c.bands[i].latency_s).epsilon(1e-9));
      CHECK(it->bands[i].busbw_gbs == doctest::Approx(c.bands[i].busbw_gbs).epsilon(1e-9));
    }
    ++matched;
  }
  CHECK(matched == static_cast<int>(built.curves.size()));
}

TEST_CASE("serving links: PCIe without measurements, hand-derived") {
  // PCIe Gen4 x16: 31.5 GB/s a direction x 0.86 payload = 27.09 GB/s, 1 us a hop (P2P). NCCL's ring
  // on 2 GPUs: 2 hops for an all-reduce, bus factor 1; LL 6.6 us + 2 x 1 us, 40% of the link (LL's
  // half payload); Simple 8.4 us + 2 x 5.7 us, 80%; no LL128 on PCIe.
  const ReplicaLinks p2p(pcie_gpu(4), LinkKind::pcie_p2p);
  CHECK(p2p.fabric().intra_gbs == doctest::Approx(27.09));
  CHECK(p2p.source(Collective::all_reduce, 2).starts_with("analytic"));
  // A 128-sequence decode step of a 5120-hidden model: 1,310,720 bytes. LL: 8.6 + 120.96 us;
  // Simple: 19.8 + 1310720 / 21.672e9 = 19.8 + 60.48 = 80.28 us (taken).
  CHECK(p2p.seconds(Collective::all_reduce, 1310720, 2) == doctest::Approx(80.28e-6).epsilon(1e-3));
  // One sequence: 10,240 bytes. LL: 8.6 + 0.945 = 9.545 us (taken); Simple 20.27 us.
  CHECK(p2p.seconds(Collective::all_reduce, 10240, 2) == doctest::Approx(9.545e-6).epsilon(1e-3));
  // Without P2P every chunk and flag crosses PCIe twice: 13.545 GB/s, 2 us a hop.
  // 10,240 bytes: LL 6.6 + 4 + 10240 / 5.418e9 = 12.49 us.
  const ReplicaLinks host(pcie_gpu(4), LinkKind::pcie_host);
  CHECK(host.seconds(Collective::all_reduce, 10240, 2) == doctest::Approx(12.49e-6).epsilon(1e-3));
  CHECK(p2p.seconds(Collective::all_reduce, 0, 2) == 0);
  CHECK(p2p.seconds(Collective::all_reduce, 4096, 1) == 0);
  // The catalog's GeForce and RTX PRO cards stage through the host; A100/H100 SXM use NVSwitch curves.
  CHECK(default_link_kind(gpu_spec("RTX4090")) == LinkKind::pcie_host);
  CHECK(default_link_kind(gpu_spec("RTXPRO6000")) == LinkKind::pcie_host);
  const ReplicaLinks h100(gpu_spec("H100"), default_link_kind(gpu_spec("H100")));
  CHECK(h100.source(Collective::all_reduce, 2) == "measured H100 nvswitch");
}

TEST_CASE("serving links: a TP=2 decode step over PCIe, hand-derived") {
  // tiny: 2 layers, hidden 8, vocabulary 16. Three decodes: 2 x 2 + 1 all-reduces of 3 x 8 x 2 = 48
  // bytes (LL: 6.6 + 2 x 1 us + 48 / 10.836e9 = 8.6044 us) and the all-gather of 3 x 16 x 2 = 96 bytes
  // of logits (LL ring, 1 hop, bus factor 1/2: 6.6 + 1 + 48 / 10.836e9 = 7.6044 us).
  ServingStepOptions opt;
  opt.links = std::make_shared<const ReplicaLinks>(pcie_gpu(4), LinkKind::pcie_p2p);
  const auto m = ServingStepModel::load(kData + "tiny/bf16", kData + "tiny-config.json", 2, opt);
  const auto b = m->breakdown(BatchShape{{}, {16, 16, 16}});
  CHECK(b.allreduce_s == doctest::Approx(5 * 8.6044e-6 + 7.6044e-6).epsilon(1e-4));
  // The TP=1 step has none; the sharded GEMMs make the TP=2 compute no slower than TP=1's.
  const auto one = ServingStepModel::load(kData + "tiny/bf16", kData + "tiny-config.json", 1);
  const auto b1 = one->breakdown(BatchShape{{}, {16, 16, 16}});
  CHECK(b1.allreduce_s == 0);
  CHECK(b.dense_s <= b1.dense_s);
}

TEST_CASE("serving links: busiest expert-parallel rank under a skewed expert popularity") {
  // 64 tokens, top-2 of 8 experts on 2 ranks (4 experts each): 128 token-expert pairs, 64 a rank on
  // average. Routing noise: per token k (1/r)(1 - 1/r)(E - k)/(E - 1) = 2 x 1/4 x 6/7 = 0.428571,
  // x 64 = 27.4286. Popularity cv 0.5: 128 x 0.5 / sqrt(8 x 2) = 16, squared 256. sd = sqrt(283.4286)
  // = 16.8354; E[max of 2] = 0.5641896 sd / sqrt(1/2) = 13.4327: 77.43 pairs.
  CHECK(serving::busiest_rank_pairs(64, 8, 2, 2, 0.5) == doctest::Approx(77.4327).epsilon(1e-4));
  // Uniform popularity: the routing noise alone, 64 + 0.5641896 x 5.23723 / 0.707107 = 68.179.
  CHECK(serving::busiest_rank_pairs(64, 8, 2, 2, 0.0) == doctest::Approx(68.179).epsilon(1e-4));
  // Never more than every token on the rank's experts: 4 tokens x min(2, 4) = 8.
  CHECK(serving::busiest_rank_pairs(4, 8, 2, 2, 50.0) == doctest::Approx(8));
  // One rank: all pairs.
  CHECK(serving::busiest_rank_pairs(64, 8, 2, 1, 0.5) == doctest::Approx(128));
  // The step: the skewed MoE layer is slower than the uniform one, the busiest rank setting it.
  ServingStepOptions opt;
  opt.data_parallel = 2;
  opt.expert_parallel = true;
  const std::string profile = kData + "tiny-moe/bf16", config = kData + "tiny-moe-config.json";
  const auto uniform = ServingStepModel::load(profile, config, 1, opt);
  opt.expert_popularity_cv = 1.0;
  const auto skewed = ServingStepModel::load(profile, config, 1, opt);
  const BatchShape batch{{}, std::vector<int>(32, 16)};
  CHECK(skewed->breakdown(batch).moe_s > uniform->breakdown(batch).moe_s);
}

TEST_CASE("serving links: TP=2 and TP=4 layers derived from TP=1 against Vidur's measured rows") {
  test::require_shared(kCompute);
  // Vidur's mlp.csv: per-operator medians (ms) by num_tokens and num_tensor_parallel_workers. The
  // step model's rule (models/serving/parallel_layout.hpp), fitted on the TP=1 rows only: the
  // residual norms, the add and the embedding keep their time; every other operator keeps the
  // cheapest TP=1 kernel time c and shrinks the rest by k: c + (t - c) / k.
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(test::shared_path(kCompute)))
    if (e.path().filename() == "mlp.csv") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  long rows = 0, within = 0;
  int tables = 0;
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    std::getline(in, line);
    std::vector<std::string> header;
    for (const auto& h : split(line, ',')) header.emplace_back(trim(h));
    std::vector<std::pair<std::size_t, std::string>> ops;
    std::size_t c_tokens = header.size(), c_tp = header.size();
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i].starts_with("time_stats.") && header[i].ends_with(".median"))
        ops.emplace_back(i, header[i].substr(11, header[i].size() - 18));
      if (header[i] == "num_tokens") c_tokens = i;
      if (header[i] == "num_tensor_parallel_workers") c_tp = i;
    }
    REQUIRE(c_tokens < header.size());
    REQUIRE(c_tp < header.size());
    std::map<std::pair<int, int>, std::map<std::string, double>> by;  // (tp, tokens) -> op -> ms
    while (std::getline(in, line)) {
      const auto v = split(line, ',');
      if (v.size() != header.size()) continue;
      auto& row = by[{std::stoi(std::string(v[c_tp])), std::stoi(std::string(v[c_tokens]))}];
      for (const auto& [i, name] : ops)
        if (!trim(v[i]).empty()) row[name] = std::stod(std::string(v[i]));
    }
    double floor = INFINITY;
    for (const auto& [key, row] : by)
      if (key.first == 1)
        for (const auto& [name, ms] : row) floor = std::min(floor, ms);
    if (!std::isfinite(floor)) continue;
    const auto replicated = [](const std::string& op) {
      return op == "input_layernorm" || op == "post_attention_layernorm" || op == "add" || op == "emb";
    };
    for (const int tp : {2, 4}) {
      std::vector<double> ape;
      for (const auto& [key, row] : by) {
        if (key.first != tp) continue;
        const auto base = by.find({1, key.second});
        if (base == by.end()) continue;
        double measured = 0, derived = 0;
        for (const auto& [name, ms] : row) {
          const auto b = base->second.find(name);
          if (b == base->second.end()) continue;
          measured += ms;
          derived += replicated(name) ? b->second : serving::Shard{static_cast<double>(tp), floor}(b->second);
        }
        if (measured > 0) ape.push_back(std::abs(derived / measured - 1));
      }
      if (ape.empty()) continue;
      double mean = 0;
      for (const double e : ape) mean += e / static_cast<double>(ape.size());
      const auto ok = std::count_if(ape.begin(), ape.end(), [](double e) { return e <= 0.10; });
      const std::string name = fs::relative(f, test::shared_path(kCompute)).parent_path().string();
      MESSAGE(name << " TP" << tp << ": " << ape.size() << " rows, mean APE " << fmt(100 * mean, 1)
                   << "%, within 10%: " << fmt(100.0 * ok / ape.size(), 1) << "%");
      CHECK(mean <= 0.10);
      rows += static_cast<long>(ape.size());
      within += ok;
      ++tables;
    }
  }
  CHECK(tables >= 20);
  MESSAGE("all: " << within << " of " << rows << " TP=2/4 rows within 10% (" << fmt(100.0 * within / rows, 1)
                  << "%)");
  CHECK(within >= 0.85 * rows);
}
