#pragma once
// The mutation engine of tests/integration/test_bad_input_fuzz.cpp: a FuzzCase (files and a command),
// seeded mutations of one file per mutant, the run of the fleetsim binary under a time limit, and the
// checks every mutant must pass (exit 0 or 2; on 2 a message naming the input and an empty output
// folder; on 0 outputs that parse). Included by that test only.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "tests/test_util.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::test::fuzz {

namespace fs = std::filesystem;

// Fewer mutants under the sanitizers, where each run is several times slower (CI's ASan + UBSan build).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr int kScale = 2;
#else
inline constexpr int kScale = 1;
#endif

inline const std::string kSource = FLEETSIM_SOURCE_DIR;
inline const std::string kServing = kSource + "/tests/data/serving";

/// One input set: files written into a fresh folder, and the command's arguments with {d} (the folder)
/// and {o} (the output folder, absent before the run).
struct FuzzCase {
  std::string name;
  std::map<std::string, std::string> files;
  std::string args;
  std::vector<std::string> outputs;  ///< files an exit 0 must leave in {o} (parsed as JSON or CSV)
};

enum class Mutation {
  kDeleteLine,
  kDuplicateLine,
  kReplaceValue,
  kTruncate,
  kUnknownKey,
  kSwapColumns,
  kBinary
};
inline constexpr int kMutations = 7;

inline const std::vector<std::string> kGarbage = {
    "garbage", "\"garbage\"",   "",      "-5",     "0",  "nan",  "inf",  "-inf",
    "1e308",   "9999999999999", "\"7\"", "[1, 2]", "{}", "true", "-0.0", "\"\""};

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) return out;
    start = nl + 1;
  }
}

inline std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i > 0 ? "\n" : "") + lines[i];
  return out;
}

