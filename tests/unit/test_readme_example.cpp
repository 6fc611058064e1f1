// sim/scheduling/README.md's "Write your own policy" shows tests/examples/example_policy.cpp verbatim: the
// first ```cpp block of that section must equal the file, so the documented example is the tested one.
#include <doctest/doctest.h>

#include <string>

#include "tests/test_util.hpp"

namespace {

/// Text of the first ```cpp block after `heading` in `markdown` ("" if none).
std::string code_block_after(const std::string& markdown, const std::string& heading) {
  const auto h = markdown.find("\n" + heading + "\n");
  if (h == std::string::npos) return "";
  const std::string open = "\n```cpp\n";
  const auto start = markdown.find(open, h);
  const auto next_section = markdown.find("\n## ", h + 1);
  if (start == std::string::npos || (next_section != std::string::npos && start > next_section)) return "";
  const auto body = start + open.size();
  const auto end = markdown.find("\n```\n", body - 1);
  if (end == std::string::npos) return "";
  return markdown.substr(body, end + 1 - body);
}

}  // namespace

TEST_CASE("the guide's example policy is tests/examples/example_policy.cpp verbatim") {
  const std::string root = FLEETSIM_SOURCE_DIR;
  const std::string readme = fleetsim::test::read_file(root + "/sim/scheduling/README.md");
  const std::string source = fleetsim::test::read_file(root + "/tests/examples/example_policy.cpp");
  REQUIRE_FALSE(source.empty());
  const std::string block = code_block_after(readme, "## Write your own policy");
  REQUIRE_MESSAGE(!block.empty(),
                  "sim/scheduling/README.md: no ```cpp block under '## Write your own policy'");
  CHECK_MESSAGE(block == source,
                "sim/scheduling/README.md's example differs from tests/examples/example_policy.cpp: copy the "
                "file into the guide's ```cpp block (or the other way round)");
}
