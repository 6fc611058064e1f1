// Max-min fair ring rates (models/collective/max_min.hpp): hand-computed cases, the incremental
// re-solve against a from-scratch solve, and properties on random small fabrics.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "models/collective/max_min.hpp"
#include "tests/product_form.hpp"

using fleetsim::FabricAllocation;
using fleetsim::FlowUse;
using fleetsim::Headroom;
using fleetsim::IdleShare;
using fleetsim::MaxMinSolver;
using fleetsim::test::product_form;

TEST_CASE("max-min: two jobs on one link split it") {
  MaxMinSolver s;
  const int l = s.add_link(10);
  s.add(1, {{l, 1}});
  CHECK(s.rate(1) == 10);
  CHECK(s.add(2, {{l, 1}}) == std::vector<long>{1, 2});
  CHECK(s.rate(1) == 5);
  CHECK(s.rate(2) == 5);
  CHECK(s.alone_rate(1) == 10);
  CHECK(s.remove(2) == std::vector<long>{1});
  CHECK(s.rate(1) == 10);
}

TEST_CASE("max-min: flows count - a ring crossing a link twice takes two shares of it") {
  MaxMinSolver s;
  const int l = s.add_link(12);
  s.add(1, {{l, 2}});
  s.add(2, {{l, 1}});
  // equal per-flow rates r: 2r + r = 12
  CHECK(s.rate(1) == doctest::Approx(4));
  CHECK(s.rate(2) == doctest::Approx(4));
  CHECK(s.alone_rate(1) == 6);
}

TEST_CASE("max-min: a job bottlenecked elsewhere leaves the shared link's rest to the other") {
  MaxMinSolver s;
  const int shared = s.add_link(10), narrow = s.add_link(2);
  s.add(1, {{shared, 1}, {narrow, 1}});
  s.add(2, {{shared, 1}});
  CHECK(s.rate(1) == doctest::Approx(2));
  CHECK(s.rate(2) == doctest::Approx(8));
  // A third job on the narrow link only: job 1 drops to 1, job 2 gets 9.
  CHECK(s.add(3, {{narrow, 1}}) == std::vector<long>{1, 2, 3});
  CHECK(s.rate(1) == doctest::Approx(1));
  CHECK(s.rate(3) == doctest::Approx(1));
  CHECK(s.rate(2) == doctest::Approx(9));
}

TEST_CASE("max-min: an unshared (FATPIPE) link bounds each flow alone") {
  MaxMinSolver s;
  const int fat = s.add_link(3, false), l = s.add_link(10);
  s.add(1, {{fat, 4}, {l, 1}});
  s.add(2, {{fat, 1}, {l, 1}});
  CHECK(s.rate(1) == doctest::Approx(3));
  CHECK(s.rate(2) == doctest::Approx(3));
  CHECK(s.alone_rate(1) == 3);
  const auto solved = s.add(3, {{fat, 1}});  // shares no shared link: nothing else re-solved
  CHECK(solved == std::vector<long>{3});
  CHECK(s.rate(3) == 3);
}

TEST_CASE("max-min: disjoint components are not re-solved, a lone job gets its alone rate exactly") {
  MaxMinSolver s;
  const int a = s.add_link(7), b = s.add_link(3), c = s.add_link(1.0 / 3);
  s.add(1, {{a, 3}, {b, 1}});
  CHECK(s.rate(1) == s.alone_rate(1));
  CHECK(s.rate(1) == 7.0 / 3);
  CHECK(s.add(2, {{c, 1}}) == std::vector<long>{2});
  CHECK(s.rate(1) == 7.0 / 3);
}

