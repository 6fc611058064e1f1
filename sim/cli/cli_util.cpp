#include "sim/cli/cli_util.hpp"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "workloads/base/input_error.hpp"

namespace fleetsim::cli {

namespace fs = std::filesystem;

namespace {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// `python3 'script' 'args'...`, quoted for the shell; Debian's /usr/bin/python3 first (matplotlib).
std::string python_command(const fs::path& script, const std::vector<std::string>& args) {
  std::error_code ec;
  const std::string python = fs::exists("/usr/bin/python3", ec) ? "/usr/bin/python3" : "python3";
  std::string cmd = shell_quote(python) + " " + shell_quote(script.string());
  for (const auto& a : args) cmd += " " + shell_quote(a);
  return cmd;
}

}  // namespace

std::string read_text(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string self_exe() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

fs::path find_script(const std::string& name, const char* env_var) {
  if (const char* env = std::getenv(env_var); env != nullptr && *env != '\0') return env;
  const std::string exe = self_exe();
  if (exe.empty()) return {};
  std::error_code ec;
  for (fs::path dir = fs::path(exe).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    const fs::path candidate = dir / "scripts" / name;
    if (fs::exists(candidate, ec)) return candidate;
    if (dir == dir.root_path()) break;
  }
  return {};
}

bool run_plot_script(const std::string& script, const char* env_var, const std::vector<std::string>& args,
                     const std::string& what_is_complete) {
  const fs::path path = find_script(script, env_var);
  if (path.empty()) {
    std::fprintf(stderr, "fleetsim: warning: scripts/%s not found; no plots (%s is complete)\n",
                 script.c_str(), what_is_complete.c_str());
    return false;
  }
  std::error_code ec;
  const fs::path log = fs::temp_directory_path(ec) / ("fleetsim-plot-" + std::to_string(::getpid()) + ".log");
  const std::string cmd = python_command(path, args) + " > " + shell_quote(log.string()) + " 2>&1";
  const int rc = std::system(cmd.c_str());
  if (rc != 0) {
    std::string text = read_text(log);
    if (text.size() > 2000) text = "..." + text.substr(text.size() - 2000);
    std::fprintf(stderr, "fleetsim: warning: plotting failed (%s, status %d); %s is complete\n%s",
                 path.c_str(), rc, what_is_complete.c_str(), text.c_str());
  }
  fs::remove(log, ec);
  return rc == 0;
}

int run_python(const fs::path& script, const std::vector<std::string>& args) {
  std::fflush(stdout);
  const int status = std::system(python_command(script, args).c_str());
  if (status == -1 || !WIFEXITED(status)) return 1;
  return WEXITSTATUS(status);
}

void write_atomically(const fs::path& path, const std::function<void(std::ostream&)>& write,
                      const std::string& option) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary);
    if (!f) throw InputError(path.string(), 0, option, "cannot write file");
    write(f);
    if (!f) throw InputError(path.string(), 0, option, "write failed");
  }
  fs::rename(tmp, path);
}

}  // namespace fleetsim::cli
