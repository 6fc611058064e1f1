#pragma once
// JobSpec: what one job asks for, as read from a trace. No SimGrid, no cluster knowledge.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fleetsim {

struct JobSpec {
  std::string id;        ///< trace's job name/id (or a generated "job-<n>")
  double submit_s = 0;   ///< arrival time, seconds from the trace origin (>= 0)
  int gpus = 1;          ///< GPUs requested (0 = CPU-only pod)
  int gpu_milli = 1000;  ///< thousandths of ONE GPU per requested GPU (1000 = whole GPU; < 1000 shares)
  std::vector<std::string> gpu_types;  ///< allowed GPU catalog names (canonical); empty = any
  double cpu_milli = 0;                ///< CPU request in thousandths of a core (0 = none)
  double memory_mib = 0;               ///< memory request, MiB (0 = none)
  bool single_node = false;            ///< must all GPUs sit in one node (e.g. a Kubernetes pod)
  std::optional<double> duration_s;    ///< observed run time, seconds (trace durations)
  std::optional<double> steps;         ///< amount of work in iterations (throughput-based models)
  std::string model;                   ///< model / application name (e.g. "ResNet-50 (batch size 64)")
  std::string user;                    ///< user or virtual cluster
  long source_line = 0;                ///< line in the trace file, for messages
};

}  // namespace fleetsim
