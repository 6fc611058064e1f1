// TOML input (workloads/base/toml_input.hpp): text that would reach toml++ 3.3.0's unreachable branch
// is refused naming its line; valid TOML with non-ASCII text in strings and comments parses as before.
#include <doctest/doctest.h>

#include <string>

#include "workloads/base/input_error.hpp"
#include "workloads/base/toml_input.hpp"

using fleetsim::InputError;
using fleetsim::parse_toml;

namespace {
std::string refusal(const std::string& text) {
  try {
    parse_toml(text, "s.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("TOML: a non-ASCII character where TOML allows only ASCII is refused with its line") {
  CHECK(refusal("i\xc3\xa1") ==
        "s.toml:1: a non-ASCII character outside a string or comment (TOML keys, "
        "numbers and dates are ASCII)");
  CHECK(refusal("seed = 1\nx = 2 \xe3\x80\x81\n").starts_with("s.toml:2: a non-ASCII character outside"));
  CHECK(refusal("x = \"\"\"\\\xc3\xa1\"\"\"\n")
            .starts_with("s.toml:1: a non-ASCII character right after a backslash"));
  CHECK(refusal("x = \"\"\"a\\  \n\n  \xc3\xa1\"\"\"\n")
            .starts_with("s.toml:3: a non-ASCII character first after a line-ending backslash"));
}

TEST_CASE("TOML: non-ASCII text in strings, literal strings and comments parses") {
  const auto t = parse_toml(
      "# r\xc3\xa9sum\xc3\xa9 \xe3\x80\x81\nname = \"caf\xc3\xa9 \\\"x\\\" \xe3\x80\x81\"\nlit = "
      "'na\xc3\xafve'\n"
      "ml = \"\"\"\n\xc3\xa1 \"\" \xc3\xa1\"\"\"\"\nml2 = '''\xc3\xa1'''\n[\"cl\xc3\xa9\"]\nk = 1 # "
      "\xc3\xa1\n",
      "s.toml");
  CHECK(t["name"].value<std::string>() == "caf\xc3\xa9 \"x\" \xe3\x80\x81");
  CHECK(t["lit"].value<std::string>() == "na\xc3\xafve");
  CHECK(t["ml"].value<std::string>() == "\xc3\xa1 \"\" \xc3\xa1\"");
  CHECK(t["ml2"].value<std::string>() == "\xc3\xa1");
  CHECK(t["cl\xc3\xa9"]["k"].value<int>() == 1);
  // Syntax errors are InputErrors naming file and line, as before.
  CHECK(refusal("a = 1\nb = \n").starts_with("s.toml:2: "));
}

TEST_CASE("TOML: a quote inside a bare value does not open a string (toml++ reads on past it)") {
  // Found by fuzz_scenario and fuzz_sweep: toml++ reads a bare value (number, date, boolean) to the
  // next blank, comma, bracket or brace, quotes included, and asks of each character whether it is
  // whitespace: for a non-ASCII one that reaches its unreachable branch.
  CHECK(refusal("cpus = 32\"\xc3\xa1 \\\"\n").starts_with("s.toml:1: a non-ASCII character outside"));
  CHECK(refusal("gpu =----rt=\"\\\"\xc3\xa1\" x\n").starts_with("s.toml:1: a non-ASCII character outside"));
  CHECK(refusal("x = [1, 2\"\xc3\xa1\"]\n").starts_with("s.toml:1: a non-ASCII character outside"));
  // Strings after '=', in arrays (one line or several), in inline tables and quoted keys still hold it.
  const auto t = parse_toml(
      "a = [\"\xc3\xa1\",\n  '\xc3\xa9', 3]\nb = {k = \"\xc3\xa1\", \"q\xc3\xa9\" = "
      "1}\n[t.\"\xc3\xa9\"]\nc=\"\xc3\xa1\"\n",
      "s.toml");
  CHECK(t["a"][1].value<std::string>() == "\xc3\xa9");
  CHECK(t["b"]["q\xc3\xa9"].value<int>() == 1);
  CHECK(t["t"]["\xc3\xa9"]["c"].value<std::string>() == "\xc3\xa1");
}
