#pragma once
// Fabric fidelity ([execution] fidelity = "fabric"): the fast shared-fabric model. Multi-GPU jobs
// contend on the real link capacities under max-min fairness like the network fidelity, but as
// fluid rates instead of SimGrid ptasks (max-min per flow; SimGrid's ptask solver shares a link
// per ring instead, which differs only for a ring crossing a link more than once: see
// network_fidelity.hpp):
//
// - each running job's ring is aggregated into per-link demands (the number of its ring flows
//   crossing each link, as the network fidelity's ptask puts them) and its per-flow rate is solved
//   over all running jobs (models/collective/max_min.hpp): max-min fair (progressive filling) with
//   [execution] fabric_sharing = "max-min" (every job talking all the time: the pessimistic bound);
//   "mean-field": max-min as the floor, plus what sharers leave idle on average while they compute
//   (fabric_overlap = 0.15 weighs sharers a little above their share of time talking); "arrival":
//   each link a processor-sharing server whose sharers are present, as a job that starts talking
//   sees them, for their share of time talking without it (the arrival theorem); "worst-link":
//   arrival's presences, then a ring's time per byte is the expected worst of its links, each
//   link's sharers coming and going independently (no fitted overlap); "joint": as worst-link, but
//   each sharer is present or absent once for all the ring's links it crosses, and sharers whose
//   rate another link sets come and go too (fabric_draws Latin hypercube draws); or by default
//   "joint-cycle": a ring's time per byte weighs joint's by 1 - q and arrival's by q, q its share of
//   time talking (its block of talking averages its sharers over about q of their cycle);
// - fabric_headroom = "distribution" (the default): on a link with room for more than a ring's flows
//   at its alone rate, the ring is slowed by the times more sharers than the room holds are present
//   (the distribution of the sharers present; "mean": their mean number);
// - fabric_allocation = "fair-bottleneck" (the default) moves those rates towards SimGrid's ptask
//   solver, which favours rings that cross few links ("max-min": the rates above, unmoved);
// - rates are re-solved only when the set of jobs on the fabric changes (a start, an end, a
//   preemption), and only for the connected component of jobs sharing links with the changed one;
// - a job of compute share phi whose all-reduces take T x (1 - phi) alone stretches them by
//   s = alone_rate / rate >= 1: its work progresses at 1 / (phi T + (1 - phi) T s), through the
//   engine's per-job hook speed factor (Execution::hook_speed = 1 / (phi + (1 - phi) s)).
//
// Alone (s = 1) a job runs exactly as in the delay fidelity. Against the network fidelity (whose
// chunked ptasks overlap sharers' all-reduces in blocks), max-min is pessimistic, and the mean and
// arrival fields at overlap 0 are optimistic; sim/network/README.md gives the measured gaps. Link loads
// are piecewise constant between rate changes: LinkLedger gives the same report (links.csv,
// link_tiers.csv, summary.json "network"; ptasks = 0) as the network fidelity. Not modelled: a
// policy's or co-location's speed change of a running job does not re-time its link loads; restart
// overheads are counted as talking.
#include <optional>
#include <vector>

#include "models/collective/max_min.hpp"
#include "sim/engine/hooks.hpp"
#include "sim/network/link_ledger.hpp"
#include "sim/network/network_hook.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "sim/platform/ring.hpp"

namespace simgrid::s4u {
class Link;
}  // namespace simgrid::s4u

namespace fleetsim {

class FabricFidelity final : public ExecutionHook {
 public:
  FabricFidelity(const ClusterSpec& cluster, NetworkFidelityConfig config);

  void attach(JobClock& clock, const Platform& platform, std::size_t jobs) override;
  void on_start(JobId id, const PlacementSummary& where) override;
  void on_leave(JobId id) override;
  void on_end(double time_s) override;

  /// Link utilization over the run (after it ended).
  NetworkReport report() const;
  /// Max-min re-solves (component solves) over the run.
  long solves() const { return solves_; }

 private:
  struct FabricJob {
    bool active = false;
    double phi = 1;
    double flow_rate = 0;  ///< bytes/s per ring flow moved now (time-averaged over its iterations)
    double comm_frac = 0;  ///< share of its time in all-reduce now
    double since = 0;      ///< last accounting update
  };
  /// Applies the solver's rate for job `id` from now on: its hook speed and its link loads.
  void apply(JobId id, double now);
  /// Closes the job's comm time and bytes up to now.
  void account(JobId id, double now);
  FabricJob& of(JobId id) { return jobs_[static_cast<std::size_t>(id)]; }

  const ClusterSpec& cluster_;
  NetworkFidelityConfig config_;
  JobClock* clock_ = nullptr;
  const Platform* platform_ = nullptr;
  MaxMinSolver solver_;  ///< its link indices are the ledger's
  LinkLedger ledger_;
  RouteCache routes_;  ///< host-pair routes, asked of SimGrid once
  std::vector<FabricJob> jobs_;
  double end_s_ = 0;
  long solves_ = 0;
};

}  // namespace fleetsim
