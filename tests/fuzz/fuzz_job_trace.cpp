// libFuzzer harness: job traces, every registered format (tests/fuzz/README.md). The input is a
// scenario's [workload] keys (TOML, e.g. `format = "csv"`), then a line "%%", then the trace file's
// bytes; the scenario loader checks the keys as for `fleetsim run`, then the reader reads the file (a
// streamed trace: its first kMaxJobs jobs, so that a generator asked for 10^9 jobs stays bounded).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/app/scenario.hpp"
#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace {
constexpr std::size_t kMaxJobs = 20000;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const auto in = fuzz::split_input(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string trace = fuzz::write_input("trace", in.file);
  const std::string toml = "[cluster]\n[[cluster.pool]]\nnodes = 4\n[workload]\npath = \"" + trace + "\"\n" +
                           fuzz::expand_src(in.settings) + "\n";
  fuzz::expect_input_error_only([&] {
    Scenario sc = parse_scenario(toml, "fuzz.toml", fuzz::scratch().string());
    if (sc.workload.format.empty()) return;
    const std::size_t limit =
        sc.workload_limit > 0 ? std::min<std::size_t>(kMaxJobs, static_cast<std::size_t>(sc.workload_limit))
                              : kMaxJobs;
    if (auto stream = stream_trace(sc.workload, limit)) {
      JobSpec job;
      for (int pass = 0; pass < 2; ++pass) {  // the engine reads a stream twice (validation, then the run)
        stream->rewind();
        while (stream->next(job)) {
        }
      }
      return;
    }
    read_trace(sc.workload);
  });
  return 0;
}
