#include "sim/engine/trace_jobs.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace fleetsim {

TraceJobs::TraceJobs(std::unique_ptr<JobStream> stream)
    : size_(stream->size()), stream_(std::move(stream)), slot_(size_, -1) {
  stream_->rewind();
}

const TraceJobs::Entry& TraceJobs::entry(std::size_t i) const {
  if (i < read_ && slot_[i] >= 0) return pool_[slot_[i]];
  if (i < read_ || i >= size_)
    throw std::logic_error("trace job " + std::to_string(i) +
                           " is no longer held (done) or not in the trace");
  Entry* e = nullptr;
  for (; read_ <= i; ++read_) {
    slot_[read_] = pool_.acquire();
    e = &pool_[slot_[read_]];
    if (!stream_->next(e->spec)) throw std::logic_error("the job stream ended before its stated size");
    e->request = make_(e->spec);
  }
  return *e;
}

void TraceJobs::for_each(const std::function<void(std::size_t, const JobSpec&, const Request&)>& fn) {
  if (!streamed()) {
    requests_.clear();
    requests_.reserve(all_.size());
    for (std::size_t i = 0; i < all_.size(); ++i) {
      requests_.push_back(make_(all_[i]));
      fn(i, all_[i], requests_.back());
    }
    return;
  }
  stream_->rewind();
  JobSpec spec;
  for (std::size_t i = 0; i < size_; ++i) {
    if (!stream_->next(spec)) throw std::logic_error("the job stream ended before its stated size");
    fn(i, spec, make_(spec));
  }
  stream_->rewind();
  pool_.clear();
  std::fill(slot_.begin(), slot_.end(), -1);
  read_ = 0;
}

void TraceJobs::show_workload(Placer& placer) {
  if (!streamed()) {
    placer.observe_workload(requests_);
    return;
  }
  if (!placer.wants_workload()) return;
  std::vector<Request> all;
  all.reserve(size_);
  for_each([&](std::size_t, const JobSpec&, const Request& r) { all.push_back(r); });
  placer.observe_workload(all);
}

void TraceJobs::done(std::size_t i) {
  if (!streamed()) return;
  if (i >= read_) entry(i);  // a job dropped before it was read is read (and dropped) here
  if (slot_[i] < 0) return;
  pool_.release(slot_[i]);
  slot_[i] = -1;
}

}  // namespace fleetsim
