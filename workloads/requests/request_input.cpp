// Helpers shared by the request-trace readers (see request_input.hpp).
#include "workloads/requests/request_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "workloads/base/file_input.hpp"

namespace fleetsim::request_input {

namespace dom = simdjson::dom;

std::string load(const RequestTraceConfig& config) {
  const std::string& path = config.path;
  if (path.empty())
    throw InputError(config.scenario_file, 0, key_name("path"),
                     "the '" + config.format + "' request trace format needs a file");
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError(path, 0, "", "request trace not found");
  if (!std::filesystem::is_regular_file(path, ec)) throw InputError(path, 0, "", "not a regular file");
  std::string text = read_input_file(path);
  if (text.empty()) throw InputError(path, 0, "", "the request trace is empty");
  if (text.find('\0') != std::string::npos) throw InputError(path, 0, "", "binary file, not a request trace");
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // UTF-8 byte-order mark
  return text;
}

void for_each_json_object(std::string_view text, const std::string& file,
                          const std::function<void(long, const dom::object&)>& f) {
  dom::parser parser;
  std::string buffer;  // one line followed by simdjson's padding
  long number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (trim(line).empty()) continue;
    if (buffer.size() < line.size() + simdjson::SIMDJSON_PADDING)
      buffer.resize(line.size() + simdjson::SIMDJSON_PADDING);
    std::memcpy(buffer.data(), line.data(), line.size());
    dom::element doc;
    if (const auto err = parser.parse(buffer.data(), line.size(), false).get(doc))
      throw InputError(file, number, "", std::string("malformed JSON: ") + simdjson::error_message(err));
    dom::object obj;
    if (doc.get(obj)) throw InputError(file, number, "", "expected one JSON object per line");
    f(number, obj);
  }
}

std::optional<dom::element> field(const dom::object& obj, std::string_view key) {
  dom::element e;
  if (obj.at_key(key).get(e)) return std::nullopt;
  return e;
}

std::string quote(const dom::element& e) {
  std::string s = simdjson::minify(e);
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

long long integer(const dom::element& e, const std::string& file, long line, const std::string& key) {
  std::int64_t v = 0;
  if (e.is_int64() && !e.get(v)) return v;
  throw InputError(file, line, key, "expected an integer, got " + quote(e));
}

double number(const dom::element& e, const std::string& file, long line, const std::string& key) {
  double v = 0;
  if (e.is_number() && !e.get(v) && std::isfinite(v)) return v;
  throw InputError(file, line, key, "expected a finite number, got " + quote(e));
}

int tokens(long long value, const std::string& file, long line, const std::string& field) {
  if (value < 1)
    throw InputError(file, line, field, "token count must be >= 1, got " + std::to_string(value));
  if (value > std::numeric_limits<int>::max())
    throw InputError(file, line, field, "token count " + std::to_string(value) + " is too large");
  return static_cast<int>(value);
}

void finish(std::vector<ServingRequest>& requests) {
  if (!std::is_sorted(requests.begin(), requests.end(), [](const ServingRequest& a, const ServingRequest& b) {
        return a.arrival_s < b.arrival_s;
      }))
    std::stable_sort(requests.begin(), requests.end(), [](const ServingRequest& a, const ServingRequest& b) {
      return a.arrival_s < b.arrival_s;
    });
  if (requests.empty() || requests.front().arrival_s == 0) return;
  const double first = requests.front().arrival_s;
  for (auto& r : requests) r.arrival_s -= first;
}

}  // namespace fleetsim::request_input
