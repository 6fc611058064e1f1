#pragma once
// simdjson input for the Kineto reader (internal to fleetsim_workloads): huge pages for the parser's
// index, and On-Demand value accessors that keep the DOM reader's conversions and its strictness about
// malformed JSON.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace fleetsim::json_input {

namespace od = simdjson::ondemand;

/// Make simdjson parsers created from now on advise huge pages for their structural index.
void use_huge_page_index();

/// Walks a value the reader does not use, so that bad JSON inside it is an error as with a DOM
/// parse (On-Demand alone skips such values unchecked). Throws Malformed.
void validate(od::value& v);
/// Minified JSON of a value, exactly as simdjson's DOM serializer writes it. Throws Malformed.
std::string minified(od::value& v);

// A JSON error met during the On-Demand pass; the reader reports it through a DOM parse.
struct Malformed {
  simdjson::error_code error;
};

inline void check(simdjson::error_code e) {
  if (e) throw Malformed{e};
}

// Text between the quotes of a string starting at `p` (just after the opening quote) when it has
// no escapes; false when it has one.
inline bool plain_string(const char* p, std::string_view& out) {
  for (const char* q = p;; ++q) {
    if (*q == '"') {
      out = std::string_view(p, static_cast<std::size_t>(q - p));
      return true;
    }
    if (*q == '\\') return false;
  }
}

// Object key, unescaped (in place when it has no escapes).
inline std::string_view key_of(od::field& f) {
  std::string_view k;
  if (plain_string(f.key().raw(), k)) return k;
  check(f.unescaped_key().get(k));
  return k;
}

// String value ("" for other types, which are checked as JSON); points into the input or the
// parser's string buffer.
inline std::string_view str_of(od::value& v) {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty() || tok[0] != '"') {
    validate(v);
    return {};
  }
  std::string_view s;
  if (plain_string(tok.data() + 1, s)) return s;
  check(v.get_string().get(s));
  return s;
}

inline std::int64_t int_of(od::value& v, std::int64_t fallback = -1) {
  std::int64_t i = 0;
  if (!v.get_int64().get(i)) return i;
  double d = 0;
  if (!v.get_double().get(d)) {
    // A number beyond 64 bits (8.9e98) is held at the nearest end: converting it is undefined.
    constexpr double kLimit = 9.2e18;
    if (d >= kLimit) return std::numeric_limits<std::int64_t>::max();
    if (d <= -kLimit) return std::numeric_limits<std::int64_t>::min();
    return d == d ? static_cast<std::int64_t>(d) : fallback;
  }
  validate(v);
  return fallback;
}

inline double num_of(od::value& v, double fallback = 0) {
  double d = 0;
  if (!v.get_double().get(d)) return d;
  const std::string_view tok = v.raw_json_token();
  if (tok.empty() || tok[0] != '"') {
    validate(v);
    return fallback;
  }
  try {
    return std::stod(std::string(str_of(v)));
  } catch (...) {
    return fallback;
  }
}

}  // namespace fleetsim::json_input
