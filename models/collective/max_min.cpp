#include "models/collective/max_min.hpp"
#include "models/collective/poisson_binomial.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

namespace fleetsim {

int MaxMinSolver::add_link(double capacity, bool shared) {
  capacity_.push_back(capacity);
  shared_.push_back(shared ? 1 : 0);
  users_.emplace_back();
  link_mark_.push_back(0);
  weight_.push_back(0);
  frozen_.push_back(0);
  version_.push_back(0);
  sens_.push_back(0);
  sens_rate_.push_back(0);
  left_.push_back(0);
  takers_.push_back(0);
  here_.emplace_back();
  elsewhere_.emplace_back();
  room_.emplace_back();
  return static_cast<int>(capacity_.size()) - 1;
}

const std::vector<long>& MaxMinSolver::add(long id, const std::vector<FlowUse>& uses, double phi) {
  Job j;
  j.uses = uses;
  j.phi = phi;
  j.id = id;
  j.alone = std::numeric_limits<double>::infinity();
  j.cap = std::numeric_limits<double>::infinity();
  std::vector<int> seeds;
  for (const auto& u : uses) {
    const auto l = static_cast<std::size_t>(u.link);
    if (shared_[l] != 0) {
      j.alone = std::min(j.alone, capacity_[l] / u.count);
      users_[l].push_back(id);
      seeds.push_back(u.link);
    } else {
      j.alone = std::min(j.alone, capacity_[l]);
      j.cap = std::min(j.cap, capacity_[l]);
    }
  }
  j.rate = j.alone;
  jobs_[id] = std::move(j);
  solved_.clear();
  if (seeds.empty()) {
    solved_.push_back(id);
    return solved_;
  }
  solve(seeds);
  return solved_;
}

const std::vector<long>& MaxMinSolver::remove(long id) {
  solved_.clear();
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return solved_;
  std::vector<int> seeds;
  for (const auto& u : it->second.uses) {
    const auto l = static_cast<std::size_t>(u.link);
    if (shared_[l] == 0) continue;
    auto& v = users_[l];
    v.erase(std::find(v.begin(), v.end(), id));
    seeds.push_back(u.link);
  }
  jobs_.erase(it);
  solve(seeds);
  return solved_;
}

void MaxMinSolver::solve(const std::vector<int>& seeds) {
  // The component: links and jobs reachable from the seeds through shared links.
  ++stamp_;
  std::vector<int> links;
  std::vector<Job*> members;
  for (int s : seeds)
    if (link_mark_[static_cast<std::size_t>(s)] != stamp_) {
      link_mark_[static_cast<std::size_t>(s)] = stamp_;
      links.push_back(s);
    }
  for (std::size_t k = 0; k < links.size(); ++k)
    for (long o : users_[static_cast<std::size_t>(links[k])]) {
      Job& j = jobs_.at(o);
      if (j.mark == stamp_) continue;
      j.mark = stamp_;
      j.frozen = false;
      solved_.push_back(o);
      members.push_back(&j);
      for (const auto& u : j.uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] != 0 && link_mark_[l] != stamp_) {
          link_mark_[l] = stamp_;
          links.push_back(u.link);
        }
      }
    }
  // Progressive filling. Heap entries: (level, kind 0 = link / 1 = job cap, index, version).
  using Entry = std::tuple<double, int, long, unsigned>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
  for (int li : links) {
    const auto l = static_cast<std::size_t>(li);
    weight_[l] = 0;
    frozen_[l] = 0;
  }
  for (Job* j : members)
    for (const auto& u : j->uses)
      if (shared_[static_cast<std::size_t>(u.link)] != 0)
        weight_[static_cast<std::size_t>(u.link)] += u.count;
  for (int li : links) {
    const auto l = static_cast<std::size_t>(li);
    ++version_[l];
    if (weight_[l] > 0) heap.emplace(capacity_[l] / weight_[l], 0, li, version_[l]);
  }
  for (std::size_t k = 0; k < members.size(); ++k)
    if (members[k]->cap < std::numeric_limits<double>::infinity())
      heap.emplace(members[k]->cap, 1, static_cast<long>(k), 0u);
  auto freeze = [&](Job& j, double level, int link) {
    j.frozen = true;
    j.rate = level;
    j.bottleneck = link;
    for (const auto& u : j.uses) {
      const auto l = static_cast<std::size_t>(u.link);
      if (shared_[l] == 0) continue;
      frozen_[l] += u.count * level;
      weight_[l] -= u.count;
      ++version_[l];
      if (weight_[l] > 0)
        heap.emplace(std::max(level, (capacity_[l] - frozen_[l]) / weight_[l]), 0, u.link, version_[l]);
    }
  };
  while (!heap.empty()) {
    const auto [level, kind, index, version] = heap.top();
    heap.pop();
    if (kind == 1) {
      Job& j = *members[static_cast<std::size_t>(index)];
      if (!j.frozen) freeze(j, level, -1);
      continue;
    }
    const auto l = static_cast<std::size_t>(index);
    if (version != version_[l] || weight_[l] <= 0) continue;
    for (long o : users_[l]) {
      Job& j = jobs_.at(o);
      if (!j.frozen) freeze(j, level, static_cast<int>(index));
    }
  }
  std::sort(solved_.begin(), solved_.end());
  if (members.size() < 2) return;  // a lone job keeps its max-min (alone) rate
  if (allocation_ == FabricAllocation::kMaxMin) return share(members, links);
  fair_bottleneck(members, links);
  share(members, links);
  toward_bottleneck(members, idle_ == IdleShare::kNone);
}

