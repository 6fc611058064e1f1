// "stepfun": the InfiniteHBD fault trace (StepFun, SIGCOMM 2025; ../shared/data/faults/
// stepfun-infinitehbd): a JSON array of {node_id, event_time (days from the first event),
// event_type fault_start | fault_end, fault_type {Level, Class, Desc}}, sorted by time. A fault_end
// closes the earliest open fault of its node (a node may have two open at once). The component is
// the Class in lower case with spaces as '-' (e.g. "gpu", "parameter-plane-cable"); a fault never
// closed lasts until the trace's last event.
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/faults/fault_trace.hpp"

namespace fleetsim {
namespace {

constexpr double kDay = 86400.0;

std::string component_of(const std::string& cls) {
  std::string c = lower(cls);
  for (char& ch : c)
    if (ch == ' ' || ch == '_') ch = '-';
  return c;
}

class StepFunReader final : public FaultTraceReader {
 public:
  FaultTrace read(const std::string& path) const override {
    const std::string text = read_input_file(path);
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path, 0, "", std::string("not valid JSON: ") + e.what());
    }
    if (!doc.is_array()) throw InputError(path, 0, "", "expected a JSON array of fault events");
    FaultTrace trace;
    trace.file = path;
    std::map<std::string, std::vector<std::size_t>> open;  // node -> indices of open faults
    double last = 0;
    long index = 0;
    for (const auto& e : doc) {
      ++index;
      auto field = [&](const char* key) -> const nlohmann::json& {
        if (!e.is_object() || !e.contains(key))
          throw InputError(path, index, key, "missing in event " + std::to_string(index));
        return e.at(key);
      };
      const auto& node = field("node_id");
      const auto& time = field("event_time");
      const auto& type = field("event_type");
      if (!node.is_string()) throw InputError(path, index, "node_id", "expected a string");
      if (!time.is_number() || !(time.get<double>() >= 0) || !std::isfinite(time.get<double>() * kDay))
        throw InputError(path, index, "event_time", "expected a finite number of days >= 0");
      if (!type.is_string()) throw InputError(path, index, "event_type", "expected a string");
      const std::string name = node.get<std::string>();
      const double t = time.get<double>() * kDay;
      last = std::max(last, t);
      const std::string kind = type.get<std::string>();
      if (kind == "fault_start") {
        FaultRecord f;
        f.node = name;
        f.start_s = t;
        f.end_s = -1;
        f.line = index;
        if (e.contains("fault_type") && e["fault_type"].is_object()) {
          const auto& ft = e["fault_type"];
          // Class and Desc are text; a number or a list there is not a fault class (nlohmann's value()
          // would throw its own type_error, naming no file, event or field).
          auto text_of = [&](const char* key, const char* fallback) {
            if (!ft.contains(key) || ft[key].is_null()) return std::string(fallback);
            if (!ft[key].is_string())
              throw InputError(path, index, std::string("fault_type.") + key,
                               "event " + std::to_string(index) + ": expected a string, got " +
                                   ft[key].type_name() + " " + ft[key].dump().substr(0, 40));
            return ft[key].get<std::string>();
          };
          f.component = component_of(text_of("Class", "other"));
          f.detail = text_of("Desc", "");
        } else {
          f.component = "other";
        }
        open[name].push_back(trace.faults.size());
        trace.faults.push_back(std::move(f));
      } else if (kind == "fault_end") {
        auto& list = open[name];
        if (list.empty())
          throw InputError(path, index, "event_type", "fault_end of node " + name + " with no open fault");
        FaultRecord& f = trace.faults[list.front()];
        if (t < f.start_s)
          throw InputError(path, index, "event_time", "the repair ends before the fault starts");
        f.end_s = t;
        list.erase(list.begin());
      } else {
        throw InputError(path, index, "event_type", "expected fault_start or fault_end, got '" + kind + "'");
      }
    }
    for (auto& f : trace.faults)
      if (f.end_s < 0) f.end_s = last;
    finish_trace(trace);
    return trace;
  }
};

const FaultTraceRegistrar kRegistrar{"stepfun",
                                     "StepFun InfiniteHBD JSON fault trace (node_id, event_time in days, "
                                     "fault_start/fault_end, fault_type Class)",
                                     [] { return std::make_unique<StepFunReader>(); }};

}  // namespace
}  // namespace fleetsim
