// Pollux's goodput model (models/job/pollux_goodput): the analytic gradient of the fit's objective
// against finite differences, golden values from the Pollux artifact, and degenerate fits.
//
// The golden values were produced by running the artifact itself (petuum/adaptdl osdi21-artifact,
// simulator/goodput.py and speedup.py) with Debian's numpy 1.24 / scipy 1.10: GoodputFunction,
// optimize and SpeedupFunction as they are; fit_perf_params as it is except that autograd (not
// installed) was replaced by a complex-step derivative of the artifact's own _obj_fn, i.e. an exact
// gradient independent of ours, for scipy's L-BFGS-B. (With scipy's finite differences instead,
// the fitted step times differ from these by < 0.01%.)
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "models/job/pollux_goodput.hpp"

using namespace fleetsim::pollux;

namespace {

const PerfParams kPerf{0.05, 0.002, 0.3, 0.02, 0.1, 0.01, 1.5};
const GradParams kGrad{1.0, 50.0};

BatchLimits limits(long init, long max_batch, long min_atomic, long max_atomic, bool accumulation) {
  return {init, max_batch, min_atomic, max_atomic, accumulation};
}

std::array<double, 7> as_array(const PerfParams& p) {
  return {p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma};
}

PerfParams from_array(const std::array<double, 7>& a) {
  return {a[0], a[1], a[2], a[3], a[4], a[5], a[6]};
}

/// Predicted optimizer step time (no accumulation) of `p` on (nodes, replicas) at `atomic`.
double step_time(const PerfParams& p, int nodes, int replicas, long atomic) {
  const GoodputFunction g(p, {}, 1);
  return static_cast<double>(replicas * atomic) / g.throughput(nodes, replicas, atomic, 0);
}

bool finite(const PerfParams& p) {
  for (double v : as_array(p))
    if (!std::isfinite(v)) return false;
  return true;
}

// The three observation sets of the golden fits: {nodes, replicas, atomic, accum s, optim s}.
const std::vector<Observation> kSingle{{1, 1, 64, 0.12, 0.13}};
const std::vector<Observation> kOneNode{
    {1, 1, 64, 0.12, 0.13}, {1, 2, 64, 0.12, 0.16}, {1, 4, 64, 0.125, 0.19}, {1, 4, 32, 0.07, 0.14}};
const std::vector<Observation> kOneNode2{{1, 1, 32, 0.07, 0.075}, {1, 2, 32, 0.07, 0.095},
                                         {1, 4, 32, 0.072, 0.12}, {1, 8, 64, 0.13, 0.21},
                                         {1, 4, 64, 0.125, 0.17}, {1, 2, 64, 0.125, 0.15}};
const std::vector<Observation> kMultiNode{{1, 1, 32, 0.07, 0.075}, {1, 2, 32, 0.07, 0.10},
                                          {2, 4, 32, 0.072, 0.16}, {2, 8, 64, 0.13, 0.25},
                                          {4, 16, 64, 0.13, 0.32}, {1, 4, 64, 0.125, 0.17}};

struct Query {
  int nodes, replicas;
  long atomic;
};
const std::array<Query, 5> kQueries{{{1, 1, 64}, {1, 4, 64}, {2, 8, 64}, {4, 16, 128}, {1, 2, 32}}};

}  // namespace

TEST_CASE("pollux goodput: analytic gradient of the fit objective equals central differences") {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (const auto* obs : {&kSingle, &kOneNode, &kMultiNode}) {
    for (int trial = 0; trial < 4; ++trial) {
      std::array<double, 7> x{0.01 + 0.1 * u(rng),  1e-4 + 3e-3 * u(rng), 0.01 + 0.2 * u(rng),
                              1e-3 + 0.02 * u(rng), 0.01 + 0.2 * u(rng),  1e-3 + 0.02 * u(rng),
                              1.0 + 4.0 * u(rng)};
      PerfParams grad;
      detail::fit_objective(*obs, from_array(x), &grad);
      const auto g = as_array(grad);
      for (int i = 0; i < 7; ++i) {
        const double h = 1e-6 * x[i];
        auto lo = x, hi = x;
        lo[i] -= h;
        hi[i] += h;
        const double fd =
            (detail::fit_objective(*obs, from_array(hi)) - detail::fit_objective(*obs, from_array(lo))) /
            (2 * h);
        // Relative 1e-5, with an absolute floor for derivatives that are (near) zero.
        CHECK_MESSAGE(std::abs(g[i] - fd) <= 1e-5 * std::abs(fd) + 1e-9,
                      "param " << i << " analytic " << g[i] << " fd " << fd);
      }
    }
  }
}