void MaxMinSolver::share(const std::vector<Job*>& members, const std::vector<int>& links) {
  switch (idle_) {
    case IdleShare::kNone:
      return;
    case IdleShare::kLeftover:
      return mean_field(members, links);
    case IdleShare::kArrival:
      return arrival_field(members, links);
    case IdleShare::kWorstLink:
    case IdleShare::kJoint:
    case IdleShare::kJointCycle:
      return worst_field(members, links);
  }
}

// Jobs that compute part of their time (phi > 0) talk only a share q = (1 - phi) s / (phi + (1 - phi) s)
// of it, s = alone / rate. A job then also gets what its sharers leave idle on average: on each
// shared link, the capacity less the others' mean load (sum of count x q x rate), per own flow;
// its rate is the least of those over its links, at least its max-min rate (everyone talking at
// once) and at most its alone rate. Solved by under-relaxed fixed-point iteration from the max-min rates.
void MaxMinSolver::mean_field(const std::vector<Job*>& members, const std::vector<int>& links) {
  if (!set_floors(members)) return;
  Relaxation relax;
  for (int it = 0; it < 40; ++it) {
    for (int li : links) frozen_[static_cast<std::size_t>(li)] = 0;  // mean load
    for (Job* j : members) {
      const double q = duty(*j);
      j->mean = (q + overlap_ * (1 - q)) * j->rate;
      for (const auto& u : j->uses)
        if (shared_[static_cast<std::size_t>(u.link)] != 0)
          frozen_[static_cast<std::size_t>(u.link)] += u.count * j->mean;
    }
    for (Job* j : members) {
      double r = j->alone;
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] != 0) r = std::min(r, (capacity_[l] - (frozen_[l] - u.count * j->mean)) / u.count);
      }
      j->next = std::max(r, j->floor);
    }
    if (relax.step(members)) break;
  }
}

bool MaxMinSolver::set_floors(const std::vector<Job*>& members) {
  bool any = false;
  for (Job* j : members) {
    j->floor = j->rate;
    any = any || j->phi > 0;
  }
  return any;
}

double MaxMinSolver::duty(const Job& j) {
  const double s = j.rate >= j.alone ? 1.0 : j.alone / j.rate;
  return (1 - j.phi) * s / (j.phi + (1 - j.phi) * s);
}

void MaxMinSolver::weigh(Job& j) const {
  const double q = duty(j);
  j.presence = q + overlap_ * (1 - q);
  j.sensitivity = (1 - overlap_) * q * (1 - q);
}

// Under-relaxed: a job's target moves with the sum of its sharers' rates, so with many sharers a
// plain step overshoots into oscillation; the step halves whenever the largest change grows.
bool MaxMinSolver::Relaxation::step(const std::vector<Job*>& members) {
  double change = 0;
  for (Job* j : members) {
    const double next = (1 - weight) * j->rate + weight * j->next;
    change = std::max(change, std::abs(next - j->rate) / j->rate);
    j->rate = next;
  }
  if (change < tolerance) return true;
  if (change > last) weight = std::max(weight / 2, 1.0 / 1024);
  last = change;
  return false;
}