TEST_CASE("max-min: jobs computing half their time also get what the other leaves idle (mean field)") {
  MaxMinSolver s;
  const int l = s.add_link(1);
  s.add(1, {{l, 1}}, 0.5);
  CHECK(s.rate(1) == 1);  // alone: its alone rate, exactly
  s.add(2, {{l, 1}}, 0.5);
  // Symmetric rate x: each talks q = s / (1 + s) of its time (s = 1 / x) and gets 1 - q x, so
  // x = 1 - x / (1 + x): x^2 + x - 1 = 0, x = (sqrt 5 - 1) / 2; above the max-min 1/2.
  const double x = (std::sqrt(5.0) - 1) / 2;
  CHECK(s.rate(1) == doctest::Approx(x).epsilon(1e-5));
  CHECK(s.rate(2) == doctest::Approx(x).epsilon(1e-5));
  // A job that always talks (phi = 0) leaves nothing idle: the others fall back to max-min.
  s.add(3, {{l, 1}}, 0.0);
  CHECK(s.rate(3) >= 1.0 / 3 - 1e-12);
  CHECK(s.rate(1) >= 1.0 / 3 - 1e-12);
}

namespace {

struct Case {
  std::vector<double> capacity;
  std::vector<char> shared;
  std::map<long, std::vector<FlowUse>> jobs;
  std::map<long, double> phi;  ///< compute shares (used by build(..., true))
};

Case random_case(std::mt19937& rng) {
  Case c;
  std::uniform_int_distribution<int> nl(1, 6), nj(1, 8), cnt(1, 3);
  std::uniform_real_distribution<double> cap(1, 20);
  const int links = nl(rng);
  for (int l = 0; l < links; ++l) {
    c.capacity.push_back(cap(rng));
    c.shared.push_back(rng() % 5 == 0 ? 0 : 1);
  }
  const int jobs = nj(rng);
  for (long j = 0; j < jobs; ++j) {
    std::vector<FlowUse> uses;
    for (int l = 0; l < links; ++l)
      if (rng() % 2 == 0) uses.push_back({l, cnt(rng)});
    if (uses.empty()) uses.push_back({0, 1});
    c.jobs[j] = uses;
    c.phi[j] = rng() % 3 == 0 ? 0.0 : std::uniform_real_distribution<double>(0.05, 0.95)(rng);
  }
  return c;
}

MaxMinSolver build(const Case& c, double scale, bool with_phi = false, IdleShare idle = IdleShare::kLeftover,
                   int draws = 64) {
  MaxMinSolver s(0, idle, draws);
  for (std::size_t l = 0; l < c.capacity.size(); ++l) s.add_link(c.capacity[l] * scale, c.shared[l] != 0);
  for (const auto& [id, uses] : c.jobs) s.add(id, uses, with_phi ? c.phi.at(id) : 0.0);
  return s;
}

}  // namespace

