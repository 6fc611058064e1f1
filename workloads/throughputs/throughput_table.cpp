#include "workloads/throughputs/throughput_table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

constexpr std::string_view kUnconsolidated = "_unconsolidated";
constexpr int kMaxGpuTypes = 63;
constexpr int kMaxJobTypes = 16383;
constexpr int kMaxScale = 16383;

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i])))
      return false;
  return true;
}

/// Parses Gavel's Python-tuple key "('<job type>', <scale>)"; false if malformed.
bool parse_job_key(std::string_view key, std::string& job, int& scale) {
  constexpr std::string_view open = "('";
  if (key.size() < 7 || key.substr(0, 2) != open || key.back() != ')') return false;
  const auto sep = key.rfind("', ");
  if (sep == std::string_view::npos || sep < 2) return false;
  job.assign(key.substr(2, sep - 2));
  const auto digits = key.substr(sep + 3, key.size() - sep - 4);
  if (digits.empty() || digits.size() > 6 || job.empty()) return false;
  long v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  if (v < 1 || v > kMaxScale) return false;
  scale = static_cast<int>(v);
  return true;
}

double rate_value(const nlohmann::json& v, const std::string& origin, const std::string& where) {
  if (!v.is_number()) throw InputError(origin, 0, where, "expected a number (steps/s), got " + v.dump());
  const double r = v.get<double>();
  if (!std::isfinite(r) || r < 0)
    throw InputError(origin, 0, where, "rate must be a finite number >= 0, got " + v.dump());
  return r;
}

}  // namespace

ThroughputTable ThroughputTable::load(const std::string& path) {
  return parse(read_input_file(path), path);
}

ThroughputTable ThroughputTable::parse(std::string_view json_text, const std::string& origin) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(json_text.begin(), json_text.end());
  } catch (const nlohmann::json::parse_error& e) {
    // Locate the byte the parser stopped at, for a file:line message.
    const std::size_t at = std::min<std::size_t>(e.byte > 0 ? e.byte - 1 : 0, json_text.size());
    const long line = 1 + static_cast<long>(std::count(json_text.begin(), json_text.begin() + at, '\n'));
    std::string what = e.what();
    if (auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
    throw InputError(origin, line, "", "malformed JSON in throughput table: " + what);
  } catch (const nlohmann::json::exception& e) {  // a number out of range (1e999999)
    throw InputError(origin, 0, "", std::string("malformed JSON in throughput table: ") + e.what());
  }
  if (!doc.is_object() || doc.empty())
    throw InputError(origin, 0, "", "throughput table must be a non-empty JSON object keyed by GPU type");

  ThroughputTable t;
  t.origin_ = origin;
  // GPU ids are assigned in sorted order of the base names.
  std::set<std::string> bases;
  for (const auto& [gpu_key, per_job] : doc.items()) {
    std::string base = lower(gpu_key);
    if (base.size() > kUnconsolidated.size() && base.ends_with(kUnconsolidated))
      base.resize(base.size() - kUnconsolidated.size());
    if (base.empty()) throw InputError(origin, 0, gpu_key, "empty GPU type name");
    if (!per_job.is_object())
      throw InputError(origin, 0, gpu_key, "expected an object keyed by \"('<job type>', <scale>)\"");
    bases.insert(base);
  }
  if (static_cast<int>(bases.size()) > kMaxGpuTypes) throw InputError(origin, 0, "", "too many GPU types");
  t.gpu_types_.assign(bases.begin(), bases.end());

  std::string job, other;
  int scale = 0, other_scale = 0;
  for (const auto& [gpu_key, per_job] : doc.items()) {
    std::string base = lower(gpu_key);
    const bool consolidated = !(base.size() > kUnconsolidated.size() && base.ends_with(kUnconsolidated));
    if (!consolidated) base.resize(base.size() - kUnconsolidated.size());
    const int gpu = t.gpu_index(base);
    for (const auto& [job_key, entry] : per_job.items()) {
      const std::string where = gpu_key + "/" + job_key;
      if (!parse_job_key(job_key, job, scale))
        throw InputError(origin, 0, where, "malformed key; expected \"('<job type>', <scale>)\"");
      if (!entry.is_object() || !entry.contains("null"))
        throw InputError(origin, 0, where, "expected an object with a \"null\" (isolated) rate");
      const int j = t.intern_job(job);
      const double r = rate_value(entry["null"], origin, where + "/null");
      if (!t.rates_.emplace(key(gpu, consolidated, j, scale), r).second)
        throw InputError(origin, 0, where, "duplicate entry (GPU type names are case-insensitive)");
      t.by_job_[key(gpu, consolidated, j, 0)].emplace_back(scale, r);
      for (const auto& [other_key, pair] : entry.items()) {
        if (other_key == "null") continue;
        const std::string pwhere = where + "/" + other_key;
        if (!parse_job_key(other_key, other, other_scale))
          throw InputError(origin, 0, pwhere, "malformed key; expected \"('<job type>', <scale>)\"");
        if (!pair.is_array() || pair.size() != 2)
          throw InputError(origin, 0, pwhere, "expected [own rate, other job's rate]");
        const int o = t.intern_job(other);
        t.pair_rates_[pair_key(gpu, consolidated, j, scale, o, other_scale)] = {
            rate_value(pair[0], origin, pwhere), rate_value(pair[1], origin, pwhere)};
      }
    }
  }
  if (t.rates_.empty()) throw InputError(origin, 0, "", "throughput table has no entries");
  for (auto& [k, measured] : t.by_job_) std::sort(measured.begin(), measured.end());
  return t;
}

