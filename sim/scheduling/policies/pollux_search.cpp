#include "sim/scheduling/policies/pollux_search.hpp"

#include <pagmo/utils/multi_objective.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string_view>
#include <utility>

namespace fleetsim::pollux {
namespace {

/// a dominates b (both minimised): no worse in both, better in one.
bool dominates(const Objectives& a, const Objectives& b) {
  return a[0] <= b[0] && a[1] <= b[1] && (a[0] < b[0] || a[1] < b[1]);
}

double uniform(std::mt19937_64& rng) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

/// Threshold of a Bernoulli(p) trial on a raw 64-bit draw: success when rng() < threshold.
std::uint64_t threshold(double p) {
  if (!(p > 0)) return 0;
  if (p >= 1) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::ldexp(p, 64));
}

/// Bernoulli(p) trials over 0..count-1: calls hit(i) for each success.
template <typename F>
void bernoulli_hits(std::size_t count, std::uint64_t limit, std::mt19937_64& rng, F&& hit) {
  if (limit == 0) return;
  for (std::size_t i = 0; i < count; ++i)
    if (rng() < limit) hit(i);
}

/// Duplicate elimination by a 64-bit hash of the state: a collision (odds ~1e-11 a round) only drops
/// one distinct child.
std::uint64_t key_of(const std::uint8_t* s, std::size_t size) {
  return std::hash<std::string_view>()(std::string_view(reinterpret_cast<const char*>(s), size));
}

/// Inserts `key` into the sorted `keys`; false if it was there.
bool insert_key(std::vector<std::uint64_t>& keys, std::uint64_t key) {
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  if (it != keys.end() && *it == key) return false;
  keys.insert(it, key);
  return true;
}

/// Crowding distance within each front (pagmo's); fronts of fewer than 3 points are all boundary
/// (infinite), as in pymoo.
std::vector<double> crowding(const std::vector<Objectives>& f,
                             const std::vector<std::vector<std::size_t>>& fronts) {
  std::vector<double> out(f.size(), std::numeric_limits<double>::infinity());
  std::vector<std::vector<double>> pts;
  for (const auto& front : fronts) {
    if (front.size() < 3) continue;
    pts.clear();
    for (auto i : front) pts.push_back({f[i][0], f[i][1]});
    const auto cd = pagmo::crowding_distance(pts);
    for (std::size_t k = 0; k < front.size(); ++k) out[front[k]] = cd[k];
  }
  return out;
}

}  // namespace

AllocationSearch::AllocationSearch(std::vector<SearchJob> jobs, std::vector<int> node_gpus, AllocState base,
                                   const SearchSettings& settings, std::mt19937_64& rng)
    : jobs_(std::move(jobs)),
      node_gpus_(std::move(node_gpus)),
      base_(std::move(base)),
      settings_(settings),
      rng_(&rng),
      nj_(jobs_.size()),
      nn_(node_gpus_.size()) {
  total_gpus_ = std::accumulate(node_gpus_.begin(), node_gpus_.end(), 0);
  memo_.resize(nj_);
  restart_factor_.resize(nj_);
  for (std::size_t j = 0; j < nj_; ++j) {
    const SearchJob& job = jobs_[j];
    memo_[j].assign((nn_ + 1) * static_cast<std::size_t>(job.max_replicas + 1), -1.0);
    const double d = settings_.restart_delay_s;
    restart_factor_[j] = std::max(job.age_s - job.restarts * d, 0.0) / (job.age_s + d);
  }
}

double AllocationSearch::speedup(std::size_t job, int nodes, int replicas) {
  if (replicas <= 0) return 0;
  const int cap = jobs_[job].max_replicas;
  if (replicas > cap) return jobs_[job].speedup(nodes, replicas);  // repair keeps rows within the cap
  double& m = memo_[job][static_cast<std::size_t>(nodes) * static_cast<std::size_t>(cap + 1) +
                         static_cast<std::size_t>(replicas)];
  if (m < 0) m = std::max(0.0, jobs_[job].speedup(nodes, replicas));
  return m;
}

Objectives AllocationSearch::evaluate(const AllocState& s) {
  return evaluate(s.data());
}

