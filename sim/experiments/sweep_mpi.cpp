#include "sim/experiments/sweep_mpi.hpp"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "sim/experiments/sweep_plan.hpp"

namespace fleetsim {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr int kTagJob = 1;     // rank 0 -> worker: a SweepJob as JSON
constexpr int kTagStop = 2;    // rank 0 -> worker: no more runs ("dead": a rank died, skip MPI_Finalize)
constexpr int kTagResult = 3;  // worker -> rank 0: the outcome as JSON
constexpr int kTagAlive = 4;   // worker -> rank 0: still running its run (the heartbeat)

// The test hook of a killed worker: the worker rank given the pending run with this index (from 0, in
// the order rank 0 deals them) SIGKILLs itself while that run's process runs (first attempt only).
constexpr const char* kKillHook = "FLEETSIM_TEST_KILL_WORKER_AT_RUN";

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
  // After a rank died MPI_Finalize can wait for it forever (Open MPI 4 with --enable-recovery): the
  // live ranks then end without it.
  ~MpiSession() {
    if (peer_died_) {
      std::fflush(nullptr);
      return;
    }
    MPI_Finalize();
  }
  void peer_died() { peer_died_ = true; }
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }

 private:
  int rank_ = 0;
  int size_ = 1;
  bool peer_died_ = false;
};

void send_text(const std::string& text, int dest, int tag) {
  MPI_Send(text.data(), static_cast<int>(text.size()), chars(), dest, tag, world());
}

struct Message {
  int from = 0;
  int tag = 0;
  std::string text;
};