int ThroughputTable::intern_job(const std::string& name) {
  if (auto it = job_ids_.find(name); it != job_ids_.end()) return it->second;
  if (static_cast<int>(job_names_.size()) >= kMaxJobTypes)
    throw InputError(origin_, 0, name, "too many job types in throughput table");
  const int id = static_cast<int>(job_names_.size());
  job_names_.push_back(name);
  job_ids_.emplace(name, id);
  return id;
}

int ThroughputTable::gpu_index(std::string_view gpu_type) const {
  for (std::size_t i = 0; i < gpu_types_.size(); ++i)
    if (iequals(gpu_types_[i], gpu_type)) return static_cast<int>(i);
  return -1;
}

int ThroughputTable::job_index(std::string_view job_type) const {
  auto it = job_ids_.find(job_type);
  return it == job_ids_.end() ? -1 : it->second;
}

std::uint64_t ThroughputTable::key(int gpu, bool consolidated, int job, int scale) {
  return (static_cast<std::uint64_t>(gpu) << 40) | (static_cast<std::uint64_t>(consolidated) << 39) |
         (static_cast<std::uint64_t>(job) << 20) | static_cast<std::uint64_t>(scale);
}

std::uint64_t ThroughputTable::pair_key(int gpu, bool consolidated, int job, int scale, int other,
                                        int other_scale) {
  return (static_cast<std::uint64_t>(gpu) << 57) | (static_cast<std::uint64_t>(consolidated) << 56) |
         (static_cast<std::uint64_t>(job) << 42) | (static_cast<std::uint64_t>(scale) << 28) |
         (static_cast<std::uint64_t>(other) << 14) | static_cast<std::uint64_t>(other_scale);
}

std::optional<double> ThroughputTable::rate(std::string_view gpu_type, std::string_view job_type, int scale,
                                            bool consolidated) const {
  if (scale < 1 || scale > kMaxScale) return std::nullopt;
  const int g = gpu_index(gpu_type);
  const int j = job_index(job_type);
  if (g < 0 || j < 0) return std::nullopt;
  auto it = rates_.find(key(g, consolidated, j, scale));
  if (it == rates_.end()) return std::nullopt;
  return it->second;
}

std::optional<ThroughputTable::ScaledRate> ThroughputTable::rate_up_to(std::string_view gpu_type,
                                                                       std::string_view job_type, int scale,
                                                                       bool consolidated) const {
  if (scale < 1) return std::nullopt;
  const int g = gpu_index(gpu_type);
  const int j = job_index(job_type);
  if (g < 0 || j < 0) return std::nullopt;
  auto it = by_job_.find(key(g, consolidated, j, 0));
  if (it == by_job_.end()) return std::nullopt;
  const auto& measured = it->second;  // ascending scale
  for (auto m = measured.rbegin(); m != measured.rend(); ++m)
    if (m->first <= scale && m->second > 0) return ScaledRate{m->second, m->first};
  return std::nullopt;
}

std::optional<std::pair<double, double>> ThroughputTable::pair_rate(std::string_view gpu_type,
                                                                    std::string_view job_type, int scale,
                                                                    std::string_view other_type,
                                                                    int other_scale,
                                                                    bool consolidated) const {
  if (scale < 1 || scale > kMaxScale || other_scale < 1 || other_scale > kMaxScale) return std::nullopt;
  const int g = gpu_index(gpu_type);
  const int j = job_index(job_type);
  const int o = job_index(other_type);
  if (g < 0 || j < 0 || o < 0) return std::nullopt;
  auto it = pair_rates_.find(pair_key(g, consolidated, j, scale, o, other_scale));
  if (it == pair_rates_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> ThroughputTable::job_types() const {
  std::vector<std::string> out = job_names_;
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<int> ThroughputTable::scales(std::string_view gpu_type, std::string_view job_type) const {
  std::vector<int> out;
  const int g = gpu_index(gpu_type);
  const int j = job_index(job_type);
  if (g < 0 || j < 0) return out;
  if (auto it = by_job_.find(key(g, true, j, 0)); it != by_job_.end())
    for (const auto& m : it->second) out.push_back(m.first);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fleetsim
