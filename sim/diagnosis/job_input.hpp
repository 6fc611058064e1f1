#pragma once
// The jobs `fleetsim diagnose` reads: one job = its ranks' Kineto traces, given as
//   a folder        every *.json / *.json.gz file in it is one rank of the job named after the folder;
//   a manifest      a CSV file with a header naming the columns job, rank, path (any order, extra
//                   columns ignored; relative paths resolve against the manifest's folder);
//   a trace file    a one-rank job named after the file.
// Checks before anything is simulated: every file exists and parses (a truncated trace names its
// file), ranks are distinct and none is missing between the lowest and the highest given, and a
// manifest's rank agrees with the trace's own distributedInfo.rank. Errors are InputError naming the
// file, line and field.
#include <memory>
#include <string>
#include <vector>

#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim::diagnosis {

struct TraceRef {
  std::string path;
  int rank = -1;      ///< from the manifest (-1: from the trace)
  std::string where;  ///< file that named it (manifest or folder)
  long line = 0;      ///< manifest line
};

struct JobInput {
  std::string name;
  std::vector<TraceRef> refs;
  std::vector<std::unique_ptr<KinetoTrace>> traces;  ///< after load(), in rank order
};

/// Resolves folders, manifests and files into jobs (file existence checked; nothing parsed yet).
std::vector<JobInput> resolve_jobs(const std::vector<std::string>& inputs);

/// Parses a job's traces and checks its ranks (InputError naming the file and field).
void load_traces(JobInput& job);

}  // namespace fleetsim::diagnosis