Objectives AllocationSearch::evaluate(const std::uint8_t* s) {
  double inv_sum = 0, speed_sum = 0;
  active_.assign(nn_, 0);
  for (std::size_t j = 0; j < nj_; ++j) {
    int nodes = 0, replicas = 0;
    bool changed = false;
    const std::uint8_t* row = &s[j * nn_];
    const std::uint8_t* base = &base_[j * nn_];
    for (std::size_t n = 0; n < nn_; ++n) {
      const int v = row[n];
      changed = changed || v != base[n];
      if (v == 0) continue;
      ++nodes;
      replicas += v;
      active_[n] = 1;
    }
    const double sp = speedup(j, nodes, replicas);
    speed_sum += sp;
    double scaled = sp * static_cast<double>(nn_) / std::max(1, total_gpus_);
    if (changed) scaled *= restart_factor_[j];
    inv_sum += 1.0 / (scaled + 1e-3);
  }
  const double mean = nj_ == 0 ? 0.0 : static_cast<double>(nj_) / inv_sum;
  int used_gpus = 0;
  for (std::size_t n = 0; n < nn_; ++n) used_gpus += active_[n] != 0 ? node_gpus_[n] : 0;
  const double utility = used_gpus > 0 ? speed_sum / used_gpus : 0.0;
  return {-mean, -utility};
}

// Pollux's repair, row by row: each of its passes visits jobs in priority order and depends only on
// earlier rows of the same pass, so one visit per row with per-node counters gives the same result as
// its column-wise cumulative sums.
void AllocationSearch::repair(AllocState& s) {
  repair(s.data());
}

void AllocationSearch::repair(std::uint8_t* s) {
  seen_.assign(nn_, 0);
  used_.assign(nn_, 0);
  for (std::size_t j = 0; j < nj_; ++j) {
    std::uint8_t* row = &s[j * nn_];
    order_.clear();
    for (std::size_t n = 0; n < nn_; ++n)
      if (row[n] > 0) order_.push_back(n);
    if (order_.empty()) continue;
    // One distributed job per node: the first (in priority order) keeps its GPUs there.
    if (order_.size() > 1) {
      std::size_t kept = 0;
      for (std::size_t n : order_) {
        if (seen_[n]++ > 0)
          row[n] = 0;
        else
          order_[kept++] = n;
      }
      order_.resize(kept);
    }
    // The job's replica cap and node cap, over its nodes in a random order (only the order of the
    // nodes it uses matters: a uniform order of those).
    if (order_.size() > 1) std::shuffle(order_.begin(), order_.end(), *rng_);
    int total = 0, nodes = 0;
    for (std::size_t n : order_) {
      const int keep = std::min<int>(row[n], std::max(0, jobs_[j].max_replicas - total));
      total += keep;
      row[n] = static_cast<std::uint8_t>(keep > 0 && ++nodes > settings_.max_nodes_per_job ? 0 : keep);
    }
    // Node capacity: jobs in priority order take what is left.
    total = 0;
    for (std::size_t n : order_) {
      const int keep = std::min<int>(row[n], std::max(0, node_gpus_[n] - used_[n]));
      used_[n] += keep;
      total += keep;
      row[n] = static_cast<std::uint8_t>(keep);
    }
    if (total < jobs_[j].min_replicas) std::fill(row, row + nn_, 0);  // its GPUs stay counted, as in Pollux
  }
}

