#pragma once
// Helpers shared by the file-based trace readers: opening and vetting a trace file, and an RFC 4180
// CSV record parser. Every failure raises InputError naming the file (and line, and field).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/jobs/job.hpp"

namespace fleetsim {

/// How many leading bytes are scanned for NUL bytes to tell binary files from text.
inline constexpr std::size_t kBinaryProbeBytes = 64 * 1024;

/// Checks that `path` is given (else InputError(scenario_file, 0, "workload.path")), exists, is a
/// regular readable file and is text (no NUL byte in its first 64 KiB); then returns its contents,
/// without a UTF-8 byte-order mark.
std::string load_trace_text(const std::string& path, const std::string& scenario_file);

/// RFC 4180 records from text: fields separated by `delimiter`, optionally enclosed in double quotes
/// (a quoted field may contain the delimiter, newlines and doubled quotes ""), records ended by LF or
/// CRLF. Blank lines are skipped. Unquoted fields are taken verbatim (no trimming).
class CsvParser {
 public:
  CsvParser(std::string_view text, char delimiter, std::string file)
      : text_(text), delim_(delimiter), file_(std::move(file)) {}

  /// Reads the next record into `fields`; `line` receives the line the record starts on.
  /// Returns false at the end of the text. Throws InputError on an unterminated quote.
  bool next(std::vector<std::string>& fields, long& line);
  /// Reads the header record into `fields` (line into `line`); throws InputError(file, 0) "empty file:
  /// no header line" when there is none.
  void header(std::vector<std::string>& fields, long& line);

 private:
  std::string_view text_;
  char delim_;
  std::string file_;
  std::size_t pos_ = 0;
  long line_ = 1;
};

/// Largest GPU count a job may ask for; anything above is taken for a corrupt value.
inline constexpr long long kMaxGpusPerJob = 100000;

/// Field checks shared by the readers; each throws InputError(file, line, field, ...) quoting the text.
/// GPU count: an integer in [0, kMaxGpusPerJob].
int parse_gpu_count(std::string_view text, const std::string& file, long line, const std::string& field);
/// Share of one GPU in thousandths: an integer in [0, 1000].
int parse_gpu_milli(std::string_view text, const std::string& file, long line, const std::string& field);
/// A finite number >= 0.
double parse_non_negative(std::string_view text, const std::string& file, long line,
                          const std::string& field);
/// "A|B|C" -> {"A","B","C"} (trimmed, empty parts dropped); "" -> {} (= any GPU type).
std::vector<std::string> split_gpu_types(std::string_view text);
/// Index of each name in a header row; throws InputError(file, header_line, name, "column not found;
/// header has: ...") for a required name that is absent. Returns -1 for absent optional names.
int column_index(const std::vector<std::string>& header, std::string_view name, bool required,
                 const std::string& file, long header_line);

/// Stable sort by submit time (a no-op pass when already sorted), as TraceReader::read promises.
void sort_by_submit(std::vector<JobSpec>& jobs);

/// Iterates over the lines of `text` (LF or CRLF, the terminator stripped): calls f(line_number, line).
template <typename F>
void for_each_line(std::string_view text, F&& f) {
  long number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(++number, line);
    start = end + 1;
  }
}

}  // namespace fleetsim
