#pragma once
// Shared helpers for the workload reader tests (test_workloads*.cpp).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/test_util.hpp"
#include "tests/text_checks.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim::test {

inline std::string fixture(const std::string& name) {
  return std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/workloads/" + name;
}

inline std::string shared_data(const std::string& rel) {
  return shared_path(rel);
}

/// A file in the temp folder with the given content, removed when the object dies. Names are unique per
/// process (ctest runs test cases in parallel processes).
class TempFile {
 public:
  TempFile(const std::string& name, const std::string& content) {
    path_ =
        (std::filesystem::temp_directory_path() / ("fleetsim_wl_" + std::to_string(::getpid()) + "_" + name))
            .string();
    std::ofstream out(path_, std::ios::binary);
    out << content;
  }
  ~TempFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline WorkloadConfig config(const std::string& format, const std::string& path) {
  WorkloadConfig c;
  c.format = format;
  c.path = path;
  c.scenario_file = "scenario.toml";
  return c;
}

/// Runs read_trace(c), which must throw InputError; returns it.
inline InputError read_error(const WorkloadConfig& c) {
  try {
    read_trace(c);
  } catch (const InputError& e) {
    return e;
  }
  FAIL("read_trace did not throw InputError");
  throw std::logic_error("unreachable");
}

/// Checks the error names `file`, `line` and `field` in both its accessors and its message.
inline void check_names(const InputError& e, const std::string& file, long line, const std::string& field) {
  INFO("message: " << e.what());
  CHECK(e.file() == file);
  CHECK(e.line() == line);
  CHECK(e.field() == field);
  std::string where = file;
  if (line > 0) where += ":" + std::to_string(line);
  CHECK(contains(e.what(), where));
  if (!field.empty()) CHECK(contains(e.what(), "field '" + field + "'"));
}

}  // namespace fleetsim::test
