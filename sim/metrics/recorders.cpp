#include "sim/metrics/recorders.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/base/text.hpp"

namespace fleetsim {

void JobTable::on_job_skipped(const JobSpec& job, const std::string& reason) {
  skipped_.push_back({job.id, job.source_line, reason});
  ++reasons_[reason];
}

void JobTable::write_csv(std::ostream& out) {
  std::stable_sort(finished_.begin(), finished_.end(),
                   [](const JobRecord& a, const JobRecord& b) { return a.index < b.index; });
  const bool network =
      std::any_of(finished_.begin(), finished_.end(), [](const JobRecord& r) { return r.comm_s >= 0; });
  out << "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s"
      << (network ? ",comm_s,comm_gb_per_s\n" : "\n");
  for (const auto& r : finished_) {
    std::string id = r.spec->id;
    if (id.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char c : id) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      id = q + "\"";
    }
    out << id << ',' << fmt(r.submit_s) << ',' << fmt(r.start_s) << ',' << fmt(r.end_s) << ','
        << fmt(r.start_s - r.submit_s) << ',' << fmt(r.end_s - r.submit_s) << ',' << fmt(r.gpus, 3) << ','
        << r.gpu_type << ',' << r.nodes << ',' << r.restarts << ',' << fmt(r.preempted_s);
    if (network) {
      // Achieved bandwidth: bytes per ring flow over the time spent in all-reduce (GB/s).
      const double comm = std::max(0.0, r.comm_s);
      out << ',' << fmt(comm) << ',' << fmt(comm > 0 ? r.comm_bytes / comm / 1e9 : 0.0, 3);
    }
    out << '\n';
  }
}

void JobTable::write_skipped_csv(std::ostream& out) const {
  out << "job_id,line,reason\n";
  for (const auto& s : skipped_) out << s.id << ',' << s.line << ",\"" << s.reason << "\"\n";
}

void TimeSeries::on_job_submitted(const JobRecord& job) {
  if (!arrived_) first_arrival_s_ = job.submit_s;
  arrived_ = arrival_pending_ = true;
}

void TimeSeries::on_sample(const StateSample& s) {
  if (have_last_) busy_gpu_s_ += last_.busy_gpus * (s.time_s - last_.time_s);
  peak_queued_ = std::max(peak_queued_, s.queued);
  // The busy window reaches this sample if a job arrived at it, waits at it, or waited until it.
  // Nothing runs before the first arrival, so the integral so far is the window's.
  if (arrival_pending_ || s.queued > 0 || (have_last_ && last_.queued > 0)) {
    window_end_s_ = s.time_s;
    window_busy_gpu_s_ = busy_gpu_s_;
    arrival_pending_ = false;
  }
  const bool changed = !have_last_ || s.busy_gpus != last_.busy_gpus || s.running != last_.running ||
                       s.queued != last_.queued || s.completed != last_.completed;
  if (keep_ && changed) {
    if (!samples_.empty() && samples_.back().time_s == s.time_s) {
      samples_.back() = s;
    } else {
      samples_.push_back(s);
    }
  }
  last_ = s;
  have_last_ = true;
}

void TimeSeries::write_csv(std::ostream& out) const {
  out << "time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n";
  for (const auto& s : samples_)
    out << fmt(s.time_s) << ',' << fmt(s.busy_gpus, 3) << ',' << s.running << ',' << s.queued << ','
        << s.completed << '\n';
}

void Progress::on_sample(const StateSample& s) {
  if ((++counter_ & 1023) != 0) return;
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (wall < 1.0 || wall - last_print_ < 0.5) return;
  last_print_ = wall;
  printed_ = true;
  std::fprintf(out_,
               "\r[fleetsim] sim %.1f h | %ld/%ld jobs done | %ld running | %ld queued | %.0f s wall   ",
               s.time_s / 3600.0, s.completed, jobs_, s.running, s.queued, wall);
  std::fflush(out_);
}

void Progress::on_end(double) {
  if (printed_) std::fprintf(out_, "\n");
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace fleetsim
