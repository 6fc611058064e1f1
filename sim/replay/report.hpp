#pragma once
// Outputs of `fleetsim replay`: replay.json, kernel_classes.csv, timeline.json (Chrome trace for
// Perfetto / chrome://tracing) and the comparison table printed on stdout.
#include <string>
#include <vector>

#include "sim/replay/replay.hpp"
#include "sim/replay/replay_network.hpp"

namespace fleetsim::replay {

struct ReplayReport {
  const ExecGraph* graph = nullptr;
  const WhatIf* what_if = nullptr;
  const Retiming* retiming = nullptr;
  const Times* measured = nullptr;
  const Times* predicted = nullptr;
  const ReplayCluster* cluster = nullptr;  ///< the modelled platform (optional)
  std::vector<StepResult> steps;
  std::vector<std::string> notes;
  double parse_s = 0, build_s = 0, simulate_s = 0;
  long executions = 0;  ///< SimGrid activities (collective ptasks)
};

void write_replay_json(const ReplayReport& r, const std::string& path);
void write_kernel_classes_csv(const ReplayReport& r, const std::string& path);
void write_timeline(const ReplayReport& r, const std::string& path);
std::string format_table(const ReplayReport& r);

}  // namespace fleetsim::replay
