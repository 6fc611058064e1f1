// A file that shrinks while fleetsim reads it (issue 40): a clear error naming the file, exit 2 and no
// output, never SIGBUS (as a memory-mapped Kineto trace cut short raised) nor a silently shorter
// input. The file is cut for real, by tests/shrink_shim.cpp preloaded into fleetsim: the first read(2)
// of the file gets its first bytes and the file is truncated to them right after (a mapping of it is
// truncated right after it is made).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.hpp"

using namespace fleetsim::test;
namespace fs = std::filesystem;

namespace {

/// fleetsim with the shim preloaded: `file` is cut to `keep` bytes while it is read.
CmdResult run_shrinking(const fs::path& file, long keep, const std::string& args) {
  const auto log = temp_dir("shrink-log") / "out.txt";
  // The sanitizer build: the shim is not instrumented, so ASan must not insist on coming first.
  const char* asan = std::getenv("ASAN_OPTIONS");
  const std::string cmd =
      "env LD_PRELOAD=" + std::string(FLEETSIM_SHRINK_SHIM) + " FLEETSIM_SHRINK_FILE=" + file.string() +
      " FLEETSIM_SHRINK_TO=" + std::to_string(keep) +
      " ASAN_OPTIONS=" + std::string(asan != nullptr ? asan : "") + ":verify_asan_link_order=0 " +
      FLEETSIM_BINARY + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(log);
  fs::remove_all(log.parent_path());
  return r;
}

/// A Kineto trace of `kernels` kernels on one stream (about 120 bytes each).
std::string kineto_trace(int kernels) {
  std::string t =
      "{\"deviceProperties\": [{\"id\": 0, \"name\": \"NVIDIA A100-SXM4-80GB\"}],\n\"traceEvents\": [\n";
  for (int i = 0; i < kernels; ++i)
    t += std::string(i > 0 ? ",\n" : "") + "{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"k" +
         std::to_string(i % 7) + "\", \"pid\": 0, \"tid\": 7, \"ts\": " + std::to_string(10 * i) +
         ", \"dur\": 5, \"args\": {\"device\": 0, \"stream\": 7}}";
  return t + "\n]}\n";
}

void check_refused(const CmdResult& r, const fs::path& file, const fs::path& out) {
  INFO(r.output);
  CHECK(r.code == 2);
  CHECK(r.output.find(file.string()) != std::string::npos);
  CHECK(r.output.find("changed while it was read") != std::string::npos);
  CHECK((!fs::exists(out) || fs::is_empty(out)));
}

}  // namespace

TEST_CASE("a Kineto trace cut short while it is read: exit 2 naming it, no output, no SIGBUS") {
  const auto dir = temp_dir("shrink-kineto");
  const fs::path trace = dir / "trace.json";
  write_file(trace, kineto_trace(20000));  // 2.4 MB: several pages past the cut
  REQUIRE(fs::file_size(trace) > 1000000);
  // Unchanged, the same trace replays.
  const auto ok = run_fleetsim("replay " + trace.string() + " --out " + (dir / "ok").string());
  REQUIRE(ok.code == 0);
  const fs::path out = dir / "out";
  check_refused(run_shrinking(trace, 100000, "replay " + trace.string() + " --out " + out.string()), trace,
                out);
  CHECK(fs::file_size(trace) == 100000);  // the shim did cut it
  fs::remove_all(dir);
}

TEST_CASE("a job trace cut short while it is read: exit 2 naming it, no output, not a shorter trace") {
  const auto dir = temp_dir("shrink-jobs");
  std::string csv = "id,submit,duration,gpus\n";
  for (int i = 0; i < 2000; ++i)
    csv +=
        "j" + std::to_string(i) + "," + std::to_string(i * 10) + ",600," + std::to_string(1 + i % 4) + "\n";
  write_file(dir / "jobs.csv", csv);
  write_file(
      dir / "s.toml",
      "[cluster]\n[[cluster.pool]]\nnodes = 4\n[workload]\nformat = \"csv\"\npath = \"jobs.csv\"\n"
      "[workload.columns]\nid = \"id\"\nsubmit = \"submit\"\nduration = \"duration\"\ngpus = \"gpus\"\n");
  const fs::path out = dir / "out";
  // Cut inside a row, as a file still being written would end.
  check_refused(run_shrinking(dir / "jobs.csv", 1000,
                              "run " + (dir / "s.toml").string() + " --quiet --out " + out.string()),
                dir / "jobs.csv", out);
  fs::remove_all(dir);
}
