#pragma once
// The generated reference (sim/REFERENCE.md, `fleetsim docs`): every scenario key, every registered
// policy, placer, job model, trace, request and fault format, kernel and collective model, the GPU
// catalog and every output file's columns, each printed from the declaration beside its code.
// test_reference fails when the checked-in file differs from reference_markdown().
#include <string>
#include <vector>

namespace fleetsim {

/// A registered name with its one-line description and the knobs it reads ("key = default: doc").
struct RegisteredName {
  std::string name;
  std::string description;
  std::vector<std::string> knobs;
};

/// Scheduling policies and placers, each built on empty options to record its knobs.
std::vector<RegisteredName> scheduler_names();
std::vector<RegisteredName> placer_names();

/// The whole of sim/REFERENCE.md.
std::string reference_markdown();

}  // namespace fleetsim
