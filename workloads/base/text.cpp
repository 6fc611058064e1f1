#include "workloads/base/text.hpp"

#include "workloads/base/csv_quote.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

#include "workloads/base/input_error.hpp"

namespace fleetsim {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += sep;
    out += parts[i];
  }
  return out;
}

std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    auto pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      out.emplace_back(s.substr(start));
      return out;
    }
    out.emplace_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string closest(std::string_view name, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::string::npos;
  for (const auto& c : candidates) {
    const auto d = edit_distance(name, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  // Plausible typo: at most a third of the longer word changed (and at least one edit allowed).
  const std::size_t limit = std::max<std::size_t>(2, std::max(name.size(), best.size()) / 3);
  return best_d <= limit ? best : std::string();
}

double parse_double(std::string_view text, const std::string& file, long line, const std::string& field) {
  const auto t = trim(text);
  if (t.empty()) throw InputError(file, line, field, "empty value where a number is expected");
  double v = 0;
  const char* first = t.data();
  const char* last = t.data() + t.size();
  if (*first == '+') ++first;
  auto [ptr, ec] = std::from_chars(first, last, v);
  if (ec != std::errc() || ptr != last)
    throw InputError(file, line, field, "'" + std::string(t) + "' is not a number");
  if (!std::isfinite(v)) throw InputError(file, line, field, "'" + std::string(t) + "' is not finite");
  return v;
}

long long parse_int(std::string_view text, const std::string& file, long line, const std::string& field) {
  const double v = parse_double(text, file, line, field);
  if (v != std::floor(v) || std::fabs(v) > 9.0e15)
    throw InputError(file, line, field, "'" + std::string(trim(text)) + "' is not an integer");
  return static_cast<long long>(v);
}

int to_int32(double v, const std::string& file, long line, const std::string& field) {
  constexpr double lo = std::numeric_limits<int>::min(), hi = std::numeric_limits<int>::max();
  if (!(v >= lo && v <= hi))  // also NaN; a cast of an out-of-range double to int is undefined
    throw InputError(file, line, field, "out of range: " + fmt(v, 0) + " (must fit in a 32-bit int)");
  return static_cast<int>(v);
}

int parse_int32(std::string_view text, const std::string& file, long line, const std::string& field) {
  return to_int32(static_cast<double>(parse_int(text, file, line, field)), file, line, field);
}

std::string fmt(double v, int digits) {
  if (v == 0) return "0";
  // std::to_chars(fixed, digits) rounds exactly as printf("%.*f") does, without the locale and
  // format parsing (printf was 13% of a 1M-job run).
  char buf[400];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, digits);
  std::string s = ec == std::errc{} ? std::string(buf, end) : std::to_string(v);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace fleetsim
