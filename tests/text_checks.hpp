#pragma once
// Small checks on messages shared by the tests: does a text contain a part, and the message of the
// InputError a call throws.
#include <string>

#include "workloads/base/input_error.hpp"

namespace fleetsim::test {

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// The message of the InputError that `f` throws ("" if none).
template <typename F>
std::string input_error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

}  // namespace fleetsim::test