TEST_CASE("max-min: random fabrics - feasible, every job bottlenecked, doubling capacity never slows a job") {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    const Case c = random_case(rng);
    const MaxMinSolver s = build(c, 1), twice = build(c, 2);
    const MaxMinSolver mf = build(c, 1, true), mf_twice = build(c, 2, true);
    const MaxMinSolver ar = build(c, 1, true, IdleShare::kArrival),
                       ar_twice = build(c, 2, true, IdleShare::kArrival);
    const MaxMinSolver wl = build(c, 1, true, IdleShare::kWorstLink),
                       wl_twice = build(c, 2, true, IdleShare::kWorstLink);
    const MaxMinSolver jt = build(c, 1, true, IdleShare::kJoint),
                       jt_twice = build(c, 2, true, IdleShare::kJoint);
    const MaxMinSolver jc = build(c, 1, true, IdleShare::kJointCycle),
                       jc_twice = build(c, 2, true, IdleShare::kJointCycle);
    std::vector<double> load(c.capacity.size(), 0.0);
    for (const auto& [id, uses] : c.jobs)
      for (const auto& u : uses)
        load[static_cast<std::size_t>(u.link)] +=
            c.shared[static_cast<std::size_t>(u.link)] != 0 ? u.count * s.rate(id) : 0;
    for (std::size_t l = 0; l < load.size(); ++l) CHECK(load[l] <= c.capacity[l] * (1 + 1e-9));
    // mean field: the links' mean loads (count x q x rate, q the share of time talking) fit too
    std::vector<double> mean(c.capacity.size(), 0.0);
    for (const auto& [id, uses] : c.jobs) {
      const double phi = c.phi.at(id), st = mf.alone_rate(id) / mf.rate(id);
      const double q = (1 - phi) * st / (phi + (1 - phi) * st);
      for (const auto& u : uses)
        if (c.shared[static_cast<std::size_t>(u.link)] != 0)
          mean[static_cast<std::size_t>(u.link)] += u.count * q * mf.rate(id);
    }
    for (std::size_t l = 0; l < mean.size(); ++l) CHECK(mean[l] <= c.capacity[l] * (1 + 1e-3));
    for (const auto& [id, uses] : c.jobs) {
      CHECK(s.rate(id) <= s.alone_rate(id) * (1 + 1e-12));
      CHECK(twice.rate(id) >= s.rate(id));
      // mean field: between max-min and alone, and never slower on the doubled fabric
      CHECK(mf.rate(id) >= s.rate(id) * (1 - 1e-12));
      CHECK(mf.rate(id) <= s.alone_rate(id) * (1 + 1e-12));
      CHECK(mf_twice.rate(id) >= mf.rate(id));
      // arrival field: likewise
      CHECK(ar.rate(id) >= s.rate(id) * (1 - 1e-12));
      CHECK(ar.rate(id) <= s.alone_rate(id) * (1 + 1e-12));
      CHECK(ar_twice.rate(id) >= ar.rate(id) * (1 - 1e-6));
      // worst link: likewise, and never faster than the arrival field (E[max] >= max of means)
      CHECK(wl.rate(id) >= s.rate(id) * (1 - 1e-12));
      CHECK(wl.rate(id) <= ar.rate(id) * (1 + 1e-5));
      CHECK(wl_twice.rate(id) >= wl.rate(id) * (1 - 1e-6));
      // joint: between max-min and alone, never slower on the doubled fabric
      CHECK(jt.rate(id) >= s.rate(id) * (1 - 1e-12));
      CHECK(jt.rate(id) <= s.alone_rate(id) * (1 + 1e-12));
      CHECK(jt_twice.rate(id) >= jt.rate(id) * (1 - 1e-6));
      // joint-cycle: between joint and the arrival field (it weighs their times per byte), never slower
      // on the doubled fabric
      CHECK(jc.rate(id) >= std::min(jt.rate(id), ar.rate(id)) * (1 - 1e-9));
      CHECK(jc.rate(id) <= std::max(jt.rate(id), ar.rate(id)) * (1 + 1e-9));
      CHECK(jc_twice.rate(id) >= jc.rate(id) * (1 - 1e-6));
      // Max-min: some link of the job is saturated and no job on it has a higher rate (or the job
      // is at an unshared link's bound).
      bool bottleneck = false;
      for (const auto& u : uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (c.shared[l] == 0) {
          bottleneck = bottleneck || s.rate(id) >= c.capacity[l] * (1 - 1e-9);
          continue;
        }
        if (load[l] < c.capacity[l] * (1 - 1e-9)) continue;
        bool highest = true;
        for (const auto& [o, ouses] : c.jobs)
          for (const auto& ou : ouses)
            if (ou.link == u.link && s.rate(o) > s.rate(id) * (1 + 1e-9)) highest = false;
        bottleneck = bottleneck || highest;
      }
      CHECK(bottleneck);
    }
  }
}

