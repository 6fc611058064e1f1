// ClusterState: randomized property tests of allocate/release, first_fit_node and ever_fits against
// brute-force recomputation on random clusters. No SimGrid.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "tests/cluster_state_util.hpp"

using namespace fleetsim;
using fleetsim::test::kTol;
using fleetsim::test::pool;

namespace {

const char* const kTypes[] = {"V100", "A100-80GB", "T4", "H100"};

ClusterSpec random_spec(std::mt19937& rng) {
  std::uniform_int_distribution<int> npools(1, 4), nodes(1, 9), gpus(0, 8), cpus(2, 64), mem(8, 512),
      type(0, 3), per_leaf(1, 5);
  std::vector<PoolSpec> pools;
  const int np = npools(rng);
  for (int i = 0; i < np; ++i) {
    int g = gpus(rng);
    if (i == 0 && g == 0) g = 4;  // at least one GPU pool
    pools.push_back(pool("p" + std::to_string(i), nodes(rng), g, kTypes[type(rng)], cpus(rng), mem(rng)));
  }
  NetworkSpec net;
  net.nodes_per_leaf = per_leaf(rng);
  return expand_pools(pools, net);
}

Request random_request(std::mt19937& rng, const ClusterState& s) {
  std::uniform_int_distribution<int> pct(0, 99), gpus(1, 9), milli(1, 999), per_cpu(0, 24), per_mem(0, 64),
      type(0, 5);
  Request r;
  r.gpus = pct(rng) < 8 ? 0 : gpus(rng);
  if (r.gpus > 0 && pct(rng) < 40) {
    r.milli = pct(rng) < 50 ? milli(rng) : 100 * (1 + pct(rng) % 9);
    r.gpus = std::min(r.gpus, 3);
  } else {
    r.milli = r.gpus > 0 ? 1000 : 0;
  }
  const int t = type(rng);
  if (t < s.type_count() && pct(rng) < 40) r.types = TypeMask{1} << t;
  if (pct(rng) < 10) r.types = TypeMask{1} << 20;  // a type the cluster does not have
  const int share = std::max(r.gpus, 1);
  if (pct(rng) < 50) r.cpu_milli = 250.0 * per_cpu(rng) * share;
  if (pct(rng) < 40) r.memory_mib = 1024.0 * per_mem(rng) * share;
  r.single_node = pct(rng) < 30;
  return r;
}

/// Independent recomputation of "k GPUs of r fit node n now" from the raw per-GPU shares.
bool brute_fits(const ClusterState& s, int n, const Request& r, int k) {
  const double frac = r.gpus > 0 ? static_cast<double>(k) / r.gpus : 1.0;
  if (s.cpu_free(n) + 1e-9 < r.cpu_milli * frac || s.mem_free(n) + 1e-9 < r.memory_mib * frac) return false;
  if (k == 0) return true;
  if (s.node_gpus(n) == 0 || (r.types & (TypeMask{1} << s.node_type(n))) == 0) return false;
  const int need = r.whole() ? 1000 : r.milli;
  int ok = 0;
  for (int g = 0; g < s.node_gpus(n); ++g) ok += s.gpu_free_milli(n, g) >= need ? 1 : 0;
  return ok >= k;
}

/// Everything the state reports, recomputed from its per-GPU shares and from the live allocations.
void check_invariants(const ClusterState& s, const ClusterSpec& spec, const std::vector<Allocation>& live) {
  long long used = 0;
  std::vector<long long> used_on(static_cast<std::size_t>(s.node_count()), 0);
  std::vector<double> cpu_used(used_on.size(), 0), mem_used(used_on.size(), 0);
  std::vector<std::vector<int>> gpu_used(used_on.size());
  for (int n = 0; n < s.node_count(); ++n) gpu_used[static_cast<std::size_t>(n)].assign(s.node_gpus(n), 0);
  for (const auto& a : live) {
    int gpus = 0;
    for (const auto& sl : a.slots) gpus += sl.gpu >= 0 ? 1 : 0;
    for (const auto& sl : a.slots) {
      const auto n = static_cast<std::size_t>(sl.node);
      const double frac = gpus > 0 ? (sl.gpu >= 0 ? 1.0 / gpus : 0.0) : 1.0;
      cpu_used[n] += a.cpu_milli * frac;
      mem_used[n] += a.memory_mib * frac;
      if (sl.gpu >= 0) {
        gpu_used[n][static_cast<std::size_t>(sl.gpu)] += sl.milli;
        used += sl.milli;
      }
    }
  }
  REQUIRE(s.used_milli() == used);
  std::vector<int> whole_by_type(static_cast<std::size_t>(s.type_count()), 0);
  for (int n = 0; n < s.node_count(); ++n) {
    const auto ni = static_cast<std::size_t>(n);
    int whole = 0;
    for (int g = 0; g < s.node_gpus(n); ++g) {
      const int f = s.gpu_free_milli(n, g);
      REQUIRE(f >= 0);
      REQUIRE(f <= 1000);
      REQUIRE(f == 1000 - gpu_used[ni][static_cast<std::size_t>(g)]);
      whole += f == 1000 ? 1 : 0;
    }
    REQUIRE(s.free_whole(n) == whole);
    if (s.node_gpus(n) > 0) whole_by_type[static_cast<std::size_t>(s.node_type(n))] += whole;
    REQUIRE(s.cpu_free(n) >= -kTol);
    REQUIRE(s.mem_free(n) >= -kTol);
    REQUIRE(std::abs(s.cpu_free(n) - (spec.nodes[ni].cpu_milli - cpu_used[ni])) < kTol);
    REQUIRE(std::abs(s.mem_free(n) - (spec.nodes[ni].memory_mib - mem_used[ni])) < kTol);
  }
  for (int t = 0; t < s.type_count(); ++t)
    REQUIRE(s.free_whole_of(TypeMask{1} << t) == whole_by_type[static_cast<std::size_t>(t)]);
}

/// first_fit_node against a linear scan of fits_node and against the independent brute force.
void check_first_fit(const ClusterState& s, const Request& r, int from) {
  int linear = -1;
  for (int n = std::max(from, 0); n < s.node_count(); ++n) {
    if (s.fits_node(n, r)) {
      linear = n;
      break;
    }
  }
  int brute = -1;
  for (int n = std::max(from, 0); n < s.node_count(); ++n) {
    if (brute_fits(s, n, r, r.gpus)) {
      brute = n;
      break;
    }
  }
  CAPTURE(r.gpus);
  CAPTURE(r.milli);
  CAPTURE(r.types);
  CAPTURE(r.cpu_milli);
  CAPTURE(r.memory_mib);
  CAPTURE(from);
  REQUIRE(s.first_fit_node(r, from) == linear);
  REQUIRE(linear == brute);
}

/// A random allocation for r: one node via first_fit_node, or (whole GPUs) spread over nodes.
std::optional<Allocation> try_allocate(const ClusterState& s, const Request& r, std::mt19937& rng) {
  std::uniform_int_distribution<int> from_d(0, s.node_count());
  const int from = rng() % 2 == 0 ? 0 : from_d(rng);
  if (const int n = s.first_fit_node(r, from); n >= 0) {
    Allocation a;
    s.pick_on_node(n, r, r.gpus, a);
    s.finalize(r, a);
    return a;
  }
  if (r.single_node || !r.whole() || r.gpus <= 1) return std::nullopt;
  Allocation a;
  int need = r.gpus;
  for (int n = 0; n < s.node_count() && need > 0; ++n) {
    const int u = s.usable_whole(n, r);
    // usable_whole agrees with fits_part: u GPUs fit, u + 1 do not.
    REQUIRE(s.fits_part(n, r, u));
    if (u < s.node_gpus(n)) REQUIRE_FALSE(s.fits_part(n, r, u + 1));
    const int take = std::min(need, u);
    if (take <= 0) continue;
    s.pick_on_node(n, r, take, a);
    need -= take;
  }
  if (need > 0) return std::nullopt;
  s.finalize(r, a);
  return a;
}

void check_allocation_shape(const ClusterState& s, const Request& r, const Allocation& a) {
  if (r.gpus == 0) {
    REQUIRE(a.slots.size() == 1);
    REQUIRE(a.slots[0].gpu == -1);
    return;
  }
  REQUIRE(static_cast<int>(a.slots.size()) == r.gpus);
  std::vector<std::pair<int, int>> seen;
  for (const auto& sl : a.slots) {
    REQUIRE(sl.node >= 0);
    REQUIRE(sl.node < s.node_count());
    REQUIRE(sl.gpu >= 0);
    REQUIRE(sl.gpu < s.node_gpus(sl.node));
    REQUIRE((r.types & (TypeMask{1} << s.node_type(sl.node))) != 0);
    REQUIRE(sl.milli == (r.whole() ? 1000 : r.milli));
    REQUIRE(s.gpu_free_milli(sl.node, sl.gpu) >= sl.milli);
    seen.emplace_back(sl.node, sl.gpu);
  }
  std::sort(seen.begin(), seen.end());
  REQUIRE(std::adjacent_find(seen.begin(), seen.end()) == seen.end());  // distinct GPUs
}

}  // namespace

