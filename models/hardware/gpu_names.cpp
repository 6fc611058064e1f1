// GPU name resolution against the catalog: exact names and aliases, then any spelling that differs
// only in case, separators and vendor prefixes (gpu_catalog.hpp).
#include <string>
#include <vector>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

const GpuSpec* find_exact(std::string_view name) {
  const std::string low = lower(name);
  for (const auto& g : gpu_catalog()) {
    if (lower(g.name) == low) return &g;
    for (const auto& a : g.aliases)
      if (lower(a) == low) return &g;
  }
  return nullptr;
}

/// Lower case, '_' and ' ' as '-', runs of '-' as one, none at either end.
std::string separators(std::string_view name) {
  std::string out;
  for (char c : lower(name)) {
    if (c == '_' || c == ' ' || c == '\t') c = '-';
    if (c == '-' && (out.empty() || out.back() == '-')) continue;
    out += c;
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Vendor and brand prefixes as nvidia-smi, rocm-smi and folder names carry them.
constexpr std::string_view kPrefixes[] = {"nvidia-",       "tesla-", "geforce-",
                                          "amd-instinct-", "amd-",   "instinct-"};

/// separators(name) without its vendor prefixes; `dropped` gets what was taken off.
std::string key(std::string_view name, std::string* dropped = nullptr) {
  std::string k = separators(name);
  for (bool again = true; again;) {
    again = false;
    for (auto p : kPrefixes)
      if (k.size() > p.size() && k.starts_with(p)) {
        if (dropped != nullptr) *dropped += std::string(p);
        k.erase(0, p.size());
        again = true;
      }
  }
  return k;
}

}  // namespace

GpuMatch resolve_gpu(std::string_view name) {
  name = trim(name);
  if (const GpuSpec* g = find_exact(name)) return {g, ""};
  std::string dropped;
  const std::string k = key(name, &dropped);
  const GpuSpec* found = nullptr;
  for (const auto& g : gpu_catalog()) {
    bool match = key(g.name) == k;
    for (const auto& a : g.aliases) match = match || key(a) == k;
    if (!match) continue;
    if (found != nullptr && found != &g) return {};  // ambiguous: refuse rather than guess
    found = &g;
  }
  if (found == nullptr) return {};
  std::vector<std::string> how;
  if (!dropped.empty())
    how.push_back("vendor prefix '" + dropped.substr(0, dropped.size() - 1) + "' dropped");
  if (std::string(name).find_first_of("_ \t") != std::string::npos)
    how.push_back("'_' and spaces read as '-'");
  if (how.empty()) how.push_back("case and separators ignored");
  return {found, "GPU '" + std::string(name) + "' read as '" + found->name + "' (" + join(how, ", ") + ")"};
}

const GpuSpec* find_gpu(std::string_view name) {
  return resolve_gpu(name).gpu;
}

const GpuSpec& gpu_spec(std::string_view name, const std::string& file, long line, const std::string& key) {
  if (const GpuSpec* g = find_gpu(name)) return *g;
  std::vector<std::string> spellings;
  for (const auto& g : gpu_catalog()) {
    spellings.push_back(g.name);
    spellings.insert(spellings.end(), g.aliases.begin(), g.aliases.end());
  }
  std::string msg = "unknown GPU model '" + std::string(name) + "'";
  if (auto best = closest(name, spellings); !best.empty()) {
    const std::string& canonical = find_exact(best)->name;
    msg += " (did you mean '" + canonical + "'?)";
  }
  msg += "; valid: " + join(gpu_names(), ", ");
  throw InputError(file, line, key, msg);
}

std::vector<std::string> gpu_names() {
  std::vector<std::string> out;
  for (const auto& g : gpu_catalog()) out.push_back(g.name);
  return out;
}

}  // namespace fleetsim