TEST_CASE("max-min: incremental adds and removes give the from-scratch rates") {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    Case c = random_case(rng);
    const bool with_phi = trial % 2 == 1;
    const IdleShare idle = trial % 8 == 3   ? IdleShare::kArrival
                           : trial % 8 == 1 ? IdleShare::kWorstLink
                           : trial % 8 == 5 ? IdleShare::kJoint
                           : trial % 8 == 7 ? IdleShare::kJointCycle
                                            : IdleShare::kLeftover;
    MaxMinSolver s = build(c, 1, with_phi, idle);
    // remove a random job, add a new one
    const long gone = static_cast<long>(rng() % c.jobs.size());
    s.remove(gone);
    c.jobs.erase(gone);
    std::vector<FlowUse> uses{{static_cast<int>(rng() % c.capacity.size()), 1}};
    c.jobs[100] = uses;
    c.phi[100] = 0.5;
    s.add(100, uses, with_phi ? 0.5 : 0.0);
    const MaxMinSolver fresh = build(c, 1, with_phi, idle);
    for (const auto& [id, u] : c.jobs)
      CHECK(s.rate(id) == doctest::Approx(fresh.rate(id)).epsilon(with_phi ? 1e-4 : 1e-12));
  }
}

namespace {

// The solver's iteration times for the same jobs: z + d x alone / rate.
std::vector<double> solver_times(const std::vector<double>& z, const std::vector<double>& d, IdleShare idle,
                                 int draws = MaxMinSolver::kDraws) {
  MaxMinSolver s(0, idle, draws);
  const int l = s.add_link(1);
  for (std::size_t j = 0; j < z.size(); ++j) s.add(static_cast<long>(j), {{l, 1}}, z[j] / (z[j] + d[j]));
  std::vector<double> t(z.size());
  for (std::size_t j = 0; j < z.size(); ++j)
    t[j] = z[j] + d[j] * s.alone_rate(static_cast<long>(j)) / s.rate(static_cast<long>(j));
  return t;
}

}  // namespace

TEST_CASE("max-min: arrival field - two jobs computing half their time, against the product form") {
  // Exact: states {}, {1}, {2}, {1,2} weigh 1/4, 1/4, 1/4, 2/4 (total 5/4). Job 1 is served
  // (1/4 + 2/4 / 2) / (5/4) = 0.4 of the time, so it completes 0.4 / 0.5 = 0.8 iterations per unit:
  // 1.25 per iteration, against 1 alone. (Two such deterministic jobs keep their initial offset
  // delta in [0, 0.5] and take 1.5 - delta per iteration: 1.25 on average over random offsets.)
  const auto exact = product_form({0.5, 0.5}, {0.5, 0.5});
  CHECK(exact[0] == doctest::Approx(1.25));
  const auto arrival = solver_times({0.5, 0.5}, {0.5, 0.5}, IdleShare::kArrival);
  const auto leftover = solver_times({0.5, 0.5}, {0.5, 0.5}, IdleShare::kLeftover);
  CHECK(arrival[0] == doctest::Approx(1.25).epsilon(0.005));
  // the fluid mean field: x = (sqrt 5 - 1) / 2 from the test above, 0.5 + 0.5 / x = 1.309
  CHECK(leftover[0] == doctest::Approx(0.5 + 0.5 * 2 / (std::sqrt(5.0) - 1)).epsilon(1e-4));
}

