// Placement policies: a randomized property test of every placer against brute force on random
// clusters and requests (the hand-built cases are in test_placement.cpp). No SimGrid.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "tests/placement_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;
using fleetsim::test::make;
using fleetsim::test::per_node;
using fleetsim::test::pool;
using fleetsim::test::spec_of;

namespace {

const char* const kTypes[] = {"V100", "A100-80GB", "T4"};

ClusterSpec random_spec(std::mt19937& rng) {
  std::uniform_int_distribution<int> npools(1, 3), nodes(1, 8), gpus(0, 8), cpus(4, 64), mem(16, 256),
      type(0, 2), per_leaf(1, 4);
  std::vector<PoolSpec> pools;
  const int np = npools(rng);
  for (int i = 0; i < np; ++i) {
    int g = gpus(rng);
    if (i == 0 && g == 0) g = 8;
    pools.push_back(pool("p" + std::to_string(i), nodes(rng), g, kTypes[type(rng)], cpus(rng), mem(rng)));
  }
  return spec_of(pools, per_leaf(rng));
}

Request random_request(std::mt19937& rng, const ClusterState& s) {
  std::uniform_int_distribution<int> pct(0, 99), gpus(1, 20), milli(1, 999), per_cpu(0, 32), per_mem(0, 64),
      type(0, 3);
  Request r;
  r.gpus = pct(rng) < 5 ? 0 : gpus(rng);
  if (r.gpus > 4 && pct(rng) < 50) r.gpus = 1 + r.gpus % 4;  // many small requests
  if (r.gpus > 0 && pct(rng) < 25) {
    r.milli = milli(rng);
    r.gpus = std::min(r.gpus, 3);
    r.single_node = pct(rng) < 80;  // as the simulation builds them; sometimes without the flag
  } else {
    r.milli = r.gpus > 0 ? 1000 : 0;
    r.single_node = pct(rng) < 25;
  }
  const int t = type(rng);
  if (t < s.type_count() && pct(rng) < 35) r.types = TypeMask{1} << t;
  if (pct(rng) < 5) r.types = TypeMask{1} << 30;
  const int share = std::max(r.gpus, 1);
  if (pct(rng) < 50) r.cpu_milli = 250.0 * per_cpu(rng) * share;
  if (pct(rng) < 30) r.memory_mib = 1024.0 * per_mem(rng) * share;
  return r;
}

/// "k GPUs of r fit node n now", recomputed from the raw per-GPU shares.
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

/// Most GPUs of a whole-GPU request node n can take now.
int brute_usable(const ClusterState& s, int n, const Request& r) {
  for (int k = s.node_gpus(n); k > 0; --k)
    if (brute_fits(s, n, r, k)) return k;
  return 0;
}

long long node_free_milli(const ClusterState& s, int n) {
  long long f = 0;
  for (int g = 0; g < s.node_gpus(n); ++g) f += s.gpu_free_milli(n, g);
  return f;
}

/// Every property a returned allocation must have.
void check_valid(const ClusterState& s, const Request& r, const Allocation& a) {
  CHECK(a.cpu_milli == doctest::Approx(r.cpu_milli));
  CHECK(a.memory_mib == doctest::Approx(r.memory_mib));
  std::set<int> nodes, leaves;
  for (const auto& sl : a.slots) {
    REQUIRE(sl.node >= 0);
    REQUIRE(sl.node < s.node_count());
    nodes.insert(sl.node);
    leaves.insert(s.node_leaf(sl.node));
  }
  CHECK(a.nodes == static_cast<int>(nodes.size()));
  CHECK(a.leaves == static_cast<int>(leaves.size()));
  if (r.gpus == 0) {
    REQUIRE(a.slots.size() == 1);
    CHECK(a.slots[0].gpu == -1);
    CHECK(brute_fits(s, a.slots[0].node, r, 0));
    return;
  }
  REQUIRE(static_cast<int>(a.slots.size()) == r.gpus);
  std::set<std::pair<int, int>> gpus;
  for (const auto& sl : a.slots) {
    REQUIRE(sl.gpu >= 0);
    REQUIRE(sl.gpu < s.node_gpus(sl.node));
    CHECK((r.types & (TypeMask{1} << s.node_type(sl.node))) != 0);
    CHECK(sl.milli == (r.whole() ? 1000 : r.milli));
    CHECK(s.gpu_free_milli(sl.node, sl.gpu) >= sl.milli);
    CHECK(gpus.insert({sl.node, sl.gpu}).second);  // distinct GPUs
  }
  for (const auto& [n, k] : per_node(a)) CHECK(brute_fits(s, n, r, k));  // GPUs, CPU and memory share
  if (r.single_node || !r.whole()) CHECK(nodes.size() == 1);
}

}  // namespace

