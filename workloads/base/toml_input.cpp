// TOML input checked before toml++ parses it (see toml_input.hpp).
#include "workloads/base/toml_input.hpp"

#include <string>

#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

bool non_ascii(char c) {
  return static_cast<unsigned char>(c) >= 0x80;
}
bool blank(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Where toml++ is outside strings and comments: at a key, at the start of a value, inside a bare
// value (a number, date or boolean, which toml++ reads on to the next terminator, quotes and all), or
// after a value; arrays and inline tables nest. A quote opens a string only at a key or a value.
class Position {
 public:
  bool opens_string() const { return at_ == At::kKey || at_ == At::kValue; }
  void string_done() {
    if (at_ == At::kValue) at_ = At::kAfter;
  }
  void newline() {
    if (at_ == At::kBare) at_ = At::kAfter;
    if (nest_.empty()) at_ = At::kKey;
  }
  void next(char c) {
    if (at_ == At::kBare) {
      if (!blank(c) && c != ',' && c != ']' && c != '}') return;
      at_ = At::kAfter;
    }
    switch (at_) {
      case At::kKey:
        if (c == '=') at_ = At::kValue;
        if (c == '}') close();
        break;
      case At::kValue:
        if (c == '[') {
          nest_.push_back('[');
        } else if (c == '{') {
          nest_.push_back('{');
          at_ = At::kKey;
        } else if (c == ']') {
          close();
        } else if (!blank(c)) {
          at_ = At::kBare;
        }
        break;
      case At::kAfter:
        if (c == ',') at_ = !nest_.empty() && nest_.back() == '{' ? At::kKey : At::kValue;
        if (c == ']' || c == '}') close();
        break;
      case At::kBare:
        break;
    }
  }

 private:
  enum class At { kKey, kValue, kBare, kAfter };
  void close() {
    if (!nest_.empty()) nest_.pop_back();
    at_ = At::kAfter;
  }
  At at_ = At::kKey;
  std::string nest_;
};

}  // namespace

std::string toml_unsafe_spot(std::string_view t, long& line) {
  enum class In { kValue, kComment, kBasic, kLiteral, kMultiBasic, kMultiLiteral };
  In in = In::kValue;
  line = 1;
  Position pos;
  const auto at = [&](std::size_t i, std::string_view s) { return t.substr(i, s.size()) == s; };
  for (std::size_t i = 0; i < t.size(); ++i) {
    const char c = t[i];
    if (c == '\n') {
      ++line;
      if (in != In::kMultiBasic && in != In::kMultiLiteral) pos.newline();
      if (in == In::kComment || in == In::kBasic || in == In::kLiteral) in = In::kValue;
      continue;
    }
    switch (in) {
      case In::kValue:
        if (non_ascii(c))
          return "a non-ASCII character outside a string or comment (TOML keys, numbers and dates are ASCII)";
        if (c == '#') {
          in = In::kComment;
        } else if ((c == '"' || c == '\'') && !pos.opens_string()) {
          pos.next(c);  // toml++ takes it as part of a bare value (an error it reports after looking on)
        } else if (at(i, "\"\"\"")) {
          in = In::kMultiBasic;
          i += 2;
        } else if (at(i, "'''")) {
          in = In::kMultiLiteral;
          i += 2;
        } else if (c == '"') {
          in = In::kBasic;
        } else if (c == '\'') {
          in = In::kLiteral;
        } else {
          pos.next(c);
        }
        break;
      case In::kComment:
        break;
      case In::kBasic:
        if (c == '\\' && i + 1 < t.size() && t[i + 1] != '\n')
          ++i;
        else if (c == '"') {
          in = In::kValue;
          pos.string_done();
        }
        break;
      case In::kLiteral:
        if (c == '\'') {
          in = In::kValue;
          pos.string_done();
        }
        break;
      case In::kMultiBasic:
        if (c == '\\') {
          // toml++ asks whether the escaped character is whitespace (a line-ending backslash), then
          // skips whitespace and line breaks and asks again of the first character after them.
          std::size_t j = i + 1;
          if (j < t.size() && non_ascii(t[j])) return "a non-ASCII character right after a backslash";
          if (j < t.size() && blank(t[j])) {
            for (; j < t.size() && blank(t[j]); ++j)
              if (t[j] == '\n') ++line;
            if (j < t.size() && non_ascii(t[j]))
              return "a non-ASCII character first after a line-ending backslash (write it on the next line "
                     "after a space, or escape it as \\uXXXX)";
            i = j - 1;
          } else {
            i = j;
          }
        } else if (at(i, "\"\"\"")) {
          i += 2;
          for (int extra = 0; extra < 2 && i + 1 < t.size() && t[i + 1] == '"'; ++extra) ++i;
          in = In::kValue;
          pos.string_done();
        }
        break;
      case In::kMultiLiteral:
        if (at(i, "'''")) {
          i += 2;
          for (int extra = 0; extra < 2 && i + 1 < t.size() && t[i + 1] == '\''; ++extra) ++i;
          in = In::kValue;
          pos.string_done();
        }
        break;
    }
  }
  return "";
}

toml::table parse_toml(std::string_view text, const std::string& file) {
  long line = 0;
  if (const std::string bad = toml_unsafe_spot(text, line); !bad.empty())
    throw InputError(file, line, "", bad);
  try {
    return toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    throw InputError(file, static_cast<long>(e.source().begin.line), "", std::string(e.description()));
  }
}

}  // namespace fleetsim