TEST_CASE(
    "max-min: arrival field - within 3% of the product form on random links, the mean field off by more, "
    "worst link equal to it on one link") {
  std::mt19937 rng(23);
  std::uniform_real_distribution<double> u(0.1, 0.9);
  double worst_arrival = 0, worst_leftover = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 2 + rng() % 6;
    std::vector<double> z(n), d(n);
    for (std::size_t j = 0; j < n; ++j) {
      z[j] = u(rng);
      d[j] = u(rng);
    }
    auto total = [](const std::vector<double>& t) { return std::accumulate(t.begin(), t.end(), 0.0); };
    const double exact = total(product_form(z, d));
    const auto by_arrival = solver_times(z, d, IdleShare::kArrival);
    const double arrival = total(by_arrival) / exact - 1;
    const double leftover = total(solver_times(z, d, IdleShare::kLeftover)) / exact - 1;
    CHECK(std::abs(arrival) < 0.03);
    // one link: E[max] is E[X], so the worst field's factor is 1 up to rounding
    const auto by_worst = solver_times(z, d, IdleShare::kWorstLink);
    for (std::size_t j = 0; j < n; ++j) CHECK(by_worst[j] == doctest::Approx(by_arrival[j]).epsilon(1e-12));
    // the joint field draws the same independent sharers: equal up to its stratified draws
    const auto by_joint = solver_times(z, d, IdleShare::kJoint, 4096);
    for (std::size_t j = 0; j < n; ++j) CHECK(by_joint[j] == doctest::Approx(by_arrival[j]).epsilon(2e-3));
    worst_arrival = std::max(worst_arrival, std::abs(arrival));
    worst_leftover = std::max(worst_leftover, std::abs(leftover));
  }
  CHECK(worst_leftover > 2 * worst_arrival);
}

// The hand-derived cases below have links with room above a ring's alone rate; they are derived with
// the sharers' mean number present (Headroom::kMean). test_headroom.cpp derives the distribution's.
TEST_CASE("max-min: worst link - a ring crossing two links waits on either link's sharer") {
  // Job A crosses links 1 and 2 (capacity 1) and its own link 0 (0.8), so it runs at 0.8 alone;
  // job B talks on link 1 only, C on link 2 only. All compute phi = 0.8 of their time alone.
  // Arrival field: A stays at 0.8 (1 / (1 + p) > 0.8 on links 1 and 2), so A talks q_A = 0.2 of its
  // time and loads links 1 and 2 with 0.2 x 0.8 = 0.16 on average; B (and C) get 1 - 0.16 = 0.84 and
  // talk q_B = 0.2 s / (0.8 + 0.2 s) of their time, s = 1 / 0.84. Without A, B would gain
  // d ln r = 0.16 / 0.84, so A sees B present with p = q_B - q_B (1 - q_B) 0.16 / 0.84 (likewise C).
  // A's time per byte on link 1 is 1 + (B present), on link 2 1 + (C present), on link 0 1.25:
  // E[max] = 1.25 (1 - p)^2 + 2 (1 - (1 - p)^2), against max of the means max(1.25, 1 + p) = 1.25.
  auto build_abc = [](IdleShare idle) {
    MaxMinSolver s(0, idle, 4096, FabricAllocation::kMaxMin, Headroom::kMean);
    const int own = s.add_link(0.8), l1 = s.add_link(1), l2 = s.add_link(1);
    s.add(0, {{own, 1}, {l1, 1}, {l2, 1}}, 0.8);
    s.add(1, {{l1, 1}}, 0.8);
    s.add(2, {{l2, 1}}, 0.8);
    return s;
  };
  const MaxMinSolver arrival = build_abc(IdleShare::kArrival), worst = build_abc(IdleShare::kWorstLink);
  // (the arrival field's fixed point stops once no rate moves by 1e-4 of itself in a sweep)
  const double sb = 1 / 0.84, qb = 0.2 * sb / (0.8 + 0.2 * sb);
  const double p = qb - qb * (1 - qb) * 0.16 / 0.84, none = (1 - p) * (1 - p);
  CHECK(arrival.rate(0) == doctest::Approx(0.8).epsilon(3e-4));
  CHECK(arrival.rate(1) == doctest::Approx(0.84).epsilon(3e-4));
  CHECK(worst.rate(1) == doctest::Approx(0.84).epsilon(3e-4));  // one link: as the arrival field
  CHECK(worst.rate(0) == doctest::Approx(1 / (1.25 * none + 2 * (1 - none))).epsilon(3e-4));
  CHECK(worst.rate(0) < 0.7);  // about 0.66: 18% slower than the arrival field says
  // The joint field draws B and C independently too (each crosses one of A's links): A's rate is the
  // same. But B also sees A come and go (worst-link counts A on link 1 by its mean load 0.16 only):
  // while A talks (q_A = 0.2), B's flow gets min(1 / (1 - 0.8), (1 + 1) / 1) = 1/2, else 1, so B's time
  // per byte is 0.8 x 1 + 0.2 x 2 = 1.2.
  const MaxMinSolver joint = build_abc(IdleShare::kJoint);
  CHECK(joint.rate(0) == doctest::Approx(worst.rate(0)).epsilon(3e-3));
  CHECK(joint.rate(1) == doctest::Approx(1 / 1.2).epsilon(1e-3));
}

