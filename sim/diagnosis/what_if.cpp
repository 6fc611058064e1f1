// Forked replays of the fixes (see what_if.hpp).
#include "sim/diagnosis/what_if.hpp"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <stdexcept>

#include "sim/replay/replay_network.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::diagnosis {
namespace {

constexpr char kSep = '\x1f';

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t w = ::write(fd, s.data() + off, s.size() - off);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    off += static_cast<std::size_t>(w);
  }
}

[[noreturn]] void child(const std::function<std::string()>& task, int fd) {
  std::string out;
  int code = 0;
  try {
    out = "O" + task();
  } catch (const InputError& e) {
    const std::string prefix = InputError::format(e.file(), e.line(), e.field(), "");
    std::string msg = e.what();
    if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
    out = "I" + e.file() + kSep + std::to_string(e.line()) + kSep + e.field() + kSep + msg;
    code = 2;
  } catch (const std::exception& e) {
    out = std::string("E") + e.what();
    code = 1;
  }
  write_all(fd, out);
  ::close(fd);
  std::fflush(nullptr);
  ::_exit(code);
}

struct Running {
  std::size_t task;
  int fd;
  std::string text;
};

[[noreturn]] void raise(const std::string& text, int status) {
  if (!text.empty() && text[0] == 'I') {
    std::vector<std::string> parts;
    std::size_t start = 1;
    for (int i = 0; i < 3; ++i) {
      const std::size_t p = text.find(kSep, start);
      if (p == std::string::npos) break;
      parts.push_back(text.substr(start, p - start));
      start = p + 1;
    }
    if (parts.size() == 3) throw InputError(parts[0], std::stol(parts[1]), parts[2], text.substr(start));
  }
  if (!text.empty() && text[0] == 'E') throw std::runtime_error(text.substr(1));
  throw std::runtime_error("a replay child process ended without a result (status " + std::to_string(status) +
                           ")");
}

}  // namespace

std::vector<std::string> run_forked(const std::vector<std::function<std::string()>>& tasks, int parallel) {
  std::vector<std::string> results(tasks.size());
  std::map<pid_t, Running> running;
  std::size_t next = 0;
  std::fflush(nullptr);
  auto drain = [](Running& r) {
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(r.fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      r.text.append(buf, static_cast<std::size_t>(n));
    }
  };
  std::string failure;
  int failure_status = 0;
  while (next < tasks.size() || !running.empty()) {
    while (failure.empty() && next < tasks.size() &&
           static_cast<int>(running.size()) < std::max(1, parallel)) {
      int fds[2];
      if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
      if (pid == 0) {
        ::close(fds[0]);
        child(tasks[next], fds[1]);
      }
      ::close(fds[1]);
      running.emplace(pid, Running{next, fds[0], {}});
      ++next;
    }
    if (running.empty()) break;
    // Read every pipe that has data (a child blocks once its pipe is full), then reap.
    std::vector<pollfd> pfds;
    for (auto& [pid, r] : running) pfds.push_back({r.fd, POLLIN, 0});
    ::poll(pfds.data(), pfds.size(), 50);
    for (auto& [pid, r] : running) {
      pollfd p{r.fd, POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) {
        char buf[65536];
        const ssize_t n = ::read(r.fd, buf, sizeof buf);
        if (n > 0) r.text.append(buf, static_cast<std::size_t>(n));
      }
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);
    if (done <= 0) continue;
    auto it = running.find(done);
    if (it == running.end()) continue;
    drain(it->second);
    ::close(it->second.fd);
    const std::string& text = it->second.text;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !text.empty() && text[0] == 'O') {
      results[it->second.task] = text.substr(1);
    } else if (failure.empty()) {
      failure = text.empty() ? "?" : text;
      failure_status = status;
    }
    running.erase(it);
  }
  if (!failure.empty()) raise(failure == "?" ? std::string() : failure, failure_status);
  return results;
}

double replay_step_s(const JobAnalysis& a, const Fix* fix) {
  const replay::WhatIf w = fix != nullptr ? fix->what_if : replay::WhatIf{};
  replay::Retiming r = replay::retime(a.graph, w);
  if (fix != nullptr && fix->adjust) fix->adjust(a, r);
  const replay::ReplayCluster cluster = replay::replay_cluster(a.graph, r.source_gpu, w);
  const replay::ReplayRun run = replay::simulate(a.graph, r, w, cluster);
  return step_period_s(replay::analyse(a.graph, a.measured, run.times), true);
}

double step_period_s(const std::vector<replay::StepResult>& steps, bool predicted) {
  std::map<int, std::vector<std::pair<double, double>>> by_rank;  // (start, length) per step
  for (const auto& s : steps) {
    const double len = predicted ? s.predicted : s.measured;
    const double end = predicted ? s.predicted_end : s.measured_end;
    by_rank[s.rank].emplace_back(end - len, len);
  }
  double sum = 0;
  for (auto& [rank, v] : by_rank) {
    std::sort(v.begin(), v.end());
    sum += v.size() >= 2 ? (v.back().first - v.front().first) / static_cast<double>(v.size() - 1)
                         : v.front().second;
  }
  return by_rank.empty() ? 0 : sum / static_cast<double>(by_rank.size());
}

}  // namespace fleetsim::diagnosis