TEST_CASE("cluster state: random allocate and release keep the bookkeeping exact") {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const ClusterSpec spec = random_spec(rng);
    ClusterState s(spec);
    const ClusterState fresh(spec);
    std::vector<Allocation> live;
    std::uniform_int_distribution<int> pct(0, 99);
    int placed = 0, released = 0;
    for (int step = 0; step < 700; ++step) {
      if (live.empty() || pct(rng) < 60) {
        const Request r = random_request(rng, s);
        if (auto a = try_allocate(s, r, rng)) {
          check_allocation_shape(s, r, *a);
          s.allocate(*a);
          live.push_back(*a);
          ++placed;
        }
      } else {
        std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
        const std::size_t i = pick(rng);
        s.release(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
        ++released;
      }
      check_invariants(s, spec, live);
      for (int probe = 0; probe < 4; ++probe) {
        std::uniform_int_distribution<int> from_d(0, s.node_count() + 1);
        check_first_fit(s, random_request(rng, s), probe == 0 ? 0 : from_d(rng));
      }
    }
    CHECK(placed > 100);
    CHECK(released > 50);

    // Releasing everything (in random order) returns exactly to the initial state.
    std::shuffle(live.begin(), live.end(), rng);
    while (!live.empty()) {
      s.release(live.back());
      live.pop_back();
      check_invariants(s, spec, live);
    }
    CHECK(s.used_milli() == 0);
    for (int n = 0; n < s.node_count(); ++n) {
      CHECK(s.free_whole(n) == s.node_gpus(n));
      for (int g = 0; g < s.node_gpus(n); ++g) CHECK(s.gpu_free_milli(n, g) == 1000);
      CHECK(s.cpu_free(n) == doctest::Approx(fresh.cpu_free(n)));
      CHECK(s.mem_free(n) == doctest::Approx(fresh.mem_free(n)));
    }
    for (int t = 0; t < s.type_count(); ++t)
      CHECK(s.free_whole_of(TypeMask{1} << t) == fresh.free_whole_of(TypeMask{1} << t));
    for (int probe = 0; probe < 200; ++probe) {
      const Request r = random_request(rng, s);
      CHECK(s.first_fit_node(r) == fresh.first_fit_node(r));
    }
  }
}

