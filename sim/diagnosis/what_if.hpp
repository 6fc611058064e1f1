#pragma once
// The fixes' what-ifs on the replay engine. SimGrid's engine is one per process, so each replay runs
// in a forked child of the diagnosing process (which has parsed the traces and built the graphs
// once; the child inherits them), at most `parallel` at a time; the child sends back its result as
// text through a pipe. An InputError in a child is raised again in the parent.
#include <functional>
#include <string>
#include <vector>

#include "sim/diagnosis/rule.hpp"

namespace fleetsim::diagnosis {

/// Runs each task in its own forked child, at most `parallel` at once; returns each task's text.
std::vector<std::string> run_forked(const std::vector<std::function<std::string()>>& tasks, int parallel);

/// In this process (a fresh one: it starts SimGrid): replays the job under the fix (nullptr: the
/// baseline, durations as traced) and returns the mean predicted step time over ranks and steps, s.
double replay_step_s(const JobAnalysis& a, const Fix* fix);

}  // namespace fleetsim::diagnosis
