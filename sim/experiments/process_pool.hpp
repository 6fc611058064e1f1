#pragma once
// Runs commands as child processes, at most N at a time (SimGrid's engine is one per process, so
// every simulation of an experiment is its own process). Each child's stdout and stderr go to a log
// file. SIGINT and SIGTERM received meanwhile stop the running children and end the pool. On Linux a
// child is killed when the process that started it dies.
#include <sys/types.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace fleetsim {

struct ProcessTask {
  std::vector<std::string> argv;  ///< argv[0] is the executable's path
  std::filesystem::path log;      ///< stdout + stderr (empty: inherited)
};

struct ProcessResult {
  bool started = false;  ///< false: the executable could not be started (see error)
  pid_t pid = 0;         ///< the child's process id, when started
  int exit_code = -1;    ///< when it exited
  int signal = 0;        ///< when a signal ended it
  double wall_s = 0;
  std::string error;  ///< why it could not start
  bool ok() const { return started && signal == 0 && exit_code == 0; }
  std::string how() const;  ///< "exit code 2", "signal 9", "cannot start ...: ..."
};

/// Hooks of run_processes: `before(i)` runs before task i starts (prepare its folder);
/// `done(i, result)` as each ends, in the order they end; returning false stops (SIGTERM) the
/// running tasks and starts no more; `tick()`, when set, about every 20 ms while tasks run (the pool
/// then polls for ended children instead of blocking).
struct ProcessHooks {
  std::function<void(std::size_t)> before;
  std::function<bool(std::size_t, const ProcessResult&)> done;
  std::function<void()> tick;
};

enum class PoolEnd { kAllDone, kStopped, kInterrupted };

/// Runs `tasks` in order, at most `parallel` (>= 1) at a time. kInterrupted: SIGINT/SIGTERM came
/// (the running children were sent SIGTERM and waited for; their done() is not called).
PoolEnd run_processes(const std::vector<ProcessTask>& tasks, std::size_t parallel, const ProcessHooks& hooks);

}  // namespace fleetsim
