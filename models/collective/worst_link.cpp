// Worst-link field (IdleShare::kWorstLink): the arrival field's fixed point, then each job slowed
// by how much the expected worst of its links exceeds the worst of their means.
//
// A ring moves at the rate of its slowest link, and on each shared link the sharers that link
// bottlenecks come and go independently (each is bottlenecked, hence counted as present or absent,
// on one link only). At one instant, job i's time per byte on link l is
// X_l = (c_i + S_l) / (C_l - A_l), S_l the flows of the sharers talking there (a Poisson-binomial
// sum of their presences, as the arrival field computes them) and A_l the mean load of sharers whose
// rate another link sets. The ring takes max_l X_l per byte. The arrival field's rate,
// 1 / max_l E[X_l], is right on one link and optimistic on several: a ring crossing two links whose
// sharers each talk half the time waits on either three quarters of the time, not half. So its rate
// is multiplied by max_l E[X_l] / E[max_l X_l], both at its fixed point (1 on one link). E[max] of
// independent links comes from the product of their distribution functions: exact up to
// kExactFlows sharing flows on a link, a normal (5-point Gauss-Hermite) above. One pass: the slower
// rates are not fed back into the presences (iterating that to a fixed point oscillated).
//
// The joint field (IdleShare::kJoint) keeps the same presences and the same ratio, but takes E[max_l X_l]
// over the sharers themselves rather than over independent links (joint_link.cpp): a sharer that
// crosses several of the ring's links is present on all of them or on none, and a sharer whose rate
// another link sets comes and goes too, taking its rate while present, instead of loading the link
// with its mean all the time.
//
// The joint-cycle field (IdleShare::kJointCycle) weighs the two: E[max_l X_l] holds while the sharers stay
// as they are for the whole of the ring's block of talking, max_l E[X_l] (the arrival field's) once the
// block averages their comings and goings. A block lasts a share q of the ring's cycle of computing and
// talking (q its duty at the arrival field's rate); taking its sharers' cycles as long as its own, it
// spans about q of theirs, so the ring's time per byte is (1 - q) E[max_l X_l] + q max_l E[X_l]. With
// the network fidelity's chunks as cycles, on fixed placements heavily loaded at 4:1 (every sharer
// talking half the time or more; tests/bench/network-1k-steady-busy.toml, 40 seeds, fair-bottleneck
// allocation) joint is 4.4% pessimistic on communication, arrival 1.8% optimistic and the weighed
// field 1.2% pessimistic.
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "models/collective/max_min.hpp"
#include "models/collective/poisson_binomial.hpp"

