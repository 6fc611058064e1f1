#pragma once
// simdjson input for the Kineto reader (internal to fleetsim_workloads): files mapped with
// simdjson's padding, huge pages for the parser's index, and On-Demand value accessors that keep
// the DOM reader's conversions and its strictness about malformed JSON.
#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace fleetsim::json_input {

namespace od = simdjson::ondemand;

/// Advise transparent huge pages for the whole 2 MiB pages inside [p, p + bytes).
void advise_huge(const void* p, std::size_t bytes);
/// Make simdjson parsers created from now on advise huge pages for their structural index.
void use_huge_page_index();

// A plain (not gzip) trace file mapped read-only, followed by simdjson's padding (zero pages):
// no copy of the text and no page zeroing. Empty when the file cannot be mapped or is gzip.
class MappedFile {
 public:
  static std::optional<MappedFile> open(const std::string& path);
  MappedFile(const char* data, std::size_t size, std::size_t span) : data_(data), size_(size), span_(span) {}
  MappedFile(MappedFile&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(o.size_), span_(o.span_) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile();
  simdjson::padded_string_view view() const { return simdjson::padded_string_view(data_, size_, span_); }

 private:
  const char* data_;
  std::size_t size_, span_;
};

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
  if (!v.get_double().get(d)) return static_cast<std::int64_t>(d);
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
