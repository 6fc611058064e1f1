#include "sim/metrics/recorders.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <queue>
#include <sstream>
#include <stdexcept>

#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

std::string csv_id(const std::string& id) {
  if (id.find_first_of(",\"\n") == std::string::npos) return id;
  std::string q = "\"";
  for (char c : id) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

namespace {

// A spilled row: index, nodes, six doubles, text length, text.
constexpr std::size_t kRowHeader = 2 * sizeof(int) + 6 * sizeof(double) + sizeof(std::uint32_t);

void put_row(std::ostream& f, const JobTable::Row& r) {
  const double v[6] = {r.submit_s, r.start_s, r.end_s, r.wasted_gpu_s, r.comm_s, r.comm_bytes};
  const auto len = static_cast<std::uint32_t>(r.text.size());
  f.write(reinterpret_cast<const char*>(&r.index), sizeof r.index);
  f.write(reinterpret_cast<const char*>(&r.nodes), sizeof r.nodes);
  f.write(reinterpret_cast<const char*>(v), sizeof v);
  f.write(reinterpret_cast<const char*>(&len), sizeof len);
  f.write(r.text.data(), static_cast<std::streamsize>(len));
}

bool get_row(std::istream& f, JobTable::Row& r) {
  double v[6];
  std::uint32_t len = 0;
  if (!f.read(reinterpret_cast<char*>(&r.index), sizeof r.index)) return false;
  f.read(reinterpret_cast<char*>(&r.nodes), sizeof r.nodes);
  f.read(reinterpret_cast<char*>(v), sizeof v);
  f.read(reinterpret_cast<char*>(&len), sizeof len);
  r.text.resize(len);
  f.read(r.text.data(), static_cast<std::streamsize>(len));
  if (!f) throw std::runtime_error("jobs.csv scratch file: short read");
  r.submit_s = v[0];
  r.start_s = v[1];
  r.end_s = v[2];
  r.wasted_gpu_s = v[3];
  r.comm_s = v[4];
  r.comm_bytes = v[5];
  return true;
}

bool by_index(const JobTable::Row& a, const JobTable::Row& b) {
  return a.index < b.index;
}

}  // namespace

JobTable::JobTable(std::ostream& out, std::string scratch, std::size_t buffer_rows)
    : out_(out), scratch_(std::move(scratch)), buffer_rows_(std::max<std::size_t>(1, buffer_rows)) {}

void JobTable::on_start(int, long jobs) {
  // Exact percentiles keep one JCT and one wait per finished job; reserve them once.
  stats_.jct.reserve(static_cast<std::size_t>(std::max(0L, jobs)));
  stats_.wait.reserve(static_cast<std::size_t>(std::max(0L, jobs)));
  buffer_.reserve(std::min(buffer_rows_, static_cast<std::size_t>(std::max(0L, jobs))));
}

void JobTable::on_job_finished(const JobRecord& r) {
  Row row;
  row.index = r.index;
  row.nodes = r.nodes;
  row.submit_s = r.submit_s;
  row.start_s = r.start_s;
  row.end_s = r.end_s;
  row.wasted_gpu_s = r.wasted_gpu_s;
  row.comm_s = r.comm_s;
  row.comm_bytes = r.comm_bytes;
  // Appended to one string (no stream per row: a million finishes must not cost seconds).
  std::string& t = row.text;
  t.reserve(96);
  t += csv_id(r.spec->id);
  for (const double v : {r.submit_s, r.start_s, r.end_s, r.start_s - r.submit_s, r.end_s - r.submit_s}) {
    t += ',';
    t += fmt(v);
  }
  t += ',';
  t += fmt(r.gpus, 3);
  t += ',';
  t += r.gpu_type;
  t += ',';
  t += std::to_string(r.nodes);
  t += ',';
  t += std::to_string(r.restarts);
  t += ',';
  t += fmt(r.preempted_s);
  restarts_ += r.restarts;
  if (r.comm_s >= 0) network_ = true;
  buffer_.push_back(std::move(row));
  if (buffer_.size() >= buffer_rows_) spill();
}

void JobTable::on_job_skipped(const JobSpec& job, const std::string& reason) {
  skipped_.push_back({job.id, job.source_line, reason});
  ++reasons_[reason];
}

void JobTable::spill() {
  std::stable_sort(buffer_.begin(), buffer_.end(), by_index);
  std::ofstream f(scratch_,
                  runs_.empty() ? std::ios::binary | std::ios::trunc : std::ios::binary | std::ios::app);
  if (!f) throw std::runtime_error("cannot write " + scratch_);
  for (const auto& r : buffer_) put_row(f, r);
  f.flush();
  if (!f) throw std::runtime_error("cannot write " + scratch_);
  const long long end = static_cast<long long>(f.tellp());
  runs_.emplace_back(scratch_size_, end);
  scratch_size_ = end;
  buffer_.clear();
}

void JobTable::on_end(double) {
  out_ << "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s"
       << (network_ ? ",comm_s,comm_gb_per_s\n" : "\n");
  std::stable_sort(buffer_.begin(), buffer_.end(), by_index);
  stats_.restarts = restarts_;
  if (runs_.empty()) {
    for (const auto& r : buffer_) emit(r);
  } else {
    // k-way merge of the sorted runs and the sorted buffer (source runs_.size()).
    struct Source {
      std::ifstream file;
      long long pos = 0, end = 0;
    };
    std::vector<Source> sources(runs_.size());
    std::vector<Row> head(runs_.size() + 1);
    using Item = std::pair<int, std::size_t>;  // (index, source)
    std::priority_queue<Item, std::vector<Item>, std::greater<>> heap;
    auto pull = [&](std::size_t s) {
      Source& src = sources[s];
      if (src.pos >= src.end || !get_row(src.file, head[s])) return;
      src.pos += static_cast<long long>(kRowHeader + head[s].text.size());
      heap.emplace(head[s].index, s);
    };
    for (std::size_t s = 0; s < runs_.size(); ++s) {
      sources[s].file.open(scratch_, std::ios::binary);
      sources[s].file.seekg(runs_[s].first);
      sources[s].pos = runs_[s].first;
      sources[s].end = runs_[s].second;
      pull(s);
    }
    std::size_t next = 0;  // in buffer_
    if (next < buffer_.size()) heap.emplace(buffer_[next].index, runs_.size());
    while (!heap.empty()) {
      const auto [index, s] = heap.top();
      heap.pop();
      if (s == runs_.size()) {
        emit(buffer_[next]);
        if (++next < buffer_.size()) heap.emplace(buffer_[next].index, s);
      } else {
        emit(head[s]);
        pull(s);
      }
    }
    sources.clear();
    std::remove(scratch_.c_str());
  }
  buffer_.clear();
  buffer_.shrink_to_fit();
  std::sort(stats_.jct.begin(), stats_.jct.end());
  std::sort(stats_.wait.begin(), stats_.wait.end());
}

void JobTable::emit(const Row& r) {
  out_ << r.text;
  if (network_) {
    // Achieved bandwidth: bytes per ring flow over the time spent in all-reduce (GB/s).
    const double comm = std::max(0.0, r.comm_s);
    out_ << ',' << fmt(comm) << ',' << fmt(comm > 0 ? r.comm_bytes / comm / 1e9 : 0.0, 3);
  }
  out_ << '\n';
  if (r.comm_s >= 0) comm_.push_back({r.comm_s, r.end_s - r.start_s, r.nodes});
  const double jct = r.end_s - r.submit_s, wait = r.start_s - r.submit_s;
  stats_.first_submit = stats_.jct.empty() ? r.submit_s : std::min(stats_.first_submit, r.submit_s);
  stats_.jct.push_back(jct);
  stats_.wait.push_back(wait);
  stats_.jct_sum += jct;
  stats_.wait_sum += wait;
  stats_.wasted_gpu_s += r.wasted_gpu_s;
  stats_.last_end = std::max(stats_.last_end, r.end_s);
}

void JobTable::write_skipped_csv(std::ostream& out) const {
  out << "job_id,line,reason\n";
  for (const auto& s : skipped_) out << s.id << ',' << s.line << ",\"" << s.reason << "\"\n";
}

TimeSeries::TimeSeries(std::ostream* out) : out_(out) {
  if (out_ != nullptr) *out_ << "time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n";
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
  if (out_ != nullptr && changed) {
    // A later sample at the same instant replaces the held one.
    if (holding_ && held_.time_s != s.time_s) write(held_);
    held_ = s;
    holding_ = true;
  }
  last_ = s;
  have_last_ = true;
}

void TimeSeries::write(const StateSample& s) {
  *out_ << fmt(s.time_s) << ',' << fmt(s.busy_gpus, 3) << ',' << s.running << ',' << s.queued << ','
        << s.completed << '\n';
}

void TimeSeries::on_end(double) {
  if (holding_) write(held_);
  holding_ = false;
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
  std::sort(v.begin(), v.end());
  return percentile_sorted(v, p);
}

double percentile_sorted(const std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const double rank = p / 100.0 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (rank - static_cast<double>(lo));
}

}  // namespace fleetsim
