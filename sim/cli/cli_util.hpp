#pragma once
// Helpers shared by the commands that write result folders: atomic file writes and running the
// plot scripts of scripts/ with Debian's Python (where scripts/setup.sh installs matplotlib).
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "workloads/base/csv_quote.hpp"

namespace fleetsim::cli {

/// This executable's path (/proc/self/exe).
std::string self_exe();

/// scripts/<name> in a folder above this executable (build/fleetsim -> scripts/), or the path in
/// the environment variable `env_var` if set; empty if not found.
std::filesystem::path find_script(const std::string& name, const char* env_var);

/// Runs `python3 scripts/<script> args...` (/usr/bin/python3 first). A missing script or a failed
/// run is a warning on stderr (with the script's output) naming `what_is_complete`; returns success.
bool run_plot_script(const std::string& script, const char* env_var, const std::vector<std::string>& args,
                     const std::string& what_is_complete);

/// Runs `python3 <script> args...` (/usr/bin/python3 first) with this process's stdout and stderr;
/// returns the script's exit status (1 when it could not run or was killed by a signal).
int run_python(const std::filesystem::path& script, const std::vector<std::string>& args);

/// Writes `path` through a temporary file renamed into place, so a failure leaves no partial file.
/// Errors are InputError naming the path and `option` (e.g. "--out").
void write_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write,
                      const std::string& option = "--out");

/// A file's whole text ("" if it cannot be read).
std::string read_text(const std::filesystem::path& p);

}  // namespace fleetsim::cli