// Arrival field. A link is a processor-sharing server for the jobs whose rate it sets, and each job
// cycles between computing (off the link) and talking: a closed network in which, by the arrival
// theorem, a job that starts talking sees each sharer j present with j's share of time talking in
// the network *without* it, Q_j^(-i). The fluid mean field (Q_j^(-i) = q_j, the Bard-Schweitzer
// approximation) over-counts sharers when there are few of them: against the exact product-form
// solution of one link, it is 3-7% pessimistic for 2-8 heavily communicating jobs. Here
// Q_j^(-i) = q_j - q_j (1 - q_j) d ln r_j, linearised in the rate j gains without i (within 3% of
// the exact solution on random links: tests/unit/test_max_min.cpp). On link l, job i then gets, per flow,
//   (C_l - A_l) / (c_i + sum over j != i bottlenecked on l of c_j w_j^(-i)),
// A_l the mean load of the sharers whose rate another link sets (they take their rate, not an equal
// share), w = Q + overlap (1 - Q). Its rate is the least over its links, within [max-min, alone].
void MaxMinSolver::arrival_field(const std::vector<Job*>& members, const std::vector<int>& links) {
  if (!set_floors(members)) return;  // bottlenecks start as the links that froze them in max-min
  Relaxation relax;
  relax.tolerance = 1e-4;  // 1e-6 took 3x the sweeps on network-2k and moved only chaotic runs
  for (int it = 0; it < 60; ++it) {
    for (int li : links) {
      const auto l = static_cast<std::size_t>(li);
      frozen_[l] = 0;     // A_l: mean load of sharers bottlenecked elsewhere
      weight_[l] = 0;     // B_l: presence of those bottlenecked here
      sens_[l] = 0;       // K_l: sum c_j dw_j/dln r_j over those here
      sens_rate_[l] = 0;  // G_l: the same, times r_j
    }
    if (headroom_ == Headroom::kDistribution) {
      ++sweep_;  // the links' distributions of sharers present are rebuilt on demand (capped_rate)
      for (int li : links) {
        here_[static_cast<std::size_t>(li)].clear();
        room_[static_cast<std::size_t>(li)].flows = 0;
      }
    }
    for (Job* j : members) {
      weigh(*j);
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] == 0) continue;
        if (u.link == j->bottleneck) {
          if (headroom_ == Headroom::kDistribution) {
            j->slot = static_cast<int>(here_[l].size());
            here_[l].emplace_back(j, u.count);
            room_[l].flows += static_cast<std::size_t>(u.count);
          }
          weight_[l] += u.count * j->presence;
          sens_[l] += u.count * j->sensitivity;
          sens_rate_[l] += u.count * j->sensitivity * j->rate;
        } else {
          frozen_[l] += u.count * j->presence * j->rate;
        }
      }
    }
    for (Job* j : members) {
      const double w = j->presence, dw = j->sensitivity;
      double r = j->alone;
      int at = -1;  // none: its alone rate bounds it
      for (const auto& u : j->uses) {
        const auto l = static_cast<std::size_t>(u.link);
        if (shared_[l] == 0) continue;
        const double open = std::max(capacity_[l] - frozen_[l], kTiny);  // C_l - A_l
        double others = 0, avail = 0;
        if (u.link == j->bottleneck) {
          // without j, the sharers bottlenecked here gain d ln r = c_j w_j / (open / r_k)
          const double gain = u.count * w / open;
          others = weight_[l] - u.count * w - gain * (sens_rate_[l] - u.count * dw * j->rate);
          avail = open;
        } else {
          const double own = u.count * w * j->rate;
          others = weight_[l] - own / open * sens_[l];
          avail = std::max(capacity_[l] - (frozen_[l] - own), kTiny);
        }
        double here = avail / (u.count + std::max(others, 0.0));
        if (headroom_ == Headroom::kDistribution && avail > u.count * j->alone) {
          // room above its alone rate: slowed by the times more sharers than the room are present
          const double capped = capped_rate(*j, u, avail, std::max(others, 0.0));
          if (capped < j->alone * (1 - 1e-9)) here = capped;
        }
        if (here <= r * (1 + 1e-9)) {  // a link that allows only its alone rate still bounds it
          r = std::min(r, here);
          at = u.link;
        }
      }
      j->next = std::max(r, j->floor);
      j->bottleneck = at;
    }
    if (relax.step(members)) break;
  }
}

