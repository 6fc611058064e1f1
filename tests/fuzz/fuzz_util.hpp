#pragma once
// What the libFuzzer harnesses share (tests/fuzz/README.md): a scratch folder per process for the
// inputs readers take as files, the split of an input into a settings part and a file part, and the
// contract every harness checks: bad input is an InputError (exit 2 in the CLI); any other exception
// escaping a reader is a finding (it would be "internal error", exit 1), so it is left to reach
// std::terminate, which libFuzzer reports as a crash.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "workloads/base/input_error.hpp"

namespace fleetsim::fuzz {

namespace fs = std::filesystem;

/// This process's scratch folder (removed at exit).
inline const fs::path& scratch() {
  static const fs::path dir = [] {
    std::string pattern = (fs::temp_directory_path() / "fleetsim-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    return fs::path(pattern);
  }();
  return dir;
}

/// Writes `bytes` to `name` in the scratch folder; returns its path.
inline std::string write_input(const std::string& name, std::string_view bytes) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary | std::ios::trunc)
      .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return p.string();
}

/// An input of the form "<settings>\n%%\n<file>": the settings (TOML) and the file's bytes. Without
/// the separator line the whole input is the settings and the file is empty.
struct SplitInput {
  std::string_view settings, file;
};
inline SplitInput split_input(std::string_view in) {
  constexpr std::string_view kSep = "\n%%\n";
  const std::size_t at = in.find(kSep);
  if (at == std::string_view::npos) return {in, {}};
  return {in.substr(0, at), in.substr(at + kSep.size())};
}

/// `settings` with "@SRC@" replaced by the repository's root (seeds name repository files so).
inline std::string expand_src(std::string_view settings) {
  std::string out(settings);
  constexpr std::string_view kSrc = "@SRC@";
  for (std::size_t p = out.find(kSrc); p != std::string::npos; p = out.find(kSrc, p + 1))
    out.replace(p, kSrc.size(), FLEETSIM_SOURCE_DIR);
  return out;
}

/// Runs `f`; an InputError is the expected answer to bad input (printed with FLEETSIM_FUZZ_VERBOSE=1,
/// to see what the seeds reach).
template <typename F>
void expect_input_error_only(F&& f) {
  static const bool verbose = std::getenv("FLEETSIM_FUZZ_VERBOSE") != nullptr;
  try {
    f();
    if (verbose) std::fprintf(stderr, "fuzz: accepted\n");
  } catch (const InputError& e) {
    if (verbose) std::fprintf(stderr, "fuzz: InputError: %s\n", e.what());
  }
}

}  // namespace fleetsim::fuzz
