// libFuzzer harness: PyTorch profiler (Kineto) traces (tests/fuzz/README.md). The input is the trace
// file's bytes (JSON, or gzip'd JSON), read as `fleetsim replay` reads a file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/profiler/kineto_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const std::string path =
      fuzz::write_input("trace.json", std::string_view(reinterpret_cast<const char*>(data), size));
  fuzz::expect_input_error_only([&] { read_kineto_trace(path); });
  return 0;
}
