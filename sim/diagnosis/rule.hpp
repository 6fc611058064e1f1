#pragma once
// Anti-pattern rules of `fleetsim diagnose`: one file per rule in sim/diagnosis/rules/, registered by
// name with its threshold keys (name, unit, default, doc, source) declared beside its code. A rule
// reads a job's measurements (job_analysis.hpp) and returns a finding or nothing; a finding carries
// the fix as a replay what-if (a WhatIf and a re-timing of the execution graph) when the trace
// supports simulating it, or says why it cannot be simulated.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/diagnosis/job_analysis.hpp"
#include "sim/replay/replay.hpp"

namespace fleetsim::diagnosis {

struct RuleKey {
  std::string name;  ///< "<rule>.<key>", e.g. "input_stall.min_share"
  std::string unit;
  double fallback = 0;
  std::string doc;
  std::string source;  ///< where the threshold comes from
};

/// Threshold values: every declared key's default, overridden by --threshold KEY=VALUE.
class Thresholds {
 public:
  Thresholds();
  /// "KEY=VALUE"; InputError naming --threshold and listing the valid keys.
  void set(const std::string& key_value);
  double operator[](const std::string& key) const;

 private:
  std::map<std::string, double> values_;
};

/// How a fix re-times the job: the replay what-if and per-vertex changes (replay::Retiming).
struct Fix {
  std::string description;  ///< what is changed, as the user would do it
  std::string estimate;     ///< "prediction" or "upper bound"
  replay::WhatIf what_if;   ///< platform and class knobs (replay.hpp)
  /// Adjusts the re-timing replay::retime made from what_if (per-vertex factors, gaps, waits).
  std::function<void(const JobAnalysis&, replay::Retiming&)> adjust;
};

struct Finding {
  std::string rule;
  double value = 0;  ///< the measured quantity the threshold applies to
  double threshold = 0;
  std::string unit;
  std::string evidence;  ///< what the trace shows, in a sentence
  std::optional<Fix> fix;
  std::string not_simulated;  ///< why the fix is not simulated (when fix is empty)
};

struct Rule {
  std::string name;
  std::string description;
  std::vector<RuleKey> keys;
  std::function<std::optional<Finding>(const JobAnalysis&, const Thresholds&)> check;
};

std::vector<Rule>& rules();

struct RuleRegistrar {
  explicit RuleRegistrar(Rule r);
};

/// All findings of a job, in rule-name order.
std::vector<Finding> check_rules(const JobAnalysis& a, const Thresholds& t);

/// Every rule and key as a table (fleetsim diagnose --list-rules; the README's table).
std::string describe_rules();

}  // namespace fleetsim::diagnosis
