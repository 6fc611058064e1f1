// "generator": generated requests (no file of its own).
// Arrivals (`arrival`): "poisson" (exponential gaps), "gamma" (gamma gaps with coefficient of
// variation `arrival_cv`, shape 1/cv^2: cv > 1 is burstier than Poisson, cv < 1 more regular), both
// at `rate_per_s` x `rate_scale` requests per second, the first at 0; or "trace": the source trace's
// own requests and arrivals, arrival times divided by `rate_scale` (2 = twice the rate).
// Count: `requests` (default 1000 unless `duration_s` is given), `duration_s` (arrivals in
// [0, duration_s)); with both, whichever ends first.
// Lengths: from `source_path` / `source_format` (another request trace) when given, each request's
// (input, output) pair drawn uniformly with replacement from it (block hashes are not copied: a
// resampled prompt is no repeat of the source's); else `input_tokens` and `output_tokens`, normal
// with standard deviations `input_tokens_sd` / `output_tokens_sd` (0 = fixed, the default), rounded
// and clamped to >= 1. Without `rate_per_s` a source trace's mean rate ((n - 1) / span) is the rate.
// Ids "req-<n>", n from 0; "trace" keeps the source's ids.
// Sampling is hand-written on std::mt19937_64 (as the synthetic job reader's), seeded by `seed` (the
// scenario seed by default). Per request, in order: the gap (not for the first), then the source
// pick, or the input length and the output length (each only when its sd > 0).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>

#include "workloads/base/keys.hpp"
#include "workloads/base/sampler.hpp"
#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

namespace fleetsim {
namespace {

namespace in = request_input;

constexpr long long kMaxRequests = 100'000'000;

using K = KeyKind;
const KeyRegistrar kKeys{{
    {in::kTable, "arrival", K::kString, "", "poisson",
     "poisson | gamma (bursts, arrival_cv) | trace (the source trace's arrivals / rate_scale)", "generator",
     one_of({"poisson", "gamma", "trace"})},
    {in::kTable, "rate_per_s", K::kFloat, "requests/s", "10, or the source trace's mean rate",
     "mean arrival rate (poisson, gamma)", "generator", above(0)},
    {in::kTable, "rate_scale", K::kFloat, "", "1",
     "multiplies the rate; with arrival = \"trace\" divides the source's arrival times", "generator",
     above(0)},
    {in::kTable, "arrival_cv", K::kFloat, "", "1",
     "gamma: coefficient of variation of the gaps (shape 1/cv^2; > 1 bursty)", "generator", above(0)},
    {in::kTable, "requests", K::kInt, "", "1000 unless duration_s", "number of requests", "generator",
     at_least(1)},
    {in::kTable, "duration_s", K::kFloat, "s", "none", "generate arrivals in [0, duration_s)", "generator",
     above(0)},
    {in::kTable, "input_tokens", K::kInt, "tokens", "1024", "prompt length (mean when input_tokens_sd > 0)",
     "generator", at_least(1)},
    {in::kTable, "input_tokens_sd", K::kFloat, "tokens", "0 = fixed",
     "standard deviation of a normal prompt length (rounded, >= 1)", "generator", at_least(0)},
    {in::kTable, "output_tokens", K::kInt, "tokens", "256", "output length (mean when output_tokens_sd > 0)",
     "generator", at_least(1)},
    {in::kTable, "output_tokens_sd", K::kFloat, "tokens", "0 = fixed",
     "standard deviation of a normal output length (rounded, >= 1)", "generator", at_least(0)},
    {in::kTable, "source_path", K::kPath, "", "none",
     "a request trace whose (input, output) lengths are resampled, whose rate is the default", "generator"},
    {in::kTable, "source_format", K::kString, "", "", "its format (llmservingsim, azure, mooncake)",
     "generator"},
    {in::kTable, "seed", K::kInt, "", "the scenario seed", "generator seed", "generator", at_least(0)},
}};

enum class Arrival { kPoisson, kGamma, kTrace };

struct GeneratorConfig {
  Arrival arrival = Arrival::kPoisson;
  double rate_per_s = 10;
  bool rate_given = false;
  double rate_scale = 1;
  double arrival_cv = 1;
  long long requests = 1000;
  bool requests_given = false;
  double duration_s = std::numeric_limits<double>::infinity();
  double input_tokens = 1024, input_sd = 0;
  double output_tokens = 256, output_sd = 0;
  std::string source_path, source_format;
  std::uint64_t seed = 1;

