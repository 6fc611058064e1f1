// libFuzzer harness: sweep TOML (tests/fuzz/README.md). The input is a sweep file whose base scenario
// is `base.toml` (a small scenario in a scratch folder); it is parsed, its combinations and runs are
// enumerated, and (up to kMaxChecked combinations) every combination's scenario is checked as
// `fleetsim sweep` checks them before it starts.
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/experiments/sweep_spec.hpp"
#include "tests/fuzz/fuzz_util.hpp"

namespace {
constexpr std::size_t kMaxChecked = 64;
constexpr std::size_t kMaxRuns = 100000;
constexpr const char* kBase =
    "seed = 1\n[cluster]\n[[cluster.pool]]\nnodes = 2\n[workload]\nformat = \"synthetic\"\njobs = 10\n"
    "[scheduler]\npolicy = \"fifo\"\n";
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace fleetsim;
  static const std::string base = fuzz::write_input("base.toml", kBase);
  const std::string text(reinterpret_cast<const char*>(data), size);
  fuzz::expect_input_error_only([&] {
    const SweepSpec spec = parse_sweep(text, "fuzz.sweep.toml", fuzz::scratch().string());
    std::size_t combos = std::max<std::size_t>(1, spec.cases.size());
    for (const auto& g : spec.grid) {
      if (g.values.empty() || combos > kMaxRuns / g.values.size()) return;
      combos *= g.values.size();
    }
    if (combos > kMaxRuns / std::max<std::size_t>(1, spec.seeds.size())) return;
    const auto all = sweep_combinations(spec);
    sweep_runs(spec, all);
    if (all.size() <= kMaxChecked) check_sweep(spec, all);
  });
  return 0;
}
