// "Nothing crashes on user input": a seeded mutation test of fleetsim's inputs through the real binary.
// Each case starts from a small valid input set (a scenario and the trace files it reads, a sweep file, an
// LLM config), applies one mutation per mutant to one of its files (delete or duplicate a line, replace a
// value with garbage, an empty string, a negative number, 0, NaN/inf, 1e308, a huge integer or a wrong
// type, truncate mid-line, add an unknown key, swap two CSV columns, insert binary bytes) and runs the
// command. Every mutant must end normally with 0 or 2; on 2 the message names an input file and a line or
// field and the output folder holds nothing; on 0 the outputs parse. A failing mutant is printed (case,
// index, file, mutation) and its folder kept, so it can be rerun by hand. Deterministic: std::mt19937_64
// seeded per case.
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

namespace fs = std::filesystem;
using fleetsim::test::read_file;
using fleetsim::test::write_file;

namespace {

// Fewer mutants under the sanitizers, where each run is several times slower (CI's ASan + UBSan build).
#if defined(__SANITIZE_ADDRESS__)
constexpr int kScale = 2;
#else
constexpr int kScale = 1;
#endif

const std::string kSource = FLEETSIM_SOURCE_DIR;
const std::string kServing = kSource + "/tests/data/serving";

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
constexpr int kMutations = 7;

const std::vector<std::string> kGarbage = {
    "garbage", "\"garbage\"",   "",      "-5",     "0",  "nan",  "inf",  "-inf",
    "1e308",   "9999999999999", "\"7\"", "[1, 2]", "{}", "true", "-0.0", "\"\""};

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) return out;
    start = nl + 1;
  }
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string out;
  for (std::size_t i = 0; i < lines.size(); ++i) out += (i > 0 ? "\n" : "") + lines[i];
  return out;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::size_t pick(std::mt19937_64& rng, std::size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
}

