// "csv": a generic fault table with the header node,start,end,component (any column order; extra
// columns ignored): node is any name, start and end are seconds from the trace's origin
// (end >= start), component a name such as gpu, hbm, nic (lower-cased). '#' lines are comments.
#include <array>
#include <sstream>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/faults/fault_trace.hpp"

namespace fleetsim {
namespace {

class CsvFaultReader final : public FaultTraceReader {
 public:
  FaultTrace read(const std::string& path) const override {
    std::istringstream in(read_input_file(path));
    FaultTrace trace;
    trace.file = path;
    constexpr std::array<const char*, 4> kNames = {"node", "start", "end", "component"};
    std::array<int, 4> col = {-1, -1, -1, -1};
    std::string line;
    long n = 0;
    bool header = false;
    while (std::getline(in, line)) {
      ++n;
      const std::string_view body = trim(line);
      if (body.empty() || body.front() == '#') continue;
      const auto cells = split(body, ',');
      if (!header) {
        for (std::size_t c = 0; c < cells.size(); ++c)
          for (std::size_t k = 0; k < kNames.size(); ++k)
            if (lower(trim(cells[c])) == kNames[k]) col[k] = static_cast<int>(c);
        for (std::size_t k = 0; k < kNames.size(); ++k)
          if (col[k] < 0)
            throw InputError(path, n, kNames[k], "missing column (header: node,start,end,component)");
        header = true;
        continue;
      }
      auto cell = [&](int k) -> std::string {
        const auto c = static_cast<std::size_t>(col[static_cast<std::size_t>(k)]);
        if (c >= cells.size())
          throw InputError(path, n, kNames[static_cast<std::size_t>(k)], "missing field");
        return std::string(trim(cells[c]));
      };
      FaultRecord f;
      f.node = cell(0);
      if (f.node.empty()) throw InputError(path, n, "node", "empty node name");
      f.start_s = parse_double(cell(1), path, n, "start");
      f.end_s = parse_double(cell(2), path, n, "end");
      if (f.start_s < 0) throw InputError(path, n, "start", "must be >= 0");
      if (f.end_s < f.start_s) throw InputError(path, n, "end", "the repair ends before the fault starts");
      f.component = lower(cell(3));
      if (f.component.empty()) throw InputError(path, n, "component", "empty component");
      f.line = n;
      trace.faults.push_back(std::move(f));
    }
    if (!header) throw InputError(path, 0, "", "empty fault trace (header: node,start,end,component)");
    finish_trace(trace);
    return trace;
  }
};

const FaultTraceRegistrar kRegistrar{"csv", "generic CSV fault trace: node,start,end,component (seconds)",
                                     [] { return std::make_unique<CsvFaultReader>(); }};

}  // namespace
}  // namespace fleetsim
