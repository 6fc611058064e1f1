#pragma once
// Output files: each owner (an observer, a feature's report, an experiment) declares the files it
// writes and their columns from its own .cpp with a static OutputDocRegistrar, beside the code that
// writes them. `fleetsim docs` prints them into sim/REFERENCE.md, and test_output_columns checks each
// declaration against the header of the file a real run writes, so the two cannot drift apart.
#include <string>
#include <string_view>
#include <vector>

namespace fleetsim {

struct OutputColumn {
  std::string name = "";  ///< as in the header; "<...>" stands for zero or more columns (e.g. the swept keys)
  std::string unit = "";  ///< "s", "GB", ... ("" = none)
  std::string meaning = "";
  std::string only_with = "";  ///< when the column is written ("" = always)
};

struct OutputFileDoc {
  std::string file = "";     ///< "jobs.csv"
  std::string command = "";  ///< the command that writes it: "fleetsim run", "fleetsim sweep", ...
  std::string when = "";     ///< "" = every time, else the condition ("with [failures]")
  std::string rows = "";     ///< what one row is
  std::vector<OutputColumn> columns = {};
};

struct OutputDocRegistrar {
  explicit OutputDocRegistrar(OutputFileDoc doc);
};

/// Every declared output file, by command (run first), then file name.
std::vector<OutputFileDoc> output_docs();
/// The declaration of `file` written by `command`; nullptr if none.
const OutputFileDoc* find_output_doc(std::string_view command, std::string_view file);
/// Whether a CSV header line matches the declared columns: every column in order, a column with
/// `only_with` set may be absent, a "<...>" column stands for zero or more cells.
bool header_matches(const OutputFileDoc& doc, const std::string& header);
/// Markdown: one table of columns per file, grouped by command.
std::string describe_outputs_markdown();
/// `text` safe inside a Markdown table cell (pipes escaped, newlines as spaces).
std::string markdown_table_cell(std::string_view text);

}  // namespace fleetsim
