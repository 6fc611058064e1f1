#pragma once
// --set overrides of a scenario (internal to sim/app/scenario.cpp): "a.b.0.c=value" navigates the
// parsed TOML (creating tables as needed, numbers index arrays of tables) and replaces the value
// (TOML syntax; bare words are strings). Throws InputError("--set", 0, assignment) on a malformed one.
#include <toml++/toml.h>

#include <set>
#include <string>

namespace fleetsim {

/// Applies one override to `root`; records the dotted key in `overridden`.
void apply_override(toml::table& root, const std::string& assignment, std::set<std::string>& overridden);

}  // namespace fleetsim
