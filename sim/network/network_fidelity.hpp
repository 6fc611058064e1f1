#pragma once
// Network fidelity ([execution] fidelity = "network"): multi-GPU jobs' gradient all-reduces run as
// SimGrid parallel tasks on the modelled fabric, so concurrent jobs share GPU links, NICs, leaf
// uplinks and spine links through SimGrid's own solver (host/model:ptask_L07, whose host/solver is
// fairbottleneck in 3.32: each round a link offers every ptask crossing it an equal share of its
// remaining bandwidth, however many of the ptask's flows cross it; while each ring crosses a link
// at most once, as rail-aligned rings on first-fit or consolidated placements do, that is an
// equal rate per flow as in per-flow max-min; tests/unit/test_network_fidelity.cpp).
//
// A multi-GPU job is a sequence of chunks. A chunk covers a fraction D of the job: a compute phase
// (the compute share phi of D, timed by the job model like the delay fidelity, with co-location and
// policy speed factors) followed by its all-reduces as ONE ptask over the job's GPU hosts in ring
// order: bytes[i][i+1] = B for each neighbour pair (the ring's flows progress in lockstep, as an
// NCCL ring does). B is set so that the ptask alone on the idle fabric takes exactly the chunk's
// communication time: the collective model's time for the job's all-reduces. Alone, a job therefore
// finishes exactly when the delay fidelity says; under contention SimGrid stretches its ptasks.
//
// Chunk length (the error this introduces). Between chunk boundaries a job's communication is one
// block instead of one all-reduce per iteration, so two jobs on a shared link overlap their
// communication in blocks rather than iteration by iteration. A job whose links no other running
// job uses runs as one chunk (no error: nothing to share); a job sharing a link with another runs
// in chunks of max(1 iteration, u / chunks_shared of the job), u uniform in [1 - chunk_jitter,
// 1 + chunk_jitter] from a hash of the job and the chunk, and a job already computing when a sharer
// appears has its chunk cut to that length. Equal chunks (chunk_jitter 0) keep sharers' blocks in
// phase for the whole run; jittered ones drift apart as different jobs' iterations do. Events per
// job are thus about chunks_shared + 2 per sharing episode. tests/integration/test_network_cli.cpp
// measures the chunked result against iteration-by-iteration chunks on a contended platform.
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/network/network_report.hpp"
#include "sim/platform/ring.hpp"  // link_tier, ring_routes, simgrid::s4u::ExecPtr / Host / Link

namespace fleetsim {

/// One link's share of a job's ring: the number of ring flows crossing it.
struct LinkUse {
  int link = 0;
  int count = 0;
};

class RingPtasks {
 public:
  /// Adds a job with its GPU hosts in ring order; resolves its ring routes on the platform. Returns
  /// false (and adds nothing) when no link constrains the ring (e.g. all its GPUs are one host).
  bool add_job(long id, const std::vector<simgrid::s4u::Host*>& ring);
  void remove_job(long id);
  bool has_job(long id) const { return jobs_.count(id) > 0; }
  /// Running jobs other than `id` whose rings share a (non-FATPIPE) link with it.
  std::vector<long> sharers(long id) const;
  bool shared(long id) const;

  /// Starts the job's all-reduce ptask that alone takes `alone_s`. Returns false (nothing started)
  /// when `alone_s` is not longer than the ring's route latency.
  bool start(long id, double alone_s, double now);
  bool in_flight(long id) const;
  bool busy() const { return !inflight_.empty(); }
  /// The ptasks in flight (the engine waits on them with other hooks' activities).
  const std::vector<simgrid::s4u::ExecPtr>& ptasks() const { return inflight_; }
  /// ptasks()[k] finished: forgets it and returns its job.
  long complete(std::size_t k);
  /// Waits until a ptask finishes or `until` (inf: no limit) is reached; returns the job whose
  /// ptask finished, or -1 on timeout.
  long wait(double until);
  /// Cancels the job's ptask; returns the fraction of it that was done.
  double cancel(long id, double now);
  /// Bytes per ring flow moved by the job so far (for its achieved bandwidth).
  double flow_bytes(long id) const;

  NetworkReport report(double end_s, int buckets) const;

 private:
  struct Job {
    std::vector<simgrid::s4u::Host*> ring;
    std::vector<LinkUse> uses;  ///< sorted by link
    double s_per_byte = 0;      ///< ptask time per byte of each flow on the idle fabric
    double latency = 0;         ///< ptask start latency (longest ring route)
    simgrid::s4u::ExecPtr exec;
    double bytes = 0;       ///< of the in-flight ptask, per flow
    double ratio = 1;       ///< its remaining ratio at the last snapshot
    double flow_bytes = 0;  ///< moved so far, per flow
  };
  /// Per link, the hot part of its load accounting (one cache line for every snapshot): the load
  /// integral, the segment's load and the histogram bin last added to, whose value is held here
  /// (and written back to the link's histogram row when another bin is hit).
  struct LinkLoad {
    double area = 0;  ///< integral of bytes/s over time = bytes carried
    double acc = 0;   ///< load in the segment being closed, bytes/s
    double held = 0;  ///< time at utilization bin `bin` (hist_ holds it while another bin is held)
    int bin = -1;
  };
  int link_index(simgrid::s4u::Link* l);
  /// Closes the segment since the last snapshot: every in-flight ptask's progress over it gives its
  /// rate, hence each link's load (SimGrid's rates are constant between ptask starts and ends).
  /// `finished`: a job whose ptask just completed (remaining 0).
  void snapshot(double now, long finished = -1);
  /// Time the link spent at utilization bin `b`.
  double time_at(std::size_t link, std::size_t b) const;

  std::map<long, Job> jobs_;  ///< nodes are stable: inflight_ptr_ points into it
  std::vector<simgrid::s4u::ExecPtr> inflight_;
  std::vector<long> inflight_job_;
  std::vector<Job*> inflight_ptr_;
  RouteCache routes_;  ///< host-pair routes, asked of SimGrid once
  std::unordered_map<simgrid::s4u::Link*, int> index_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<double> capacity_;
  std::vector<char> fatpipe_;
  std::vector<int> tier_;  ///< per link: index into tier_names_
  std::vector<std::string> tier_names_;
  std::vector<LinkLoad> load_;                           ///< per link
  std::vector<std::vector<double>> hist_;                ///< per link: time at each utilization bin (of kBin)
  std::vector<std::vector<long>> users_;                 ///< per link: jobs whose ring crosses it
  std::vector<std::vector<TierSegment>> tier_segments_;  ///< per tier
  std::vector<int> touched_;                             ///< snapshot scratch: links loaded in the segment
  std::vector<double> tier_acc_;  ///< snapshot scratch: per tier, load summed over its links
  std::vector<char> tier_hit_;    ///< snapshot scratch: per tier, a link of it was loaded
  double last_snapshot_ = 0;
  long ptasks_ = 0;
};

}  // namespace fleetsim
