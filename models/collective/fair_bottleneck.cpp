// Fair bottleneck (FabricAllocation::kFairBottleneck): the network fidelity's SimGrid ptasks share links by
// SimGrid's fair-bottleneck solver, not by max-min. It runs in rounds: each link still open offers the
// capacity it has left split evenly among the open jobs crossing it (one share per job, whatever its
// flows there), each open job takes the least of its links' offers per flow, and each link then gives
// up what every job crossing it took in that round, a job already closed counting again what it took
// in its last round (as SimGrid's solver does). A link with nothing left closes, and so do its jobs.
// Early offers go to every job crossing a link, bottlenecked there or not, so a ring that crosses few
// links takes more than its max-min share and one that crosses many less: with every job talking
// (tests/bench/network-1k-steady-mix.toml), max-min gives 2-node rings 18-22% more communication time
// than the network fidelity and 20-node rings 11-19% less; this solver matches it within 0.4%.
//
// Sharing fields model jobs that talk part of the time on top of max-min. Each job's field rate r is
// moved towards the fair-bottleneck allocation by the ratio it sees with every job talking, b / m (b
// its fair-bottleneck rate, m its max-min rate), raised to the share of that all-talking slowdown the
// job actually sees: a = ln(A / r) / ln(A / m), A its alone rate. So a job that the field leaves at its
// alone rate is not moved (a = 0), one at its max-min floor takes the fair-bottleneck rate (a = 1), and
// the result lies between b and A. With every job talking (the max-min sharing) every rate is b.
#include <algorithm>
#include <cmath>
#include <vector>

#include "models/collective/max_min.hpp"

namespace fleetsim {

namespace {
constexpr int kMaxRounds = 100000;  ///< a bound only: each round closes a link or shrinks every offer
constexpr double kClosed = 1e-9;    ///< a link with less than this share of its capacity left is full
}  // namespace

void MaxMinSolver::fair_bottleneck(const std::vector<Job*>& members, const std::vector<int>& links) {
  for (int li : links) {
    left_[static_cast<std::size_t>(li)] = capacity_[static_cast<std::size_t>(li)];
    takers_[static_cast<std::size_t>(li)] = 0;
  }
  // each open job counts once on each shared link it crosses (a closing job gives its count back)
  auto count = [this](const Job& j, double by) {
    for (const auto& u : j.uses)
      if (shared_[static_cast<std::size_t>(u.link)] != 0) takers_[static_cast<std::size_t>(u.link)] += by;
  };
  std::size_t open = 0;
  for (Job* j : members) {
    j->floor = j->rate;  // its max-min rate (the fields keep it as their floor too)
    j->bottleneck_rate = 0;
    j->step = 0;
    j->open = true;
    count(*j, 1);
    ++open;
  }
  auto is_open = [this](std::size_t l) { return left_[l] > kClosed * capacity_[l]; };
  for (int round = 0; round < kMaxRounds && open > 0; ++round) {
    for (Job* j : members) {
      if (!j->open) continue;
      double take = j->cap - j->bottleneck_rate;  // an unshared link bounds each flow alone
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] != 0 && is_open(l)) take = std::min(take, left_[l] / takers_[l] / u.count);
      }
      if (!std::isfinite(take)) take = 0;  // every link of its closed: it closes below
      j->step = take;
      j->bottleneck_rate += take;
    }
    for (const Job* j : members)  // closed jobs take their last step again
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] != 0 && is_open(l)) left_[l] -= u.count * j->step;
      }
    for (Job* j : members) {
      if (!j->open) continue;
      bool full = j->bottleneck_rate >= j->cap;
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        full = full || (shared_[l] != 0 && !is_open(l));
      }
      if (full) {
        j->open = false;
        count(*j, -1);
        --open;
      }
    }
  }
}

void MaxMinSolver::toward_bottleneck(const std::vector<Job*>& members, bool all_talking) {
  for (Job* j : members) {
    const double m = j->floor, b = j->bottleneck_rate;
    if (!(b > 0)) continue;
    // Max-min leaves it its alone rate but the rounds may still slow it: with every job talking it
    // takes their rate; under a field it sees no all-talking slowdown to share and keeps its rate
    // (a = 1 there made network-1k random 2:1 +1.2% on mean JCT against +0.2%, 30 seeds).
    double a = all_talking ? 1.0 : 0.0;
    if (j->alone > m * (1 + 1e-12))
      a = std::clamp(std::log(j->alone / j->rate) / std::log(j->alone / m), 0.0, 1.0);
    j->rate = std::min(j->rate * std::pow(b / m, a), j->alone);
  }
}

}  // namespace fleetsim