// A link serves each flow at most at the job's alone rate: with room for a = avail / alone flows at
// that rate, the job's time per byte there is E[max(a, c + S)] / avail, S the flows of the present
// sharers (Poisson-binomial over their presences), not max(a, c + E[S]) / avail: the mean misses
// the times when more sharers than the room are present. E[max(a, c + S)] = c + E[S] + E[(t - S)^+],
// t = a - c, which needs P(S = s) only for s < t.
double MaxMinSolver::capped_time(const std::vector<std::pair<double, int>>& present, int count, double avail,
                                 double least, std::vector<double>& pmf) {
  const double t = avail * least - count;  // sharers' flows below which the job is not slowed here
  double mean = count;
  int flows = 0;
  for (const auto& [p, c] : present) {
    mean += c * p;
    flows += c;
  }
  if (!(t > 0)) return mean / avail;  // the cap never binds: the mean is exact
  if (flows <= t) return least;       // every sharer present fits: never slowed here
  const auto top = static_cast<std::size_t>(std::min(std::ceil(t), flows + 1.0));  // S <= flows
  pmf.assign(top, 0.0);
  pmf[0] = 1.0;
  for (const auto& [p, c] : present) add_presence(pmf.data(), pmf.data(), top, p, c);
  return (mean + shortfall(t, pmf.data(), top)) / avail;
}

// The arrival field's rate on a link with room, from the distribution of its equal sharers present
// (those it bottlenecks, at their presences) without j: prefix and suffix distributions of the
// link's sharers in order, truncated to `top` flows and built once a sweep, so that without-j is
// prefix convolved with suffix around j's place (stable, unlike dividing j out). The mean keeps the arrival
// field's leave-one-out presences (`others`); the term E[(t - S)^+] takes the presences as they are.
double MaxMinSolver::capped_rate(const Job& j, const FlowUse& u, double avail, double others) {
  const auto l = static_cast<std::size_t>(u.link);
  const double t = avail / j.alone - u.count;       // sharers' flows below which j is not slowed here
  if (!(t > 0)) return avail / (u.count + others);  // no room after all (rounding): the mean is exact
  RoomScratch& room = room_[l];
  const auto& sharers = here_[l];
  const std::size_t n = sharers.size();
  const bool mine = u.link == j.bottleneck;
  // every sharer present still fits in the room: never slowed here (no need to build the distributions)
  if (static_cast<double>(room.flows) - (mine ? u.count : 0) <= t) return j.alone;
  // P(S = s) for s < t, and S <= flows
  const auto top = static_cast<std::size_t>(std::min(std::ceil(t), static_cast<double>(room.flows + 1)));
  if (room.stamp != sweep_ || room.top < top) {
    room.top = std::min(std::max(top, room.stamp == sweep_ ? room.top * 2 : room.top), room.flows + 1);
    room.stamp = sweep_;
    const std::size_t w = room.top;
    room.prefix.assign((n + 1) * w, 0.0);
    room.suffix.assign((n + 1) * w, 0.0);
    room.prefix[0] = 1.0;
    for (std::size_t i = 0; i < n; ++i)
      add_presence(&room.prefix[i * w], &room.prefix[(i + 1) * w], w, sharers[i].first->presence,
                   sharers[i].second);
    room.suffix[n * w] = 1.0;
    for (std::size_t i = n; i-- > 0;)
      add_presence(&room.suffix[(i + 1) * w], &room.suffix[i * w], w, sharers[i].first->presence,
                   sharers[i].second);
  }
  const std::size_t w = room.top;
  if (!mine) return avail / (u.count + others + shortfall(t, &room.prefix[n * w], top));  // all sharers
  // without j: the sharers before its place convolved with those after it
  const double* before = &room.prefix[static_cast<std::size_t>(j.slot) * w];
  const double* after = &room.suffix[(static_cast<std::size_t>(j.slot) + 1) * w];
  auto& pmf = worst_.pmf;
  pmf.assign(top, 0.0);
  for (std::size_t s = 0; s < top; ++s)
    for (std::size_t a = 0; a <= s; ++a) pmf[s] += before[a] * after[s - a];
  return avail / (u.count + others + shortfall(t, pmf.data(), top));
}

}  // namespace fleetsim
