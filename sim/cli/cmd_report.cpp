// fleetsim report DIR... --out report.html
// One self-contained HTML page (plots embedded as PNG, no network access) of run, compare and sweep
// output folders: scripts/report.py, found in a scripts/ folder above this executable (or at
// $FLEETSIM_REPORT_SCRIPT), run with /usr/bin/python3 (matplotlib, pandas). The script decides what
// each folder is; exit 2 (and no output file) for a missing folder or one that is none of the three.
#include <cstdio>
#include <filesystem>
#include <memory>

#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {
namespace {
namespace fs = std::filesystem;

struct ReportArgs {
  std::vector<std::string> dirs;
  std::string out;
};

int report(const ReportArgs& a) {
  std::error_code ec;
  for (const auto& d : a.dirs) {
    if (!fs::exists(d, ec)) throw InputError(d, 0, "DIR", "no such folder");
    if (!fs::is_directory(d, ec)) throw InputError(d, 0, "DIR", "not a folder");
  }
  if (fs::is_directory(a.out, ec))
    throw InputError(a.out, 0, "--out", "is a folder; name the HTML file to write");
  const fs::path script = find_script("report.py", "FLEETSIM_REPORT_SCRIPT");
  if (script.empty()) {
    std::fprintf(stderr,
                 "fleetsim report: error: scripts/report.py not found in a folder above %s (set "
                 "FLEETSIM_REPORT_SCRIPT to its path)\n",
                 self_exe().c_str());
    return 1;
  }
  std::vector<std::string> args = a.dirs;
  args.insert(args.end(), {"--out", a.out});
  const int rc = run_python(script, args);
  if (rc == 127)
    std::fprintf(stderr, "fleetsim report: error: python3 not found (scripts/setup.sh installs it)\n");
  return rc == 0 || rc == 2 ? rc : 1;
}

Runner setup(CLI::App& sub) {
  auto a = std::make_shared<ReportArgs>();
  sub.add_option("dirs", a->dirs, "run, compare or sweep output folders (one part of the page each)")
      ->required();
  sub.add_option("--out", a->out, "the HTML file to write (self-contained: plots embedded)")->required();
  return [a] { return report(*a); };
}

const CommandRegistrar kRegistrar{"report",
                                  "one self-contained HTML report of run, compare and sweep folders", setup};

}  // namespace
}  // namespace fleetsim::cli
