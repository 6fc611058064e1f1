#pragma once
// Max-min fair rates of ring collectives sharing links (progressive filling), for the fabric
// fidelity (sim/network/fabric_fidelity.hpp). Pure: no SimGrid.
//
// A job is one ring: its flows progress in lockstep at one rate r (bytes/s per flow), and it
// crosses link l with count_l of its flows. A shared link bounds sum_j count_lj x r_j <= C_l; an
// unshared link (SimGrid's FATPIPE) bounds each flow alone, r_j <= C_l. Rates are max-min fair in
// r: progressive filling raises every unfrozen job's rate together and freezes the jobs of each
// link that saturates, in order of saturation (a heap of the links' saturation levels). Alone, a
// job gets alone_rate() = min over its links of C_l / count_l (unshared: C_l) exactly.
//
// Jobs that also compute (a compute share phi > 0) talk only part of the time. Mean field on top of
// max-min: a job also gets what its sharers leave idle on average, each sharer k weighing
// q_k + overlap (1 - q_k) of its rate (q_k = its share of time talking at its stretched rate); the
// max-min rate stays the floor, the alone rate the ceiling (under-relaxed fixed point, at most 40
// sweeps of the component, to 1e-6). IdleShare::kArrival instead counts each sharer as present on
// the link with its share of time talking as seen by a job that starts talking (the arrival theorem
// of the closed network in which jobs alternate computing and talking, with a leave-one-out
// correction), and present sharers split the link equally unless another link bounds them: within
// 3% of the exact product-form solution on one link, where the mean field is 3-7% pessimistic (at
// most 60 sweeps, to 1e-4: a tighter stop only moved chaotic runs, at 3x the time).
// Headroom: a link with room for more than a ring's flows at its alone rate (an oversubscribed uplink
// holding two NICs' flows) slows the ring only while more sharers than the room holds are present.
// Headroom::kDistribution (the default) takes the ring's time per byte there as
// E[max(1 / alone, (c + S) / avail)] over the sharers present (Poisson-binomial), where kMean took
// max(1 / alone, (c + E[S]) / avail) and saw no slowdown until the mean filled the room: seven rings
// talking 15% of their time on a link with room for two are slowed 17.5% (the product form), 13.8%
// with the distribution (its room term skips the leave-one-out correction), 0% with the mean
// (tests/unit/test_headroom.cpp).
// IdleShare::kWorstLink takes the arrival field's fixed point, then slows each job by how much its
// expected worst time per byte over its links, their sharers present independently, exceeds the
// worst of their means (worst_link.cpp). IdleShare::kJoint does the same with each sharer present or
// absent once for all the links it shares with the ring, and sharers whose rate another link sets
// coming and going too, taking their rate while present (draws stratified per sharer: joint_link.cpp).
//
// FabricAllocation::kFairBottleneck moves each job's rate towards SimGrid's ptask solver (fair bottleneck,
// the network fidelity's), which favours rings that cross few links over those that cross many: with
// every job talking its rate is that solver's exactly, and under a sharing field the field's rate is
// scaled by the same ratio (fair bottleneck over max-min, every job talking) raised to the share of
// that all-talking slowdown the job actually sees (fair_bottleneck.cpp).
//
// Incremental: adding or removing a job re-solves only the connected component of jobs linked to
// it through shared links (the rates of other jobs cannot change).
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fleetsim {

/// One link's share of a job's ring: the number of the ring's flows crossing it.
struct FlowUse {
  int link = 0;
  int count = 0;
};

/// How jobs that compute part of their time share the idle time of their sharers.
enum class IdleShare {
  kNone,        ///< not at all: every job talks all the time (max-min alone, the pessimistic bound)
  kLeftover,    ///< a job gets the capacity less its sharers' mean load (fluid mean field)
  kArrival,     ///< a job talks with each sharer present for its share of time, as seen on arrival
  kWorstLink,   ///< as kArrival, then a job's time per byte is the expected worst of its links, each
                ///< link's sharers coming and going independently (worst_link.cpp)
  kJoint,       ///< as kWorstLink, each sharer coming and going once for all the ring's links it crosses,
                ///< those bottlenecked elsewhere too (joint_link.cpp)
  kJointCycle,  ///< kJoint's expected worst weighed by 1 - q against kArrival's worst mean by q, q the
                ///< ring's share of time talking: its block averages its sharers over q of their cycle
};

/// How the arrival field (and the fields built on it) counts a link's room above a ring's alone rate.
enum class Headroom {
  kMean,          ///< the ring's time per byte from the sharers' mean number present
  kDistribution,  ///< from their distribution: E[max(alone's, (c + S) / C)], S drawn as the product form
};

/// The static allocation of jobs that all talk at once, which the sharing fields build on.
enum class FabricAllocation {
  kMaxMin,          ///< max-min fairness in the per-flow rate (progressive filling)
  kFairBottleneck,  ///< max-min's floor and fields, moved towards SimGrid's fair-bottleneck solver
};

class MaxMinSolver {
 public:
  /// One step of the distribution of a job's time per byte on one link: P(X <= x) = cdf (the
  /// worst-link field's scratch, worst_link.cpp).
  struct TimeStep {
    double x = 0;
    int link = 0;  ///< the link's index among the job's shared links
    double cdf = 0;
  };

  /// `overlap` in [0, 1]: how much more than independent phases the sharers' all-reduces overlap
  /// in the mean field (0: a sharer weighs its share q of the time; 1: it always weighs, max-min).
  /// `draws` (>= 1): the joint field's draws of the sharers' presences per ring and solve.
  explicit MaxMinSolver(double overlap = 0, IdleShare idle = IdleShare::kLeftover, int draws = kDraws,
                        FabricAllocation allocation = FabricAllocation::kMaxMin,
                        Headroom headroom = Headroom::kDistribution)
      : overlap_(overlap), idle_(idle), draws_(draws), allocation_(allocation), headroom_(headroom) {}
  static constexpr int kDraws = 32;  ///< the joint field's default draws (64, 128: same figures within noise)

  /// A link of `capacity` bytes/s; shared = false: it bounds each flow alone (FATPIPE). Returns its
  /// index (0, 1, ...).
  int add_link(double capacity, bool shared = true);
  int links() const { return static_cast<int>(capacity_.size()); }

  /// Adds job `id` crossing `uses` (distinct links, counts >= 1), computing a share `phi` of its
  /// time (0: always communicating). Returns the jobs whose rate was re-solved (the job's component,
  /// `id` included), in ascending id order.
  const std::vector<long>& add(long id, const std::vector<FlowUse>& uses, double phi = 0);
  /// Removes job `id`; returns the jobs re-solved (its former component, `id` excluded).
  const std::vector<long>& remove(long id);

  bool has(long id) const { return jobs_.count(id) > 0; }
  /// Per-flow rate of job `id`, bytes/s.
  double rate(long id) const { return jobs_.at(id).rate; }
  /// Its rate alone on the fabric.
  double alone_rate(long id) const { return jobs_.at(id).alone; }
  const std::vector<FlowUse>& uses(long id) const { return jobs_.at(id).uses; }

 private:
  struct Job {
    std::vector<FlowUse> uses;
    double alone = 0;  ///< min over links of C_l / count_l (unshared: C_l)
    double cap = 0;    ///< min over unshared links of C_l (inf: none)
    double rate = 0;
    double phi = 0;          ///< compute share of its time
    double floor = 0;        ///< max-min rate (scratch of the fields)
    double mean = 0;         ///< mean per-flow rate q x rate (scratch)
    double next = 0;         ///< (scratch)
    double presence = 0;     ///< arrival field: w = Q + overlap (1 - Q), its weight on a link (scratch)
    double sensitivity = 0;  ///< arrival field: dw / d ln rate (scratch)
    int bottleneck = -1;     ///< the link that sets its rate (-1: none shared): max-min's, then the field's
    long id = 0;             ///< the job's id (the joint field's draws hash it)
    double bottleneck_rate = 0;  ///< fair bottleneck: its rate under that solver, every job talking (scratch)
    double step = 0;             ///< fair bottleneck: what it took in its last round (scratch)
    bool open = false;           ///< fair bottleneck: still taking (scratch)
    int slot = 0;       ///< arrival field, Headroom::kDistribution: its place in its link's here_ list
    unsigned mark = 0;  ///< component search stamp
    bool frozen = false;
  };
  /// Re-solves the component reached from `seeds` (links) through shared links into solved_.
  void solve(const std::vector<int>& seeds);
  /// The sharing field of the component (none for max-min).
  void share(const std::vector<Job*>& members, const std::vector<int>& links);
  /// Fair-bottleneck rates of the component's jobs, every job talking, into Job::bottleneck_rate
  /// (fair_bottleneck.cpp).
  void fair_bottleneck(const std::vector<Job*>& members, const std::vector<int>& links);
  /// Scales each rate towards the fair-bottleneck allocation (fair_bottleneck.cpp).
  static void toward_bottleneck(const std::vector<Job*>& members, bool all_talking);
  /// Under-relaxed fixed-point step towards the members' targets (Job::next).
  struct Relaxation {
    double weight = 0.5;
    double last = 1e300;      ///< the previous step's largest relative change
    double tolerance = 1e-6;  ///< done once the largest relative change is below it
    /// Moves each rate towards its target; true once the largest relative change is below tolerance.
    bool step(const std::vector<Job*>& members);
  };
  static constexpr double kTiny = 1e-12;  ///< least capacity left on a link, bytes/s (no division by 0)
  /// Keeps the max-min rates as floors; false if no member computes (nothing to add).
  static bool set_floors(const std::vector<Job*>& members);
  /// Share of its time a job talks at its current rate: (1 - phi) s / (phi + (1 - phi) s).
  static double duty(const Job& j);
  /// Sets a job's presence w = Q + overlap (1 - Q) and its sensitivity dw / d ln rate at its rate.
  void weigh(Job& j) const;
  void mean_field(const std::vector<Job*>& members, const std::vector<int>& links);
  void arrival_field(const std::vector<Job*>& members, const std::vector<int>& links);
  /// Headroom::kDistribution: the arrival field's rate of job j on link u (room above its alone rate,
  /// avail > count x alone), `others` its sharers' leave-one-out mean flows there (max_min.cpp).
  double capped_rate(const Job& j, const FlowUse& u, double avail, double others);
  /// E[max(least, (count + S) / avail)], S the flows of `present`'s (presence, flows) that are present.
  static double capped_time(const std::vector<std::pair<double, int>>& present, int count, double avail,
                            double least, std::vector<double>& pmf);
  /// Arrival field's fixed point, then each rate from the expected worst link (worst_link.cpp), the
  /// links' sharers independent (kWorstLink) or each one presence for all links (kJoint).
  void worst_field(const std::vector<Job*>& members, const std::vector<int>& links);
  /// The joint field's expected worst time per byte of ring `id` over its shared links, at least
  /// `least`, from worst_.sharers, worst_.own and worst_.capacity (joint_link.cpp).
  double joint_worst(long id, double least);

  double overlap_ = 0;
  IdleShare idle_ = IdleShare::kLeftover;
  int draws_ = kDraws;
  FabricAllocation allocation_ = FabricAllocation::kMaxMin;
  Headroom headroom_ = Headroom::kDistribution;
  std::vector<double> capacity_;
  std::vector<char> shared_;
  std::vector<std::vector<long>> users_;  ///< per shared link: jobs crossing it (insertion order)
  std::unordered_map<long, Job> jobs_;
  std::vector<long> solved_;
  // scratch of solve()
  std::vector<unsigned> link_mark_;
  std::vector<double> weight_;  ///< per link: flows of unfrozen jobs
  std::vector<double> frozen_;  ///< per link: load of frozen jobs
  std::vector<unsigned> version_;
  std::vector<double> sens_, sens_rate_;  ///< arrival field, per link: sum c w' and sum c w' r (scratch)
  std::vector<double> left_, takers_;     ///< fair bottleneck, per link: capacity left, open jobs (scratch)
  /// arrival field, Headroom::kDistribution, per link: the distributions of the flows of its first i
  /// and of its last n - i equal sharers present, truncated to `top` flows (i = 0..n, rows of `top`)
  struct RoomScratch {
    unsigned stamp = 0;  ///< the sweep they were built in
    std::size_t top = 0;
    std::size_t flows = 0;  ///< the equal sharers' flows (counted as the sweep lists them in here_)
    std::vector<double> prefix, suffix;
  };
  std::vector<RoomScratch> room_;
  unsigned sweep_ = 0;
  /// worst field, per link: (job, flows) of the jobs it bottlenecks (here) and of the others (elsewhere)
  std::vector<std::vector<std::pair<Job*, int>>> here_, elsewhere_;
  struct WorstScratch {                           ///< worst field, per job (reused across solves)
    std::vector<std::pair<double, int>> present;  ///< a link's sharers: (presence, flows)
    std::vector<double> pmf, level;
    std::vector<TimeStep> steps;
    /// joint field: one of the ring's sharers on one of its shared links
    struct Sharer {
      long id = 0;        ///< the sharer's job id (its entries on several links share one presence)
      int slot = 0;       ///< the link's index among the ring's shared links
      bool here = false;  ///< the link sets its rate (an equal sharer) or another does (it takes its rate)
      double flows = 0;   ///< its flows on the link
      double load = 0;    ///< elsewhere: its load on the link while present, flows x rate
      double p = 0;       ///< its presence (here: leave-one-out, as the worst field's)
    };
    std::vector<Sharer> sharers;
    std::vector<double> own, capacity;  ///< joint field, per slot: the ring's flows and the link's capacity
    std::vector<char> chosen;           ///< joint field: Floyd's set of draws (one sharer's)
    std::vector<std::uint64_t> picks;   ///< joint field: the draws in it
    std::vector<std::size_t> groups;    ///< joint field: each sharer's first entry, then the end
    std::vector<std::uint32_t> hits;    ///< joint field: (draw, sharer) pairs, then sharers by draw
    std::vector<std::uint32_t> starts;  ///< joint field: each draw's first sharer in `order`
    std::vector<std::uint32_t> order;   ///< joint field: the present sharers, draw by draw
    std::vector<double> sums;           ///< joint field: per slot H, E and F of one draw
    std::vector<int> touched;           ///< joint field: the slots one draw's sharers cross
    std::vector<char> marked;           ///< joint field: whether a slot is in `touched`
  } worst_;
  unsigned stamp_ = 0;
};

}  // namespace fleetsim
