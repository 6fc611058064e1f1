// "csv": a generic job table with a header row. `columns` maps logical names to header names:
//   required  submit, gpus, and duration (duration may be left out when steps is mapped)
//   optional  id, gpu_type ('|'-separated list; empty = any), user, model, gpu_milli, cpu_milli,
//             memory_mib, steps
// Fields follow RFC 4180 (quoted fields may hold the delimiter, newlines and doubled quotes).
// submit is seconds (>= 0), or, with `time_format` (strptime syntax, e.g. "%Y-%m-%d %H:%M:%S",
// read as UTC, optional fractional seconds), a datetime; datetimes are shifted so the earliest is 0.
// Empty optional cells keep the defaults; ids default to "job-<n>" (n = 0-based row).
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <limits>
#include <locale>
#include <memory>
#include <optional>
#include <sstream>

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {
namespace {

enum Key {
  kSubmit,
  kDuration,
  kGpus,
  kId,
  kGpuType,
  kUser,
  kGpuMilli,
  kCpuMilli,
  kMemory,
  kSteps,
  kModel,
  kNumKeys
};
constexpr std::array<const char*, kNumKeys> kKeyNames = {"submit",     "duration", "gpus",      "id",
                                                         "gpu_type",   "user",     "gpu_milli", "cpu_milli",
                                                         "memory_mib", "steps",    "model"};

/// Seconds since the epoch (UTC) of `text` read with strptime-style `format`; nullopt with `why` if
/// it does not match or names an impossible date. Accepts trailing fractional seconds (".250").
std::optional<double> parse_datetime(std::string_view text, const std::string& format, std::string& why) {
  std::tm tm{};
  std::istringstream in{std::string(text)};
  in.imbue(std::locale::classic());
  in >> std::get_time(&tm, format.c_str());
  if (in.fail()) {
    why = "does not match time_format '" + format + "'";
    return std::nullopt;
  }
  double fraction = 0;
  if (in.peek() == '.') {
    in.get();
    double scale = 0.1;
    bool digits = false;
    while (std::isdigit(in.peek())) {
      fraction += scale * (in.get() - '0');
      scale /= 10;
      digits = true;
    }
    if (!digits) {
      why = "does not match time_format '" + format + "'";
      return std::nullopt;
    }
  }
  in >> std::ws;
  if (in.peek() != std::char_traits<char>::eof()) {
    why = "has trailing text after time_format '" + format + "'";
    return std::nullopt;
  }
  const int year = tm.tm_year, month = tm.tm_mon, day = tm.tm_mday;
  tm.tm_isdst = 0;
  const std::time_t t = timegm(&tm);
  if (tm.tm_year != year || tm.tm_mon != month || tm.tm_mday != day) {
    why = "is not a valid date";
    return std::nullopt;
  }
  return static_cast<double>(t) + fraction;
}

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"workload", "columns", K::kStringTable, "", "",
     "logical column -> column name: submit, duration (or steps), gpus required", "csv"},
    {"workload", "time_format", K::kString, "", "seconds",
     "strptime format of a datetime submit column (e.g. \"%Y-%m-%d %H:%M:%S\", UTC)", "csv"},
    {"workload", "delimiter", K::kString, "", ",", "field separator (\\t for a tab)", "csv",
     [](const Options& o, const std::string& key) {
       const std::string d = o.text(key, ",");
       if (d.size() != 1 && d != "\\t") throw o.error(key, "must be one character");
     }},
    {"workload.columns", "submit", K::kString, "", "", "arrival time column (seconds or datetime)", "csv"},
    {"workload.columns", "duration", K::kString, "s", "", "run time column", "csv"},
    {"workload.columns", "gpus", K::kString, "", "", "GPUs per job column", "csv"},
    {"workload.columns", "id", K::kString, "", "", "job id column", "csv"},
    {"workload.columns", "gpu_type", K::kString, "", "", "GPU model constraint column", "csv"},
    {"workload.columns", "user", K::kString, "", "", "user / virtual cluster column", "csv"},
    {"workload.columns", "gpu_milli", K::kString, "", "", "thousandths of a GPU per GPU column", "csv"},
    {"workload.columns", "cpu_milli", K::kString, "", "", "CPU request column, thousandths of a core", "csv"},
    {"workload.columns", "memory_mib", K::kString, "MiB", "", "memory request column", "csv"},
    {"workload.columns", "steps", K::kString, "", "", "iterations column", "csv"},
    {"workload.columns", "model", K::kString, "", "", "model / application column", "csv"},
}};

class CsvTraceReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    const std::string& path = config.path;
    const std::string& scenario = config.scenario_file;

    // Column mapping: logical key -> column name.
    std::array<std::string, kNumKeys> mapped;
    const std::vector<std::string> valid(kKeyNames.begin(), kKeyNames.end());
    for (const auto& [key, column] : config.settings.entries("columns")) {
      const auto it = std::find(valid.begin(), valid.end(), key);
      if (it == valid.end()) {
        std::string msg = "unknown column key '" + key + "'";
        if (auto best = closest(key, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
        throw InputError(scenario, 0, "workload.columns." + key, msg + "; valid: " + join(valid, ", "));
      }
      if (trim(column).empty()) throw InputError(scenario, 0, "workload.columns." + key, "empty column name");
      mapped[static_cast<std::size_t>(it - valid.begin())] = std::string(trim(column));
    }
    for (Key k : {kSubmit, kGpus, kDuration}) {
      if (!mapped[k].empty() || (k == kDuration && !mapped[kSteps].empty())) continue;
      throw InputError(scenario, 0, std::string("workload.columns.") + kKeyNames[k],
                       std::string("missing mapping for required column '") + kKeyNames[k] + "'");
    }

    const std::string text = load_trace_text(path, scenario);
    const std::string delim = config.settings.text("delimiter", ",");
    CsvParser csv(text, delim == "\\t" ? '\t' : delim[0], path);
    std::vector<std::string> header, row;
    long line = 0;
    csv.header(header, line);
    const long header_line = line;
    std::array<int, kNumKeys> col{};
    for (std::size_t k = 0; k < kNumKeys; ++k)
      col[k] = mapped[k].empty() ? -1 : column_index(header, mapped[k], true, path, header_line);

    const std::string time_format = config.settings.text("time_format", "");
    const bool datetimes = !time_format.empty();
    std::vector<JobSpec> jobs;
    std::string why;
    while (csv.next(row, line)) {
      if (row.size() != header.size()) {
        const std::string field = row.size() < header.size() ? std::string(trim(header[row.size()])) : "";
        throw InputError(
            path, line, field,
            "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
      }
      // The cell of logical key k (trimmed), or "" when unmapped.
      auto cell = [&](Key k) -> std::string_view {
        return col[k] < 0 ? std::string_view() : trim(row[static_cast<std::size_t>(col[k])]);
      };
      auto name = [&](Key k) -> const std::string& { return mapped[k]; };

      JobSpec j;
      j.source_line = line;
      if (datetimes) {
        const auto t = parse_datetime(cell(kSubmit), time_format, why);
        if (!t) throw InputError(path, line, name(kSubmit), "'" + std::string(cell(kSubmit)) + "' " + why);
        j.submit_s = *t;
      } else {
        j.submit_s = parse_non_negative(cell(kSubmit), path, line, name(kSubmit));
      }
      j.gpus = parse_gpu_count(cell(kGpus), path, line, name(kGpus));
      if (col[kDuration] >= 0 && !(col[kSteps] >= 0 && cell(kDuration).empty()))
        j.duration_s = parse_non_negative(cell(kDuration), path, line, name(kDuration));
      if (col[kSteps] >= 0 && !cell(kSteps).empty())
        j.steps = parse_non_negative(cell(kSteps), path, line, name(kSteps));
      if (!j.duration_s && !j.steps)
        throw InputError(path, line, name(kSteps), "neither a duration nor a step count");
      j.gpu_milli = 1000;
      if (!cell(kGpuMilli).empty())
        j.gpu_milli = parse_gpu_milli(cell(kGpuMilli), path, line, name(kGpuMilli));
      if (j.gpus == 0) {
        j.gpu_milli = 0;
      } else if (j.gpu_milli == 0) {
        throw InputError(path, line, name(kGpuMilli),
                         "0 thousandths of a GPU for a job asking for " + std::to_string(j.gpus) + " GPU(s)");
      }
      if (!cell(kCpuMilli).empty())
        j.cpu_milli = parse_non_negative(cell(kCpuMilli), path, line, name(kCpuMilli));
      if (!cell(kMemory).empty()) j.memory_mib = parse_non_negative(cell(kMemory), path, line, name(kMemory));
      j.gpu_types = split_gpu_types(cell(kGpuType));
      j.user = std::string(cell(kUser));
      j.model = std::string(cell(kModel));
      j.id = std::string(cell(kId));
      if (j.id.empty()) j.id = "job-" + std::to_string(jobs.size());
      jobs.push_back(std::move(j));
    }

    if (datetimes && !jobs.empty()) {
      double origin = std::numeric_limits<double>::infinity();
      for (const auto& j : jobs) origin = std::min(origin, j.submit_s);
      for (auto& j : jobs) j.submit_s -= origin;
    }
    sort_by_submit(jobs);
    return jobs;
  }
};

const TraceReaderRegistrar kRegistrar{"csv",
                                      "generic CSV job table with a header; columns mapped by `columns`",
                                      [] { return std::make_unique<CsvTraceReader>(); }};

}  // namespace
}  // namespace fleetsim
