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

/// What a row needs to become a job: the mapped column names, their indices in the header, and
/// the time format.
struct CsvLayout {
  std::string path;
  char delimiter = ',';
  std::array<std::string, kNumKeys> mapped;
  std::array<int, kNumKeys> col{};
  std::vector<std::string> header;
  std::string time_format;  ///< empty: submit is seconds
};

/// The scenario's column mapping (checked), before the file is read.
CsvLayout csv_layout(const WorkloadConfig& config) {
  const std::string& scenario = config.scenario_file;
  CsvLayout layout;
  layout.path = config.path;
  const std::vector<std::string> valid(kKeyNames.begin(), kKeyNames.end());
  for (const auto& [key, column] : config.settings.entries("columns")) {
    const auto it = std::find(valid.begin(), valid.end(), key);
    if (it == valid.end()) {
      std::string msg = "unknown column key '" + key + "'";
      if (auto best = closest(key, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
      throw InputError(scenario, 0, "workload.columns." + key, msg + "; valid: " + join(valid, ", "));
    }
    if (trim(column).empty()) throw InputError(scenario, 0, "workload.columns." + key, "empty column name");
    layout.mapped[static_cast<std::size_t>(it - valid.begin())] = std::string(trim(column));
  }
  for (Key k : {kSubmit, kGpus, kDuration}) {
    if (!layout.mapped[k].empty() || (k == kDuration && !layout.mapped[kSteps].empty())) continue;
    throw InputError(scenario, 0, std::string("workload.columns.") + kKeyNames[k],
                     std::string("missing mapping for required column '") + kKeyNames[k] + "'");
  }
  const std::string delim = config.settings.text("delimiter", ",");
  layout.delimiter = delim == "\\t" ? '\t' : delim[0];
  layout.time_format = config.settings.text("time_format", "");
  return layout;
}

/// Reads the header record and finds the mapped columns in it.
void read_header(CsvParser& csv, CsvLayout& layout) {
  std::vector<std::string> header;
  long line = 0;
  csv.header(header, line);
  for (std::size_t k = 0; k < kNumKeys; ++k)
    layout.col[k] =
        layout.mapped[k].empty() ? -1 : column_index(header, layout.mapped[k], true, layout.path, line);
  layout.header = std::move(header);
}

/// Row `row` (data row number `index`, from 0) of `line` as a job; submit times of datetimes are
/// seconds since the epoch (shifted by the caller).
JobSpec parse_row(const CsvLayout& layout, const std::vector<std::string>& row, long line,
                  std::size_t index) {
  const std::string& path = layout.path;
  if (row.size() != layout.header.size()) {
    const std::string field =
        row.size() < layout.header.size() ? std::string(trim(layout.header[row.size()])) : "";
    throw InputError(path, line, field,
                     "row has " + std::to_string(row.size()) + " fields, header has " +
                         std::to_string(layout.header.size()));
  }
  // The cell of logical key k (trimmed), or "" when unmapped.
  auto cell = [&](Key k) -> std::string_view {
    return layout.col[k] < 0 ? std::string_view() : trim(row[static_cast<std::size_t>(layout.col[k])]);
  };
  auto name = [&](Key k) -> const std::string& { return layout.mapped[k]; };
  JobSpec j;
  j.source_line = line;
  if (!layout.time_format.empty()) {
    std::string why;
    const auto t = parse_datetime(cell(kSubmit), layout.time_format, why);
    if (!t) throw InputError(path, line, name(kSubmit), "'" + std::string(cell(kSubmit)) + "' " + why);
    j.submit_s = *t;
  } else {
    j.submit_s = parse_non_negative(cell(kSubmit), path, line, name(kSubmit));
  }
  j.gpus = parse_gpu_count(cell(kGpus), path, line, name(kGpus));
  if (layout.col[kDuration] >= 0 && !(layout.col[kSteps] >= 0 && cell(kDuration).empty()))
    j.duration_s = parse_non_negative(cell(kDuration), path, line, name(kDuration));
  if (layout.col[kSteps] >= 0 && !cell(kSteps).empty())
    j.steps = parse_non_negative(cell(kSteps), path, line, name(kSteps));
  if (!j.duration_s && !j.steps)
    throw InputError(path, line, name(kSteps), "neither a duration nor a step count");
  j.gpu_milli = 1000;
  if (!cell(kGpuMilli).empty()) j.gpu_milli = parse_gpu_milli(cell(kGpuMilli), path, line, name(kGpuMilli));
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
  if (j.id.empty()) j.id = "job-" + std::to_string(index);
  return j;
}

/// A CSV trace already in submit order, parsed row by row from its text on each pass: the run holds
/// the file's text, not a JobSpec per row (issue 17: 10M-row traces).
class CsvStream final : public JobStream {
 public:
  CsvStream(std::string text, CsvLayout layout, std::size_t size, double origin)
      : text_(std::move(text)), layout_(std::move(layout)), size_(size), origin_(origin) {
    rewind();
  }
  std::size_t size() const override { return size_; }
  void rewind() override {
    csv_ = std::make_unique<CsvParser>(text_, layout_.delimiter, layout_.path);
    std::vector<std::string> header;
    long line = 0;
    csv_->header(header, line);
    index_ = 0;
  }
  bool next(JobSpec& job) override {
    long line = 0;
    if (index_ >= size_ || !csv_->next(row_, line)) return false;
    job = parse_row(layout_, row_, line, index_++);
    job.submit_s -= origin_;
    return true;
  }

 private:
  std::string text_;
  CsvLayout layout_;
  std::size_t size_ = 0;
  double origin_ = 0;
  std::unique_ptr<CsvParser> csv_;
  std::vector<std::string> row_;
  std::size_t index_ = 0;
};

class CsvTraceReader final : public TraceReader {
 public:
  std::vector<JobSpec> read(const WorkloadConfig& config) const override {
    CsvLayout layout = csv_layout(config);
    const std::string text = load_trace_text(config.path, config.scenario_file);
    CsvParser csv(text, layout.delimiter, config.path);
    read_header(csv, layout);
    std::vector<JobSpec> jobs;
    std::vector<std::string> row;
    long line = 0;
    while (csv.next(row, line)) jobs.push_back(parse_row(layout, row, line, jobs.size()));
    if (!layout.time_format.empty() && !jobs.empty()) {
      double origin = std::numeric_limits<double>::infinity();
      for (const auto& j : jobs) origin = std::min(origin, j.submit_s);
      for (auto& j : jobs) j.submit_s -= origin;
    }
    sort_by_submit(jobs);
    return jobs;
  }

  /// A file already sorted by submit time streams (one checking pass here, every row parsed); an
  /// unsorted or empty one returns nullptr and is read whole (then sorted).
  std::unique_ptr<JobStream> stream(const WorkloadConfig& config) const override {
    CsvLayout layout = csv_layout(config);
    std::string text = load_trace_text(config.path, config.scenario_file);
    std::size_t rows = 0;
    double first = 0, last = -std::numeric_limits<double>::infinity();
    {
      CsvParser csv(text, layout.delimiter, config.path);
      read_header(csv, layout);
      std::vector<std::string> row;
      long line = 0;
      while (csv.next(row, line)) {
        const JobSpec j = parse_row(layout, row, line, rows);
        if (j.submit_s < last) return nullptr;
        if (rows++ == 0) first = j.submit_s;
        last = j.submit_s;
      }
    }
    if (rows == 0) return nullptr;  // read() names the file in its "no jobs" error
    const double origin = layout.time_format.empty() ? 0.0 : first;
    return std::make_unique<CsvStream>(std::move(text), std::move(layout), rows, origin);
  }
};

const TraceReaderRegistrar kRegistrar{"csv",
                                      "generic CSV job table with a header; columns mapped by `columns`",
                                      [] { return std::make_unique<CsvTraceReader>(); }};

}  // namespace
}  // namespace fleetsim
