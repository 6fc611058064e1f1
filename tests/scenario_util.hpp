#pragma once
// Helpers of the scenario-loader tests (test_scenario.cpp, test_scenario_errors.cpp): TOML text by
// numbered lines, the smallest valid scenario, and parsing that returns the InputError.
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/app/scenario.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::test {

inline constexpr const char* kName = "scen.toml";
inline constexpr const char* kBase = "/base/dir";

/// TOML text from lines: line i of the list is line i+1 of the file, so tests can name lines.
inline std::string lines(std::initializer_list<std::string_view> ls) {
  std::string out;
  for (auto l : ls) {
    out += l;
    out += '\n';
  }
  return out;
}

/// The smallest valid scenario.
inline const std::string kMinimal = lines({
    "[cluster]",               // 1
    "[[cluster.pool]]",        // 2
    "nodes = 2",               // 3
    "[workload]",              // 4
    "format = \"synthetic\"",  // 5
});

inline Scenario parse(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return parse_scenario(text, kName, kBase, overrides);
}

inline std::optional<InputError> error_of(const std::string& text,
                                          const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(text, kName, kBase, overrides);
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

inline bool contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

inline std::string what(const std::optional<InputError>& e) {
  return e ? std::string(e->what()) : std::string("<no error>");
}

}  // namespace fleetsim::test
