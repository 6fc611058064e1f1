#include "sim/experiments/process_pool.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>

extern char** environ;

namespace fleetsim {
namespace {

using Clock = std::chrono::steady_clock;

volatile std::sig_atomic_t g_interrupted = 0;  // set by the handler only while a pool runs

extern "C" void on_signal(int) {
  g_interrupted = 1;
}

/// Installs the handlers for the lifetime of a pool and restores the previous ones.
class SignalGuard {
 public:
  SignalGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: waitpid returns EINTR
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~SignalGuard() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalGuard(const SignalGuard&) = delete;
  SignalGuard& operator=(const SignalGuard&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

pid_t spawn(const ProcessTask& t, std::string& error) {
  std::vector<char*> args;
  for (const auto& s : t.argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!t.log.empty()) {
    posix_spawn_file_actions_addopen(&fa, 1, t.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
  }
  // Children get the default dispositions of SIGINT/SIGTERM back (ours are handlers, reset by exec).
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    error = "cannot start " + t.argv[0] + ": " + std::strerror(rc);
    return -1;
  }
  return pid;
}

}  // namespace

std::string ProcessResult::how() const {
  if (!started) return error;
  if (signal != 0) return "signal " + std::to_string(signal);
  return "exit code " + std::to_string(exit_code);
}

PoolEnd run_processes(const std::vector<ProcessTask>& tasks, std::size_t parallel,
                      const ProcessHooks& hooks) {
  SignalGuard guard;
  if (parallel == 0) parallel = 1;
  std::map<pid_t, std::size_t> running;
  std::map<std::size_t, Clock::time_point> started;
  std::size_t next = 0;
  bool stop = false;
  auto stop_all = [&] {
    for (const auto& [pid, i] : running) ::kill(pid, SIGTERM);
  };
  while ((!stop && next < tasks.size()) || !running.empty()) {
    while (!stop && !g_interrupted && next < tasks.size() && running.size() < parallel) {
      const std::size_t i = next++;
      if (hooks.before) hooks.before(i);
      std::string error;
      const pid_t pid = spawn(tasks[i], error);
      if (pid < 0) {
        ProcessResult r;
        r.error = error;
        if (hooks.done && !hooks.done(i, r)) {
          stop = true;
          stop_all();
        }
        continue;
      }
      started[i] = Clock::now();
      running[pid] = i;
    }
    if (g_interrupted) break;
    if (running.empty()) continue;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const std::size_t i = it->second;
    running.erase(it);
    ProcessResult r;
    r.started = true;
    r.pid = pid;
    r.wall_s = std::chrono::duration<double>(Clock::now() - started[i]).count();
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    if (hooks.done && !hooks.done(i, r) && !stop) {
      stop = true;
      stop_all();
    }
  }
  if (g_interrupted) {
    stop_all();
    for (const auto& [pid, i] : running) {
      int status = 0;
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
    }
    return PoolEnd::kInterrupted;
  }
  return stop ? PoolEnd::kStopped : PoolEnd::kAllDone;
}

}  // namespace fleetsim
