// "azure": the Azure LLM inference traces (AzureLLMInferenceTrace_{code,conv}.csv, 2023; the 2024
// files have the same columns). A header row names the columns TIMESTAMP, ContextTokens and
// GeneratedTokens (any order and case; other columns ignored); fields are separated by commas,
// optionally enclosed in double quotes (without commas inside).
// TIMESTAMP is a datetime "YYYY-MM-DD HH:MM:SS[.fraction]" ('T' also accepted between date and
// time), UTC unless it ends with Z or an offset +HH:MM / -HH:MM. It is parsed exactly, to the
// nanosecond, by hand (digits past the ninth are ignored), and arrivals are the nanoseconds since the
// first row's, converted to seconds. Rows out of arrival order are read in order and counted on
// stderr (the 2023 files are strictly increasing). Ids are the 0-based row number after the header ("0", "1",
// ...); input tokens are ContextTokens, output tokens GeneratedTokens, both integers >= 1. Blank lines are
// skipped.
#include <array>
#include <charconv>
#include <memory>
#include <optional>

#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {
namespace {

namespace in = request_input;

enum Column : std::size_t { kTimestamp, kContext, kGenerated, kColumns };
constexpr std::array<const char*, kColumns> kColumnNames = {"TIMESTAMP", "ContextTokens", "GeneratedTokens"};

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
long long days_from_civil(long long y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const long long yoe = y - era * 400;
  const long long doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool leap(long long y) {
  return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/// Reads `n` digits at `s[pos]` into `out`; false if any is not a digit.
bool digits(std::string_view s, std::size_t& pos, std::size_t n, long long& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = s[pos + i];
    if (c < '0' || c > '9') return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool expect(std::string_view s, std::size_t& pos, std::string_view chars) {
  if (pos >= s.size() || chars.find(s[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

/// Nanoseconds since the epoch (UTC) of "YYYY-MM-DD HH:MM:SS[.f...][Z|+HH:MM|-HH:MM]"; nullopt if the
/// text does not match, names an impossible date or time, or one whose nanoseconds overflow.
std::optional<long long> parse_datetime_ns(std::string_view s) {
  std::size_t p = 0;
  long long y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!digits(s, p, 4, y) || !expect(s, p, "-") || !digits(s, p, 2, mo) || !expect(s, p, "-") ||
      !digits(s, p, 2, d) || !expect(s, p, " T") || !digits(s, p, 2, h) || !expect(s, p, ":") ||
      !digits(s, p, 2, mi) || !expect(s, p, ":") || !digits(s, p, 2, sec))
    return std::nullopt;
  constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1) return std::nullopt;
  if (d > kDays[static_cast<std::size_t>(mo - 1)] + (mo == 2 && leap(y) ? 1 : 0)) return std::nullopt;
  if (h > 23 || mi > 59 || sec > 59) return std::nullopt;
  long long frac_ns = 0;
  if (p < s.size() && s[p] == '.') {
    ++p;
    const std::size_t from = p;
    long long scale = 100'000'000;
    for (; p < s.size() && s[p] >= '0' && s[p] <= '9'; ++p) {
      frac_ns += (s[p] - '0') * scale;
      scale /= 10;
    }
    if (p == from) return std::nullopt;
  }
  long long offset_s = 0;
  if (p < s.size() && s[p] == 'Z') {
    ++p;
  } else if (p < s.size() && (s[p] == '+' || s[p] == '-')) {
    const long long sign = s[p++] == '-' ? -1 : 1;
    long long oh = 0, om = 0;
    if (!digits(s, p, 2, oh) || !expect(s, p, ":") || !digits(s, p, 2, om) || oh > 23 || om > 59)
      return std::nullopt;
    offset_s = sign * (oh * 3600 + om * 60);
  }
  if (p != s.size()) return std::nullopt;
  const long long seconds = days_from_civil(y, static_cast<int>(mo), static_cast<int>(d)) * 86400 + h * 3600 +
                            mi * 60 + sec - offset_s;
  // Nanoseconds in a long long reach from 1677-09-21 to 2262-04-11.
  constexpr long long kMaxSeconds = 9'223'372'035;
  if (seconds < -kMaxSeconds || seconds > kMaxSeconds) return std::nullopt;
  return seconds * 1'000'000'000 + frac_ns;
}

/// Splits a line at commas into `cells` (trimmed, one level of surrounding quotes removed).
void split_cells(std::string_view line, std::vector<std::string_view>& cells) {
  cells.clear();
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    std::string_view cell = trim(line.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = cell.substr(1, cell.size() - 2);
    cells.push_back(cell);
    if (comma == std::string_view::npos) return;
    start = comma + 1;
  }
}

long long parse_count(std::string_view text, const std::string& file, long line, const char* field) {
  long long v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end) return parse_int(text, file, line, field);  // its message
  return v;
}

class AzureReader final : public RequestReader {
 public:
  std::vector<ServingRequest> read(const RequestTraceConfig& config) const override {
    const std::string& file = config.path;
    const std::string text = in::load(config);
    std::vector<ServingRequest> out;
    std::array<std::size_t, kColumns> col{};
    bool header = false;
    std::vector<std::string_view> cells;
    in::ArrivalOrder<long long> order(file, kColumnNames[kTimestamp]);
    long long first_ns = 0;
    long number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string_view line = trim(std::string_view(text).substr(start, end - start));
      start = end + 1;
      ++number;
      if (line.empty()) continue;
      split_cells(line, cells);
      if (!header) {
        for (std::size_t k = 0; k < kColumns; ++k) {
          std::size_t c = 0;
          while (c < cells.size() && lower(cells[c]) != lower(kColumnNames[k])) ++c;
          if (c == cells.size())
            throw InputError(file, number, kColumnNames[k],
                             "column not found (header: TIMESTAMP,ContextTokens,GeneratedTokens)");
          col[k] = c;
        }
        header = true;
        continue;
      }
      auto cell = [&](Column k) {
        if (col[k] >= cells.size()) throw InputError(file, number, kColumnNames[k], "missing field");
        return cells[col[k]];
      };
      ServingRequest r;
      r.source_line = number;
      const std::string_view stamp = cell(kTimestamp);
      const auto ns = parse_datetime_ns(stamp);
      if (!ns)
        throw InputError(
            file, number, kColumnNames[kTimestamp],
            "'" + std::string(stamp) +
                "' is not a datetime YYYY-MM-DD HH:MM:SS[.fraction] between the years 1678 and 2261");
      order.check(*ns, number);
      if (out.empty()) first_ns = *ns;
      r.arrival_s = static_cast<double>(*ns - first_ns) / 1e9;
      r.input_tokens = in::tokens(parse_count(cell(kContext), file, number, kColumnNames[kContext]), file,
                                  number, kColumnNames[kContext]);
      r.output_tokens = in::tokens(parse_count(cell(kGenerated), file, number, kColumnNames[kGenerated]),
                                   file, number, kColumnNames[kGenerated]);
      r.id = std::to_string(out.size());
      out.push_back(std::move(r));
    }
    if (!header) throw InputError(file, 0, "", "no header row (TIMESTAMP,ContextTokens,GeneratedTokens)");
    order.report();
    return out;
  }
};

const RequestReaderRegistrar kRegistrar{
    "azure", "Azure LLM inference trace CSV: TIMESTAMP (datetime), ContextTokens, GeneratedTokens",
    [] { return std::make_unique<AzureReader>(); }};

}  // namespace
}  // namespace fleetsim