/// The next message from `source` (or MPI_ANY_SOURCE), or none when `deadline` passes first. Probes
/// every millisecond: OpenMPI's blocking receive spins a core, which the workers' simulations need.
std::optional<Message> receive(int source, Clock::time_point deadline = Clock::time_point::max()) {
  MPI_Status st{};
  int flag = 0;
  for (;;) {
    MPI_Iprobe(source, MPI_ANY_TAG, world(), &flag, &st);
    if (flag != 0) break;
    if (Clock::now() >= deadline) return std::nullopt;
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

std::string job_message(std::size_t index, int attempt, const SweepJob& job) {
  json j;
  j["index"] = index;
  j["attempt"] = attempt;
  j["id"] = job.id;
  j["dir"] = job.dir.string();
  j["scenario"] = job.scenario;
  j["hash"] = job.hash;
  j["argv"] = job.argv;
  return j.dump();
}

/// How often a busy worker says it is alive: a sixth of the time after which rank 0 gives it up.
std::chrono::duration<double> heartbeat_period(const SweepOptions& o) {
  return std::chrono::duration<double>(std::clamp(o.worker_timeout_s / 6, 0.02, 5.0));
}

/// The index the kill hook names, or -1.
long kill_hook_index() {
  const char* v = std::getenv(kKillHook);
  if (v == nullptr || *v == '\0') return -1;
  char* end = nullptr;
  const long k = std::strtol(v, &end, 10);
  return *end == '\0' && k >= 0 ? k : -1;
}

/// A worker (rank >= 1): runs the jobs it is sent until told to stop; while a run's process runs it
/// tells rank 0 it is alive.
int work(const SweepOptions& o, MpiSession& mpi) {
  const auto period = std::chrono::duration_cast<Clock::duration>(heartbeat_period(o));
  const long kill_at = kill_hook_index();
  for (;;) {
    const Message m = *receive(0);
    if (m.tag != kTagJob) {
      if (m.text == "dead") mpi.peer_died();
      return 0;
    }
    const json j = json::parse(m.text);
    SweepJob job;
    job.id = j.at("id").get<std::string>();
    job.dir = j.at("dir").get<std::string>();
    job.scenario = j.at("scenario").get<std::string>();
    job.hash = j.at("hash").get<std::string>();
    job.argv = j.at("argv").get<std::vector<std::string>>();
    const bool kill_me =
        kill_at >= 0 && j.at("index").get<long>() == kill_at && j.at("attempt").get<int>() == 0;
    auto last = Clock::now();
    const auto tick = [&] {
      if (kill_me) ::raise(SIGKILL);  // the test hook: this rank dies mid-run (its run's process with it)
      if (Clock::now() - last < period) return;
      last = Clock::now();
      send_text("", 0, kTagAlive);
    };
    bool interrupted = false;
    SweepJobOutcome out;
    try {
      out = execute_job(job, interrupted, tick);
    } catch (const std::exception& e) {  // e.g. the run folder cannot be written: reported, not fatal
      out.ok = false;
      out.error = e.what();
    }
    json r;
    r["index"] = j.at("index");
    r["ok"] = out.ok;
    r["error"] = out.error;
    r["wall_s"] = out.wall_s;
    r["interrupted"] = interrupted;
    send_text(r.dump(), 0, kTagResult);
  }
}

/// A worker rank as rank 0 sees it.
struct Worker {
  bool alive = true;
  bool busy = false;
  std::size_t job = 0;     ///< while busy: the index into the pending runs
  Clock::time_point seen;  ///< its last message
};

/// Rank 0 with workers: deals the pending runs to ranks 1..size-1 as they become free. A busy worker
/// silent for o.worker_timeout_s is given up: its run goes back to the front of the queue for the next
/// free rank (a rank that speaks after that is told to stop and its result is ignored). Idle workers
/// wait for such runs until every run has ended; when no worker is left alive, rank 0 runs the rest.
int coordinate(const SweepPlan& plan, const SweepOptions& o, MpiSession& mpi) {
  const int size = mpi.size();
  std::vector<SweepJob> jobs;
  for (const std::size_t i : plan.pending) jobs.push_back(sweep_job(plan, i, o.exe));
  std::deque<std::size_t> queue;
  for (std::size_t k = 0; k < jobs.size(); ++k) queue.push_back(k);
  std::vector<int> attempts(jobs.size(), 0);
  std::vector<Worker> workers(static_cast<std::size_t>(size));
  workers[0].alive = false;  // rank 0 deals
  std::size_t finished = 0;
  bool interrupted = false;
  const auto timeout =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.worker_timeout_s));
  const auto dispatch = [&] {
    for (int w = 1; w < size && !interrupted && !queue.empty(); ++w) {
      Worker& wk = workers[static_cast<std::size_t>(w)];
      if (!wk.alive || wk.busy) continue;
      wk.job = queue.front();
      queue.pop_front();
      wk.busy = true;
      wk.seen = Clock::now();
      send_text(job_message(wk.job, attempts[wk.job]++, jobs[wk.job]), w, kTagJob);
    }
  };
  const auto count = [&](bool busy_only) {
    return std::count_if(workers.begin(), workers.end(),
                         [&](const Worker& w) { return w.alive && (w.busy || !busy_only); });
  };
  dispatch();
  while (count(true) > 0) {
    if (const auto m = receive(MPI_ANY_SOURCE, Clock::now() + timeout / 4)) {
      Worker& wk = workers[static_cast<std::size_t>(m->from)];
      if (!wk.alive) {  // given up earlier: its run went to another rank
        if (m->tag == kTagResult) send_text("dead", m->from, kTagStop);
        continue;
      }
      wk.seen = Clock::now();
      if (m->tag != kTagResult) continue;
      wk.busy = false;
      ++finished;
      const json r = json::parse(m->text);
      SweepJobOutcome outcome;
      outcome.ok = r.at("ok").get<bool>();
      outcome.error = r.at("error").get<std::string>();
      outcome.wall_s = r.at("wall_s").get<double>();
      interrupted = interrupted || r.at("interrupted").get<bool>();
      if (!o.quiet) print_job_progress(plan, plan.pending.at(wk.job), finished, jobs.size(), outcome);
    }
    for (int w = 1; w < size; ++w) {
      Worker& wk = workers[static_cast<std::size_t>(w)];
      if (!wk.alive || !wk.busy || Clock::now() - wk.seen < timeout) continue;
      wk.alive = false;
      queue.push_front(wk.job);
      std::fprintf(stderr, "fleetsim sweep: rank %d silent for %.0f s (dead?): run %s goes to another rank\n",
                   w, o.worker_timeout_s, jobs[wk.job].id.c_str());
    }
    dispatch();
  }
  const bool died = count(false) < size - 1;
  if (died) mpi.peer_died();
  for (int w = 1; w < size; ++w)
    if (workers[static_cast<std::size_t>(w)].alive) send_text(died ? "dead" : "", w, kTagStop);
  if (!queue.empty() && !interrupted && count(false) == 0)
    std::fprintf(stderr, "fleetsim sweep: no worker rank left: rank 0 runs the %zu remaining runs\n",
                 queue.size());
  while (!queue.empty() && !interrupted) {
    const std::size_t k = queue.front();
    queue.pop_front();
    const SweepJobOutcome outcome = execute_job(jobs[k], interrupted);
    if (interrupted) break;
    ++finished;
    if (!o.quiet) print_job_progress(plan, plan.pending.at(k), finished, jobs.size(), outcome);
  }
  if (interrupted) return report_interrupted(finished, jobs.size());
  return 0;
}

void stop_workers(int from, int size) {
  for (int w = from; w < size; ++w) send_text("", w, kTagStop);
}

/// Open MPI 4 (ORTE) ends the whole job when a rank dies unless mpirun was given --enable-recovery.
void note_recovery(bool quiet) {
  if (quiet || std::getenv("OMPI_MCA_orte_hnp_uri") == nullptr) return;
  const char* rec = std::getenv("OMPI_MCA_orte_enable_recovery");
  if (rec != nullptr && std::string(rec) != "0" && std::string(rec) != "false") return;
  std::fprintf(
      stderr,
      "fleetsim sweep: without mpirun --enable-recovery a rank that dies ends the whole job (a rerun "
      "resumes); with it the dead rank's run goes to another rank\n");
}

}  // namespace

bool mpi_built() {
  return true;
}

int run_sweep_mpi(const std::string& path, const SweepOptions& o) {
  MpiSession mpi;
  if (mpi.rank() != 0) return work(o, mpi);
  const auto t0 = Clock::now();
  SweepPlan plan;
  try {
    plan = plan_sweep(path, o.out, o.force, o.yes);
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
    note_recovery(o.quiet);
    return coordinate(plan, o, mpi);
  }();
  if (rc != 0) return rc;
  return finish_sweep(plan, o.quiet, plan.pending.size(), t0);
}

}  // namespace fleetsim
