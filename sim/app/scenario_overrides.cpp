#include "sim/app/scenario_overrides.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>
#include <vector>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/base/toml_input.hpp"

namespace fleetsim {

void apply_override(toml::table& root, const std::string& assignment, std::set<std::string>& overridden) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--set", 0, assignment, "expected KEY=VALUE (e.g. cluster.pool.0.nodes=64)");
  const std::string key(trim(std::string_view(assignment).substr(0, eq)));
  const std::string text(trim(std::string_view(assignment).substr(eq + 1)));
  const auto parts = split(key, '.');

  // Value: TOML syntax if it parses (numbers, booleans, quoted strings, arrays), else a bare string.
  toml::table holder;
  const std::string doc = "v = " + text;
  long line = 0;
  bool parsed = false;
  if (toml_unsafe_spot(doc, line).empty()) {  // text toml++ must not see is a bare string too
    try {
      holder = toml::parse(doc);
      parsed = true;
    } catch (const toml::parse_error&) {
    }
  }
  if (!parsed) holder.insert_or_assign("v", text);
  toml::node* value = holder.get("v");

  toml::node* cur = &root;
  std::string canonical;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    if (part.empty()) throw InputError("--set", 0, key, "empty key segment");
    canonical += (canonical.empty() ? "" : ".") + part;
    const bool last = i + 1 == parts.size();
    if (auto* tbl = cur->as_table()) {
      if (last) {
        tbl->insert_or_assign(part, *value);
        break;
      }
      if (!tbl->contains(part)) {
        const std::string& next = parts[i + 1];
        const bool index_next = !next.empty() && std::all_of(next.begin(), next.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
        if (index_next) {
          tbl->insert(part, toml::array{});
        } else {
          tbl->insert(part, toml::table{});
        }
      }
      cur = tbl->get(part);
    } else if (auto* arr = cur->as_array()) {
      long long idx = -1;
      try {
        idx = parse_int(part, "--set", 0, key);
      } catch (const InputError&) {
        throw InputError("--set", 0, key, "'" + part + "' must be an array index");
      }
      if (idx < 0 || static_cast<std::size_t>(idx) > arr->size())
        throw InputError("--set", 0, key,
                         "index " + part + " out of range (array has " + std::to_string(arr->size()) + ")");
      if (static_cast<std::size_t>(idx) == arr->size()) arr->push_back(toml::table{});
      if (last) {
        arr->replace(arr->begin() + idx, *value);
        break;
      }
      cur = arr->get(static_cast<std::size_t>(idx));
    } else {
      // Name the value being descended into, not the segment below it.
      throw InputError("--set", 0, key,
                       "'" + canonical.substr(0, canonical.rfind('.')) + "' is a value, not a table");
    }
  }
  overridden.insert(key);
}

}  // namespace fleetsim
