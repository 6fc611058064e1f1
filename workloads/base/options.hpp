#pragma once
// Options: the free-form knobs of one policy or model (e.g. [scheduler.options] in a scenario).
// Each implementation declares its knobs by reading them, with a default and a one-line doc;
// after construction check_all_used() rejects knobs nobody read, listing the valid ones.
#include <map>
#include <string>
#include <vector>

namespace fleetsim {

class Options {
 public:
  struct Value {
    std::string text;    ///< scalar as written (numbers, booleans, strings) or comma-separated array
    long line = 0;       ///< line in the scenario (0 = from --set)
    std::string origin;  ///< where it came from when not the scenario file (e.g. "--set")
  };

  Options() = default;
  Options(std::map<std::string, Value> values, std::string file, std::string table)
      : values_(std::move(values)), file_(std::move(file)), table_(std::move(table)) {}

  double number(const std::string& key, double fallback, const std::string& doc) const;
  std::vector<double> numbers(const std::string& key, const std::vector<double>& fallback,
                              const std::string& doc) const;
  std::string text(const std::string& key, const std::string& fallback, const std::string& doc) const;
  bool flag(const std::string& key, bool fallback, const std::string& doc) const;

  /// Throws InputError for every key that no one read ("unknown option 'x' for <owner>; valid: ...").
  void check_all_used(const std::string& owner) const;
  /// Declared knobs with their docs, as "key: doc" lines (after the owner read them).
  std::string describe() const;
  bool empty() const { return values_.empty(); }

 private:
  const Value* find(const std::string& key, const std::string& doc) const;
  const std::string& file_of(const Value& v) const { return v.origin.empty() ? file_ : v.origin; }
  std::map<std::string, Value> values_;
  std::string file_;
  std::string table_;
  mutable std::map<std::string, std::string> declared_;
};

}  // namespace fleetsim
