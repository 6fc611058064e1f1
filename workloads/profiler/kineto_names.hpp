#pragma once
// Names in Kineto traces: event categories (current and 2021 spellings, case-insensitive) and
// collective kernels by name (NCCL/RCCL). Internal to workloads/profiler; is_collective_kernel and
// collective_from_kernel_name are declared in kineto_trace.hpp for the replay.
#include <string_view>

#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim {

/// The category of an event's "cat" (case-insensitive); false if it is not one the replay reads.
bool category_of(std::string_view cat, KinetoCat& out);

/// Categories that Kineto writes but the replay does not need (not counted as unknown).
bool ignored_category(std::string_view cat);

}  // namespace fleetsim
