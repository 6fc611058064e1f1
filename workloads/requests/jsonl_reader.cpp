// "llmservingsim": LLMServingSim's (and vLLM bench's) JSONL request files, one JSON object per line.
// Two kinds, decided by the first record; every record must be of that kind:
//  - a workload (e.g. sharegpt-llama-3.1-8b-300-sps10.jsonl): input_toks, output_toks (integers
//    >= 1) and arrival_time_ns (integer nanoseconds). Ids are the 0-based record number ("0", "1",
//    ...). Other fields (input_tok_ids, output_tok_ids) are checked as JSON and otherwise ignored.
//  - a measured run's requests.jsonl: request_id (a string, kept as the id), input_toks, output_toks
//    and queued_ts (seconds on the server's clock when the request entered the queue: the arrival).
//    The other timestamps (arrival_time, scheduled_ts, first_token_ts, last_token_ts) are ignored.
// Arrivals must not go backwards (InputError naming the line and field); they are shifted so that the
// first is 0 (nanoseconds are subtracted as integers, then converted). Agentic sessions
// (sub_requests) are not supported and are an error. Blank lines are skipped.
#include <memory>

#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {
namespace {

namespace dom = simdjson::dom;
namespace in = request_input;

enum class Kind { kUnknown, kWorkload, kMeasuredRun };

class LlmServingSimReader final : public RequestReader {
 public:
  std::vector<ServingRequest> read(const RequestTraceConfig& config) const override {
    const std::string& file = config.path;
    const std::string text = in::load(config);
    std::vector<ServingRequest> out;
    Kind kind = Kind::kUnknown;
    long kind_line = 0;
    in::ArrivalOrder<long long> order_ns(file, "arrival_time_ns");
    in::ArrivalOrder<double> order_s(file, "queued_ts");
    long long first_ns = 0;
    double first_s = 0;
    in::for_each_json_object(text, file, [&](long line, const dom::object& obj) {
      if (obj.at_key("sub_requests").error() == simdjson::SUCCESS)
        throw InputError(file, line, "sub_requests", "agentic sessions are not supported");
      const auto ns = in::field(obj, "arrival_time_ns");
      const auto queued = in::field(obj, "queued_ts");
      const Kind here = ns ? Kind::kWorkload : queued ? Kind::kMeasuredRun : Kind::kUnknown;
      if (here == Kind::kUnknown)
        throw InputError(file, line, "arrival_time_ns",
                         "missing field (a workload has arrival_time_ns, a measured run queued_ts)");
      if (kind == Kind::kUnknown) {
        kind = here;
        kind_line = line;
      } else if (here != kind) {
        throw InputError(file, line, here == Kind::kWorkload ? "arrival_time_ns" : "queued_ts",
                         std::string("mixes kinds: line ") + std::to_string(kind_line) + " has " +
                             (kind == Kind::kWorkload ? "arrival_time_ns" : "queued_ts"));
      }
      ServingRequest r;
      r.source_line = line;
      r.input_tokens = in::tokens(required_int(obj, "input_toks", file, line), file, line, "input_toks");
      r.output_tokens = in::tokens(required_int(obj, "output_toks", file, line), file, line, "output_toks");
      if (kind == Kind::kWorkload) {
        const long long t = in::integer(*ns, file, line, "arrival_time_ns");
        order_ns.check(t, line);
        if (out.empty()) first_ns = t;
        r.arrival_s = static_cast<double>(t - first_ns) / 1e9;
        r.id = std::to_string(out.size());
      } else {
        const double t = in::number(*queued, file, line, "queued_ts");
        order_s.check(t, line);
        if (out.empty()) first_s = t;
        r.arrival_s = t - first_s;
        const auto id = in::field(obj, "request_id");
        std::string_view s;
        if (!id) throw InputError(file, line, "request_id", "missing field");
        if (id->get(s) || s.empty())
          throw InputError(file, line, "request_id", "expected a non-empty string, got " + in::quote(*id));
        r.id = std::string(s);
      }
      out.push_back(std::move(r));
    });
    return out;
  }

 private:
  static long long required_int(const dom::object& obj, const char* key, const std::string& file, long line) {
    const auto e = in::field(obj, key);
    if (!e) throw InputError(file, line, key, "missing field");
    return in::integer(*e, file, line, key);
  }
};

const RequestReaderRegistrar kRegistrar{
    "llmservingsim",
    "LLMServingSim / vLLM bench JSONL: input_toks, output_toks, arrival_time_ns (ns); or a measured run's "
    "request_id, input_toks, output_toks, queued_ts (s)",
    [] { return std::make_unique<LlmServingSimReader>(); }};

}  // namespace
}  // namespace fleetsim