  static GeneratorConfig from(const RequestTraceConfig& rc) {
    const Options& o = rc.settings;
    GeneratorConfig c;
    const std::string arrival = o.text("arrival", "poisson");
    if (arrival == "gamma") {
      c.arrival = Arrival::kGamma;
    } else if (arrival == "trace") {
      c.arrival = Arrival::kTrace;
    } else if (arrival != "poisson") {
      throw o.error("arrival", "unknown arrival process '" + arrival + "'; valid: poisson, gamma, trace");
    }
    c.rate_given = o.has("rate_per_s");
    c.rate_per_s = o.number("rate_per_s", c.rate_per_s);
    c.rate_scale = o.number("rate_scale", c.rate_scale);
    c.arrival_cv = o.number("arrival_cv", c.arrival_cv);
    c.requests_given = o.has("requests");
    c.requests = o.integer("requests", c.requests);
    if (o.has("duration_s")) c.duration_s = o.number("duration_s", 0);
    c.input_tokens = static_cast<double>(o.integer("input_tokens", 1024));
    c.input_sd = o.number("input_tokens_sd", 0);
    c.output_tokens = static_cast<double>(o.integer("output_tokens", 256));
    c.output_sd = o.number("output_tokens_sd", 0);
    c.source_path = o.text("source_path", "");
    c.source_format = o.text("source_format", "");
    c.seed = static_cast<std::uint64_t>(o.integer("seed", static_cast<long long>(rc.seed)));
    c.check(o);
    return c;
  }

