#include "workloads/profiler/kineto_names.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

namespace fleetsim {
namespace {

// ASCII lower case: std::tolower in the "C" locale the program runs in, inlined.
char lower_char(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Case-insensitive equality against a lower-case literal, without allocating.
bool iequals(std::string_view s, std::string_view lower_lit) {
  if (s.size() != lower_lit.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (lower_char(s[i]) != lower_lit[i]) return false;
  return true;
}

// Case-insensitive search of a lower-case literal, without allocating.
bool icontains(std::string_view s, std::string_view lower_lit) {
  if (lower_lit.size() > s.size()) return false;
  for (std::size_t i = 0; i + lower_lit.size() <= s.size(); ++i) {
    std::size_t j = 0;
    while (j < lower_lit.size() && lower_char(s[i + j]) == lower_lit[j]) ++j;
    if (j == lower_lit.size()) return true;
  }
  return false;
}

}  // namespace

bool category_of(std::string_view cat, KinetoCat& out) {
  static const std::pair<std::string_view, KinetoCat> kMap[] = {
      {"cpu_op", KinetoCat::cpu_op},
      {"operator", KinetoCat::cpu_op},
      {"cuda_runtime", KinetoCat::runtime},
      {"cuda_driver", KinetoCat::runtime},
      {"runtime", KinetoCat::runtime},
      {"kernel", KinetoCat::kernel},
      {"gpu_memcpy", KinetoCat::memcpy},
      {"memcpy", KinetoCat::memcpy},
      {"gpu_memset", KinetoCat::memset},
      {"memset", KinetoCat::memset},
      {"cuda_sync", KinetoCat::sync},
      {"user_annotation", KinetoCat::user_annotation},
      {"gpu_user_annotation", KinetoCat::gpu_annotation},
  };
  for (const auto& [k, v] : kMap)
    if (iequals(cat, k)) {
      out = v;
      return true;
    }
  return false;
}

bool ignored_category(std::string_view cat) {
  static const std::string_view kIgnored[] = {
      "python_function", "trace",   "cpu_instant_event", "overhead",           "ac2g", "fwdbwd", "", "gpu_op",
      "python_op",       "user_op", "mtia_runtime",      "privateuse1_runtime"};
  return std::any_of(std::begin(kIgnored), std::end(kIgnored),
                     [&](std::string_view k) { return iequals(cat, k); });
}

bool is_collective_kernel(std::string_view name) {
  const std::string_view head = name.substr(0, std::min<std::size_t>(name.size(), 64));
  return icontains(head, "nccl") || icontains(head, "rccl");
}

std::string collective_from_kernel_name(std::string_view name) {
  if (!is_collective_kernel(name)) return "";
  static const std::pair<std::string_view, std::string_view> kOps[] = {
      {"allreduce", "allreduce"},  {"all_reduce", "allreduce"},        {"allgather", "allgather"},
      {"all_gather", "allgather"}, {"reducescatter", "reducescatter"}, {"reduce_scatter", "reducescatter"},
      {"alltoall", "alltoall"},    {"sendrecv", "sendrecv"},           {"send", "sendrecv"},
      {"recv", "sendrecv"},        {"broadcast", "broadcast"},         {"reduce", "reduce"}};
  for (const auto& [k, v] : kOps)
    if (icontains(name, k)) return std::string(v);
  return "collective";
}

}  // namespace fleetsim
