// Gavel's max-min fairness LP (sim/scheduling/policies/gavel_lp.hpp) on cases solved by hand.
#include <doctest/doctest.h>

#include "sim/scheduling/policies/gavel_lp.hpp"

using namespace fleetsim;

TEST_CASE("gavel LP: 2 jobs x 2 types, each job gets the type it is relatively faster on") {
  // Types V (1 GPU) and K (1 GPU). A: 3 steps/s on V, 1 on K. B: 1 on V, 2 on K.
  // Equal-share throughputs: T_eq(A) = (3 + 1) / 2 = 2, T_eq(B) = (1 + 2) / 2 = 1.5, so
  //   u_A = 1.5 a_V + 0.5 a_K,   u_B = (2/3) b_V + (4/3) b_K.
  // Both u grow when A moves to V and B to K; with a_V = b_K = 1 each job has all its time on its
  // better type, so no allocation does better: u_A = 1.5, u_B = 4/3, and t* = min = 4/3.
  GavelLpProblem p;
  p.capacity = {1, 1};
  p.scale = {1, 1};
  p.throughput = {{3, 1}, {1, 2}};
  const auto s = solve_max_min_fairness(p);
  REQUIRE(s.ok);
  CHECK(s.level == doctest::Approx(4.0 / 3.0));
  CHECK(s.x[0][0] == doctest::Approx(1));
  CHECK(s.x[0][1] == doctest::Approx(0));
  CHECK(s.x[1][0] == doctest::Approx(0));
  CHECK(s.x[1][1] == doctest::Approx(1));
  CHECK(s.normalized[0] == doctest::Approx(1.5));
  CHECK(s.normalized[1] == doctest::Approx(4.0 / 3.0));
}

TEST_CASE("gavel LP: the second stage hands spare speed to the job that gains from it") {
  // A: 4 on V, 1 on K (T_eq 2.5: u_A = 1.6 a_V + 0.4 a_K). B: 1 on both (u_B = b_V + b_K).
  // With the cluster full (a_V + b_V = 1, a_K + b_K = 1, each job busy all the time) u_B = 1
  // whatever the split, so t* = 1; among those, u_A is largest with a_V = 1: A on V, B on K.
  GavelLpProblem p;
  p.capacity = {1, 1};
  p.scale = {1, 1};
  p.throughput = {{4, 1}, {1, 1}};
  const auto s = solve_max_min_fairness(p);
  REQUIRE(s.ok);
  CHECK(s.level == doctest::Approx(1));
  CHECK(s.x[0][0] == doctest::Approx(1));
  CHECK(s.x[1][1] == doctest::Approx(1));
  CHECK(s.normalized[0] == doctest::Approx(1.6));
}

TEST_CASE("gavel LP: one type oversubscribed, equal GPU-time shares with scale factors") {
  // 2 GPUs; A uses 2, B and C 1 each; equal speeds, so u_j = scale_j * X_j (GPU-time share).
  // max t: 2 X_A >= t, X_B >= t, X_C >= t, 2 X_A + X_B + X_C <= 2  ->  3 t <= 2, t* = 2/3:
  // X_A = 1/3, X_B = X_C = 2/3 (each job gets 2/3 of a GPU on average).
  GavelLpProblem p;
  p.capacity = {2};
  p.scale = {2, 1, 1};
  p.throughput = {{1}, {1}, {1}};
  const auto s = solve_max_min_fairness(p);
  REQUIRE(s.ok);
  CHECK(s.level == doctest::Approx(2.0 / 3.0));
  CHECK(s.x[0][0] == doctest::Approx(1.0 / 3.0));
  CHECK(s.x[1][0] == doctest::Approx(2.0 / 3.0));
  CHECK(s.x[2][0] == doctest::Approx(2.0 / 3.0));
}

TEST_CASE("gavel LP: a job that cannot run anywhere is left out and gets nothing") {
  // Types V (2 GPUs) and K (1 GPU). B needs 4 GPUs (more than V has) and has a rate only on K
  // (also too small): it can run nowhere, so X_B = 0 and it is left out of the minimum.
  // A: rate 2 on V, none on K: T_eq(A) = 2 * 2/3 = 4/3, u_A = 2 X_AV / (4/3) = 1.5 X_AV, so
  // t* = 1.5 with X_AV = 1.
  GavelLpProblem p;
  p.capacity = {2, 1};
  p.scale = {1, 4};
  p.throughput = {{2, 0}, {0, 5}};
  const auto s = solve_max_min_fairness(p);
  REQUIRE(s.ok);
  CHECK(s.x[1][0] == 0);
  CHECK(s.x[1][1] == 0);
  CHECK(s.x[0][1] == 0);
  CHECK(s.x[0][0] == doctest::Approx(1));
  CHECK(s.level == doctest::Approx(1.5));
}

TEST_CASE("gavel LP: no jobs is a valid empty allocation") {
  GavelLpProblem p;
  p.capacity = {4};
  const auto s = solve_max_min_fairness(p);
  CHECK(s.ok);
  CHECK(s.x.empty());
}
