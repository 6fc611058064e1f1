#pragma once
// Helpers for tests: temporary folders, file I/O, running the fleetsim binary.
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

namespace fleetsim::test {

inline std::filesystem::path temp_dir(const std::string& tag) {
  std::random_device rd;
  auto p = std::filesystem::temp_directory_path() / ("fleetsim-" + tag + "-" + std::to_string(rd()));
  std::filesystem::create_directories(p);
  return p;
}

inline void write_file(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

struct CmdResult {
  int code = -1;
  std::string output;  ///< stdout + stderr
};

/// Run the fleetsim binary with arguments (shell-quoted by the caller), capturing output.
inline CmdResult run_fleetsim(const std::string& args) {
  const auto out = temp_dir("cmd") / "out.txt";
  const std::string cmd = std::string(FLEETSIM_BINARY) + " " + args + " >" + out.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(out);
  std::filesystem::remove_all(out.parent_path());
  return r;
}

/// The shared measured data (../shared/data beside the checkout; only on the project's machines).
/// The environment variable FLEETSIM_SHARED_DATA overrides it, e.g. =/nonexistent to run the suite
/// as a user without the data would.
inline std::string shared_dir() {
  const char* env = std::getenv("FLEETSIM_SHARED_DATA");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(FLEETSIM_SHARED_DATA);
}

/// Path of `rel` inside the shared data.
inline std::string shared_path(const std::string& rel) {
  return shared_dir() + "/" + rel;
}

inline bool shared_data_available() {
  return std::filesystem::exists(shared_dir());
}

/// Exit code ctest reports as "Skipped" (tests/CMakeLists.txt: SKIP_RETURN_CODE).
constexpr int kSkipCode = 77;

/// Ends this test case as skipped, saying which shared data it needs, when `rel` (a path inside the
/// shared data, "" for the folder itself) is missing. Each test case runs in its own process under
/// ctest, so only this case ends.
inline void require_shared(const std::string& rel = "") {
  const std::string path = rel.empty() ? shared_dir() : shared_path(rel);
  if (std::filesystem::exists(path)) return;
  std::printf("SKIPPED: needs the shared data %s (not found; it exists only on the project's machines)\n",
              path.c_str());
  std::fflush(stdout);
  std::_Exit(kSkipCode);
}

/// Ends this test case as skipped (exit 77, as require_shared) when `program` is not on the PATH.
inline void require_program(const std::string& program, const std::string& why) {
  const std::string cmd = "command -v '" + program + "' >/dev/null 2>&1";
  if (std::system(cmd.c_str()) == 0) return;
  std::printf("SKIPPED: needs %s on the PATH (%s)\n", program.c_str(), why.c_str());
  std::fflush(stdout);
  std::_Exit(kSkipCode);
}

/// One request of an llmservingsim JSONL trace (arrival in seconds, written as arrival_time_ns).
inline std::string jsonl_request(double at_s, int in, int out) {
  return "{\"input_toks\": " + std::to_string(in) + ", \"output_toks\": " + std::to_string(out) +
         ", \"arrival_time_ns\": " + std::to_string(static_cast<long long>(at_s * 1e9)) + "}\n";
}

}  // namespace fleetsim::test
