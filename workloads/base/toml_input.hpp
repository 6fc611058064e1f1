#pragma once
// TOML input (scenarios, sweeps, training profiles, --set values): toml++ with its parse errors as
// InputError, and a check of the text first. toml++ 3.3.0 (Debian 12's libtomlplusplus-dev) asks
// whether a non-ASCII character is whitespace where TOML allows only ASCII (outside strings and
// comments, and right after a backslash in a multi-line string), and for U+00A1-U+0499 or
// U+2CFE-U+30F7 (but U+3000) its answer reaches __builtin_unreachable: undefined behaviour (UBSan:
// "execution reached an unreachable program point"; found by tests/fuzz/fuzz_scenario). Such text is
// invalid TOML anyway: it is refused here, naming the line, before toml++ sees it.
#include <toml++/toml.h>
#include <string>
#include <string_view>

namespace fleetsim {

/// "" when toml++ may parse `text`; else what is wrong, with its line in `line`.
std::string toml_unsafe_spot(std::string_view text, long& line);

/// Parses TOML text; InputError(file, line, "", ...) for text toml++ must not see or rejects.
toml::table parse_toml(std::string_view text, const std::string& file);

}  // namespace fleetsim
