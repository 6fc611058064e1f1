// JSON text to nlohmann::json with file:line errors (see json_text.hpp).
#include "workloads/base/json_text.hpp"

#include <algorithm>

#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

long line_at(std::string_view text, std::size_t byte) {
  const std::size_t upto = std::min(byte, text.size());
  return 1 + static_cast<long>(std::count(text.begin(), text.begin() + static_cast<long>(upto), '\n'));
}

}  // namespace

nlohmann::json parse_json_text(std::string_view text, const std::string& path, std::string_view what) {
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path, line_at(text, e.byte > 0 ? e.byte - 1 : 0), "",
                     std::string(what) + ": " + e.what());
  } catch (const nlohmann::json::exception& e) {
    // A number out of range ("number overflow parsing '1e999999'"): the line of that token.
    const std::string msg = e.what();
    long line = 0;
    if (const auto a = msg.find('\''), b = msg.rfind('\''); a != std::string::npos && b > a + 1)
      if (const auto at = text.find(msg.substr(a + 1, b - a - 1)); at != std::string_view::npos)
        line = line_at(text, at);
    throw InputError(path, line, "", std::string(what) + ": " + msg);
  }
}

}  // namespace fleetsim
