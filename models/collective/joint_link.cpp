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
// random numbers come from splitmix64 of (k, i), so the draws are deterministic. A draw changes only
// the links its present sharers cross (nobody present, X_l = c_i / C_l), so the cost per ring is the
// sort of its sharers' entries plus O(sum of n_k x the sharer's links + draws + the ring's links).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "models/collective/max_min.hpp"
#include "workloads/base/sampler.hpp"

namespace fleetsim {

double MaxMinSolver::joint_worst(long id, double least) {
  // a present sharer adds to its link's sums H (equal sharers' flows), E (others' load), F (their flows)
  auto add_present = [](double* at, const WorstScratch::Sharer& e) {
    if (e.here) {
      at[0] += e.flows;
    } else {
      at[1] += e.load;
      at[2] += e.flows;
    }
  };
  // X_l: the ring's time per byte on a link of capacity c where it has `own` flows, given the sums
  auto time_per_byte = [](double own, double c, const double* at) {
    const double here = own + at[0];
    return std::min(here / std::max(c - at[1], kTiny), (here + at[2]) / c);
  };
  auto& sharers = worst_.sharers;
  const auto& own = worst_.own;
  const auto& capacity = worst_.capacity;
  auto& sums = worst_.sums;
  auto& marked = worst_.marked;
  const auto draws = static_cast<std::uint64_t>(draws_);
  std::sort(sharers.begin(), sharers.end(),
            [](const auto& a, const auto& b) { return a.id != b.id ? a.id < b.id : a.slot < b.slot; });
  // one presence per sharer: the least of its leave-one-out presences where it is an equal sharer, else
  // its own (a sharer bottlenecked elsewhere on all the ring's links)
  for (std::size_t a = 0, b = 0; a < sharers.size(); a = b) {
    double p = 2;
    for (b = a; b < sharers.size() && sharers[b].id == sharers[a].id; ++b)
      if (sharers[b].here) p = std::min(p, sharers[b].p);
    if (p > 1) p = sharers[a].p;
    for (std::size_t e = a; e < b; ++e) sharers[e].p = p;
  }
  // Nobody present: each link's time per byte is own / C. X_l only grows with the sharers present, so a
  // link whose X_l with all its sharers present stays at most that floor never sets the maximum: its
  // entries are dropped (exactly: no other sharer's presence or draws depend on them).
  double base = least;
  for (std::size_t s = 0; s < own.size(); ++s) base = std::max(base, own[s] / capacity[s]);
  sums.assign(own.size() * 3, 0.0);
  for (const auto& e : sharers) add_present(&sums[static_cast<std::size_t>(e.slot) * 3], e);
  marked.assign(own.size(), 0);
  for (std::size_t s = 0; s < own.size(); ++s)
    marked[s] = time_per_byte(own[s], capacity[s], &sums[s * 3]) > base ? 1 : 0;
  std::erase_if(sharers, [&](const auto& e) { return marked[static_cast<std::size_t>(e.slot)] == 0; });
  auto& chosen = worst_.chosen;
  auto& picks = worst_.picks;
  auto& groups = worst_.groups;
  auto& hits = worst_.hits;
  chosen.assign(static_cast<std::size_t>(draws), 0);
  groups.clear();
  hits.clear();
  for (std::size_t a = 0, b = 0; a < sharers.size(); a = b) {
    for (b = a; b < sharers.size() && sharers[b].id == sharers[a].id;) ++b;
    const double p = sharers[a].p;
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
    const auto g = static_cast<std::uint32_t>(groups.size());
    for (const std::uint64_t d : picks) {
      chosen[d] = 0;
      hits.push_back(static_cast<std::uint32_t>(d));
      hits.push_back(g);
    }
    groups.push_back(a);
  }
  groups.push_back(sharers.size());
  // the present sharers draw by draw (counting sort; each draw's in sharer order, as they were drawn)
  auto& starts = worst_.starts;
  auto& order = worst_.order;
  auto& touched = worst_.touched;
  starts.assign(static_cast<std::size_t>(draws) + 1, 0);
  for (std::size_t h = 0; h < hits.size(); h += 2) ++starts[hits[h] + 1];
  for (std::size_t d = 0; d < static_cast<std::size_t>(draws); ++d) starts[d + 1] += starts[d];
  order.resize(hits.size() / 2);
  for (std::size_t h = 0; h < hits.size(); h += 2) order[starts[hits[h]]++] = hits[h + 1];
  // starts[d] is now draw d's end: its sharers are order[starts[d - 1], starts[d])
  // a draw changes only the links its present sharers cross
  sums.assign(own.size() * 3, 0.0);
  marked.assign(own.size(), 0);
  touched.clear();
  double total = 0;
  std::uint32_t from = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(draws); ++d) {
    for (std::uint32_t k = from; k < starts[d]; ++k)
      for (std::size_t e = groups[order[k]]; e < groups[order[k] + 1]; ++e) {
        const WorstScratch::Sharer& sh = sharers[e];
        if (marked[static_cast<std::size_t>(sh.slot)] == 0) {
          marked[static_cast<std::size_t>(sh.slot)] = 1;
          touched.push_back(sh.slot);
        }
        add_present(&sums[static_cast<std::size_t>(sh.slot) * 3], sh);
      }
    from = starts[d];
    double x = base;
    for (const int s : touched) {
      double* at = &sums[static_cast<std::size_t>(s) * 3];
      x = std::max(
          x, time_per_byte(own[static_cast<std::size_t>(s)], capacity[static_cast<std::size_t>(s)], at));
      at[0] = at[1] = at[2] = 0;
      marked[static_cast<std::size_t>(s)] = 0;
    }
    touched.clear();
    total += x;
  }
  return total / draws_;
}

}  // namespace fleetsim
