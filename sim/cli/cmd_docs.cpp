// fleetsim docs: prints sim/REFERENCE.md, the reference generated from the declarations beside the
// code (keys, registries, GPU catalog, output files).
#include <cstdio>

#include "sim/app/reference.hpp"
#include "sim/cli/command.hpp"

namespace fleetsim::cli {
namespace {

Runner setup_docs(CLI::App&) {
  return [] {
    std::printf("%s", reference_markdown().c_str());
    return 0;
  };
}

const CommandRegistrar kDocs{"docs", "print the generated reference (sim/REFERENCE.md) as Markdown",
                             setup_docs};

}  // namespace
}  // namespace fleetsim::cli