TEST_CASE("cluster state: ever_fits agrees with placing on the empty cluster") {
  // A request ever fits iff it can be placed on the empty cluster: one node (first_fit_node), or,
  // for whole multi-node requests, spread over nodes by usable_whole.
  for (unsigned seed = 100; seed < 120; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const ClusterSpec spec = random_spec(rng);
    const ClusterState s(spec);
    for (int i = 0; i < 300; ++i) {
      const Request r = random_request(rng, s);
      bool placeable = s.first_fit_node(r) >= 0;
      if (!placeable && !r.single_node && r.whole() && r.gpus > 1) {
        int total = 0;
        for (int n = 0; n < s.node_count(); ++n) total += s.usable_whole(n, r);
        placeable = total >= r.gpus;
      }
      std::string why;
      CAPTURE(r.gpus);
      CAPTURE(r.milli);
      CAPTURE(r.types);
      CAPTURE(r.cpu_milli);
      CAPTURE(r.memory_mib);
      CAPTURE(r.single_node);
      const bool ever = s.ever_fits(r, why);
      // Fractional requests placed by the placers are single-node; ever_fits assumes that too when
      // single_node is set. A fractional request without the flag is treated like a spread request.
      if (!r.whole() && !r.single_node && r.gpus > 0) continue;
      CHECK(ever == placeable);
      if (!ever) CHECK_FALSE(why.empty());
    }
  }
}
