// ClusterState: resource bookkeeping (whole and fractional GPUs, CPU, memory), the segment-tree
// first_fit_node, ever_fits reasons, and a randomized property test of allocate/release against
// brute-force recomputation. No SimGrid.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/platform/cluster_spec.hpp"

using namespace fleetsim;

namespace {

constexpr double kTol = 1e-6;

PoolSpec pool(std::string name, int nodes, int gpus, std::string gpu, int cpus, double mem_gib) {
  PoolSpec p;
  p.name = std::move(name);
  p.nodes = nodes;
  p.gpus_per_node = gpus;
  p.gpu = std::move(gpu);
  p.cpus_per_node = cpus;
  p.memory_gib = mem_gib;
  return p;
}

/// Nodes 0-2: 4 x V100, 8 cores (8000 milli), 64 GiB (65536 MiB).
/// Nodes 3-4: 2 x A100-80GB, 16 cores (16000 milli), 128 GiB (131072 MiB).
/// Two nodes per leaf: leaves {0,1}, {2,3}, {4}.
ClusterSpec small_spec() {
  NetworkSpec net;
  net.nodes_per_leaf = 2;
  return expand_pools({pool("v", 3, 4, "V100", 8, 64), pool("a", 2, 2, "A100-80GB", 16, 128)}, net);
}

struct Fixture {
  ClusterSpec spec = small_spec();
  ClusterState s{spec};
  TypeMask V = TypeMask{1} << s.type_index("V100");
  TypeMask A = TypeMask{1} << s.type_index("A100-80GB");
};

Request req(int gpus, int milli = 1000, TypeMask types = ~TypeMask{0}, double cpu = 0, double mem = 0,
            bool single = false) {
  Request r;
  r.gpus = gpus;
  r.milli = milli;
  r.types = types;
  r.cpu_milli = cpu;
  r.memory_mib = mem;
  r.single_node = single;
  return r;
}

/// Place r on node n (precondition: fits_node), allocate and return the allocation.
Allocation place_on(ClusterState& s, int n, const Request& r) {
  REQUIRE(s.fits_node(n, r));
  Allocation a;
  s.pick_on_node(n, r, r.gpus, a);
  s.finalize(r, a);
  s.allocate(a);
  return a;
}

}  // namespace

TEST_CASE("cluster state: static facts of a two-pool cluster") {
  Fixture f;
  const ClusterState& s = f.s;
  CHECK(s.node_count() == 5);
  CHECK(s.type_count() == 2);
  CHECK(s.total_gpus() == 3 * 4 + 2 * 2);
  CHECK(s.type_name(s.type_index("V100")) == "V100");
  CHECK(s.type_index("H100") == -1);
  CHECK(s.node_type(0) == s.type_index("V100"));
  CHECK(s.node_type(4) == s.type_index("A100-80GB"));
  CHECK(s.node_gpus(2) == 4);
  CHECK(s.node_gpus(3) == 2);
  CHECK(s.node_leaf(0) == 0);
  CHECK(s.node_leaf(1) == 0);
  CHECK(s.node_leaf(2) == 1);
  CHECK(s.node_leaf(3) == 1);
  CHECK(s.node_leaf(4) == 2);
  CHECK(s.cpu_free(0) == doctest::Approx(8000));
  CHECK(s.mem_free(3) == doctest::Approx(131072));
  CHECK(s.used_milli() == 0);
}

TEST_CASE("cluster state: free_whole_of counts by type mask") {
  Fixture f;
  ClusterState& s = f.s;
  CHECK(s.free_whole_of(f.V) == 12);
  CHECK(s.free_whole_of(f.A) == 4);
  CHECK(s.free_whole_of(f.V | f.A) == 16);
  CHECK(s.free_whole_of(~TypeMask{0}) == 16);
  CHECK(s.free_whole_of(0) == 0);
  CHECK(s.free_whole_of(TypeMask{1} << 7) == 0);  // a type the cluster does not have

  const Allocation a = place_on(s, 1, req(3, 1000, f.V));
  CHECK(s.free_whole_of(f.V) == 9);
  CHECK(s.free_whole_of(f.A) == 4);
  // A half GPU makes that GPU no longer whole.
  const Allocation b = place_on(s, 3, req(1, 500, f.A));
  CHECK(s.free_whole_of(f.A) == 3);
  CHECK(s.free_whole(3) == 1);
  CHECK(s.used_milli() == 3000 + 500);
  s.release(b);
  CHECK(s.free_whole_of(f.A) == 4);
  s.release(a);
  CHECK(s.free_whole_of(f.V) == 12);
  CHECK(s.used_milli() == 0);
}

