// The request-trace readers' registry and read_requests(); the generic [service.requests] keys.
#include "workloads/requests/request_trace.hpp"

#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/requests/request_input.hpp"

namespace fleetsim {

namespace {

using K = KeyKind;
const KeyRegistrar kKeys{{
    {request_input::kTable, "format", K::kString, "", "",
     "request trace format, a registered reader: llmservingsim, azure, mooncake, generator"},
    {request_input::kTable, "path", K::kPath, "", "", "request trace file (every format but generator)"},
}};

}  // namespace

RequestReaderRegistry& request_readers() {
  static RequestReaderRegistry registry("request trace format");
  return registry;
}

std::vector<ServingRequest> read_requests(const RequestTraceConfig& config) {
  const auto reader =
      request_readers().create(config.format, config.scenario_file, 0, request_input::key_name("format"));
  std::vector<ServingRequest> requests = reader->read(config);
  if (requests.empty()) {
    const std::string& where = config.path.empty() ? config.scenario_file : config.path;
    throw InputError(where, 0, "", "request trace has no requests");
  }
  // Readers check these with their line; this keeps the promise for any reader.
  for (const auto& r : requests) {
    request_input::tokens(r.input_tokens, config.path, r.source_line, "input_tokens");
    request_input::tokens(r.output_tokens, config.path, r.source_line, "output_tokens");
  }
  request_input::finish(requests);
  return requests;
}

}  // namespace fleetsim
