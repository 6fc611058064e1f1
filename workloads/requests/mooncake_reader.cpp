// "mooncake": the Mooncake traces (FAST'25; conversation_trace.jsonl, toolagent_trace.jsonl, ...), one
// JSON object per line: timestamp (milliseconds), input_length and output_length (integers >= 1) and
// hash_ids (optional: the prefix-cache block hashes of the prompt, one per block of 512 tokens,
// integers >= 0) which become block_hashes. Other fields are checked as JSON and otherwise ignored.
// Rows out of arrival order are read in order and counted on stderr (the shipped trace is sorted,
// with equal timestamps); arrivals are shifted so that the first is 0. Ids are the 0-based record number
// ("0", "1", ...). Blank lines are skipped.
#include <memory>

#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {
namespace {

namespace dom = simdjson::dom;
namespace in = request_input;

class MooncakeReader final : public RequestReader {
 public:
  std::vector<ServingRequest> read(const RequestTraceConfig& config) const override {
    const std::string& file = config.path;
    const std::string text = in::load(config);
    std::vector<ServingRequest> out;
    in::ArrivalOrder<double> order(file, "timestamp");
    double first_ms = 0;
    in::for_each_json_object(text, file, [&](long line, const dom::object& obj) {
      auto required = [&](const char* key) {
        const auto e = in::field(obj, key);
        if (!e) throw InputError(file, line, key, "missing field");
        return *e;
      };
      ServingRequest r;
      r.source_line = line;
      const double t = in::number(required("timestamp"), file, line, "timestamp");
      order.check(t, line);
      if (out.empty()) first_ms = t;
      r.arrival_s = (t - first_ms) / 1000.0;
      r.input_tokens = in::tokens(in::integer(required("input_length"), file, line, "input_length"), file,
                                  line, "input_length");
      r.output_tokens = in::tokens(in::integer(required("output_length"), file, line, "output_length"), file,
                                   line, "output_length");
      if (const auto hashes = in::field(obj, "hash_ids")) {
        dom::array a;
        if (hashes->get(a))
          throw InputError(file, line, "hash_ids", "expected an array, got " + in::quote(*hashes));
        r.block_hashes.reserve(a.size());
        for (const dom::element e : a) {
          const long long h = in::integer(e, file, line, "hash_ids");
          if (h < 0) throw InputError(file, line, "hash_ids", "hash " + std::to_string(h) + " is negative");
          r.block_hashes.push_back(static_cast<std::uint64_t>(h));
        }
      }
      r.id = std::to_string(out.size());
      out.push_back(std::move(r));
    });
    order.report();
    return out;
  }
};

const RequestReaderRegistrar kRegistrar{
    "mooncake", "Mooncake trace JSONL: timestamp (ms), input_length, output_length, hash_ids (prefix blocks)",
    [] { return std::make_unique<MooncakeReader>(); }};

}  // namespace
}  // namespace fleetsim