TEST_CASE("pollux goodput: throughput, evaluate and efficiency match the artifact") {
  const GoodputFunction g(kPerf, kGrad, 128);
  struct Case {
    int n, r;
    long atomic, accum;
    double throughput, goodput;
  };
  for (const Case& c : {Case{1, 2, 64, 0, 568.9095434522972, 568.9095434522972},
                        Case{1, 4, 64, 1, 1228.5166614972632, 1160.2657358585263},
                        Case{2, 8, 32, 3, 1278.8552279420267, 1124.5106314662648},
                        Case{1, 2, 100, 0, 688.3247457287279, 680.8157485025962},
                        Case{3, 24, 17, 2, 1320.7457828853758, 1130.8799148315493}}) {
    CHECK(g.throughput(c.n, c.r, c.atomic, c.accum) == doctest::Approx(c.throughput).epsilon(1e-12));
    CHECK(g.evaluate(c.n, c.r, c.atomic, c.accum) == doctest::Approx(c.goodput).epsilon(1e-12));
  }
  CHECK(g.efficiency(128) == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(g.efficiency(512) == doctest::Approx(0.9444444444444444).epsilon(1e-14));
  CHECK(g.efficiency(4096) == doctest::Approx(0.6219512195121951).epsilon(1e-14));
  CHECK(g.efficiency(200.5) == doctest::Approx(0.9890159836376031).epsilon(1e-14));
  // No gradient statistics (denominator 0): gain 1, efficiency 1 / scale.
  CHECK(GoodputFunction(kPerf, {0, 0}, 128).efficiency(512) == doctest::Approx(0.25).epsilon(1e-14));
}

TEST_CASE("pollux goodput: optimize picks the artifact's configuration") {
  const GoodputFunction g(kPerf, kGrad, 128);
  struct Case {
    int n, r;
    BatchLimits lim;
    double goodput;
    long atomic, accum;
  };
  const auto la = limits(128, 4096, 16, 256, true);
  for (const Case& c : {
           Case{1, 1, la, 429.90321951935783, 246, 1},  // one replica above init_batch: >= 1 accum step
           Case{2, 8, la, 2014.9428781639685, 253, 0},
           Case{1, 4, limits(128, 8192, 16, 64, true), 1175.9790848592438, 64, 2},   // accumulation
           Case{2, 16, limits(128, 512, 64, 128, true), 1398.1479093735763, 64, 0},  // descending space
           Case{1, 4, limits(128, 4096, 16, 256, false), 1503.201625630619, 249, 0},
           Case{3, 12, la, 2498.512063805671, 250, 0},
           Case{8, 40, la, 2238.120700917586, 103, 0},
       }) {
    const GoodputChoice best = g.optimize(c.n, c.r, c.lim);
    CHECK(best.goodput == doctest::Approx(c.goodput).epsilon(1e-12));
    CHECK(best.atomic_bsz == c.atomic);
    CHECK(best.accum_steps == c.accum);
  }
  // Infeasible: the only batch (4096 on one GPU, no accumulation) exceeds max_atomic: goodput 0,
  // and the first candidate is reported.
  const GoodputChoice none =
      GoodputFunction(kPerf, kGrad, 4096).optimize(1, 1, limits(4096, 4096, 16, 256, false));
  CHECK(none.goodput == 0.0);
  CHECK(none.atomic_bsz == 4096);
  CHECK(none.accum_steps == 0);
}

TEST_CASE("pollux goodput: speedup function and its base match the artifact") {
  const GoodputFunction g(kPerf, kGrad, 128);
  SpeedupFunction s(g, limits(128, 4096, 16, 256, true));
  CHECK(s(0, 0) == 0.0);
  CHECK(s(1, 1) == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(s(1, 2) == doctest::Approx(1.900853015028512).epsilon(1e-12));
  CHECK(s(1, 4) == doctest::Approx(3.4966047179438076).epsilon(1e-12));
  CHECK(s(2, 8) == doctest::Approx(4.686968570313857).epsilon(1e-12));
  CHECK(s(4, 16) == doctest::Approx(6.53726107473482).epsilon(1e-12));
  CHECK(s(8, 40) == doctest::Approx(5.20610360494592).epsilon(1e-12));   // beyond the memo
  CHECK(s(1, 4) == doctest::Approx(3.4966047179438076).epsilon(1e-12));  // memoised
  s.set_base(2, 4);
  CHECK(s(1, 4) == doctest::Approx(1.2216903503320409).epsilon(1e-12));
  CHECK(s(4, 16) == doctest::Approx(2.284075386508457).epsilon(1e-12));
  CHECK(s(1, 1) == doctest::Approx(0.34939332549161023).epsilon(1e-12));
}

TEST_CASE("pollux goodput: fitted step times match the artifact's fit") {
  struct Golden {
    const std::vector<Observation>* obs;
    double objective;             // the artifact's objective at its own fit
    std::array<double, 5> steps;  // its predicted step times at kQueries
  };
  const std::array<Golden, 3> golden{{
      {&kSingle,
       0.10004262716865281,
       {0.12063741466460975, 0.1206374343569765, 0.12063748067964417, 0.18127497225142883,
        0.09031871225019086}},
      {&kOneNode2,
       0.04280458757880862,
       {0.1268696247289347, 0.1685854244636858, 0.2223309935561038, 0.4189237679070652, 0.09660692353881405}},
      {&kMultiNode,
       0.03911051624698653,
       {0.12850252241918675, 0.1697454029615874, 0.24718126308410415, 0.42079791983368586,
        0.1001451156798406}},
  }};
  for (const Golden& gd : golden) {
    const PerfParams p = fit_perf_params(*gd.obs);
    REQUIRE(finite(p));
    const double f = detail::fit_objective(*gd.obs, p);
    MESSAGE("objective " << f << " vs artifact " << gd.objective);
    // The same minimum (both stop on a relative decrease of 2.2e-9; seen: within 6e-5 relative).
    CHECK(f == doctest::Approx(gd.objective).epsilon(1e-3));
    for (size_t q = 0; q < kQueries.size(); ++q) {
      const auto& [n, r, a] = kQueries[q];
      const double t = step_time(p, n, r, a);
      MESSAGE("steps[" << q << "] " << t << " vs artifact " << gd.steps[q]);
      if (gd.obs == &kSingle) {
        // One observation: err1 + err2 = |log A - log 0.12| + |log A - log 0.13| is flat for any
        // predicted time A in [0.12, 0.13]; any such point is a minimum (scipy stops at 0.1206).
        if (q < 3) CHECK((t >= 0.12 - 1e-6 && t <= 0.13 + 1e-6));
      } else {
        CHECK(t == doctest::Approx(gd.steps[q]).epsilon(0.01));  // seen: within 4e-5 relative
      }
    }
  }
  // On kOneNode scipy stops after 10 iterations at a point that is not stationary (its "relative
  // reduction" test fires; gradient ~200 in beta_c), objective 0.1978. Ours goes on to a much lower
  // one (~0.049); scipy restarted near it agrees. So only: at least as good as the artifact.
  const double f_node = detail::fit_objective(kOneNode, fit_perf_params(kOneNode));
  MESSAGE("kOneNode objective " << f_node << " vs artifact 0.19782953352869023");
  CHECK(f_node <= 0.19782953352869023);
}

TEST_CASE("pollux goodput: fixed parameters and the no-multi-node prior") {
  const PerfParams one = fit_perf_params(kOneNode);
  // No multi-node observation: alpha_n, beta_n raised to 1.1 x alpha_r, beta_r.
  CHECK(one.alpha_n == doctest::Approx(1.1 * one.alpha_r));
  CHECK(one.beta_n == doctest::Approx(1.1 * one.beta_r));
  const PerfParams single = fit_perf_params(kSingle);
  // One atomic batch: alpha_c fixed at mean accum / 2; beta_n, beta_r and alpha_r at their bound.
  CHECK(single.alpha_c == doctest::Approx(0.06));
  CHECK(single.alpha_r == doctest::Approx(1e-8));
  CHECK(single.beta_r == doctest::Approx(1e-8));
  CHECK(single.alpha_n == doctest::Approx(1.1e-8));
  CHECK(single.gamma >= 1.0);
  CHECK(single.gamma <= 10.0);
}

TEST_CASE("pollux goodput: degenerate fits stay finite") {
  std::vector<std::vector<Observation>> cases = {
      {{1, 1, 64, 0.1, 0.1}},                                                    // accum == optim
      {{1, 2, 32, 0.05, 0.08}, {1, 2, 32, 0.05, 0.08}, {1, 2, 32, 0.05, 0.08}},  // identical
      {{2, 8, 16, 0.02, 0.5}},                                                   // one multi-node obs
      {{1, 1, 8, -0.01, 0.01}},                         // sync > step: negative accum time
      {{1, 1, 8, 0.0, 0.01}},                           // step == sync: accum time 0
      {{1, 1, 8, 1e-6, 1e3}, {3, 24, 512, 1e3, 1e-6}},  // wild, contradictory
  };
  for (const auto& obs : cases) {
    const PerfParams p = fit_perf_params(obs);
    CHECK(finite(p));
    CHECK(std::isfinite(detail::fit_objective(obs, p)));
    CHECK(p.gamma >= 1.0);
    CHECK(p.gamma <= 10.0);
    for (const auto& o : obs) CHECK(std::isfinite(step_time(p, o.nodes, o.replicas, o.atomic_bsz)));
  }
}
