#pragma once
// Helpers shared by the request-trace readers (internal to workloads/requests): the trace file's
// text, one JSON object per line (simdjson DOM, so every line is validated whole), field checks
// that name file, line and field, the arrival-order check and the final sort and shift.
#include <simdjson.h>

#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim::request_input {

/// The scenario table that holds the request-trace keys (declared in each reader's .cpp): the
/// [service.requests] table of each [[service]].
inline constexpr const char* kTable = "service[].requests";

/// "service.requests.<key>", for messages about a key.
inline std::string key_name(const std::string& key) {
  return "service.requests." + key;
}

/// The trace file's text. No path: InputError(scenario_file, 0, "service.requests.path"); a file that
/// cannot be read, is empty or holds NUL bytes (binary): InputError(path, 0, "").
std::string load(const RequestTraceConfig& config);

/// Calls f(line, object) for each line of `text` that is not blank, each parsed as one JSON object.
/// Malformed JSON or a value that is not an object: InputError(file, line, "", ...).
void for_each_json_object(std::string_view text, const std::string& file,
                          const std::function<void(long, const simdjson::dom::object&)>& f);

/// The field `key` of `obj`, nullopt when absent.
std::optional<simdjson::dom::element> field(const simdjson::dom::object& obj, std::string_view key);
/// The JSON text of a value, for messages (cut at 40 characters).
std::string quote(const simdjson::dom::element& e);
/// An integer (a JSON number without fraction or exponent); else InputError(file, line, key).
long long integer(const simdjson::dom::element& e, const std::string& file, long line,
                  const std::string& key);
/// A finite number; else InputError(file, line, key).
double number(const simdjson::dom::element& e, const std::string& file, long line, const std::string& key);

/// A token count must be an integer in [1, INT_MAX]; else InputError(file, line, field).
int tokens(long long value, const std::string& file, long line, const std::string& field);

/// Arrivals of a file as they come: a row earlier than one above it (a vLLM data-parallel run's
/// queued_ts is stamped by each engine core, so rows interleave by fractions of a millisecond) is
/// counted, and read_requests puts every request in arrival order (stable). report() says how many
/// and by how much on stderr; nothing is refused for its order.
template <typename T>
class ArrivalOrder {
 public:
  ArrivalOrder(std::string file, std::string field) : file_(std::move(file)), field_(std::move(field)) {}

  void check(T t, long line) {
    ++rows_;
    if (rows_ > 1 && t < latest_) {
      if (reordered_++ == 0) first_line_ = line;
      if (latest_ - t > most_) most_ = latest_ - t;
      return;
    }
    latest_ = t;
  }
  long reordered() const { return reordered_; }
  T most_behind() const { return most_; }
  /// One line on stderr when rows were out of order.
  void report() const {
    if (reordered_ == 0) return;
    std::cerr << "fleetsim: " << file_ << ": " << reordered_ << " of " << rows_
              << " requests arrive before a row above them (first on line " << first_line_ << ", by up to "
              << text(most_) << " in " << field_ << "): read in arrival order\n";
  }

 private:
  static std::string text(T v) {
    if constexpr (std::is_integral_v<T>)
      return std::to_string(v);
    else
      return fmt(v, 9);
  }
  std::string file_, field_;
  T latest_{};
  T most_{};
  long rows_ = 0;
  long reordered_ = 0;
  long first_line_ = 0;
};

/// Stable sort by arrival and shift so that the first arrival is 0 (a no-op on a reader's sorted,
/// shifted output; read_requests applies it to every reader's result).
void finish(std::vector<ServingRequest>& requests);

}  // namespace fleetsim::request_input