inline std::size_t pick(std::mt19937_64& rng, std::size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

/// Replaces one value of `text`: a TOML `key = value`, a CSV cell, or a JSON `"key": value`.
inline std::string replace_value(const std::string& text, const std::string& file, const std::string& value,
                                 std::mt19937_64& rng, std::string& what) {
  auto lines = lines_of(text);
  if (file.ends_with(".csv")) {
    const std::size_t i = pick(rng, lines.size());
    auto cells = fleetsim::split(lines[i], ',');
    const std::size_t j = pick(rng, cells.size());
    if (cells.empty()) cells.emplace_back();
    cells[j] = value;
    std::string row;
    for (std::size_t k = 0; k < cells.size(); ++k) row += (k > 0 ? "," : "") + cells[k];
    lines[i] = row;
    what = "cell " + std::to_string(i + 1) + ":" + std::to_string(j + 1) + " -> [" + value + "]";
    return join_lines(lines);
  }
  const bool toml = file.ends_with(".toml");
  std::vector<std::size_t> spots;  // TOML: lines with '='; JSON: offsets just after ": "
  if (toml) {
    for (std::size_t i = 0; i < lines.size(); ++i)
      if (lines[i].find('=') != std::string::npos) spots.push_back(i);
  } else {
    for (std::size_t p = text.find(": "); p != std::string::npos; p = text.find(": ", p + 1))
      spots.push_back(p + 2);
  }
  if (spots.empty()) {
    what = "no value to replace";
    return text;
  }
  const std::size_t s = spots[pick(rng, spots.size())];
  if (toml) {
    lines[s] = lines[s].substr(0, lines[s].find('=') + 1) + " " + value;
    what = "line " + std::to_string(s + 1) + " value -> [" + value + "]";
    return join_lines(lines);
  }
  const std::size_t end = text.find_first_of(",}\n", s);
  what = "value at offset " + std::to_string(s) + " -> [" + value + "]";
  return text.substr(0, s) + value + (end == std::string::npos ? "" : text.substr(end));
}

inline std::string mutate(const std::string& text, const std::string& file, std::mt19937_64& rng,
                          std::string& what) {
  auto lines = lines_of(text);
  const auto m = static_cast<Mutation>(pick(rng, kMutations));
  switch (m) {
    case Mutation::kDeleteLine: {
      const std::size_t i = pick(rng, lines.size());
      lines.erase(lines.begin() + static_cast<long>(i));
      what = "delete line " + std::to_string(i + 1);
      return join_lines(lines);
    }
    case Mutation::kDuplicateLine: {
      const std::size_t i = pick(rng, lines.size());
      lines.insert(lines.begin() + static_cast<long>(i), lines[i]);
      what = "duplicate line " + std::to_string(i + 1);
      return join_lines(lines);
    }
    case Mutation::kTruncate: {
      const std::size_t cut = pick(rng, text.size() + 1);
      what = "truncate at byte " + std::to_string(cut);
      return text.substr(0, cut);
    }
    case Mutation::kUnknownKey: {
      const std::size_t i = pick(rng, lines.size() + 1);
      const std::string extra = file.ends_with(".toml")   ? "bogus_key = 1"
                                : file.ends_with(".csv")  ? "x,y,z,bogus"
                                : file.ends_with(".json") ? "\"bogus_key\": 1,"
                                                          : "{\"bogus_key\": 1}";
      lines.insert(lines.begin() + static_cast<long>(i), extra);
      what = "insert [" + extra + "] before line " + std::to_string(i + 1);
      return join_lines(lines);
    }
    case Mutation::kSwapColumns:
      if (file.ends_with(".csv")) {
        const std::size_t width = fleetsim::split(lines[0], ',').size();
        const std::size_t a = pick(rng, width), b = pick(rng, width);
        for (auto& l : lines) {
          auto cells = fleetsim::split(l, ',');
          if (cells.size() <= std::max(a, b)) continue;
          std::swap(cells[a], cells[b]);
          std::string row;
          for (std::size_t k = 0; k < cells.size(); ++k) row += (k > 0 ? "," : "") + cells[k];
          l = row;
        }
        what = "swap columns " + std::to_string(a + 1) + " and " + std::to_string(b + 1);
        return join_lines(lines);
      }
      [[fallthrough]];
    case Mutation::kReplaceValue:
      return replace_value(text, file, kGarbage[pick(rng, kGarbage.size())], rng, what);
    case Mutation::kBinary: {
      const std::size_t at = pick(rng, text.size() + 1);
      std::string bytes;
      const std::size_t n = 1 + pick(rng, 8);
      for (std::size_t k = 0; k < n; ++k) bytes += static_cast<char>(pick(rng, 256));
      what = "insert " + std::to_string(n) + " random bytes at " + std::to_string(at);
      return text.substr(0, at) + bytes + text.substr(at);
    }
  }
  return text;
}

inline void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

/// Runs the binary (killed after 60 s: a hang is a failure too); code -1 for a signal, 124 for a timeout.
inline fleetsim::test::CmdResult run_limited(const std::string& args, const fs::path& log) {
  const std::string cmd =
      "timeout -k 5 60 " + std::string(FLEETSIM_BINARY) + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  fleetsim::test::CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(log);
  return r;
}

inline bool has_line_or_field(const std::string& out) {
  if (out.find("field '") != std::string::npos) return true;
  for (std::size_t p = out.find(':'); p != std::string::npos; p = out.find(':', p + 1))
    if (p + 1 < out.size() && std::isdigit(static_cast<unsigned char>(out[p + 1])) != 0) return true;
  return false;
}

/// "" if the outputs of a successful run parse, else what is wrong.
inline std::string check_outputs(const FuzzCase& c, const fs::path& out) {
  for (const auto& name : c.outputs) {
    const fs::path p = out / name;
    if (!fs::exists(p)) return name + " missing";
    const std::string text = read_file(p);
    if (name.ends_with(".json")) {
      if (!nlohmann::json::accept(text)) return name + " is not valid JSON";
    } else if (text.empty() || text.find('\n') == std::string::npos) {
      return name + " has no header line";
    }
  }
  return "";
}

/// Runs `n` mutants of `c` (seed `seed`); returns how many failed (each printed).
inline int fuzz(const FuzzCase& c, int n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> names;
  for (const auto& [name, text] : c.files) names.push_back(name);
  int failed = 0;
  for (int k = 0; k < n; ++k) {
    const std::string file = names[pick(rng, names.size())];
    std::string what;
    const std::string mutant = mutate(c.files.at(file), file, rng, what);
    const fs::path dir = fleetsim::test::temp_dir("fuzz-" + c.name);
    for (const auto& [name, text] : c.files) write_file(dir / name, name == file ? mutant : text);
    std::string args = c.args;
    replace_all(args, "{d}", dir.string());
    replace_all(args, "{o}", (dir / "out").string());
    const auto r = run_limited(args, dir / "log.txt");
    std::string problem;
    if (r.code != 0 && r.code != 2) {
      problem = r.code == -1    ? "killed by a signal"
                : r.code == 124 ? "timed out"
                                : "exit " + std::to_string(r.code);
    } else if (r.code == 2) {
      // The file: one of the case's, or a path in its folder (a mutated path names the missing file).
      const bool names_file = r.output.find(dir.string()) != std::string::npos ||
                              std::any_of(names.begin(), names.end(), [&](const std::string& f) {
                                return r.output.find(f) != std::string::npos;
                              });
      if (!names_file)
        problem = "exit 2 without naming an input file";
      else if (what.rfind("line", 0) == 0 && what.find("value") != std::string::npos &&
               !has_line_or_field(r.output))  // a replaced TOML value: its line or key
        problem = "exit 2 without a line or field";
      else if (fs::exists(dir / "out") && !fs::is_empty(dir / "out"))
        problem = "exit 2 with partial output";
    } else {
      problem = check_outputs(c, dir / "out");
    }
    if (problem.empty()) {
      fs::remove_all(dir);
      continue;
    }
    ++failed;
    MESSAGE("mutant " << k << " of case '" << c.name << "' (seed " << seed << "): " << file << ": " << what
                      << "\n  -> " << problem << "\n  rerun: fleetsim " << args
                      << "\n  output: " << r.output.substr(0, 600));
  }
  MESSAGE(c.name << ": " << n << " mutants, " << failed << " failed");
  return failed;
}

}  // namespace fleetsim::test::fuzz