TEST_CASE("max-min: joint - a sharer whose rate another link sets still comes and goes") {
  // A crosses its own link 0 (0.7) and link 1 (1); B crosses link 1 and its own link 2 (0.6). Both
  // talk alone at their own link's rate with room to spare on link 1 on average (A's mean load 0.21,
  // B's 0.12), so the arrival field leaves A at 0.7 and B at 0.6, each bottlenecked on its own link
  // and talking q_A = 1 - 0.7 = 0.3 and q_B = 1 - 0.8 = 0.2 of its time. Worst-link counts each on
  // link 1 only by its mean load: nobody slows. Joint: while B talks, A's flow on link 1 gets
  // min(1 / (1 - 0.6), (1 + 1) / 1) = 1/2 (max-min caps B's take at an equal share), so A's time per
  // byte is 1 / 0.7 while B computes and 2 while it talks: rate 1 / (0.8 / 0.7 + 0.2 x 2) = 0.648.
  // Likewise B: 1 / (0.7 / 0.6 + 0.3 x 2) = 0.566.
  auto build_ab = [](IdleShare idle) {
    MaxMinSolver s(0, idle, 10000, FabricAllocation::kMaxMin, Headroom::kMean);
    const int a = s.add_link(0.7), shared = s.add_link(1), b = s.add_link(0.6);
    s.add(0, {{a, 1}, {shared, 1}}, 0.7);
    s.add(1, {{shared, 1}, {b, 1}}, 0.8);
    return s;
  };
  const MaxMinSolver worst = build_ab(IdleShare::kWorstLink), joint = build_ab(IdleShare::kJoint);
  CHECK(worst.rate(0) == doctest::Approx(0.7).epsilon(1e-3));
  CHECK(worst.rate(1) == doctest::Approx(0.6).epsilon(1e-3));
  CHECK(joint.rate(0) == doctest::Approx(1 / (0.8 / 0.7 + 0.2 * 2)).epsilon(1e-3));
  CHECK(joint.rate(1) == doctest::Approx(1 / (0.7 / 0.6 + 0.3 * 2)).epsilon(1e-3));
}

