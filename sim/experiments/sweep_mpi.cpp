#include "sim/experiments/sweep_mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/experiments/sweep_plan.hpp"

namespace fleetsim {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kTagJob = 1;     // rank 0 -> worker: a SweepJob as JSON
constexpr int kTagStop = 2;    // rank 0 -> worker: no more runs
constexpr int kTagResult = 3;  // worker -> rank 0: the outcome as JSON

// OpenMPI's handles are C casts in macros: confined here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
MPI_Comm world() {
  return MPI_COMM_WORLD;
}
MPI_Datatype chars() {
  return MPI_CHAR;
}
#pragma GCC diagnostic pop

/// MPI_Init for the lifetime of the object, MPI_Finalize after.
class MpiSession {
 public:
  MpiSession() {
    MPI_Init(nullptr, nullptr);
    MPI_Comm_rank(world(), &rank_);
    MPI_Comm_size(world(), &size_);
  }
  ~MpiSession() { MPI_Finalize(); }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
};

void send_text(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), chars(), dest, tag, world());
}

struct Message {
  int from = 0;
  int tag = 0;
  std::string text;
};

/// The next message from `source` (or MPI_ANY_SOURCE). Probes every millisecond: OpenMPI's blocking
/// receive spins a core, which the workers' simulations need.
Message receive(int source) {
  MPI_Status st{};
  int flag = 0;
  for (;;) {
    MPI_Iprobe(source, MPI_ANY_TAG, world(), &flag, &st);
    if (flag != 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int n = 0;
  MPI_Get_count(&st, chars(), &n);
  Message m;
  m.from = st.MPI_SOURCE;
  m.tag = st.MPI_TAG;
  m.text.assign(static_cast<std::size_t>(n), '\0');
  MPI_Status done{};
  MPI_Recv(m.text.data(), n, chars(), m.from, m.tag, world(), &done);
  return m;
}

std::string job_message(std::size_t index, const SweepJob& job) {
  json j;
  j["index"] = index;
  j["id"] = job.id;
  j["dir"] = job.dir.string();
  j["scenario"] = job.scenario;
  j["hash"] = job.hash;
  j["argv"] = job.argv;
  return j.dump();
}

/// A worker (rank >= 1): runs the jobs it is sent until told to stop.
int work() {
  for (;;) {
    const Message m = receive(0);
    if (m.tag != kTagJob) return 0;
    const json j = json::parse(m.text);
    SweepJob job;
    job.id = j.at("id").get<std::string>();
    job.dir = j.at("dir").get<std::string>();
    job.scenario = j.at("scenario").get<std::string>();
    job.hash = j.at("hash").get<std::string>();
    job.argv = j.at("argv").get<std::vector<std::string>>();
    bool interrupted = false;
    SweepJobOutcome o;
    try {
      o = execute_job(job, interrupted);
    } catch (const std::exception& e) {  // e.g. the run folder cannot be written: reported, not fatal
      o.ok = false;
      o.error = e.what();
    }
    json r;
    r["index"] = j.at("index");
    r["ok"] = o.ok;
    r["error"] = o.error;
    r["wall_s"] = o.wall_s;
    r["interrupted"] = interrupted;
    send_text(r.dump(), 0, kTagResult);
  }
}

void stop_workers(int from, int size) {
  for (int w = from; w < size; ++w) send_text("", w, kTagStop);
}

/// Rank 0 with workers: deals the pending runs to ranks 1..size-1 as they become free.
int coordinate(const SweepPlan& plan, const SweepOptions& o, int size) {
  std::vector<SweepJob> jobs;
  for (const std::size_t i : plan.pending) jobs.push_back(sweep_job(plan, i, o.exe));
  std::size_t next = 0, finished = 0;
  int busy = 0;
  bool interrupted = false;
  for (int w = 1; w < size; ++w) {
    if (next < jobs.size()) {
      send_text(job_message(next, jobs[next]), w, kTagJob);
      ++next;
      ++busy;
    } else {
      send_text("", w, kTagStop);
    }
  }
  while (busy > 0) {
    const Message m = receive(MPI_ANY_SOURCE);
    if (m.tag != kTagResult) continue;
    --busy;
    ++finished;
    const json r = json::parse(m.text);
    const auto k = r.at("index").get<std::size_t>();
    SweepJobOutcome outcome;
    outcome.ok = r.at("ok").get<bool>();
    outcome.error = r.at("error").get<std::string>();
    outcome.wall_s = r.at("wall_s").get<double>();
    interrupted = interrupted || r.at("interrupted").get<bool>();
    if (!o.quiet) print_job_progress(plan, plan.pending.at(k), finished, jobs.size(), outcome);
    if (!interrupted && next < jobs.size()) {
      send_text(job_message(next, jobs[next]), m.from, kTagJob);
      ++next;
      ++busy;
    } else {
      send_text("", m.from, kTagStop);
    }
  }
  if (interrupted) {
    return report_interrupted(finished, jobs.size());
  }
  return 0;
}

}  // namespace

bool mpi_built() {
  return true;
}

int run_sweep_mpi(const std::string& path, const SweepOptions& o) {
  const MpiSession mpi;
  if (mpi.rank() != 0) return work();
  const auto t0 = Clock::now();
  SweepPlan plan;
  try {
    plan = plan_sweep(path, o.out, o.force);
  } catch (...) {
    stop_workers(1, mpi.size());  // bad input: nothing runs anywhere
    throw;
  }
  const int rc = [&] {
    if (mpi.size() == 1) {
      print_sweep_start(plan, sweep_parallelism(plan, o), o.quiet);
      return run_pending_locally(plan, o);
    }
    const auto workers = static_cast<std::size_t>(mpi.size() - 1);
    print_sweep_start(plan, std::max<std::size_t>(1, std::min(workers, plan.pending.size())), o.quiet);
    return coordinate(plan, o, mpi.size());
  }();
  if (rc != 0) return rc;
  return finish_sweep(plan, o.quiet, plan.pending.size(), t0);
}

}  // namespace fleetsim
