// Every shipped scenario (scenarios/*.toml) parses and validates against the key
// schema, services included, and every sweep file (scenarios/ and tests/validation/) with each combination: a
// key renamed in code and not in a scenario fails here. Scenarios that point into the shared data are checked
// in a test case of their own, skipped where the data is absent (openb's node list is read at load).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "sim/app/scenario.hpp"
#include "sim/experiments/sweep_spec.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

namespace {

/// Whether a scenario file points into the shared data (its readers open files there at load: the
/// openb node list builds the cluster).
bool on_shared_data(const std::filesystem::path& file) {
  return fleetsim::test::read_file(file).find("shared/data/") != std::string::npos;
}

/// Loads every shipped scenario (not sweeps) whose on_shared_data() is `shared`; returns how many.
int check_scenarios(bool shared) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".toml" || name.find(".sweep.") != std::string::npos) continue;
    if (on_shared_data(e.path()) != shared) continue;
    CAPTURE(name);
    std::string error;
    try {
      load_scenario(e.path().string());
    } catch (const InputError& x) {
      error = x.what();
    }
    CHECK_MESSAGE(error.empty(), error);
    ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("scenarios: every shipped scenario file that needs no shared data parses") {
  CHECK(check_scenarios(false) >= 11);
}

TEST_CASE("scenarios: every shipped scenario file on the shared data parses") {
  fleetsim::test::require_shared();
  CHECK(check_scenarios(true) >= 7);
}

TEST_CASE("scenarios: every shipped sweep file parses and every combination validates") {
  int n = 0;
  std::vector<std::filesystem::directory_entry> files;
  for (const char* dir : {"/scenarios", "/tests/validation"})
    for (const auto& e : std::filesystem::directory_iterator(std::string(FLEETSIM_SOURCE_DIR) + dir))
      files.push_back(e);
  for (const auto& e : files) {
    const std::string name = e.path().filename().string();
    if (name.find(".sweep.toml") == std::string::npos) continue;
    CAPTURE(name);
    std::string error;
    try {
      const SweepSpec spec = load_sweep(e.path().string());
      check_sweep(spec, sweep_combinations(spec));
    } catch (const InputError& x) {
      error = x.what();
    }
    CHECK_MESSAGE(error.empty(), error);
    ++n;
  }
  CHECK(n >= 11);  // 4 in scenarios/, 7 in tests/validation/
}
