#include "workloads/jobs/trace_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

std::string load_trace_text(const std::string& path, const std::string& scenario_file) {
  if (path.empty()) throw InputError(scenario_file, 0, "workload.path", "no trace file given");
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) throw InputError(path, 0, "", "trace file not found");
  if (std::filesystem::is_directory(status))
    throw InputError(path, 0, "", "is a directory, expected a trace file");
  if (!std::filesystem::is_regular_file(status)) throw InputError(path, 0, "", "not a regular file");

  std::string text = read_input_file(path);

  const std::string_view probe(text.data(), std::min(text.size(), kBinaryProbeBytes));
  if (const auto nul = probe.find('\0'); nul != std::string_view::npos)
    throw InputError(path, 0, "",
                     "binary file (NUL byte at offset " + std::to_string(nul) + "); expected a text trace");
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  return text;
}

void sort_by_submit(std::vector<JobSpec>& jobs) {
  const auto by_submit = [](const JobSpec& a, const JobSpec& b) { return a.submit_s < b.submit_s; };
  if (!std::is_sorted(jobs.begin(), jobs.end(), by_submit))
    std::stable_sort(jobs.begin(), jobs.end(), by_submit);
}

int parse_gpu_count(std::string_view text, const std::string& file, long line, const std::string& field) {
  const long long v = parse_int(text, file, line, field);
  if (v < 0 || v > kMaxGpusPerJob)
    throw InputError(file, line, field,
                     "GPU count '" + std::string(trim(text)) + "' out of range [0, " +
                         std::to_string(kMaxGpusPerJob) + "]");
  return static_cast<int>(v);
}

int parse_gpu_milli(std::string_view text, const std::string& file, long line, const std::string& field) {
  const long long v = parse_int(text, file, line, field);
  if (v < 0 || v > 1000)
    throw InputError(
        file, line, field,
        "GPU share '" + std::string(trim(text)) + "' out of range [0, 1000] (thousandths of a GPU)");
  return static_cast<int>(v);
}

double parse_non_negative(std::string_view text, const std::string& file, long line,
                          const std::string& field) {
  const double v = parse_double(text, file, line, field);
  if (v < 0) throw InputError(file, line, field, "negative value '" + std::string(trim(text)) + "'");
  return v;
}

std::vector<std::string> split_gpu_types(std::string_view text) {
  std::vector<std::string> out;
  for (const auto& part : split(text, '|'))
    if (auto t = trim(part); !t.empty()) out.emplace_back(t);
  return out;
}

int column_index(const std::vector<std::string>& header, std::string_view name, bool required,
                 const std::string& file, long header_line) {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (trim(header[i]) == name) return static_cast<int>(i);
  if (!required) return -1;
  std::vector<std::string> names;
  for (const auto& h : header) names.emplace_back(trim(h));
  std::string msg = "column not found";
  if (auto best = closest(name, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
  msg += "; header has: " + join(names, ", ");
  throw InputError(file, header_line, std::string(name), msg);
}

void CsvParser::header(std::vector<std::string>& fields, long& line) {
  if (!next(fields, line)) throw InputError(file_, 0, "", "empty file: no header line");
}

bool CsvParser::next(std::vector<std::string>& fields, long& line) {
  // Skip blank lines (empty, or only spaces / CR).
  while (pos_ < text_.size()) {
    std::size_t p = pos_;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\r') && text_[p] != delim_) ++p;
    if (p < text_.size() && text_[p] != '\n') break;
    pos_ = p < text_.size() ? p + 1 : p;
    if (p < text_.size()) ++line_;
  }
  if (pos_ >= text_.size()) return false;

  line = line_;
  std::size_t n = 0;
  auto slot = [&]() -> std::string& {
    if (n == fields.size()) fields.emplace_back();
    std::string& f = fields[n++];
    f.clear();
    return f;
  };
  while (true) {
    std::string& f = slot();
    if (pos_ < text_.size() && text_[pos_] == '"') {
      ++pos_;
      while (true) {
        if (pos_ >= text_.size())
          throw InputError(file_, line, "", "unterminated quoted field (field " + std::to_string(n) + ")");
        const char c = text_[pos_];
        if (c == '"') {
          if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {
            f += '"';
            pos_ += 2;
            continue;
          }
          ++pos_;
          break;
        }
        if (c == '\n') ++line_;
        f += c;
        ++pos_;
      }
      if (pos_ < text_.size() && text_[pos_] == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n'))
        ++pos_;
      if (pos_ < text_.size() && text_[pos_] != delim_ && text_[pos_] != '\n')
        throw InputError(file_, line_, "",
                         "unexpected character after closing quote in field " + std::to_string(n));
    } else {
      std::size_t end = pos_;
      while (end < text_.size() && text_[end] != delim_ && text_[end] != '\n') ++end;
      std::size_t stop = end;
      if ((end == text_.size() || text_[end] == '\n') && stop > pos_ && text_[stop - 1] == '\r') --stop;
      f.assign(text_.substr(pos_, stop - pos_));
      pos_ = end;
    }
    if (pos_ < text_.size() && text_[pos_] == delim_) {
      ++pos_;
      continue;
    }
    if (pos_ < text_.size()) {  // '\n'
      ++pos_;
      ++line_;
    }
    break;
  }
  fields.resize(n);
  return true;
}

}  // namespace fleetsim