namespace fleetsim {

namespace {

using TimeStep = MaxMinSolver::TimeStep;

constexpr int kExactFlows = 48;  ///< sharing flows up to which a link's distribution is exact

/// Appends link `link`'s steps: X = (count + S) / avail, count the job's own flows on it, S the sum of
/// `present` (probability, flows). Returns E[X].
double link_steps(const std::vector<std::pair<double, int>>& present, int count, double avail, int link,
                  std::vector<double>& pmf, std::vector<TimeStep>& steps) {
  int flows = 0;
  double mean = 0, var = 0;
  for (const auto& [p, c] : present) {
    flows += c;
    mean += c * p;
    var += static_cast<double>(c) * c * p * (1 - p);
  }
  if (flows > kExactFlows) {
    static constexpr double kZ[5] = {-2.856970013872806, -1.355626179974266, 0, 1.355626179974266,
                                     2.856970013872806};
    static constexpr double kW[5] = {0.011257411327721, 0.222075922005613, 0.533333333333333,
                                     0.222075922005613, 0.011257411327721};
    double cdf = 0;
    for (int z = 0; z < 5; ++z) {
      cdf = z == 4 ? 1.0 : cdf + kW[z];
      steps.push_back({(count + std::max(mean + std::sqrt(var) * kZ[z], 0.0)) / avail, link, cdf});
    }
    return (count + mean) / avail;
  }
  pmf.assign(1, 1.0);  // Poisson-binomial by convolution
  for (const auto& [p, c] : present) {
    const auto shift = static_cast<std::size_t>(c);
    pmf.resize(pmf.size() + shift, 0.0);
    add_presence(pmf.data(), pmf.data(), pmf.size(), p, c);
  }
  double cdf = 0;
  for (std::size_t s = 0; s < pmf.size(); ++s) {
    cdf += pmf[s];
    if (pmf[s] > 1e-13) steps.push_back({(count + static_cast<double>(s)) / avail, link, std::min(cdf, 1.0)});
  }
  steps.back().cdf = 1.0;
  return (count + mean) / avail;
}

/// E[max(least, X_0, ..., X_{links-1})] of independent links given as steps: sum of x dF(x), F the
/// product of the links' distribution functions.
double expected_max(std::vector<TimeStep>& steps, int links, double least, std::vector<double>& level) {
  std::sort(steps.begin(), steps.end(), [](const TimeStep& a, const TimeStep& b) { return a.x < b.x; });
  level.assign(static_cast<std::size_t>(links), 0.0);
  double below = 0, expect = 0;
  for (const TimeStep& s : steps) {
    level[static_cast<std::size_t>(s.link)] = s.cdf;
    double all = 1;
    for (double f : level) all *= f;
    expect += std::max(s.x, least) * (all - below);
    below = all;
  }
  return std::max(expect, least);
}

}  // namespace

void MaxMinSolver::worst_field(const std::vector<Job*>& members, const std::vector<int>& links) {
  arrival_field(members, links);  // leaves each job's max-min rate as its floor
  if (std::none_of(members.begin(), members.end(), [](const Job* j) { return j->phi > 0; })) return;
  for (int li : links) {
    const auto l = static_cast<std::size_t>(li);
    frozen_[l] = 0;  // A_l, as in the arrival field
    here_[l].clear();
    elsewhere_[l].clear();
  }
  for (Job* j : members) {
    weigh(*j);
    for (const auto& u : j->uses) {
      const auto l = static_cast<std::size_t>(u.link);
      if (shared_[l] == 0) continue;
      if (u.link == j->bottleneck) {
        here_[l].emplace_back(j, u.count);
      } else {
        frozen_[l] += u.count * j->presence * j->rate;
        elsewhere_[l].emplace_back(j, u.count);
      }
    }
  }
  const bool joint = idle_ == IdleShare::kJoint || idle_ == IdleShare::kJointCycle;
  auto& present = worst_.present;
  auto& pmf = worst_.pmf;
  auto& level = worst_.level;
  auto& steps = worst_.steps;
  auto& sharers = worst_.sharers;
  auto& own_flows = worst_.own;
  auto& capacity = worst_.capacity;
  for (Job* j : members) {
    steps.clear();
    sharers.clear();
    own_flows.clear();
    capacity.clear();
    int seen = 0;
    // the arrival field's time per byte: max over links of E[max(1 / alone, X_l)] (Headroom::kDistribution)
    // or max(1 / alone, max_l E[X_l]) (kMean)
    double means = 1 / j->alone;
    for (const auto& u : j->uses) {
      const auto l = static_cast<std::size_t>(u.link);
      if (shared_[l] == 0) continue;
      // without j, each sharer k gains d ln r_k = j's load here / (C_l - A_l) (as in the arrival field)
      const bool mine = u.link == j->bottleneck;
      const double own = mine ? 0.0 : u.count * j->presence * j->rate;
      const double open = std::max(capacity_[l] - frozen_[l], kTiny);
      present.clear();
      for (const auto& [k, c] : here_[l]) {
        if (k == j) continue;
        const double gain = (mine ? u.count * j->presence * k->rate : own) / open;
        present.emplace_back(std::clamp(k->presence - k->sensitivity * gain, 0.0, 1.0), c);
      }
      const double avail = std::max(open + own, kTiny);
      if (headroom_ == Headroom::kDistribution)
        means = std::max(means, capped_time(present, u.count, avail, 1 / j->alone, pmf));
      if (!joint) {
        means = std::max(means, link_steps(present, u.count, avail, seen++, pmf, steps));
        continue;
      }
      double mean = u.count;
      for (const auto& [p, c] : present) mean += p * c;
      means = std::max(means, mean / avail);
      own_flows.push_back(u.count);
      capacity.push_back(capacity_[l]);
      std::size_t n = 0;
      for (const auto& [k, c] : here_[l])
        if (k != j) sharers.push_back({k->id, seen, true, static_cast<double>(c), 0.0, present[n++].first});
      for (const auto& [k, c] : elsewhere_[l])
        if (k != j) sharers.push_back({k->id, seen, false, static_cast<double>(c), c * k->rate, k->presence});
      ++seen;
    }
    // the arrival rate, slowed by the ratio of the expected worst link to the worst mean
    const double least = 1 / j->alone;
    const double worst = seen == 0 ? means
                         : joint   ? joint_worst(j->id, least)
                                   : expected_max(steps, seen, least, level);
    // joint-cycle: the block of talking averages the sharers over a share q of their cycle
    const double averaged = idle_ == IdleShare::kJointCycle ? duty(*j) : 0.0;
    j->next =
        std::min(std::max(j->rate * means / ((1 - averaged) * worst + averaged * means), j->floor), j->alone);
  }
  for (Job* j : members) j->rate = j->next;
}

}  // namespace fleetsim
