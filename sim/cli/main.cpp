// fleetsim: command-line entry point. Commands live one per file in sim/cli/ and register
// themselves. Exit codes: 0 success, 2 bad input or usage, 1 internal error.
#include <cstdio>
#include <map>

#include "sim/cli/command.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
std::vector<Command>& commands() {
  static std::vector<Command> all;
  return all;
}
}  // namespace fleetsim::cli

int main(int argc, char** argv) {
  CLI::App app{"fleetsim: discrete-event simulator of GPU clusters on SimGrid"};
  app.require_subcommand(1);
  std::map<CLI::App*, fleetsim::cli::Runner> runners;
  for (const auto& c : fleetsim::cli::commands()) {
    CLI::App* sub = app.add_subcommand(c.name, c.description);
    runners[sub] = c.setup(*sub);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }

  try {
    for (auto& [sub, runner] : runners)
      if (sub->parsed()) return runner();
  } catch (const fleetsim::InputError& e) {
    std::fprintf(stderr, "fleetsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetsim: internal error: %s\n", e.what());
    return 1;
  }
  return 2;
}
