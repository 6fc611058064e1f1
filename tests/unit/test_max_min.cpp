// Max-min fair ring rates (models/collective/max_min.hpp): hand-computed cases, the incremental
// re-solve against a from-scratch solve, and properties on random small fabrics.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "models/collective/max_min.hpp"

using fleetsim::FlowUse;
using fleetsim::MaxMinSolver;

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

MaxMinSolver build(const Case& c, double scale, bool with_phi = false) {
  MaxMinSolver s;
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
    MaxMinSolver s = build(c, 1, with_phi);
    // remove a random job, add a new one
    const long gone = static_cast<long>(rng() % c.jobs.size());
    s.remove(gone);
    c.jobs.erase(gone);
    std::vector<FlowUse> uses{{static_cast<int>(rng() % c.capacity.size()), 1}};
    c.jobs[100] = uses;
    c.phi[100] = 0.5;
    s.add(100, uses, with_phi ? 0.5 : 0.0);
    const MaxMinSolver fresh = build(c, 1, with_phi);
    for (const auto& [id, u] : c.jobs)
      CHECK(s.rate(id) == doctest::Approx(fresh.rate(id)).epsilon(with_phi ? 1e-4 : 1e-12));
  }
}
