// JSON documents (nlohmann::json) parsed from a user's file: any malformed text, a syntax error or a
// number the parser cannot hold (1e999999), is an InputError naming the file and the line.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace fleetsim {

/// Parses `text` read from `path`; `what` starts the message ("malformed JSON", "not a JSON device
/// file", ...).
nlohmann::json parse_json_text(std::string_view text, const std::string& path,
                               std::string_view what = "malformed JSON");

}  // namespace fleetsim