void AllocationSearch::mutate(std::uint8_t* s) {
  // Rows reset to the current allocation, rows with elements zeroed: Bernoulli(0.1) each.
  const std::uint64_t tenth = threshold(0.1);
  bernoulli_hits(nj_, tenth, *rng_, [&](std::size_t j) {
    std::copy_n(base_.begin() + static_cast<long>(j * nn_), nn_, s + j * nn_);
  });
  bernoulli_hits(nj_, tenth, *rng_, [&](std::size_t j) {
    bernoulli_hits(nn_, tenth, *rng_, [&](std::size_t n) { s[j * nn_ + n] = 0; });
  });
  // Grow: on a node with a free GPU, any job with probability p1 = 1 / jobs, a job already there
  // also with p2 = 1 / (jobs there) (so 1 - (1 - p1)(1 - p2) in all); the element becomes uniform in
  // [current, node GPUs]. Free GPUs are counted before any element grows.
  used_.assign(nn_, 0);
  seen_.assign(nn_, 0);
  for (std::size_t j = 0; j < nj_; ++j)
    for (std::size_t n = 0; n < nn_; ++n) {
      used_[n] += s[j * nn_ + n];
      seen_[n] += s[j * nn_ + n] > 0 ? 1 : 0;
    }
  const std::uint64_t p1 = threshold(nj_ > 0 ? 1.0 / static_cast<double>(nj_) : 0.0);
  hit_.assign(nj_, 0);
  for (std::size_t n = 0; n < nn_; ++n) {
    if (node_gpus_[n] - used_[n] < 1) continue;
    order_.clear();
    bernoulli_hits(nj_, p1, *rng_, [&](std::size_t j) {
      hit_[j] = 1;
      order_.push_back(j);
    });
    if (seen_[n] > 0) {
      const std::uint64_t p2 = threshold(1.0 / seen_[n]);
      for (std::size_t j = 0; j < nj_; ++j)
        if (s[j * nn_ + n] > 0 && hit_[j] == 0 && (*rng_)() < p2) order_.push_back(j);
    }
    for (std::size_t j : order_) {
      hit_[j] = 0;
      auto& v = s[j * nn_ + n];
      v = static_cast<std::uint8_t>(std::uniform_int_distribution<int>(v, node_gpus_[n])(*rng_));
    }
  }
}

