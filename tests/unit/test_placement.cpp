// Placement policies through the registry: first-fit (lowest-index node, then index-order spread)
// and consolidate (best-fit node, then one leaf with the fewest nodes, leaves spanned only if
// needed). Hand-built states with the expected choice derived in comments, and a randomized property
// test against brute force. No SimGrid.
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

Request req(int gpus, int milli = 1000, TypeMask types = ~TypeMask{0}, bool single = false) {
  Request r;
  r.gpus = gpus;
  r.milli = milli;
  r.types = types;
  r.single_node = single;
  return r;
}

/// Occupy `count` whole GPUs of node n (lowest free indices first).
void occupy(ClusterState& s, int n, int count) {
  if (count == 0) return;
  Request r = req(count);
  Allocation a;
  REQUIRE(s.fits_part(n, r, count));
  s.pick_on_node(n, r, count, a);
  s.finalize(r, a);
  s.allocate(a);
}

/// Leave exactly free[i] whole GPUs free on node i.
void set_free(ClusterState& s, const std::vector<int>& free) {
  REQUIRE(static_cast<int>(free.size()) == s.node_count());
  for (int n = 0; n < s.node_count(); ++n) occupy(s, n, s.free_whole(n) - free[static_cast<std::size_t>(n)]);
}

/// GPUs taken per node, e.g. {{3, 4}, {4, 2}}.
}  // namespace

TEST_CASE("placement: registry lists the placers and suggests the closest unknown name") {
  std::vector<std::string> names;
  for (const auto& e : placers().entries()) {
    names.push_back(e.name);
    CHECK_FALSE(e.description.empty());
  }
  CHECK(std::find(names.begin(), names.end(), "first-fit") != names.end());
  CHECK(std::find(names.begin(), names.end(), "consolidate") != names.end());
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(placers().contains("first-fit"));
  CHECK_FALSE(placers().contains("best-fit-ish"));

  try {
    placers().create("frist-fit", PlacerParams{}, "s.toml", 12, "scheduler.placement");
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "s.toml");
    CHECK(e.line() == 12);
    CHECK(e.field() == "scheduler.placement");
    const std::string msg = e.what();
    CHECK(msg.find("unknown placement policy 'frist-fit'") != std::string::npos);
    CHECK(msg.find("did you mean 'first-fit'?") != std::string::npos);
    CHECK(msg.find("consolidate") != std::string::npos);  // valid names are listed
  }
  try {
    placers().create("consolidat", PlacerParams{});
    FAIL("expected InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("did you mean 'consolidate'?") != std::string::npos);
  }
}

TEST_CASE("placement: first-fit takes the lowest-index node that fits") {
  // 4 nodes x 4 GPUs; free GPUs 2, 3, 0, 4.
  ClusterState s(spec_of({pool("v", 4, 4)}, 2));
  set_free(s, {2, 3, 0, 4});
  const long long used = s.used_milli();
  auto ff = make("first-fit");

  auto a = ff->place(req(2), s);  // node 0 has 2 free: its GPUs 2 and 3
  REQUIRE(a);
  REQUIRE(a->slots.size() == 2);
  CHECK(a->slots[0].node == 0);
  CHECK(a->slots[0].gpu == 2);
  CHECK(a->slots[1].node == 0);
  CHECK(a->slots[1].gpu == 3);
  CHECK(a->nodes == 1);
  CHECK(a->leaves == 1);

  a = ff->place(req(3), s);  // node 0 has only 2: node 1
  REQUIRE(a);
  CHECK(per_node(*a) == std::map<int, int>{{1, 3}});

  a = ff->place(req(4), s);  // only node 3 has 4
  REQUIRE(a);
  CHECK(per_node(*a) == std::map<int, int>{{3, 4}});

  // Does not fit one node: spread in index order, node 0 (2), node 1 (3), node 3 (1).
  a = ff->place(req(6), s);
  REQUIRE(a);
  CHECK(per_node(*a) == std::map<int, int>{{0, 2}, {1, 3}, {3, 1}});
  CHECK(a->nodes == 3);
  CHECK(a->leaves == 2);  // nodes 0,1 on leaf 0; node 3 on leaf 1

  CHECK_FALSE(ff->place(req(10), s));  // 9 free
  CHECK(ff->place(req(9), s));
  CHECK(s.used_milli() == used);  // placing never changes the state
}