TEST_CASE("placement: random states and requests give valid allocations, nullopt only when infeasible") {
  int placed = 0, refused = 0, spread = 0;
  for (unsigned seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    const ClusterSpec spec = random_spec(rng);
    ClusterState s(spec);
    auto ff = make("first-fit");
    auto co = make("consolidate");
    std::vector<Allocation> live;
    std::uniform_int_distribution<int> pct(0, 99);
    for (int step = 0; step < 400; ++step) {
      const Request r = random_request(rng, s);
      CAPTURE(step);
      CAPTURE(r.gpus);
      CAPTURE(r.milli);
      CAPTURE(r.types);
      CAPTURE(r.cpu_milli);
      CAPTURE(r.memory_mib);
      CAPTURE(r.single_node);

      // Brute force: the first node that fits alone, the best-fit node, and the usable total.
      int first = -1, best = -1;
      long long best_left = 0;
      long long usable = 0;
      std::map<int, std::vector<int>> usable_by_leaf;
      for (int n = 0; n < s.node_count(); ++n) {
        if (brute_fits(s, n, r, r.gpus)) {
          if (first < 0) first = n;
          const long long left = node_free_milli(s, n) - static_cast<long long>(r.gpus) * r.milli;
          if (best < 0 || left < best_left) {
            best = n;
            best_left = left;
          }
        }
        if (r.gpus > 0 && r.whole()) {
          const int u = brute_usable(s, n, r);
          usable += u;
          if (u > 0) usable_by_leaf[s.node_leaf(n)].push_back(u);
        }
      }
      const bool may_spread = !r.single_node && r.whole() && r.gpus > 1;
      const bool feasible = first >= 0 || (may_spread && usable >= r.gpus);
      // Fewest nodes any single leaf needs (taking its emptiest nodes first), or -1.
      int leaf_nodes = -1;
      for (auto& [leaf, us] : usable_by_leaf) {
        std::sort(us.rbegin(), us.rend());
        int need = r.gpus, used = 0;
        for (int u : us) {
          if (need <= 0) break;
          need -= u;
          ++used;
        }
        if (need <= 0 && (leaf_nodes < 0 || used < leaf_nodes)) leaf_nodes = used;
      }

      const long long used_before = s.used_milli();
      const auto a_ff = ff->place(r, s);
      const auto a_co = co->place(r, s);
      CHECK(s.used_milli() == used_before);
      CHECK(a_ff.has_value() == feasible);
      CHECK(a_co.has_value() == feasible);
      if (a_ff) {
        check_valid(s, r, *a_ff);
        if (first >= 0) {
          CHECK(per_node(*a_ff).size() == 1);
          CHECK(a_ff->slots[0].node == first);
        } else {
          // Index-order spread: every node before the last one used gives all it can.
          const auto taken = per_node(*a_ff);
          const int last = taken.rbegin()->first;
          for (int n = 0; n < last; ++n) {
            const auto it = taken.find(n);
            CHECK((it == taken.end() ? 0 : it->second) == brute_usable(s, n, r));
          }
        }
      }
      if (a_co) {
        check_valid(s, r, *a_co);
        if (best >= 0) {
          CHECK(per_node(*a_co).size() == 1);
          CHECK(a_co->slots[0].node == best);
        } else if (leaf_nodes > 0) {
          CHECK(a_co->leaves == 1);  // one leaf suffices: no spanning
          CHECK(a_co->nodes == leaf_nodes);
        } else {
          CHECK(a_co->leaves >= 2);
        }
        if (best < 0) ++spread;
      }
      if (feasible) {
        ++placed;
      } else {
        ++refused;
      }

      // Evolve the state: keep one of the allocations, or release an old one.
      if (a_co && pct(rng) < 65) {
        const Allocation& keep = (!a_ff || pct(rng) < 50) ? *a_co : *a_ff;
        s.allocate(keep);
        live.push_back(keep);
      } else if (!live.empty() && pct(rng) < 70) {
        std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
        const std::size_t i = pick(rng);
        s.release(live[i]);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
      for (int n = 0; n < s.node_count(); ++n) {
        REQUIRE(s.cpu_free(n) >= -1e-6);
        REQUIRE(s.mem_free(n) >= -1e-6);
        for (int g = 0; g < s.node_gpus(n); ++g) {
          REQUIRE(s.gpu_free_milli(n, g) >= 0);
          REQUIRE(s.gpu_free_milli(n, g) <= 1000);
        }
      }
    }
  }
  MESSAGE("placed " << placed << ", refused " << refused << ", consolidate spread " << spread);
  // The random cases exercise every branch.
  CHECK(placed > 1000);
  CHECK(refused > 200);
  CHECK(spread > 50);
}