  void check(const Options& o) const {
    auto positive = [&](const char* key, double v) {
      if (!std::isfinite(v) || v <= 0) throw o.error(key, "must be a finite number > 0, got " + fmt(v));
    };
    positive("rate_per_s", rate_per_s);
    positive("rate_scale", rate_scale);
    positive("arrival_cv", arrival_cv);
    if (!(duration_s > 0)) throw o.error("duration_s", "must be > 0, got " + fmt(duration_s));
    if (requests < 1 || requests > kMaxRequests)
      throw o.error("requests",
                    "must be in [1, " + std::to_string(kMaxRequests) + "], got " + std::to_string(requests));
    constexpr double kMaxTokens = std::numeric_limits<int>::max();
    if (input_tokens < 1 || input_tokens > kMaxTokens)
      throw o.error("input_tokens", "must be in [1, 2^31 - 1], got " + fmt(input_tokens));
    if (output_tokens < 1 || output_tokens > kMaxTokens)
      throw o.error("output_tokens", "must be in [1, 2^31 - 1], got " + fmt(output_tokens));
    if (!std::isfinite(input_sd) || input_sd < 0) throw o.error("input_tokens_sd", "must be >= 0");
    if (!std::isfinite(output_sd) || output_sd < 0) throw o.error("output_tokens_sd", "must be >= 0");
    if (source_path.empty() != source_format.empty())
      throw o.error(source_path.empty() ? "source_format" : "source_path",
                    "source_path and source_format go together");
    if (source_format == "generator") throw o.error("source_format", "a generator cannot be its own source");
    if (!source_format.empty() && !request_readers().contains(source_format))
      throw o.error("source_format", request_readers().unknown_message(source_format));
    if (arrival == Arrival::kTrace && source_path.empty())
      throw o.error("arrival", "\"trace\" replays a source trace: give source_path and source_format");
    if (arrival == Arrival::kTrace && rate_given)
      throw o.error("rate_per_s", "does not apply to arrival = \"trace\" (rate_scale rescales its arrivals)");
    if (arrival != Arrival::kGamma && o.has("arrival_cv"))
      throw o.error("arrival_cv", "applies to arrival = \"gamma\" only");
    for (const char* key : {"input_tokens", "input_tokens_sd", "output_tokens", "output_tokens_sd"})
      if (!source_path.empty() && o.has(key))
        throw o.error(key, "lengths come from the source trace (source_path); drop this key or the source");
  }
};

int draw_tokens(Sampler& s, double mean, double sd) {
  if (sd == 0) return static_cast<int>(mean);
  const double v = std::round(mean + sd * s.normal());
  return static_cast<int>(std::clamp(v, 1.0, static_cast<double>(std::numeric_limits<int>::max())));
}

/// The source's requests replayed, arrival times divided by rate_scale.
std::vector<ServingRequest> replay(const GeneratorConfig& c, std::vector<ServingRequest> source,
                                   const Options& o) {
  if (c.requests_given && static_cast<std::size_t>(c.requests) > source.size())
    throw o.error("requests", "asks for " + std::to_string(c.requests) + " but the source trace has " +
                                  std::to_string(source.size()));
  std::vector<ServingRequest> out;
  for (auto& r : source) {
    r.arrival_s /= c.rate_scale;
    if (r.arrival_s >= c.duration_s || (c.requests_given && std::ssize(out) >= c.requests)) break;
    out.push_back(std::move(r));
  }
  return out;
}

class GeneratorReader final : public RequestReader {
 public:
  std::vector<ServingRequest> read(const RequestTraceConfig& config) const override {
    const Options& o = config.settings;
    const GeneratorConfig c = GeneratorConfig::from(config);
    std::vector<ServingRequest> source;
    if (!c.source_path.empty()) {
      const RequestTraceConfig sc{c.source_format, c.source_path, config.seed, Options{},
                                  config.scenario_file};
      source = read_requests(sc);
    }
    if (c.arrival == Arrival::kTrace) return replay(c, std::move(source), o);

    double rate = c.rate_per_s;
    if (!c.rate_given && !source.empty()) {
      const double span = source.back().arrival_s - source.front().arrival_s;
      if (source.size() < 2 || span <= 0)
        throw o.error("rate_per_s", "the source trace has no rate (needs two distinct arrivals); give one");
      rate = static_cast<double>(source.size() - 1) / span;
    }
    rate *= c.rate_scale;
    const double mean_gap_s = 1.0 / rate;
    const double shape = 1.0 / (c.arrival_cv * c.arrival_cv);
    const long long count = c.requests_given || !std::isfinite(c.duration_s) ? c.requests : kMaxRequests + 1;

    Sampler s(c.seed);
    std::vector<ServingRequest> out;
    double t = 0;
    for (long long n = 0; n < count; ++n) {
      if (n > 0)
        t += c.arrival == Arrival::kGamma ? s.gamma(shape) * mean_gap_s / shape
                                          : -std::log1p(-s.uniform()) * mean_gap_s;
      if (t >= c.duration_s) break;
      if (n == kMaxRequests)
        throw o.error("duration_s", "more than " + std::to_string(kMaxRequests) +
                                        " requests: lower the rate or the duration");
      ServingRequest r;
      r.id = "req-" + std::to_string(n);
      r.arrival_s = t;
      if (!source.empty()) {
        const ServingRequest& from = source[s.index(source.size())];
        r.input_tokens = from.input_tokens;
        r.output_tokens = from.output_tokens;
      } else {
        r.input_tokens = draw_tokens(s, c.input_tokens, c.input_sd);
        r.output_tokens = draw_tokens(s, c.output_tokens, c.output_sd);
      }
      out.push_back(std::move(r));
    }
    return out;
  }
};

const RequestReaderRegistrar kRegistrar{"generator",
                                        "generated requests: Poisson or gamma (bursty) arrivals at a rate, "
                                        "or a trace's arrivals rescaled; fixed, "
                                        "normal or resampled lengths (seeded, portable)",
                                        [] { return std::make_unique<GeneratorReader>(); }};

}  // namespace
}  // namespace fleetsim