TEST_CASE("cluster state: fits_node respects GPU count, type, CPU and memory") {
  Fixture f;
  const ClusterState& s = f.s;
  CHECK(s.fits_node(0, req(4)));
  CHECK_FALSE(s.fits_node(0, req(5)));
  CHECK_FALSE(s.fits_node(0, req(1, 1000, f.A)));  // wrong type
  CHECK(s.fits_node(3, req(2, 1000, f.A)));
  CHECK_FALSE(s.fits_node(3, req(3, 1000, f.A)));
  // CPU: exactly the node's 8000 fits; one more thousandth does not (but an A100 node has 16000).
  CHECK(s.fits_node(0, req(1, 1000, ~TypeMask{0}, 8000)));
  CHECK_FALSE(s.fits_node(0, req(1, 1000, ~TypeMask{0}, 8001)));
  CHECK(s.fits_node(3, req(1, 1000, ~TypeMask{0}, 8001)));
  // Memory likewise.
  CHECK(s.fits_node(0, req(1, 1000, ~TypeMask{0}, 0, 65536)));
  CHECK_FALSE(s.fits_node(0, req(1, 1000, ~TypeMask{0}, 0, 65537)));
  CHECK(s.fits_node(4, req(1, 1000, ~TypeMask{0}, 0, 65537)));
  // CPU-only requests need only CPU and memory.
  CHECK(s.fits_node(0, req(0, 0, 0, 8000, 100)));
  CHECK_FALSE(s.fits_node(0, req(0, 0, 0, 9000)));
}

TEST_CASE("cluster state: fits_part and usable_whole split CPU and memory per GPU") {
  Fixture f;
  const ClusterState& s = f.s;
  // 4 GPUs with 16000 CPU milli: 4000 per GPU. A V100 node (8000) can host 2 of them.
  const Request r = req(4, 1000, ~TypeMask{0}, 16000);
  CHECK_FALSE(s.fits_node(0, r));
  CHECK(s.fits_part(0, r, 2));
  CHECK_FALSE(s.fits_part(0, r, 3));
  CHECK(s.usable_whole(0, r) == 2);
  CHECK(s.usable_whole(3, r) == 2);  // 16000 CPU would allow 4, but the node has 2 GPUs
  // Adding 40000 MiB per GPU: a V100 node (65536) hosts 1, an A100 node (131072) still 2.
  const Request m = req(4, 1000, ~TypeMask{0}, 16000, 160000);
  CHECK(s.usable_whole(0, m) == 1);
  CHECK(s.usable_whole(3, m) == 2);
  CHECK(s.usable_whole(3, req(4, 1000, f.V)) == 0);  // wrong type
}

TEST_CASE("cluster state: fractional shares share a GPU, best fit picks the fullest GPU that fits") {
  Fixture f;
  ClusterState& s = f.s;
  const Request half = req(1, 500, f.V, 0, 0, true);

  // First half: all four GPUs are free (1000), ties -> lowest index, GPU 0.
  const Allocation a1 = place_on(s, 0, half);
  REQUIRE(a1.slots.size() == 1);
  CHECK(a1.slots[0].node == 0);
  CHECK(a1.slots[0].gpu == 0);
  CHECK(a1.slots[0].milli == 500);
  CHECK(s.gpu_free_milli(0, 0) == 500);
  CHECK(s.free_whole(0) == 3);
  CHECK(s.free_whole_of(f.V) == 11);

  // Second half: GPU 0 (500 free) is fuller than GPUs 1-3 (1000) and still fits: it is shared.
  const Allocation a2 = place_on(s, 0, half);
  CHECK(a2.slots[0].gpu == 0);
  CHECK(s.gpu_free_milli(0, 0) == 0);
  CHECK(s.free_whole(0) == 3);
  CHECK(s.used_milli() == 1000);

  // 600 does not fit GPU 0 (0 free): it takes another GPU, the lowest-index whole one.
  const Allocation a3 = place_on(s, 0, req(1, 600, f.V, 0, 0, true));
  CHECK(a3.slots[0].gpu == 1);
  CHECK(s.gpu_free_milli(0, 1) == 400);
  CHECK(s.free_whole(0) == 2);
  CHECK(s.free_whole_of(f.V) == 10);

  // 400 fits GPU 1 exactly (the fullest that fits) rather than the whole GPUs 2 and 3.
  const Allocation a4 = place_on(s, 0, req(1, 400, f.V, 0, 0, true));
  CHECK(a4.slots[0].gpu == 1);
  CHECK(s.gpu_free_milli(0, 1) == 0);
  CHECK(s.free_whole(0) == 2);
  CHECK(s.used_milli() == 2000);

  // Releasing restores shares and whole counts.
  s.release(a2);
  CHECK(s.gpu_free_milli(0, 0) == 500);
  CHECK(s.free_whole(0) == 2);
  s.release(a1);
  CHECK(s.gpu_free_milli(0, 0) == 1000);
  CHECK(s.free_whole(0) == 3);
  CHECK(s.free_whole_of(f.V) == 11);
  s.release(a3);
  s.release(a4);
  CHECK(s.free_whole(0) == 4);
  CHECK(s.used_milli() == 0);
}

