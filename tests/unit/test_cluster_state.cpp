// ClusterState: resource bookkeeping (whole and fractional GPUs, CPU, memory), the segment-tree
// first_fit_node and ever_fits reasons on a hand-made cluster (the randomized property tests are in
// test_cluster_state_random.cpp). No SimGrid.
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
