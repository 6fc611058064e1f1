#pragma once
// The scenario schema: every key of a scenario file with its type, meaning, unit and default, in
// one table (internal to sim/app: scenario.cpp validates against it, `fleetsim keys` prints it).
#include <toml++/toml.h>

#include <map>
#include <string>
#include <vector>

namespace fleetsim::scenario_keys {

enum class Kind { kInt, kFloat, kString, kBool, kTable, kTableArray, kArray };

struct KeySpec {
  const char* key;
  Kind kind;
  const char* doc;  ///< meaning, unit and default (shown by `fleetsim keys` and in the README)
};

/// Table path -> its keys. "[]" in a table path stands for any element of an array of tables.
const std::map<std::string, std::vector<KeySpec>>& schema();
/// "an integer", "a number", ... for messages.
const char* kind_name(Kind k);
bool kind_matches(const toml::node& n, Kind k);

}  // namespace fleetsim::scenario_keys
