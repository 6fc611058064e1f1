// Joint field (IdleShare::kJoint): the worst field's expectation E[max_l X_l] taken over the ring's
// sharers rather than over independent links (worst_link.cpp prepares the sharers).
//
// At one instant each sharer k of ring i is talking (present) or not, once for all the links it shares
// with i. On link l, i's time per byte is
//   X_l = min((c_i + H_l) / (C_l - E_l), (c_i + H_l + F_l) / C_l),
// H_l the flows of the present sharers that l bottlenecks (equal sharers), E_l the load of the present
// sharers whose rate another link sets (each takes its rate, flows x rate) and F_l their flows; the
// second term caps what they take at an equal share per flow, as max-min would. The ring takes
// max(least, max_l X_l), averaged over `draws_` draws of the sharers' presences: Latin hypercube
// sampling, each sharer present in n_k = floor(p_k draws + v_k) draws (v_k uniform in [0, 1), so
// E[n_k] = p_k draws) chosen at random (Floyd's algorithm), independently of the other sharers; the
// random numbers come from splitmix64 of (k, i), so the draws are deterministic. Cost: O(sum of n_k x the
// sharer's links + draws x the ring's links) per ring.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/collective/max_min.hpp"
#include "workloads/base/sampler.hpp"

namespace fleetsim {

double MaxMinSolver::joint_worst(long id, int slots, double least) {
  auto& sharers = worst_.sharers;
  auto& sums = worst_.sums;
  auto& chosen = worst_.chosen;
  auto& picks = worst_.picks;
  std::sort(sharers.begin(), sharers.end(),
            [](const auto& a, const auto& b) { return a.id != b.id ? a.id < b.id : a.slot < b.slot; });
  const auto links = static_cast<std::size_t>(slots);
  const auto draws = static_cast<std::uint64_t>(draws_);
  sums.assign(static_cast<std::size_t>(draws) * links * 3, 0.0);  // per (draw, slot): H, E and F
  chosen.assign(static_cast<std::size_t>(draws), 0);
  auto add = [&](std::uint64_t d, const WorstScratch::Sharer& e) {
    double* at = &sums[(static_cast<std::size_t>(d) * links + static_cast<std::size_t>(e.slot)) * 3];
    if (e.here) {
      at[0] += e.flows;
    } else {
      at[1] += e.load;
      at[2] += e.flows;
    }
  };
  for (std::size_t a = 0; a < sharers.size();) {
    std::size_t b = a;
    // one presence per sharer: the least of its leave-one-out presences where it is an equal sharer,
    // else its own (a sharer bottlenecked elsewhere on all the ring's links)
    double p = 2;
    for (; b < sharers.size() && sharers[b].id == sharers[a].id; ++b)
      if (sharers[b].here) p = std::min(p, sharers[b].p);
    if (p > 1) p = sharers[a].p;
    std::uint64_t state = splitmix64(static_cast<std::uint64_t>(sharers[a].id) * kSplitMixGamma ^
                                     static_cast<std::uint64_t>(id));
    auto next = [&state] {
      state += kSplitMixGamma;
      return splitmix64(state);
    };
    const double v = static_cast<double>(next() >> 11) * 0x1.0p-53;
    const auto n = std::min(draws, static_cast<std::uint64_t>(p * static_cast<double>(draws) + v));
    picks.clear();
    for (std::uint64_t j = draws - n; j < draws; ++j) {  // Floyd: n distinct draws out of `draws`
      const std::uint64_t t = next() % (j + 1);
      const std::uint64_t d = chosen[t] != 0 ? j : t;
      chosen[d] = 1;
      picks.push_back(d);
    }
    for (const std::uint64_t d : picks) {
      chosen[d] = 0;
      for (std::size_t e = a; e < b; ++e) add(d, sharers[e]);
    }
    a = b;
  }
  double total = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(draws); ++d) {
    double x = least;
    for (std::size_t s = 0; s < links; ++s) {
      const double* at = &sums[(d * links + s) * 3];
      const double here = worst_.own[s] + at[0], c = worst_.capacity[s];
      x = std::max(x, std::min(here / std::max(c - at[1], kTiny), (here + at[2]) / c));
    }
    total += x;
  }
  return total / draws_;
}

}  // namespace fleetsim
