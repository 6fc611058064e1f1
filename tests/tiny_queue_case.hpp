#pragma once
// The tiny queueing case of the compare and sweep tests: one node of 4 V100 GPUs and three jobs.
// A: t=0, 2 GPUs, 100 s. B: t=10, 4 GPUs, 50 s. C: t=20, 1 GPU, 30 s.
// fifo: A 0..100, B 100..150, C 150..180 -> JCTs 100, 140, 160 (mean 400 / 3).
// fifo-skip: C starts beside A at 20 -> JCTs 100, 140, 30 (mean 90). Placement cannot matter here.
#include <filesystem>
#include <string>

#include "tests/test_util.hpp"

namespace fleetsim::test {

inline constexpr const char* kTinyQueueScenario = R"(seed = 3
[cluster]
[[cluster.pool]]
name = "p"
nodes = 1
gpus_per_node = 4
gpu = "V100"
[workload]
format = "csv"
path = "trace.csv"
[workload.columns]
id = "id"
submit = "submit"
duration = "duration"
gpus = "gpus"
)";
inline constexpr const char* kTinyQueueTrace = "id,submit,duration,gpus\nA,0,100,2\nB,10,50,4\nC,20,30,1\n";

/// A fresh folder with s.toml (the scenario, then `extra` TOML) and trace.csv.
inline std::filesystem::path make_tiny_queue_case(const std::string& tag, const std::string& extra = "") {
  const auto dir = temp_dir(tag);
  write_file(dir / "s.toml", std::string(kTinyQueueScenario) + extra);
  write_file(dir / "trace.csv", kTinyQueueTrace);
  return dir;
}

/// The same folder with `sweep` written as sweep.toml beside it (its base is "s.toml").
inline std::filesystem::path make_tiny_sweep_case(const std::string& tag, const std::string& sweep) {
  const auto dir = make_tiny_queue_case(tag);
  write_file(dir / "sweep.toml", sweep);
  return dir;
}

}  // namespace fleetsim::test
