#pragma once
// InputError: the one exception type for bad user input (trace rows, scenario keys, names).
// Its message names the file, the line (0 = whole file) and the field; the CLI prints it and exits 2.
#include <stdexcept>
#include <string>

namespace fleetsim {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, long line, std::string field, const std::string& message)
      : std::runtime_error(format(file, line, field, message)),
        file_(std::move(file)),
        line_(line),
        field_(std::move(field)) {}

  const std::string& file() const { return file_; }
  long line() const { return line_; }
  const std::string& field() const { return field_; }

  static std::string format(const std::string& file, long line, const std::string& field,
                            const std::string& message) {
    std::string out = file.empty() ? std::string("<input>") : file;
    if (line > 0) out += ":" + std::to_string(line);
    if (!field.empty()) out += ": field '" + field + "'";
    out += ": " + message;
    return out;
  }

 private:
  std::string file_;
  long line_;
  std::string field_;
};

}  // namespace fleetsim