/// Replaces one value of `text`: a TOML `key = value`, a CSV cell, or a JSON `"key": value`.
std::string replace_value(const std::string& text, const std::string& file, const std::string& value,
                          std::mt19937_64& rng, std::string& what) {
  auto lines = lines_of(text);
  if (ends_with(file, ".csv")) {
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
  const bool toml = ends_with(file, ".toml");
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

std::string mutate(const std::string& text, const std::string& file, std::mt19937_64& rng,
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
      const std::string extra = ends_with(file, ".toml")   ? "bogus_key = 1"
                                : ends_with(file, ".csv")  ? "x,y,z,bogus"
                                : ends_with(file, ".json") ? "\"bogus_key\": 1,"
                                                           : "{\"bogus_key\": 1}";
      lines.insert(lines.begin() + static_cast<long>(i), extra);
      what = "insert [" + extra + "] before line " + std::to_string(i + 1);
      return join_lines(lines);
    }
    case Mutation::kSwapColumns:
      if (ends_with(file, ".csv")) {
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

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (std::size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
    s.replace(p, from.size(), to);
}

/// Runs the binary (killed after 60 s: a hang is a failure too); code -1 for a signal, 124 for a timeout.
fleetsim::test::CmdResult run_limited(const std::string& args, const fs::path& log) {
  const std::string cmd =
      "timeout -k 5 60 " + std::string(FLEETSIM_BINARY) + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  fleetsim::test::CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(log);
  return r;
}

bool has_line_or_field(const std::string& out) {
  if (out.find("field '") != std::string::npos) return true;
  for (std::size_t p = out.find(':'); p != std::string::npos; p = out.find(':', p + 1))
    if (p + 1 < out.size() && std::isdigit(static_cast<unsigned char>(out[p + 1])) != 0) return true;
  return false;
}

/// "" if the outputs of a successful run parse, else what is wrong.
std::string check_outputs(const FuzzCase& c, const fs::path& out) {
  for (const auto& name : c.outputs) {
    const fs::path p = out / name;
    if (!fs::exists(p)) return name + " missing";
    const std::string text = read_file(p);
    if (ends_with(name, ".json")) {
      if (!nlohmann::json::accept(text)) return name + " is not valid JSON";
    } else if (text.empty() || text.find('\n') == std::string::npos) {
      return name + " has no header line";
    }
  }
  return "";
}

/// Runs `n` mutants of `c` (seed `seed`); returns how many failed (each printed).
int fuzz(const FuzzCase& c, int n, std::uint64_t seed) {
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

const char* kTinyScenario = R"(seed = 3
[cluster]
[[cluster.pool]]
name = "p"
nodes = 2
gpus_per_node = 4
gpu = "V100"
[cluster.network]
nodes_per_leaf = 2
[workload]
format = "csv"
path = "trace.csv"
[workload.columns]
id = "id"
submit = "submit"
duration = "duration"
gpus = "gpus"
[scheduler]
policy = "las"
placement = "consolidate"
)";
const char* kTinyTrace = "id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\nD,25,300,8\n";
const char* kFailures = R"([failures]
trace = "faults.csv"
trace_format = "csv"
detection_s = 30
restart_s = 60
checkpoint = "fixed"
checkpoint_interval_s = 100
checkpoint_write_s = 10
spare_nodes = 1
)";
const char* kFaults = "node,start,end,component\nn0,40,500,gpu\nn1,60,90,nic\n";
const char* kRequests =
    "{\"input_toks\": 24, \"output_toks\": 3, \"arrival_time_ns\": 0}\n"
    "{\"input_toks\": 9, \"output_toks\": 1, \"arrival_time_ns\": 5000000}\n"
    "{\"input_toks\": 30, \"output_toks\": 5, \"arrival_time_ns\": 6000000}\n";

std::string serving_scenario() {
  return "seed = 2\n[cluster]\n[[cluster.pool]]\nnodes = 1\ngpus_per_node = 2\ngpu = \"A10\"\n"
         "[[service]]\nname = \"tiny\"\nmodel = \"" +
         kServing + "/tiny-config.json\"\nprofiles = \"" + kServing +
         "/tiny/bf16\"\ngpu = \"A10\"\nreplicas = 2\nkv_cache_gib = 0.001\nrouting = \"least-outstanding\"\n"
         "slo_ttft_ms = 5\n[service.requests]\nformat = \"llmservingsim\"\npath = \"r.jsonl\"\n";
}

const std::vector<std::string> kRunOutputs = {"summary.json", "jobs.csv"};

}  // namespace

TEST_CASE("fuzz: mutants of the quickstart scenario exit 0 or 2, never crash") {
  std::string toml = read_file(kSource + "/scenarios/quickstart.toml");
  replace_all(toml, "../results/quickstart", "res");
  const FuzzCase c{"quickstart",
                   {{"quickstart.toml", toml}},
                   "run {d}/quickstart.toml --set workload.limit=40 --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 80 / kScale, 1) == 0);
}

TEST_CASE("fuzz: mutants of a tiny CSV-trace scenario and its trace exit 0 or 2, never crash") {
  const FuzzCase c{"tiny",
                   {{"s.toml", kTinyScenario}, {"trace.csv", kTinyTrace}},
                   "run {d}/s.toml --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 100 / kScale, 2) == 0);
}

TEST_CASE("fuzz: mutants of a failures scenario and its fault trace exit 0 or 2, never crash") {
  const FuzzCase c{"failures",
                   {{"s.toml", std::string(kTinyScenario) + kFailures},
                    {"trace.csv", kTinyTrace},
                    {"faults.csv", kFaults}},
                   "run {d}/s.toml --out {o} -q",
                   kRunOutputs};
  CHECK(fuzz(c, 100 / kScale, 3) == 0);
}

TEST_CASE("fuzz: mutants of a serving scenario and its request JSONL exit 0 or 2, never crash") {
  const FuzzCase c{"serving",
                   {{"s.toml", serving_scenario()}, {"r.jsonl", kRequests}},
                   "run {d}/s.toml --out {o} -q",
                   {"summary.json", "requests.csv"}};
  CHECK(fuzz(c, 80 / kScale, 4) == 0);
}

TEST_CASE("fuzz: mutants of fleetsim size's scenario exit 0 or 2, never crash") {
  const FuzzCase c{"size",
                   {{"s.toml", serving_scenario()}, {"r.jsonl", kRequests}},
                   "size {d}/s.toml --service tiny --max-replicas 4 --out {o} -q",
                   {"sizing.csv"}};
  CHECK(fuzz(c, 40 / kScale, 5) == 0);
}

TEST_CASE("fuzz: mutants of a sweep file and its base scenario exit 0 or 2, never crash") {
  const std::string sweep =
      "base = \"s.toml\"\nseeds = 1\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n"
      "[baseline]\n\"scheduler.policy\" = \"fifo\"\n";
  const FuzzCase c{"sweep",
                   {{"sweep.toml", sweep}, {"s.toml", kTinyScenario}, {"trace.csv", kTinyTrace}},
                   "sweep {d}/sweep.toml --out {o} -q --jobs 1",
                   {"runs.csv", "aggregate.csv"}};
  CHECK(fuzz(c, 40 / kScale, 6) == 0);
}

TEST_CASE("fuzz: mutants of an LLM config for fleetsim llm predict exit 0 or 2, never crash") {
  const FuzzCase c{
      "llm",
      {{"config.json", read_file(kSource + "/tests/data/llm/llama3-70b.json")}},
      "llm predict --model {d}/config.json --tp 8 --pp 4 --seq 2048 --global-batch 64 --gpu H100 --out {o}",
      {"prediction.json"}};
  CHECK(fuzz(c, 60 / kScale, 7) == 0);
}

// Regressions of what the fuzzer found (each was a hang, an exit 1 or an internal error before the fix).

TEST_CASE("fuzz regression: an integer key beyond its type's range is refused, not wrapped around") {
  // nodes = 9999999999999 used to wrap to 1,316,134,911 nodes: the run hung building the cluster.
  const auto dir = fleetsim::test::temp_dir("fuzz-range");
  std::string toml = kTinyScenario;
  replace_all(toml, "nodes = 2", "nodes = 9999999999999");
  write_file(dir / "s.toml", toml);
  write_file(dir / "trace.csv", kTinyTrace);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:5: field 'cluster.pool.0.nodes': out of range: 9999999999999") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a sweep whose every run rejects the base's trace exits 2 and writes nothing") {
  // Before: exit 1 ("2 of 2 runs failed") with runs.csv, aggregate.csv and runs/ left behind; and a trace
  // with invalid UTF-8 made writing run.json throw (exit 1, "internal error: ... invalid UTF-8 byte").
  for (const std::string& trace : {std::string("id,submit,duration,gpus\nA,0,oops,2\n"),
                                   std::string("id,submit,duration,gpus\nA,0,1\xff\xfe,2\n")}) {
    const auto dir = fleetsim::test::temp_dir("fuzz-sweep");
    write_file(dir / "s.toml", kTinyScenario);
    write_file(dir / "trace.csv", trace);
    write_file(dir / "sweep.toml",
               "base = \"s.toml\"\nseeds = 1\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"las\"]\n");
    const auto r = fleetsim::test::run_fleetsim("sweep " + (dir / "sweep.toml").string() + " --out " +
                                                (dir / "out").string() + " -q --jobs 1");
    CHECK(r.code == 2);
    CHECK(r.output.find("every run rejected its input") != std::string::npos);
    CHECK(r.output.find("trace.csv:2: field 'duration'") != std::string::npos);
    CHECK(r.output.find("internal error") == std::string::npos);
    CHECK_FALSE(fs::exists(dir / "out"));
    fs::remove_all(dir);
  }
}

TEST_CASE("fuzz regression: a job duration of 1e308 s is refused with its line, not simulated forever") {
  // Before: with checkpoints (the failures case) the run never ended.
  const auto dir = fleetsim::test::temp_dir("fuzz-duration");
  write_file(dir / "s.toml", std::string(kTinyScenario) + kFailures);
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,1e308,2\nB,10,50,4\n");
  write_file(dir / "faults.csv", kFaults);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("trace.csv:2: field 'duration': duration 1e+308 s is beyond 1e12 s") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a mistyped input path is named by the scenario's file, line and key") {
  // Before: "DIR/garbage: trace file not found", naming neither the scenario nor workload.path; the same
  // for a service's model or profiles (fleetsim run and fleetsim size).
  const auto dir = fleetsim::test::temp_dir("fuzz-path");
  std::string toml = kTinyScenario;
  replace_all(toml, "path = \"trace.csv\"", "path = \"garbage\"");
  write_file(dir / "s.toml", toml);
  auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                        (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK(r.output.find("s.toml:12: field 'workload.path': not found: " + (dir / "garbage").string()) !=
        std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out"));
  std::string serving = serving_scenario();
  replace_all(serving, "/tiny/bf16", "/tiny/nope");
  write_file(dir / "serve.toml", serving);
  write_file(dir / "r.jsonl", kRequests);
  r = fleetsim::test::run_fleetsim("size " + (dir / "serve.toml").string() + " --service tiny --out " +
                                   (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("serve.toml:10: field 'service.0.profiles': not found: ") != std::string::npos,
                r.output);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}

TEST_CASE(
    "fuzz regression: with failures on, a job larger than the cluster is skipped, not an internal error") {
  // Before: the run ended with "internal error: job 1 has not arrived or has finished" (exit 1) while
  // writing failures_jobs: the failure hook read the record of a job skipped at arrival.
  const auto dir = fleetsim::test::temp_dir("fuzz-skip");
  write_file(dir / "s.toml", std::string(kTinyScenario) + kFailures);
  write_file(dir / "trace.csv", "id,submit,duration,gpus\nA,0,100,2\nB,10,50,64\n");
  write_file(dir / "faults.csv", kFaults);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK_MESSAGE(r.code == 0, r.output);
  CHECK(read_file(dir / "out" / "skipped.csv").find("B,") != std::string::npos);
  CHECK(nlohmann::json::parse(read_file(dir / "out" / "summary.json"))["completed"] == 1);
  fs::remove_all(dir);
}

TEST_CASE("fuzz regression: a KV cache larger than the replica's GPU memory is refused, not allocated") {
  // Before: kv_cache_gib = 9999999999999 ended in "internal error: std::bad_alloc" (exit 1).
  const auto dir = fleetsim::test::temp_dir("fuzz-kv");
  std::string toml = serving_scenario();
  replace_all(toml, "kv_cache_gib = 0.001", "kv_cache_gib = 9999999999999");
  write_file(dir / "s.toml", toml);
  write_file(dir / "r.jsonl", kRequests);
  const auto r = fleetsim::test::run_fleetsim("run " + (dir / "s.toml").string() + " --out " +
                                              (dir / "out").string() + " -q");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("s.toml:13: field 'service.0.kv_cache_gib': 9999999999999 GiB is more than the "
                              "replica's memory (1 x 24 GiB)") != std::string::npos,
                r.output);
  CHECK_FALSE(fs::exists(dir / "out"));
  fs::remove_all(dir);
}
