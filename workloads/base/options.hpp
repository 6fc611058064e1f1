#pragma once
// Options: the free-form knobs of one policy or model (e.g. [scheduler.options] in a scenario).
// Each implementation declares its knobs by reading them, with a default and a one-line doc;
// after construction check_all_used() rejects knobs nobody read, listing the valid ones.
#include <map>
#include <string>
#include <vector>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

class Options {
 public:
  struct Value {
    std::string text;    ///< scalar as written (numbers, booleans, strings) or comma-separated array
    long line = 0;       ///< line in the scenario (0 = from --set)
    std::string origin;  ///< where it came from when not the scenario file (e.g. "--set")
    std::vector<std::string> items;              ///< an array's elements, as text
    std::map<std::string, std::string> entries;  ///< a table of strings (e.g. workload.columns)
  };

  Options() = default;
  Options(std::map<std::string, Value> values, std::string file, std::string table)
      : values_(std::move(values)), file_(std::move(file)), table_(std::move(table)) {}

  double number(const std::string& key, double fallback, const std::string& doc = "") const;
  long long integer(const std::string& key, long long fallback, const std::string& doc = "") const;
  /// integer() for a value stored as int: out of int's range is an InputError naming the key.
  int int32(const std::string& key, int fallback, const std::string& doc = "") const;
  std::vector<double> numbers(const std::string& key, const std::vector<double>& fallback,
                              const std::string& doc = "") const;
  std::vector<std::string> texts(const std::string& key, const std::vector<std::string>& fallback,
                                 const std::string& doc = "") const;
  std::string text(const std::string& key, const std::string& fallback, const std::string& doc = "") const;
  bool flag(const std::string& key, bool fallback, const std::string& doc = "") const;
  /// A table of strings (empty when absent).
  std::map<std::string, std::string> entries(const std::string& key, const std::string& doc = "") const;

  bool has(const std::string& key) const { return values_.count(key) > 0; }
  /// An InputError naming the key's file, line and "<table>.<key>".
  InputError error(const std::string& key, const std::string& message) const;
  /// Sets a value (the scenario loader; tests and tools that build a config by hand).
  void set(const std::string& key, Value value) { values_[key] = std::move(value); }
  void set(const std::string& key, const std::string& text) { values_[key].text = text; }
  void set(const std::string& key, const char* text) { set(key, std::string(text)); }
  void set(const std::string& key, double number);
  void set_items(const std::string& key, const std::vector<std::string>& items);
  void set_entries(const std::string& key, std::map<std::string, std::string> entries);
  void erase(const std::string& key) { values_.erase(key); }
  const std::string& table() const { return table_; }
  const std::string& file() const { return file_; }

  /// Throws InputError for every key that no one read ("unknown option 'x' for <owner>; valid: ...").
  void check_all_used(const std::string& owner) const;
  /// Declared knobs with their defaults and docs, as "key = default: doc" lines (after the owner
  /// read them; `fleetsim policies` builds each policy on empty options to list its knobs).
  std::string describe() const;
  bool empty() const { return values_.empty(); }

 private:
  const Value* find(const std::string& key, const std::string& doc, std::string fallback = "") const;
  const std::string& file_of(const Value& v) const { return v.origin.empty() ? file_ : v.origin; }
  std::map<std::string, Value> values_;
  std::string file_;
  std::string table_;
  mutable std::map<std::string, std::string> declared_;
  mutable std::map<std::string, std::string> defaults_;
};

}  // namespace fleetsim
