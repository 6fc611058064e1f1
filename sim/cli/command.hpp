#pragma once
// CLI commands register themselves (one file per command): `fleetsim <name> ...`.
// setup() declares the command's options on its CLI11 sub-app and returns the function that runs
// it after parsing. Runners return the exit code; InputError thrown from them exits 2.
#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <vector>

namespace fleetsim::cli {

using Runner = std::function<int()>;

struct Command {
  std::string name;
  std::string description;
  std::function<Runner(CLI::App& sub)> setup;
};

std::vector<Command>& commands();

struct CommandRegistrar {
  CommandRegistrar(std::string name, std::string description, std::function<Runner(CLI::App&)> setup) {
    commands().push_back({std::move(name), std::move(description), std::move(setup)});
  }
};

}  // namespace fleetsim::cli
