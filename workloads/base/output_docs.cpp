#include "workloads/base/output_docs.hpp"

#include <algorithm>
#include <cstddef>

namespace fleetsim {

namespace {

std::vector<OutputFileDoc>& registry() {
  static std::vector<OutputFileDoc> docs;
  return docs;
}

int command_rank(const std::string& command) {
  return command == "fleetsim run" ? 0 : 1;
}

bool is_placeholder(const OutputColumn& c) {
  return !c.name.empty() && c.name.front() == '<';
}

/// Whether cells[i..] match columns[j..] (placeholders take zero or more cells, optional columns may
/// be absent).
bool match(const std::vector<OutputColumn>& columns, std::size_t j, const std::vector<std::string>& cells,
           std::size_t i) {
  if (j == columns.size()) return i == cells.size();
  const OutputColumn& c = columns[j];
  if (is_placeholder(c)) {
    for (std::size_t k = i; k <= cells.size(); ++k)
      if (match(columns, j + 1, cells, k)) return true;
    return false;
  }
  if (i < cells.size() && cells[i] == c.name && match(columns, j + 1, cells, i + 1)) return true;
  return !c.only_with.empty() && match(columns, j + 1, cells, i);
}

std::vector<std::string> split_header(const std::string& header) {
  std::vector<std::string> cells(1);
  for (const char ch : header) {
    if (ch == ',')
      cells.emplace_back();
    else if (ch != '"' && ch != '\r')
      cells.back() += ch;
  }
  return cells;
}

}  // namespace

OutputDocRegistrar::OutputDocRegistrar(OutputFileDoc doc) {
  registry().push_back(std::move(doc));
}

std::vector<OutputFileDoc> output_docs() {
  std::vector<OutputFileDoc> out = registry();
  std::sort(out.begin(), out.end(), [](const OutputFileDoc& a, const OutputFileDoc& b) {
    if (command_rank(a.command) != command_rank(b.command))
      return command_rank(a.command) < command_rank(b.command);
    if (a.command != b.command) return a.command < b.command;
    return a.file < b.file;
  });
  return out;
}

const OutputFileDoc* find_output_doc(std::string_view command, std::string_view file) {
  for (const auto& d : registry())
    if (d.command == command && d.file == file) return &d;
  return nullptr;
}

bool header_matches(const OutputFileDoc& doc, const std::string& header) {
  return match(doc.columns, 0, split_header(header), 0);
}

std::string markdown_table_cell(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string describe_outputs_markdown() {
  std::string out;
  std::string command;
  for (const auto& d : output_docs()) {
    if (d.command != command) {
      command = d.command;
      out += "### `" + command + "`\n\n";
    }
    out += "**`" + d.file + "`** (" + (d.when.empty() ? std::string("always") : d.when) + "): " + d.rows +
           "\n\n";
    out += "| column | unit | meaning |\n| --- | --- | --- |\n";
    for (const auto& c : d.columns) {
      std::string meaning = c.meaning;
      if (!c.only_with.empty()) meaning += " (only " + c.only_with + ")";
      out += "| `" + markdown_table_cell(c.name) + "` | " + markdown_table_cell(c.unit) + " | " +
             markdown_table_cell(meaning) + " |\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace fleetsim
