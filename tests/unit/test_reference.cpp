// sim/REFERENCE.md is `fleetsim docs` (reference_markdown()): every key, registered name, GPU and
// output file, generated from the declarations beside the code, so a stale file fails here. And the
// header matcher test_output_columns relies on, on hand-made declarations.
#include <doctest/doctest.h>

#include <string>

#include "models/hardware/gpu_catalog.hpp"
#include "sim/app/reference.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/output_docs.hpp"

using namespace fleetsim;

TEST_CASE("reference: sim/REFERENCE.md is `fleetsim docs`") {
  const std::string file = test::read_file(std::string(FLEETSIM_SOURCE_DIR) + "/sim/REFERENCE.md");
  REQUIRE_FALSE(file.empty());
  CHECK_MESSAGE(file == reference_markdown(),
                "sim/REFERENCE.md is stale: regenerate it with `build/fleetsim docs > sim/REFERENCE.md`");
}

TEST_CASE("reference: every policy, GPU and output file is in it") {
  const std::string text = reference_markdown();
  for (const auto& n : scheduler_names()) CHECK(text.find("| `" + n.name + "` |") != std::string::npos);
  for (const auto& n : placer_names()) CHECK(text.find("| `" + n.name + "` |") != std::string::npos);
  for (const auto& g : gpu_catalog()) CHECK(text.find("| `" + g.name + "`") != std::string::npos);
  for (const auto& d : output_docs()) CHECK(text.find("**`" + d.file + "`**") != std::string::npos);
  // The knobs a policy reads are listed with their defaults (las: quantum_s = 600).
  CHECK(text.find("options.quantum_s = 600") != std::string::npos);
}

TEST_CASE("reference: a header matches its declared columns, optional ones and placeholders included") {
  const OutputFileDoc doc{
      .file = "x.csv",
      .command = "test",
      .columns = {{"run"}, {"case", "", "", "with cases"}, {"<keys>"}, {"seed"}, {"<metrics>"}}};
  CHECK(header_matches(doc, "run,seed"));
  CHECK(header_matches(doc, "run,case,seed"));
  CHECK(header_matches(doc, "run,case,a,b,seed,m1,m2"));
  CHECK(header_matches(doc, "run,\"a.b\",seed,m1"));
  CHECK_FALSE(header_matches(doc, "seed,run"));       // order
  CHECK_FALSE(header_matches(doc, "run"));            // seed missing
  CHECK_FALSE(header_matches(doc, "job,case,seed"));  // a renamed column
  const OutputFileDoc fixed{
      .file = "y.csv", .command = "test", .columns = {{"a"}, {"b"}, {"c", "", "", "sometimes"}}};
  CHECK(header_matches(fixed, "a,b"));
  CHECK(header_matches(fixed, "a,b,c"));
  CHECK_FALSE(header_matches(fixed, "a,b,c,d"));  // an undeclared column
  CHECK_FALSE(header_matches(fixed, "a,c"));
}
