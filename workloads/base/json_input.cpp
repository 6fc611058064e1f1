// simdjson input for the Kineto reader (see json_input.hpp).
#include "workloads/base/json_input.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "workloads/base/file_input.hpp"

namespace fleetsim::json_input {

namespace {

// simdjson's structural index (4 bytes per JSON token, allocated by each parser) is the largest
// buffer a parse writes; in 4 KiB pages its faults cost several times the parse itself. The
// On-Demand parser keeps it private, so the active implementation (simdjson's documented switch)
// becomes this wrapper of the detected one, which advises huge pages for it; all else is delegated.

class HugePageImplementation final : public simdjson::implementation {
 public:
  explicit HugePageImplementation(const simdjson::implementation* inner)
      : simdjson::implementation(inner->name(), inner->description(), inner->required_instruction_sets()),
        inner_(inner) {}
  HugePageImplementation(const HugePageImplementation&) = delete;
  HugePageImplementation& operator=(const HugePageImplementation&) = delete;
  ~HugePageImplementation() override {
    if (simdjson::get_active_implementation() == this) simdjson::get_active_implementation() = inner_;
  }
  simdjson::error_code create_dom_parser_implementation(
      std::size_t capacity, std::size_t max_depth,
      std::unique_ptr<simdjson::internal::dom_parser_implementation>& dst) const noexcept override {
    const simdjson::error_code err = inner_->create_dom_parser_implementation(capacity, max_depth, dst);
    if (!err && dst) advise_huge(dst->structural_indexes.get(), capacity * sizeof(std::uint32_t));
    return err;
  }
  simdjson::error_code minify(const std::uint8_t* buf, std::size_t len, std::uint8_t* dst,
                              std::size_t& dst_len) const noexcept override {
    return inner_->minify(buf, len, dst, dst_len);
  }
  bool validate_utf8(const char* buf, std::size_t len) const noexcept override {
    return inner_->validate_utf8(buf, len);
  }

 private:
  const simdjson::implementation* inner_;
};

}  // namespace

void use_huge_page_index() {
  static const HugePageImplementation wrapper([] {
    // The first call through the active implementation makes simdjson pick the best one for this CPU.
    [[maybe_unused]] const bool utf8 = simdjson::get_active_implementation()->validate_utf8("", 0);
    const simdjson::implementation* best = simdjson::get_active_implementation();
    return best;
  }());
  static const bool installed = (simdjson::get_active_implementation() = &wrapper, true);
  (void)installed;
}

// Walks a value the reader does not use, so that bad JSON inside it is an error as with a DOM parse
// (On-Demand alone skips such values unchecked).
void validate(od::value& v) {
  od::json_type type{};
  check(v.type().get(type));
  switch (type) {
    case od::json_type::array: {
      od::array a;
      check(v.get_array().get(a));
      for (auto r : a) {
        od::value e;
        check(std::move(r).get(e));
        validate(e);
      }
      break;
    }
    case od::json_type::object: {
      od::object o;
      check(v.get_object().get(o));
      for (auto r : o) {
        od::field f;
        check(std::move(r).get(f));
        key_of(f);
        validate(f.value());
      }
      break;
    }
    case od::json_type::number: {
      od::number n;
      check(v.get_number().get(n));
      break;
    }
    case od::json_type::string:
      str_of(v);
      break;
    case od::json_type::boolean: {
      bool b = false;
      check(v.get_bool().get(b));
      break;
    }
    case od::json_type::null: {
      bool null = false;
      check(v.is_null().get(null));
      if (!null) throw Malformed{simdjson::N_ATOM_ERROR};
      break;
    }
  }
}

// Minified JSON of a value as simdjson's DOM serializer writes it: in place when every number is
// a plain integer and no string has an escape (what Kineto writes for shapes and types), else
// through a DOM parse of the value's text.
std::string minified(od::value& v) {
  std::string_view raw;
  od::json_type type{};
  check(v.type().get(type));
  if (type == od::json_type::array) {
    od::array a;
    check(v.get_array().get(a));
    check(a.raw_json().get(raw));
  } else if (type == od::json_type::object) {
    od::object o;
    check(v.get_object().get(o));
    check(o.raw_json().get(raw));
  } else {
    raw = v.raw_json_token();
  }
  std::string out;
  out.reserve(raw.size());
  bool plain = true;
  for (std::size_t i = 0; i < raw.size() && plain; ++i) {
    const char c = raw[i];
    if (c == '"') {
      const std::size_t end = raw.find('"', i + 1);
      const std::string_view s = raw.substr(i, end == std::string_view::npos ? end : end - i + 1);
      plain = end != std::string_view::npos &&
              std::none_of(s.begin(), s.end(), [](char ch) { return ch == '\\' || (ch >= 0 && ch < 0x20); });
      out += s;
      i = end;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
    } else if (c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || c == ':') {
      out += c;
    } else {
      std::size_t j = i + (c == '-' ? 1 : 0);
      const std::size_t digits_from = j;
      while (j < raw.size() && raw[j] >= '0' && raw[j] <= '9') ++j;
      const std::size_t n = j - digits_from;
      plain = n > 0 && n <= 18 && (raw[digits_from] != '0' || (n == 1 && c != '-'));
      plain =
          plain && (j == raw.size() || std::string_view(" \t\n\r,]}").find(raw[j]) != std::string_view::npos);
      out.append(raw.substr(i, j - i));
      i = j - 1;
    }
  }
  if (plain) return out;
  simdjson::dom::parser parser;
  simdjson::dom::element e;
  check(parser.parse(simdjson::padded_string(raw)).get(e));
  return simdjson::minify(e);
}

}  // namespace fleetsim::json_input
