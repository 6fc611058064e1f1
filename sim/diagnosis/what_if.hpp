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
/// baseline, durations as traced) and returns its predicted step time (step_period_s), s.
double replay_step_s(const JobAnalysis& a, const Fix* fix);

/// A job's step time from its steps: per rank, the mean period between consecutive steps' starts
/// (one step: its length), averaged over ranks. A fix that removes host time before a step's first
/// launch moves the next steps' starts, so the period shows it where a step's own length (whose
/// edges analyse() keeps at their measured offsets) would not.
double step_period_s(const std::vector<replay::StepResult>& steps, bool predicted);

}  // namespace fleetsim::diagnosis
