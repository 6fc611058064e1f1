#pragma once
// Helpers for tests: temporary folders, file I/O, running the fleetsim binary.
#include <sys/wait.h>

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

inline bool shared_data_available() {
  return std::filesystem::exists(FLEETSIM_SHARED_DATA);
}

}  // namespace fleetsim::test
