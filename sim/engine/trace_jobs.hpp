#pragma once
// TraceJobs: the trace's jobs as the engine sees them, by index (JobId): each job's JobSpec and its
// placement Request. Either the whole trace in memory (every reader), or a window over a JobStream
// (generators, issue 17) that holds only the jobs read and not yet done, so memory follows the jobs
// in the system, not the trace. A job is done when it finished and its state was released, or was
// dropped before arriving.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "sim/cluster/cluster_state.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/slot_pool.hpp"
#include "workloads/jobs/job.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {

class TraceJobs {
 public:
  using MakeRequest = std::function<Request(const JobSpec&)>;
  TraceJobs() = default;
  /// The whole trace in memory.
  explicit TraceJobs(std::vector<JobSpec> jobs) : all_(std::move(jobs)), size_(all_.size()) {}
  /// A window over `stream`; requests are made with `make` as jobs enter the window.
  explicit TraceJobs(std::unique_ptr<JobStream> stream);

  std::size_t size() const { return size_; }
  bool streamed() const { return stream_ != nullptr; }

  /// Sets how requests are made (before the first spec/request call).
  void set_make_request(MakeRequest make) { make_ = std::move(make); }

  /// Job i. Streamed: i must not be done, and the window grows to i if needed.
  const JobSpec& spec(std::size_t i) const { return streamed() ? entry(i).spec : all_[i]; }
  const Request& request(std::size_t i) const { return streamed() ? entry(i).request : requests_[i]; }

  /// Visits every job once, in order, before the run (validation). In memory it also makes and keeps
  /// every request; streamed, `fn` gets each request and nothing is kept (the stream is rewound).
  void for_each(const std::function<void(std::size_t, const JobSpec&, const Request&)>& fn);
  /// Shows `placer` every request in trace order (Placer::observe_workload). Streamed, only if the
  /// placer wants the workload (the requests are made again, held for the call, and dropped).
  void show_workload(Placer& placer);

  /// Job i will not be asked for again (streamed: dropped once every job before it is done).
  void done(std::size_t i);

  /// Jobs held in memory now (the whole trace, or the window).
  std::size_t held() const { return streamed() ? pool_.in_use() : all_.size(); }

 private:
  struct Entry {
    JobSpec spec;
    Request request;
  };
  const Entry& entry(std::size_t i) const;

  std::vector<JobSpec> all_;
  std::vector<Request> requests_;
  std::size_t size_ = 0;
  MakeRequest make_;
  // streamed: the jobs read (index < read_) and not yet done (mutable: reading grows it)
  std::unique_ptr<JobStream> stream_;
  mutable SlotPool<Entry> pool_;            ///< an entry keeps its address as others come and go
  mutable std::vector<std::int32_t> slot_;  ///< per job: its entry in pool_, -1 if not held
  mutable std::size_t read_ = 0;
};

}  // namespace fleetsim
