// "llmservingsim": LLMServingSim's (and vLLM bench's) JSONL request files, one JSON object per line.
// Two kinds, decided by the first record; every record must be of that kind:
//  - a workload (e.g. sharegpt-llama-3.1-8b-300-sps10.jsonl): input_toks, output_toks (integers
//    >= 1) and arrival_time_ns (integer nanoseconds). Ids are the 0-based record number ("0", "1",
//    ...). input_tok_ids (integers), when present, become the prefix-cache block hashes: one per
//    full block of hash_block_tokens tokens (default 16, vLLM's block), each hashing the previous
//    block's hash and its tokens (FNV-1a), so equal prefixes give equal hashes as in vLLM. Other
//    fields (output_tok_ids) are checked as JSON and otherwise ignored.
//  - a measured run's requests.jsonl: request_id (a string, kept as the id), input_toks, output_toks
//    and queued_ts (seconds on the server's clock when the request entered the queue: the arrival).
//    The other timestamps (arrival_time, scheduled_ts, first_token_ts, last_token_ts) are ignored.
// Rows out of arrival order are read in order (counted on stderr); arrivals are shifted so that the
// first is 0 (nanoseconds are subtracted as integers, then converted). Agentic sessions
// (sub_requests) are not supported and are an error. Blank lines are skipped.
#include <cstdint>
#include <memory>

#include "workloads/base/keys.hpp"
#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {
namespace {

namespace dom = simdjson::dom;
namespace in = request_input;

enum class Kind { kUnknown, kWorkload, kMeasuredRun };

const KeyRegistrar kKeys{{
    {in::kTable, "hash_block_tokens", KeyKind::kInt, "tokens", "16",
     "tokens per prefix-cache block hashed from input_tok_ids", "llmservingsim", at_least(1)},
}};

/// Chained FNV-1a hashes of the full blocks of `ids`.
std::vector<std::uint64_t> block_hashes(const dom::array& ids, long block, const std::string& file,
                                        long line) {
  std::vector<std::uint64_t> out;
  std::uint64_t h = 1469598103934665603ULL, prev = 0;
  long n = 0;
  auto mix = [&h](std::uint64_t v) {
    for (int b = 0; b < 8; ++b) {
      h ^= (v >> (8 * b)) & 0xffU;
      h *= 1099511628211ULL;
    }
  };
  for (const dom::element e : ids) {
    std::int64_t v = 0;
    if (e.get(v)) throw InputError(file, line, "input_tok_ids", "expected integers");
    if (n == 0) {
      h = 1469598103934665603ULL;
      mix(prev);
    }
    mix(static_cast<std::uint64_t>(v));
    if (++n == block) {
      out.push_back(h);
      prev = h;
      n = 0;
    }
  }
  return out;
}

class LlmServingSimReader final : public RequestReader {
 public:
  std::vector<ServingRequest> read(const RequestTraceConfig& config) const override {
    const std::string& file = config.path;
    const std::string text = in::load(config);
    const long block = static_cast<long>(config.settings.integer("hash_block_tokens", 16));
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
        if (const auto ids = in::field(obj, "input_tok_ids")) {
          dom::array arr;
          if (ids->get(arr)) throw InputError(file, line, "input_tok_ids", "expected an array of token ids");
          r.block_hashes = block_hashes(arr, block, file, line);
        }
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
    order_ns.report();
    order_s.report();
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
