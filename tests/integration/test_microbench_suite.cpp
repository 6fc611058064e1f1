// The CUDA calibration microbenchmarks (scripts/calibrate): without a GPU, `--list` prints the
// planned sweep and a real run fails with one clear message instead of crashing. Skipped where the
// suite was not built (no CUDA compiler, FLEETSIM_BUILD_MICROBENCH=OFF, sanitizer build).
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::temp_dir;

namespace {

// The suite is built next to the fleetsim binary, in <build>/scripts/calibrate/.
std::filesystem::path microbench_path() {
  return std::filesystem::path(FLEETSIM_BINARY).parent_path() / "scripts" / "calibrate" /
         "fleetsim-microbench";
}

fleetsim::test::CmdResult run_microbench(const std::string& args, const std::string& env = "") {
  const auto dir = temp_dir("microbench");
  const auto out = dir / "out.txt";
  const std::string cmd = env + " " + microbench_path().string() + " " + args + " >" + out.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  fleetsim::test::CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(out);
  std::filesystem::remove_all(dir);
  return r;
}

bool built() {
  if (std::filesystem::exists(microbench_path())) return true;
  MESSAGE("fleetsim-microbench not built (no CUDA or FLEETSIM_BUILD_MICROBENCH=OFF): skipped");
  return false;
}

}  // namespace

TEST_CASE("microbench --list prints the planned sweep without a GPU") {
  if (!built()) return;
  const auto r = run_microbench("--list --sms 108", "CUDA_VISIBLE_DEVICES=");
  CHECK(r.code == 0);
  for (const char* needle :
       {"sms=108", "gemm: linear_<device>.csv", "bmm_<device>.csv", "fp32 tf32 fp16 bf16",
        "elem: elem_<device>.csv", "ln BxH:", "softmax BxH:", "launch: launch_<device>.csv",
        "copy: copy_<device>.csv", "nccl_<op>_<n>gpu.txt", "all_reduce all_gather reduce_scatter"})
    CHECK_MESSAGE(r.output.find(needle) != std::string::npos, "missing '" << needle << "' in: " << r.output);

  const auto q = run_microbench("--list --quick gemm", "CUDA_VISIBLE_DEVICES=");
  CHECK(q.code == 0);
  CHECK(q.output.find("quick") != std::string::npos);
  CHECK(q.output.find("elem:") == std::string::npos);  // only the benchmark asked for
}

TEST_CASE("microbench without a visible GPU exits non-zero with a clear message") {
  if (!built()) return;
  const auto out = temp_dir("microbench-out");
  const auto r = run_microbench("--quick --out " + out.string(), "CUDA_VISIBLE_DEVICES=");
  CHECK(r.code == 2);
  CHECK_MESSAGE(r.output.find("no usable CUDA device") != std::string::npos, r.output);
  std::filesystem::remove_all(out);
}

TEST_CASE("microbench rejects unknown arguments") {
  if (!built()) return;
  const auto r = run_microbench("--list --no-such-flag");
  CHECK(r.code == 2);
  CHECK(r.output.find("unknown argument: --no-such-flag") != std::string::npos);
}