TEST_CASE("cluster state: best fit prefers the fullest GPU over a lower index") {
  Fixture f;
  ClusterState& s = f.s;
  // GPU 0 has 700 free, GPU 1 has 300 free.
  Allocation pre;
  pre.slots = {{2, 0, 300}, {2, 1, 700}};
  s.allocate(pre);
  CHECK(s.gpu_free_milli(2, 0) == 700);
  CHECK(s.gpu_free_milli(2, 1) == 300);

  Allocation a;
  s.pick_on_node(2, req(1, 250, f.V, 0, 0, true), 1, a);
  REQUIRE(a.slots.size() == 1);
  CHECK(a.slots[0].gpu == 1);  // 300 free: the fullest that fits

  Allocation b;
  s.pick_on_node(2, req(1, 400, f.V, 0, 0, true), 1, b);
  CHECK(b.slots[0].gpu == 0);  // 300 is too little; 700 is the fullest that fits

  // Two 300-milli GPUs of one request take two distinct GPUs: 1 (300) then 0 (700).
  Allocation c;
  s.pick_on_node(2, req(2, 300, f.V, 0, 0, true), 2, c);
  REQUIRE(c.slots.size() == 2);
  CHECK(c.slots[0].gpu == 1);
  CHECK(c.slots[1].gpu == 0);

  // Whole requests take the lowest-index whole GPUs (2 and 3), never shared ones.
  Allocation d;
  s.pick_on_node(2, req(2), 2, d);
  REQUIRE(d.slots.size() == 2);
  CHECK(d.slots[0].gpu == 2);
  CHECK(d.slots[1].gpu == 3);
  CHECK_FALSE(s.fits_node(2, req(3)));
}

TEST_CASE("cluster state: first_fit_node honours from, types, CPU and fullness") {
  Fixture f;
  ClusterState& s = f.s;
  const Request v1 = req(1, 1000, f.V);
  CHECK(s.first_fit_node(v1) == 0);
  CHECK(s.first_fit_node(v1, 1) == 1);
  CHECK(s.first_fit_node(v1, 2) == 2);
  CHECK(s.first_fit_node(v1, 3) == -1);  // nodes 3-4 are A100
  const Request a1 = req(1, 1000, f.A);
  CHECK(s.first_fit_node(a1) == 3);
  CHECK(s.first_fit_node(a1, 4) == 4);
  CHECK(s.first_fit_node(a1, 5) == -1);
  CHECK(s.first_fit_node(req(5)) == -1);                           // no node has 5 GPUs
  CHECK(s.first_fit_node(req(1, 1000, ~TypeMask{0}, 9000)) == 3);  // CPU: only A100 nodes
  CHECK(s.first_fit_node(req(0, 0, 0, 9000), 4) == 4);             // CPU-only request

  // Fill node 3 and one GPU of node 0: A requests move to node 4, 4-GPU requests to node 1.
  place_on(s, 3, req(2, 1000, f.A));
  CHECK(s.first_fit_node(a1) == 4);
  place_on(s, 0, req(1, 300, f.V, 0, 0, true));
  CHECK(s.first_fit_node(req(4)) == 1);
  CHECK(s.first_fit_node(req(3)) == 0);
  CHECK(s.first_fit_node(req(1, 700, f.V, 0, 0, true)) == 0);  // 700 free on GPU 0 or whole ones
  place_on(s, 4, req(1, 600, f.A, 0, 0, true));
  CHECK(s.first_fit_node(req(1, 500, f.A, 0, 0, true)) == 4);  // GPU 1 of node 4 is whole
  place_on(s, 4, req(1, 1000, f.A));
  CHECK(s.first_fit_node(req(1, 400, f.A, 0, 0, true)) == 4);  // 400 left on GPU 0
  CHECK(s.first_fit_node(req(1, 500, f.A, 0, 0, true)) == -1);
}