TEST_CASE("placement: consolidate picks the fitting node with the fewest free GPUs left") {
  // 4 nodes x 4 GPUs; free 4, 2, 3, 4.
  ClusterState s(spec_of({pool("v", 4, 4)}, 4));
  set_free(s, {4, 2, 3, 4});
  auto co = make("consolidate");
  auto ff = make("first-fit");

  // 2 GPUs: node 1 is left with 0, node 2 with 1, nodes 0/3 with 2 -> node 1 (first-fit: node 0).
  CHECK(per_node(*co->place(req(2), s)) == std::map<int, int>{{1, 2}});
  CHECK(per_node(*ff->place(req(2), s)) == std::map<int, int>{{0, 2}});
  // 3 GPUs: node 1 cannot; node 2 is left with 0, nodes 0/3 with 1 -> node 2.
  CHECK(per_node(*co->place(req(3), s)) == std::map<int, int>{{2, 3}});
  // 4 GPUs: nodes 0 and 3 both are left with 0 -> the lower index, node 0.
  CHECK(per_node(*co->place(req(4), s)) == std::map<int, int>{{0, 4}});
  // 1 GPU: node 1 is left with 1 (the least) -> node 1, its lowest free GPU (2).
  auto a = co->place(req(1), s);
  REQUIRE(a);
  REQUIRE(a->slots.size() == 1);
  CHECK(a->slots[0].node == 1);
  CHECK(a->slots[0].gpu == 2);
}

TEST_CASE("placement: consolidate places a fractional GPU on the fullest node and GPU") {
  ClusterState s(spec_of({pool("v", 3, 4)}, 4));
  // Node 1: 2 GPUs busy, GPU 2 has 300 free (700 used), GPU 3 whole: 1300 free in all.
  // Node 2: 1 GPU busy: 3000 free. Node 0: 4000 free.
  set_free(s, {4, 2, 3});
  Allocation part;
  part.slots = {{1, 2, 700}};
  s.allocate(part);
  auto co = make("consolidate");

  // 500 milli: node 1 leaves 800 (least); GPU 2 (300) is too small, so GPU 3.
  auto a = co->place(req(1, 500, ~TypeMask{0}, true), s);
  REQUIRE(a);
  REQUIRE(a->slots.size() == 1);
  CHECK(a->slots[0].node == 1);
  CHECK(a->slots[0].gpu == 3);
  CHECK(a->slots[0].milli == 500);
  // 250 milli: node 1 again; best fit is GPU 2 (300 free).
  a = co->place(req(1, 250, ~TypeMask{0}, true), s);
  REQUIRE(a);
  CHECK(a->slots[0].node == 1);
  CHECK(a->slots[0].gpu == 2);
  // first-fit: node 0, GPU 0.
  a = make("first-fit")->place(req(1, 250, ~TypeMask{0}, true), s);
  REQUIRE(a);
  CHECK(a->slots[0].node == 0);
  CHECK(a->slots[0].gpu == 0);
}

TEST_CASE("placement: consolidate spreads within one leaf, fewest nodes, then fewest left over") {
  // 6 nodes x 4 GPUs, 3 per leaf: leaf 0 = nodes 0-2, leaf 1 = nodes 3-5.
  ClusterState s(spec_of({pool("v", 6, 4)}, 3));
  auto co = make("consolidate");
  auto ff = make("first-fit");

  SUBCASE("equal node counts: the leaf with less left over") {
    // Free: leaf 0 = 3,3,3 (9); leaf 1 = 4,2,1 (7).
    set_free(s, {3, 3, 3, 4, 2, 1});
    // 6 GPUs fit no node. Leaf 0, emptiest first: 3+3 -> 2 nodes, 3 left over.
    // Leaf 1: 4+2 -> 2 nodes, 1 left over. Same node count -> leaf 1: node 3 (4) + node 4 (2).
    auto a = co->place(req(6), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{3, 4}, {4, 2}});
    CHECK(a->nodes == 2);
    CHECK(a->leaves == 1);
    // first-fit fills nodes in index order instead.
    CHECK(per_node(*ff->place(req(6), s)) == std::map<int, int>{{0, 3}, {1, 3}});
    // 7 GPUs: leaf 0 needs 3 nodes (3+3+1, 2 left), leaf 1 needs 3 (4+2+1, 0 left) -> leaf 1.
    a = co->place(req(7), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{3, 4}, {4, 2}, {5, 1}});
    CHECK(a->leaves == 1);
    // 9 GPUs: only leaf 0 has 9.
    a = co->place(req(9), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{0, 3}, {1, 3}, {2, 3}});
    CHECK(a->leaves == 1);
  }
  SUBCASE("fewer nodes beats less left over") {
    // Free: leaf 0 = 2,2,2 (6); leaf 1 = 4,3,0 (7).
    set_free(s, {2, 2, 2, 4, 3, 0});
    // 6 GPUs: leaf 0 needs 3 nodes (0 left); leaf 1 needs 2 (4 + 2 of 3, 1 left) -> leaf 1.
    auto a = co->place(req(6), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{3, 4}, {4, 2}});
  }
  SUBCASE("spans leaves only when no leaf suffices") {
    set_free(s, {3, 3, 3, 4, 2, 1});
    // 10 GPUs: leaf 0 has 9, leaf 1 has 7 -> both leaves, the bigger (leaf 0) first, then leaf 1's
    // emptiest node (node 3) for the last GPU.
    auto a = co->place(req(10), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{0, 3}, {1, 3}, {2, 3}, {3, 1}});
    CHECK(a->nodes == 4);
    CHECK(a->leaves == 2);
    a = co->place(req(16), s);  // everything
    REQUIRE(a);
    CHECK(a->slots.size() == 16);
    CHECK(a->nodes == 6);
    CHECK_FALSE(co->place(req(17), s));
    CHECK_FALSE(ff->place(req(17), s));
  }
}