TEST_CASE("max-min: joint-cycle - a ring's block weighs joint's worst by 1 - q, the worst mean by q") {
  // The case above: joint gives A a time per byte of 0.8 / 0.7 + 0.2 x 2 (B present a share 0.2 of the
  // time) and B 0.7 / 0.6 + 0.3 x 2, while each one's worst mean (the arrival field's) is its own link's,
  // 1 / 0.7 and 1 / 0.6. A talks q_A = 0.3 of its time and B q_B = 0.2, so joint-cycle weighs them:
  // A 0.7 (0.8 / 0.7 + 0.4) + 0.3 / 0.7, B 0.8 (0.7 / 0.6 + 0.6) + 0.2 / 0.6.
  MaxMinSolver s(0, IdleShare::kJointCycle, 10000, FabricAllocation::kMaxMin, Headroom::kMean);
  const int a = s.add_link(0.7), shared = s.add_link(1), b = s.add_link(0.6);
  s.add(0, {{a, 1}, {shared, 1}}, 0.7);
  s.add(1, {{shared, 1}, {b, 1}}, 0.8);
  CHECK(s.rate(0) == doctest::Approx(1 / (0.7 * (0.8 / 0.7 + 0.2 * 2) + 0.3 / 0.7)).epsilon(1e-3));
  CHECK(s.rate(1) == doctest::Approx(1 / (0.8 * (0.7 / 0.6 + 0.3 * 2) + 0.2 / 0.6)).epsilon(1e-3));
  // between joint's rate and the alone rate
  CHECK(s.rate(0) > 1 / (0.8 / 0.7 + 0.2 * 2));
  CHECK(s.rate(0) < 0.7);
  // Every job talking (no compute): q = 1 and every sharer present, so joint-cycle is max-min.
  MaxMinSolver busy(0, IdleShare::kJointCycle, 10000), plain(0, IdleShare::kNone);
  for (MaxMinSolver* m : {&busy, &plain}) {
    const int l0 = m->add_link(0.7), l1 = m->add_link(1), l2 = m->add_link(0.6);
    m->add(0, {{l0, 1}, {l1, 1}}, 0);
    m->add(1, {{l1, 1}, {l2, 1}}, 0);
  }
  CHECK(busy.rate(0) == plain.rate(0));
  CHECK(busy.rate(1) == plain.rate(1));
}

TEST_CASE("max-min: joint - a sharer crossing two of a ring's links is one presence, not two") {
  // A crosses links 1 and 2 (capacity 1) and its own link 0 (0.8), as in the worst-link case above,
  // but one job B crosses both links 1 and 2 (B's rate is set by one of them; on the other it takes its
  // rate). While B talks, A's time per byte is 2 on either link, else 1.25 on its own: E = 1.25 (1 - p)
  // + 2 p, p = B's presence, against 1.25 (1 - p)^2 + 2 (1 - (1 - p)^2) were B two independent sharers.
  MaxMinSolver s(0, IdleShare::kJoint, 10000, FabricAllocation::kMaxMin, Headroom::kMean);
  const int own = s.add_link(0.8), l1 = s.add_link(1), l2 = s.add_link(1);
  s.add(0, {{own, 1}, {l1, 1}, {l2, 1}}, 0.8);
  s.add(1, {{l1, 1}, {l2, 1}}, 0.8);
  // as in the case above: B gets 1 - 0.16 = 0.84, and A sees it with p = q_B - q_B (1 - q_B) 0.16 / 0.84
  const double sb = 1 / 0.84, qb = 0.2 * sb / (0.8 + 0.2 * sb);
  const double p = qb - qb * (1 - qb) * 0.16 / 0.84;
  CHECK(s.rate(0) == doctest::Approx(1 / (1.25 * (1 - p) + 2 * p)).epsilon(1e-3));
  CHECK(s.rate(0) > 0.7);  // about 0.72, against 0.66 for two independent sharers
}

TEST_CASE("max-min: joint - deterministic, and 32 draws close to 4,096 on random fabrics") {
  std::mt19937 rng(29);
  double worst = 0, sum = 0;
  int n = 0;
  for (int trial = 0; trial < 200; ++trial) {
    const Case c = random_case(rng);
    auto solve = [&](int draws) { return build(c, 1, true, IdleShare::kJoint, draws); };
    const MaxMinSolver a = solve(MaxMinSolver::kDraws), again = solve(MaxMinSolver::kDraws),
                       fine = solve(4096);
    for (const auto& [id, uses] : c.jobs) {
      CHECK(a.rate(id) == again.rate(id));  // the same draws: splitmix64 of the job ids
      const double e = std::abs(a.rate(id) / fine.rate(id) - 1);
      worst = std::max(worst, e);
      sum += e;
      ++n;
    }
  }
  MESSAGE("32 draws against 4,096: mean " << sum / n << ", worst " << worst);
  CHECK(sum / n < 0.01);
  CHECK(worst < 0.1);
}

