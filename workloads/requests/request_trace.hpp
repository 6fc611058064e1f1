#pragma once
// Request traces for LLM serving (issue 14): one reader per format, registered by name
// ("llmservingsim" JSONL, "azure" CSV, "mooncake" JSONL, "generator"). A reader returns requests
// sorted by arrival (stable), arrivals shifted so the first is 0 unless the format says otherwise.
// Every malformed input raises InputError naming file, line and field; nothing is returned partly.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/base/options.hpp"
#include "workloads/base/registry.hpp"

namespace fleetsim {

struct ServingRequest {
  std::string id;
  double arrival_s = 0;   ///< seconds from the trace's first arrival
  int input_tokens = 0;   ///< prompt length, >= 1
  int output_tokens = 0;  ///< tokens generated, >= 1 (the first comes out of the prefill step)
  /// Prefix-cache block hashes (Mooncake `hash_ids`, one per block of the prompt); empty if unknown.
  std::vector<std::uint64_t> block_hashes;
  long source_line = 0;  ///< for messages
};

/// What a reader is given: its format, file, the scenario seed and every key of the request-trace
/// table (each reader declares the keys it reads, workloads/base/keys.hpp, in its own .cpp).
struct RequestTraceConfig {
  std::string format;
  std::string path;
  std::uint64_t seed = 1;
  Options settings;
  std::string scenario_file;
};

class RequestReader {
 public:
  virtual ~RequestReader() = default;
  virtual std::vector<ServingRequest> read(const RequestTraceConfig& config) const = 0;
};

using RequestReaderRegistry = Registry<RequestReader>;
RequestReaderRegistry& request_readers();

/// Looks the format up (unknown: InputError listing the valid names) and reads.
std::vector<ServingRequest> read_requests(const RequestTraceConfig& config);

struct RequestReaderRegistrar {
  RequestReaderRegistrar(std::string name, std::string description, RequestReaderRegistry::Factory f) {
    request_readers().add(std::move(name), std::move(description), std::move(f));
  }
};

}  // namespace fleetsim
