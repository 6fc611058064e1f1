// Every shipped scenario (scenarios/*.toml) parses and validates against the key
// schema, services included, and every shipped sweep file (*.sweep.toml) with each combination: a key renamed
// in code and not in a scenario fails here, without the shared data (the readers, which open the files, are
// not run).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/app/scenario.hpp"
#include "sim/app/sweep_spec.hpp"
#include "workloads/base/input_error.hpp"

using namespace fleetsim;

TEST_CASE("scenarios: every shipped scenario file parses") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios")) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() != ".toml" || name.find(".sweep.") != std::string::npos) continue;
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
  CHECK(n >= 14);
}

TEST_CASE("scenarios: every shipped sweep file parses and every combination validates") {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios")) {
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
  CHECK(n >= 2);
}
