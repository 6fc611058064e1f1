// Rule registry and thresholds (see rule.hpp).
#include "sim/diagnosis/rule.hpp"

#include <algorithm>
#include <cstdio>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::diagnosis {

std::vector<Rule>& rules() {
  static std::vector<Rule> r;
  return r;
}

RuleRegistrar::RuleRegistrar(Rule r) {
  rules().push_back(std::move(r));
  std::sort(rules().begin(), rules().end(), [](const Rule& a, const Rule& b) { return a.name < b.name; });
}

Thresholds::Thresholds() {
  for (const auto& r : rules())
    for (const auto& k : r.keys) values_[k.name] = k.fallback;
}

void Thresholds::set(const std::string& kv) {
  const auto eq = kv.find('=');
  if (eq == std::string::npos) throw InputError("--threshold", 0, kv, "expected KEY=VALUE");
  const std::string key = kv.substr(0, eq);
  auto it = values_.find(key);
  if (it == values_.end()) {
    std::vector<std::string> names;
    for (const auto& [k, v] : values_) names.push_back(k);
    std::string msg = "unknown threshold";
    if (auto best = closest(key, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
    throw InputError("--threshold", 0, key, msg + "; valid: " + join(names, ", "));
  }
  it->second = parse_double(kv.substr(eq + 1), "--threshold", 0, key);
}

double Thresholds::operator[](const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? 0.0 : it->second;
}

std::vector<Finding> check_rules(const JobAnalysis& a, const Thresholds& t) {
  std::vector<Finding> out;
  for (const auto& r : rules())
    if (auto f = r.check(a, t)) {
      f->rule = r.name;
      out.push_back(std::move(*f));
    }
  return out;
}

std::string describe_rules() {
  std::string s = "| rule | key | unit | default | meaning | source |\n|---|---|---|---|---|---|\n";
  for (const auto& r : rules())
    for (const auto& k : r.keys) {
      char def[32];
      std::snprintf(def, sizeof def, "%g", k.fallback);
      s += "| `" + r.name + "` | `" + k.name + "` | " + k.unit + " | " + def + " | " + k.doc + " | " +
           k.source + " |\n";
    }
  return s;
}

}  // namespace fleetsim::diagnosis