std::vector<AllocState> AllocationSearch::run(const std::vector<AllocState>& initial, std::size_t& best) {
  // Individuals live in one flat buffer (parents, then offspring), so a child costs no allocation.
  const std::size_t size = nj_ * nn_;
  const auto pop_size = static_cast<std::size_t>(settings_.population);
  std::vector<std::uint8_t> buf((2 * pop_size + 2) * size), next_buf(buf.size());
  const auto at = [&](std::vector<std::uint8_t>& b, std::size_t i) { return b.data() + i * size; };
  std::vector<std::uint64_t> keys;  // sorted keys of the parents and the offspring so far
  std::vector<Objectives> f;
  std::size_t np = 0;
  const auto add_initial = [&](const AllocState& s0) {
    if (np >= pop_size || s0.size() != size) return;
    std::uint8_t* s = at(buf, np);
    std::copy(s0.begin(), s0.end(), s);
    repair(s);
    const auto key = key_of(s, size);
    if (!insert_key(keys, key)) return;
    f.push_back(evaluate(s));
    ++np;
  };
  for (const auto& s0 : initial) add_initial(s0);
  if (np == 0) add_initial(base_);
  std::vector<double> crowd = crowding(f, non_dominated_fronts_2d(f));
  std::vector<std::size_t> pool, perm;
  std::vector<Objectives> next_f;
  std::vector<std::uint64_t> next_keys;

  double best_f0 = std::numeric_limits<double>::infinity();
  int stalled = 0;
  for (int gen = 1; gen < settings_.generations; ++gen) {
    std::size_t n = np;  // parents and the offspring so far
    for (int attempt = 0; attempt < 100 && n < np + pop_size; ++attempt) {
      // Binary tournaments over concatenated random permutations: dominance, then crowding.
      pool.clear();
      while (pool.size() < 2 * pop_size) {
        perm.resize(np);
        std::iota(perm.begin(), perm.end(), std::size_t{0});
        std::shuffle(perm.begin(), perm.end(), *rng_);
        pool.insert(pool.end(), perm.begin(), perm.end());
      }
      const auto winner = [&](std::size_t a, std::size_t b) {
        if (dominates(f[a], f[b])) return a;
        if (dominates(f[b], f[a])) return b;
        if (crowd[a] != crowd[b]) return crowd[a] > crowd[b] ? a : b;
        return uniform(*rng_) < 0.5 ? a : b;
      };
      for (std::size_t m = 0; m + 3 < pool.size() && n < np + pop_size; m += 4) {
        const std::uint8_t* p0 = at(buf, winner(pool[m], pool[m + 1]));
        const std::uint8_t* p1 = at(buf, winner(pool[m + 2], pool[m + 3]));
        const auto point =
            std::uniform_int_distribution<std::size_t>(0, std::max<std::size_t>(nj_, 1) - 1)(*rng_);
        // One-point crossover over jobs: each child takes the other parent's rows before the point.
        for (int c = 0; c < 2 && n < np + pop_size; ++c) {
          const std::uint8_t* head = c == 0 ? p1 : p0;
          const std::uint8_t* tail = c == 0 ? p0 : p1;
          std::uint8_t* child = at(buf, n);
          std::copy_n(head, point * nn_, child);
          std::copy_n(tail + point * nn_, size - point * nn_, child + point * nn_);
          mutate(child);
          repair(child);
          if (!insert_key(keys, key_of(child, size))) continue;  // a duplicate: the slot is reused
          f.push_back(evaluate(child));
          ++n;
        }
      }
    }
    // Survival: the best pop_size of parents and offspring by rank, then crowding (pymoo's
    // RankAndCrowdingSurvival: a front that does not fit whole keeps its most crowded-apart points).
    const auto fronts = non_dominated_fronts_2d(f);
    const std::vector<double> merged_crowd = crowding(f, fronts);
    std::vector<std::size_t> keep;
    for (auto front : fronts) {
      if (keep.size() + front.size() > pop_size) {
        std::shuffle(front.begin(), front.end(), *rng_);  // random order among equal distances
        std::stable_sort(front.begin(), front.end(),
                         [&](std::size_t x, std::size_t y) { return merged_crowd[x] > merged_crowd[y]; });
        front.resize(pop_size - keep.size());
      }
      keep.insert(keep.end(), front.begin(), front.end());
      if (keep.size() >= pop_size) break;
    }
    next_f.clear();
    crowd.clear();
    next_keys.clear();
    for (std::size_t k = 0; k < keep.size(); ++k) {
      std::copy_n(at(buf, keep[k]), size, at(next_buf, k));
      next_f.push_back(f[keep[k]]);
      crowd.push_back(merged_crowd[keep[k]]);
      next_keys.push_back(key_of(at(next_buf, k), size));
    }
    std::swap(buf, next_buf);
    std::swap(f, next_f);
    keys = next_keys;
    std::sort(keys.begin(), keys.end());
    np = keep.size();
    double gen_best = std::numeric_limits<double>::infinity();
    for (const auto& o : f) gen_best = std::min(gen_best, o[0]);
    stalled = gen_best < best_f0 ? 0 : stalled + 1;
    best_f0 = std::min(best_f0, gen_best);
    if (settings_.stall_generations > 0 && stalled >= settings_.stall_generations) break;
  }
  // The non-dominated set of the final population, in population order.
  auto first = non_dominated_fronts_2d(f).front();
  std::sort(first.begin(), first.end());
  std::vector<AllocState> front;
  best = 0;
  for (std::size_t k = 0; k < first.size(); ++k) {
    if (f[first[k]][0] < f[first[best]][0]) best = k;
    front.emplace_back(at(buf, first[k]), at(buf, first[k]) + size);
  }
  return front;
}

std::vector<std::vector<std::size_t>> non_dominated_fronts_2d(const std::vector<Objectives>& f) {
  std::vector<std::size_t> order(f.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return f[a][0] != f[b][0] ? f[a][0] < f[b][0] : f[a][1] < f[b][1];
  });
  // In order of the first objective, each front's last point has its least second objective: a point
  // joins the first front whose last point does not dominate it (by transitivity no later front's
  // point can).
  std::vector<std::vector<std::size_t>> fronts;
  for (std::size_t i : order) {
    std::size_t k = 0;
    for (; k < fronts.size(); ++k) {
      const auto& last = f[fronts[k].back()];
      const bool dominated = last[1] < f[i][1] || (last[1] == f[i][1] && last[0] < f[i][0]);
      if (!dominated) break;
    }
    if (k == fronts.size()) fronts.emplace_back();
    fronts[k].push_back(i);
  }
  for (auto& front : fronts) std::sort(front.begin(), front.end());
  return fronts;
}

}  // namespace fleetsim::pollux
