// The fabric's sharing fields on links with room for more than one ring at its alone rate
// (models/collective/max_min.hpp, Headroom): against the closed network's exact product form.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "models/collective/max_min.hpp"
#include "tests/product_form.hpp"

using fleetsim::FabricAllocation;
using fleetsim::Headroom;
using fleetsim::IdleShare;
using fleetsim::MaxMinSolver;
using fleetsim::test::product_form;

namespace {

// The solver's iteration times z + d x alone / rate of jobs sharing a link of capacity `room`, each
// flow also crossing its own unshared link of capacity 1 (so alone = 1: the link holds `room` flows
// at the alone rate).
std::vector<double> room_times(const std::vector<double>& z, const std::vector<double>& d, int room,
                               IdleShare idle, Headroom headroom, int draws = MaxMinSolver::kDraws) {
  MaxMinSolver s(0, idle, draws, FabricAllocation::kMaxMin, headroom);
  const int shared = s.add_link(room);
  for (std::size_t j = 0; j < z.size(); ++j) {
    const int own = s.add_link(1.0, false);
    s.add(static_cast<long>(j), {{shared, 1}, {own, 1}}, z[j] / (z[j] + d[j]));
  }
  std::vector<double> t(z.size());
  for (std::size_t j = 0; j < z.size(); ++j)
    t[j] = z[j] + d[j] * s.alone_rate(static_cast<long>(j)) / s.rate(static_cast<long>(j));
  return t;
}

double total(const std::vector<double>& t) {
  return std::accumulate(t.begin(), t.end(), 0.0);
}

}  // namespace

TEST_CASE("headroom: seven rings talking 15% of the time on a link with room for two") {
  // Exact (product form, or the birth-death chain of the number talking): their talking is stretched
  // 1.1754 times. From the mean number present (6 x 0.15 < 1 other flow: room left) no ring is ever
  // slowed; from the distribution it is whenever two or more others talk: 1.138 (the room term takes
  // the sharers' presences without the leave-one-out correction, which leaves it a little optimistic).
  const std::vector<double> z(7, 0.85), d(7, 0.15);
  auto stretch = [](const std::vector<double>& t) { return (t[0] - 0.85) / 0.15; };
  const double exact = stretch(product_form(z, d, 2));
  CHECK(std::abs(exact / 1.1754 - 1) < 1e-4);
  CHECK(std::abs(stretch(room_times(z, d, 2, IdleShare::kArrival, Headroom::kMean)) - 1) < 1e-3);
  const double by_distribution = stretch(room_times(z, d, 2, IdleShare::kArrival, Headroom::kDistribution));
  CHECK(by_distribution / exact - 1 > -0.04);  // measured -3.2%
  CHECK(by_distribution < exact);
}

TEST_CASE("headroom: sharers whose flows all fit in the room never slow a ring") {
  // three rings on a link with room for three: the cap binds only above three flows
  const std::vector<double> z(3, 0.5), d(3, 0.5);
  for (const auto headroom : {Headroom::kMean, Headroom::kDistribution})
    for (const double t : room_times(z, d, 3, IdleShare::kArrival, headroom))
      CHECK(t == doctest::Approx(1.0));
  CHECK(product_form(z, d, 3)[0] == doctest::Approx(1.0));
}

TEST_CASE("headroom: communication within 5% of the product form on random links with room for 2-3 flows") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<double> u(0.1, 0.9);
  double worst_distribution = 0, worst_mean = 0, worst_joint = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const std::size_t n = 3 + rng() % 6;
    const int room = 2 + static_cast<int>(rng() % 2);
    std::vector<double> z(n), d(n);
    for (std::size_t j = 0; j < n; ++j) {
      z[j] = u(rng);
      d[j] = u(rng) * 0.6;
    }
    // the time spent talking per iteration, summed over the jobs
    const double computing = total(z);
    auto talking = [&](const std::vector<double>& t) { return total(t) - computing; };
    const double exact = talking(product_form(z, d, room));
    const auto by_distribution = room_times(z, d, room, IdleShare::kArrival, Headroom::kDistribution);
    const double distribution = talking(by_distribution) / exact - 1;
    const double mean = talking(room_times(z, d, room, IdleShare::kArrival, Headroom::kMean)) / exact - 1;
    CHECK(std::abs(distribution) < 0.05);
    // one link: the worst field's E[max] is the arrival field's, so its factor is 1 up to rounding
    const auto by_worst = room_times(z, d, room, IdleShare::kWorstLink, Headroom::kDistribution);
    for (std::size_t j = 0; j < n; ++j) CHECK(std::abs(by_worst[j] / by_distribution[j] - 1) < 1e-9);
    // the joint field draws the same sharers (at their leave-one-out presences, where the arrival
    // field's room term takes them as they are): equal up to that and its stratified draws
    const auto by_joint = room_times(z, d, room, IdleShare::kJoint, Headroom::kDistribution, 4096);
    for (std::size_t j = 0; j < n; ++j) {
      CHECK(std::abs(by_joint[j] / by_distribution[j] - 1) < 0.02);
      worst_joint = std::max(worst_joint, std::abs(by_joint[j] / by_distribution[j] - 1));
    }
    worst_distribution = std::max(worst_distribution, std::abs(distribution));
    worst_mean = std::max(worst_mean, std::abs(mean));
  }
  MESSAGE("largest error of the communication time against the product form: distribution "
          << worst_distribution << ", mean " << worst_mean << "; joint's iteration against arrival's "
          << worst_joint);
  CHECK(worst_mean > 2 * worst_distribution);
}