TEST_CASE("cluster state: ever_fits reasons") {
  Fixture f;
  const ClusterState& s = f.s;
  std::string why;

  // Fits.
  CHECK(s.ever_fits(req(16), why));
  CHECK(s.ever_fits(req(4, 1000, f.V, 0, 0, true), why));
  CHECK(s.ever_fits(req(0, 0, 0, 16000), why));
  CHECK(s.ever_fits(req(1, 1000, ~TypeMask{0}, 16000, 131072, true), why));

  // Type absent.
  why.clear();
  CHECK_FALSE(s.ever_fits(req(1, 1000, TypeMask{1} << 9), why));
  CHECK(why.find("no GPU of an allowed type") != std::string::npos);
  why.clear();
  CHECK_FALSE(s.ever_fits(req(1, 1000, 0), why));
  CHECK(why.find("no GPU of an allowed type") != std::string::npos);

  // Too many GPUs for one node.
  why.clear();
  CHECK_FALSE(s.ever_fits(req(5, 1000, ~TypeMask{0}, 0, 0, true), why));
  CHECK(why.find("needs 5 GPUs in one node") != std::string::npos);
  CHECK(why.find("has 4") != std::string::npos);
  why.clear();
  CHECK_FALSE(s.ever_fits(req(3, 1000, f.A, 0, 0, true), why));
  CHECK(why.find("has 2") != std::string::npos);

  // Too many GPUs for the cluster (of the allowed types).
  why.clear();
  CHECK_FALSE(s.ever_fits(req(17), why));
  CHECK(why.find("needs 17 GPUs; the cluster has 16") != std::string::npos);
  why.clear();
  CHECK_FALSE(s.ever_fits(req(5, 1000, f.A), why));
  CHECK(why.find("the cluster has 4") != std::string::npos);

  // CPU or memory larger than every node.
  why.clear();
  CHECK_FALSE(s.ever_fits(req(1, 1000, ~TypeMask{0}, 16001, 0, true), why));
  CHECK(why.find("CPU request exceeds every node") != std::string::npos);
  why.clear();
  CHECK_FALSE(s.ever_fits(req(0, 0, 0, 16001), why));
  CHECK(why.find("CPU") != std::string::npos);
  why.clear();
  CHECK_FALSE(s.ever_fits(req(1, 1000, ~TypeMask{0}, 0, 131073, true), why));
  CHECK(why.find("memory request exceeds every node") != std::string::npos);

  // Each resource fits some node, but not together: 4 GPUs only on V100 nodes (8000 CPU),
  // 16000 CPU only on A100 nodes (2 GPUs).
  why.clear();
  CHECK_FALSE(s.ever_fits(req(4, 1000, ~TypeMask{0}, 16000, 0, true), why));
  CHECK(why.find("no single node has enough GPUs, CPU and memory together") != std::string::npos);
}

TEST_CASE("cluster state: ever_fits of a multi-node request counts CPU and memory per GPU") {
  Fixture f;
  const ClusterState& s = f.s;
  std::string why;
  // 4000 CPU per GPU: each V100 node hosts min(4, 8000/4000) = 2, each A100 node min(2, 4) = 2.
  // The empty cluster hosts 3*2 + 2*2 = 10 such GPUs.
  CHECK(s.ever_fits(req(10, 1000, ~TypeMask{0}, 40000), why));
  why.clear();
  CHECK_FALSE(s.ever_fits(req(11, 1000, ~TypeMask{0}, 44000), why));
  CHECK_FALSE(why.empty());
  // 17000 CPU per GPU exceeds every node (16000 at most): never placeable, though GPUs suffice.
  why.clear();
  CHECK_FALSE(s.ever_fits(req(2, 1000, ~TypeMask{0}, 34000), why));
  CHECK_FALSE(why.empty());
  // Memory likewise: 70000 MiB per GPU fits only A100 nodes (131072 -> 1 each): 2 in all.
  CHECK(s.ever_fits(req(2, 1000, ~TypeMask{0}, 0, 140000), why));
  why.clear();
  CHECK_FALSE(s.ever_fits(req(3, 1000, ~TypeMask{0}, 0, 210000), why));
  CHECK(why.find("memory") != std::string::npos);
}

// ------------------------------------------------------------------------------------------------
// Property test: random allocate/release sequences keep the bookkeeping exact.

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
