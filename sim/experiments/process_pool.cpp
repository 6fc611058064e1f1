#include "sim/experiments/process_pool.hpp"

#include <fcntl.h>
#include <signal.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <thread>

extern char** environ;

namespace fleetsim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kTickPeriod = std::chrono::milliseconds(20);

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

/// Starts the task's process (fork and exec). On Linux the child is killed when this process dies
/// (PR_SET_PDEATHSIG), so a sweep worker that is killed leaves no run writing into its folder.
pid_t spawn(const ProcessTask& t, std::string& error) {
  std::vector<char*> args;
  for (const auto& s : t.argv) args.push_back(const_cast<char*>(s.c_str()));
  args.push_back(nullptr);
  int log_fd = -1;
  if (!t.log.empty()) {
    log_fd = ::open(t.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (log_fd < 0) {
      error = "cannot start " + t.argv[0] + ": cannot write " + t.log.string() + ": " + std::strerror(errno);
      return -1;
    }
  }
  int exec_error[2] = {-1, -1};  // the child writes errno here when exec fails (closed by a good exec)
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    error = "cannot start " + t.argv[0] + ": " + std::strerror(errno);
    if (log_fd >= 0) ::close(log_fd);
    return -1;
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls from here to exec
#ifdef __linux__
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
#endif
    if (log_fd >= 0) {
      ::dup2(log_fd, 1);
      ::dup2(log_fd, 2);
    }
    // Children get the default dispositions of SIGINT/SIGTERM back (ours are handlers, reset by exec).
    ::execve(args[0], args.data(), environ);
    const int e = errno;
    [[maybe_unused]] const auto n = ::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  const int fork_errno = errno;
  ::close(exec_error[1]);
  if (log_fd >= 0) ::close(log_fd);
  if (pid < 0) {
    ::close(exec_error[0]);
    error = "cannot start " + t.argv[0] + ": " + std::strerror(fork_errno);
    return -1;
  }
  int e = 0;
  ssize_t n = 0;
  while ((n = ::read(exec_error[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  ::close(exec_error[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {  // exec failed: reap the child, report why
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    error = "cannot start " + t.argv[0] + ": " + std::strerror(e);
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
    const pid_t pid = ::waitpid(-1, &status, hooks.tick ? WNOHANG : 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (pid == 0) {  // WNOHANG and none ended yet
      hooks.tick();
      std::this_thread::sleep_for(kTickPeriod);
      continue;
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
