// libFuzzer harness: fault traces (tests/fuzz/README.md). The input is the trace file's bytes; every
// registered reader (stepfun JSON, csv) reads it.
#include <cstddef>
#include <cstdint>
#include <string>

#include "tests/fuzz/fuzz_util.hpp"
#include "workloads/faults/fault_trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  const std::string path =
      fuzz::write_input("faults", std::string_view(reinterpret_cast<const char*>(data), size));
  for (const auto& reader : fault_trace_readers().entries())
    fuzz::expect_input_error_only([&] { fault_trace_readers().create(reader.name)->read(path); });
  return 0;
}