TEST_CASE("placement: single-node and fractional requests never span nodes") {
  ClusterState s(spec_of({pool("v", 6, 4)}, 3));
  set_free(s, {3, 3, 3, 4, 2, 1});  // 16 free, at most 4 on a node
  for (const char* name : {"first-fit", "consolidate"}) {
    CAPTURE(name);
    auto p = make(name);
    CHECK_FALSE(p->place(req(5, 1000, ~TypeMask{0}, true), s));
    CHECK(p->place(req(5), s));  // the same request may span when allowed
    auto a = p->place(req(4, 1000, ~TypeMask{0}, true), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{3, 4}});
  }
  // Fractional GPUs are placed on one node even without the flag: 2 x 500 on 1-GPU nodes fails.
  ClusterState t(spec_of({pool("one", 3, 1)}, 3));
  for (const char* name : {"first-fit", "consolidate"}) {
    CAPTURE(name);
    auto p = make(name);
    CHECK_FALSE(p->place(req(2, 500), t));
    CHECK(p->place(req(2), t));  // whole GPUs spread
    CHECK(p->place(req(1, 500), t));
  }
}

TEST_CASE("placement: GPU type constraints are respected") {
  // Nodes 0-1: 4 x V100; nodes 2-3: 2 x A100-80GB; one leaf.
  ClusterState s(spec_of({pool("v", 2, 4, "V100"), pool("a", 2, 2, "A100-80GB")}, 4));
  const TypeMask V = TypeMask{1} << s.type_index("V100");
  const TypeMask A = TypeMask{1} << s.type_index("A100-80GB");
  for (const char* name : {"first-fit", "consolidate"}) {
    CAPTURE(name);
    auto p = make(name);
    auto a = p->place(req(2, 1000, A), s);  // node 2 (first A100 node; both A100 nodes tie)
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{2, 2}});
    a = p->place(req(3, 1000, A), s);  // 3 A100s: both A100 nodes, never the emptier V100 nodes
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{2, 2}, {3, 1}});
    a = p->place(req(1, 1000, V), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{0, 1}});
    a = p->place(req(1, 300, A, true), s);
    REQUIRE(a);
    CHECK(per_node(*a) == std::map<int, int>{{2, 1}});
    CHECK_FALSE(p->place(req(5, 1000, A), s));                 // only 4 A100s
    CHECK_FALSE(p->place(req(1, 1000, TypeMask{1} << 9), s));  // absent type
    CHECK_FALSE(p->place(req(1, 1000, 0), s));
    a = p->place(req(12, 1000, V | A), s);
    REQUIRE(a);
    CHECK(a->slots.size() == 12);
  }
}

TEST_CASE("placement: CPU and memory limit how many GPUs a node takes when spreading") {
  // 3 nodes x 4 GPUs, 8 cores each. 4 GPUs with 4000 CPU milli each: at most 2 per node.
  ClusterState s(spec_of({pool("v", 3, 4, "V100", 8, 64)}, 3));
  for (const char* name : {"first-fit", "consolidate"}) {
    CAPTURE(name);
    auto p = make(name);
    Request r = req(4);
    r.cpu_milli = 16000;
    auto a = p->place(r, s);
    REQUIRE(a);
    CHECK(a->nodes == 2);
    for (const auto& [n, k] : per_node(*a)) CHECK(k == 2);
    CHECK(a->cpu_milli == doctest::Approx(16000));
    r.gpus = 7;
    r.cpu_milli = 7 * 4000.0;
    CHECK_FALSE(p->place(r, s));  // 3 nodes x 2
    r.gpus = 6;
    r.cpu_milli = 6 * 4000.0;
    CHECK(p->place(r, s));
  }
}

// ------------------------------------------------------------------------------------------------
// Property test.