// SimGrid's fair-bottleneck rounds, hand-derived. Links l, m (capacity 1), k1, k2 (0.1). N crosses l;
// W crosses l and m; Y1 crosses m and k1, Y2 m and k2. Round 1: l offers 1/2 to N and W, m 1/3 to W,
// Y1 and Y2, k1 and k2 0.1 each: N takes 1/2, W 1/3 (m's offer), the Ys 0.1 (k's, which close, and
// so do the Ys). l has 1/6 left, m 1 - 1/3 - 0.2. Round 2: l offers 1/12 to N and W, both take it and
// l closes. N = 7/12, W = 5/12, where max-min splits l evenly (1/2 each: the Ys take only 0.2 of m).
TEST_CASE("max-min: fair bottleneck - early offers favour the ring that crosses fewer links") {
  for (const auto allocation : {FabricAllocation::kMaxMin, FabricAllocation::kFairBottleneck}) {
    MaxMinSolver s(0, IdleShare::kNone, MaxMinSolver::kDraws, allocation);
    const int l = s.add_link(1), m = s.add_link(1), k1 = s.add_link(0.1), k2 = s.add_link(0.1);
    s.add(1, {{m, 1}, {k1, 1}});
    s.add(2, {{m, 1}, {k2, 1}});
    s.add(3, {{l, 1}});
    s.add(4, {{l, 1}, {m, 1}});
    const bool fb = allocation == FabricAllocation::kFairBottleneck;
    CHECK(s.rate(3) == doctest::Approx(fb ? 7.0 / 12 : 0.5));
    CHECK(s.rate(4) == doctest::Approx(fb ? 5.0 / 12 : 0.5));
    CHECK(s.rate(1) == doctest::Approx(0.1));
    CHECK(s.rate(2) == doctest::Approx(0.1));
  }
}

TEST_CASE("max-min: fair bottleneck - random fabrics: feasible, within [its all-talking rate, alone]") {
  std::mt19937 rng(29);
  for (int trial = 0; trial < 300; ++trial) {
    const Case c = random_case(rng);
    auto make = [&](IdleShare idle, double scale) {
      MaxMinSolver s(0, idle, 64, FabricAllocation::kFairBottleneck);
      for (std::size_t l = 0; l < c.capacity.size(); ++l) s.add_link(c.capacity[l] * scale, c.shared[l] != 0);
      for (const auto& [id, uses] : c.jobs) s.add(id, uses, idle == IdleShare::kNone ? 0.0 : c.phi.at(id));
      return s;
    };
    const MaxMinSolver fb = make(IdleShare::kNone, 1), jt = make(IdleShare::kJoint, 1),
                       jt_twice = make(IdleShare::kJoint, 2), wl = make(IdleShare::kWorstLink, 1),
                       jc = make(IdleShare::kJointCycle, 1);
    std::vector<double> load(c.capacity.size(), 0.0);
    for (const auto& [id, uses] : c.jobs)
      for (const auto& u : uses)
        if (c.shared[static_cast<std::size_t>(u.link)] != 0)
          load[static_cast<std::size_t>(u.link)] += u.count * fb.rate(id);
    for (std::size_t l = 0; l < load.size(); ++l) CHECK(load[l] <= c.capacity[l] * (1 + 1e-9));
    for (const auto& [id, uses] : c.jobs) {
      CHECK(fb.rate(id) > 0);
      CHECK(fb.rate(id) <= fb.alone_rate(id) * (1 + 1e-12));
      // a field's rate moves towards the fair-bottleneck one and stays between it and alone
      for (const MaxMinSolver* f : {&jt, &wl, &jc}) {
        CHECK(f->rate(id) >= fb.rate(id) * (1 - 1e-9));
        CHECK(f->rate(id) <= f->alone_rate(id) * (1 + 1e-12));
      }
      CHECK(jt_twice.rate(id) >= jt.rate(id) * (1 - 1e-6));
    }
  }
}
