// Request-trace readers (issue 14): hand-made inputs per format with exact fields, bad rows naming
// file:line:field, the generator's determinism and rates, and the real traces (skipped with a message
// where ../shared/data is absent).
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <set>

#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/requests/request_input.hpp"
#include "workloads/requests/request_trace.hpp"

using namespace fleetsim;

namespace {

struct Dir {
  std::filesystem::path path = test::temp_dir("requests");
  ~Dir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name, const std::string& text) const {
    test::write_file(path / name, text);
    return (path / name).string();
  }
};

/// Reads with the [service.requests] keys `keys` (as written in a scenario).
std::vector<ServingRequest> read(const std::string& format, const std::string& path,
                                 const std::map<std::string, std::string>& keys = {},
                                 std::uint64_t seed = 1) {
  Options o({}, "test.toml", "service.requests");
  for (const auto& [k, v] : keys) o.set(k, v);
  return read_requests(RequestTraceConfig{format, path, seed, o, "test.toml"});
}

/// The InputError that `f` throws; fails the test if it throws none.
template <typename F>
InputError error_of(F&& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no InputError thrown");
  return InputError("", 0, "", "");
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

/// Checks that reading `text` as `format` fails naming `line` and `field` (and `part` in the message).
void check_bad(const std::string& format, const std::string& text, long line, const std::string& field,
               const std::string& part = "") {
  const Dir d;
  const std::string path = d.file("bad.trace", text);
  const InputError e = error_of([&] { read(format, path); });
  CHECK_MESSAGE(e.file() == path, e.what());
  CHECK_MESSAGE(e.line() == line, e.what());
  CHECK_MESSAGE(e.field() == field, e.what());
  CHECK_MESSAGE(contains(e.what(), path + ":" + std::to_string(line)), e.what());
  if (!part.empty()) CHECK_MESSAGE(contains(e.what(), part), e.what());
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST_CASE("request readers: registry, unknown formats, missing paths and empty traces") {
  std::vector<std::string> names;
  for (const auto& e : request_readers().entries()) names.push_back(e.name);
  CHECK(names == std::vector<std::string>{"azure", "generator", "llmservingsim", "mooncake"});
  const InputError unknown = error_of([] { read("mooncak", "x.jsonl"); });
  CHECK(unknown.field() == "service.requests.format");
  CHECK(contains(unknown.what(), "did you mean 'mooncake'"));
  CHECK(contains(unknown.what(), "valid: azure, generator, llmservingsim, mooncake"));
  const InputError no_path = error_of([] { read("azure", ""); });
  CHECK(no_path.field() == "service.requests.path");
  CHECK(no_path.file() == "test.toml");
  const Dir d;
  CHECK(
      contains(error_of([&] { read("llmservingsim", d.file("e.jsonl", "\n  \n")); }).what(), "no requests"));
  CHECK(contains(error_of([&] { read("mooncake", d.file("z.jsonl", "")); }).what(), "empty"));
  CHECK(contains(error_of([&] { read("azure", (d.path / "missing.csv").string()); }).what(), "not found"));
}

TEST_CASE("llmservingsim: a workload's arrival_time_ns, shifted to 0, ids by record") {
  const Dir d;
  const std::string path =
      d.file("w.jsonl",
             R"({"input_toks": 10, "output_toks": 5, "arrival_time_ns": 1000000000, "input_tok_ids": [1, 2]}
{"input_toks": 7, "output_toks": 1, "arrival_time_ns": 1500000000}

{"input_toks": 3, "output_toks": 9, "arrival_time_ns": 1500000001, "output_tok_ids": []})"
             "\r\n");
  const auto r = read("llmservingsim", path);
  REQUIRE(r.size() == 3);
  CHECK(r[0].id == "0");
  CHECK(r[2].id == "2");
  CHECK(r[0].arrival_s == 0);
  CHECK(r[1].arrival_s == 0.5);
  CHECK(r[2].arrival_s == 0.500000001);
  CHECK(r[0].input_tokens == 10);
  CHECK(r[0].output_tokens == 5);
  CHECK(r[1].output_tokens == 1);
  CHECK(r[2].input_tokens == 3);
  CHECK(r[2].source_line == 4);
  CHECK(r[0].block_hashes.empty());
}

TEST_CASE("llmservingsim: a measured run's request_id and queued_ts") {
  const Dir d;
  const std::string path = d.file(
      "requests.jsonl",
      R"({"request_id": "bench-0", "input_toks": 20, "output_toks": 4, "arrival_time": 17.5, "queued_ts": 100.25}
{"request_id": "bench-1", "input_toks": 30, "output_toks": 6, "arrival_time": 16.0, "queued_ts": 100.75}
)");
  const auto r = read("llmservingsim", path);
  REQUIRE(r.size() == 2);
  CHECK(r[0].id == "bench-0");
  CHECK(r[1].id == "bench-1");
  CHECK(r[0].arrival_s == 0);
  CHECK(r[1].arrival_s == 0.5);
  CHECK(r[1].input_tokens == 30);
  CHECK(r[1].output_tokens == 6);
}

TEST_CASE("llmservingsim: bad rows name file, line and field") {
  const std::string ok = R"({"input_toks": 1, "output_toks": 1, "arrival_time_ns": 5})"
                         "\n";
  check_bad("llmservingsim", ok + R"({"input_toks": -3, "output_toks": 1, "arrival_time_ns": 6})", 2,
            "input_toks", ">= 1, got -3");
  check_bad("llmservingsim", ok + R"({"input_toks": 3, "output_toks": 0, "arrival_time_ns": 6})", 2,
            "output_toks", ">= 1, got 0");
  check_bad("llmservingsim", ok + R"({"input_toks": 3, "output_toks": 2, "arrival_time_ns": 6)", 2, "",
            "malformed JSON");
  check_bad("llmservingsim", ok + R"({"input_toks": 3, "output_toks": 2, "arrival_time_ns": 6} x)", 2, "",
            "malformed JSON");
  check_bad("llmservingsim", ok + R"([1, 2])", 2, "", "one JSON object per line");
  check_bad("llmservingsim", ok + R"({"input_toks": 3.5, "output_toks": 2, "arrival_time_ns": 6})", 2,
            "input_toks", "expected an integer, got 3.5");
  check_bad("llmservingsim", ok + R"({"output_toks": 2, "arrival_time_ns": 6})", 2, "input_toks",
            "missing field");
  check_bad("llmservingsim", ok + R"({"input_toks": 3, "output_toks": 2})", 2, "arrival_time_ns",
            "missing field");
  check_bad("llmservingsim", ok + R"({"request_id": "a", "input_toks": 3, "output_toks": 2, "queued_ts": 1})",
            2, "queued_ts", "mixes kinds");
  check_bad("llmservingsim", R"({"request_id": 7, "input_toks": 3, "output_toks": 2, "queued_ts": 1})", 1,
            "request_id", "non-empty string");
  check_bad("llmservingsim", R"({"session_id": "s", "arrival_time_ns": 0, "sub_requests": []})", 1,
            "sub_requests", "agentic");
  check_bad("llmservingsim",
            ok + R"({"input_toks": 3, "output_toks": 2, "arrival_time_ns": 6, "input_tok_ids": [1, tru]})", 2,
            "", "malformed JSON");
}

TEST_CASE("azure: exact datetimes (fractions, day and year boundaries), any column order") {
  const Dir d;
  const std::string path = d.file("a.csv",
                                  "GeneratedTokens,ContextTokens,TIMESTAMP\r\n"
                                  "10,4808,2023-12-31 23:59:59.9999999\r\n"
                                  "8,3180,2024-01-01 00:00:00.0000001\r\n"
                                  "\r\n"
                                  "27,110,2024-03-01T00:00:00.5\r\n"
                                  "1,\"2\",2024-03-01 01:00:00.5+01:00\r\n");
  const auto r = read("azure", path);
  REQUIRE(r.size() == 4);
  CHECK(r[0].id == "0");
  CHECK(r[3].id == "3");
  CHECK(r[0].arrival_s == 0);
  CHECK(r[1].arrival_s == 200e-9);
  // 2024 is a leap year: Jan 31 + Feb 29 days after New Year, plus the half second.
  CHECK(r[2].arrival_s == 5184000.5000001);
  CHECK(r[3].arrival_s == r[2].arrival_s);  // the same instant written with an offset
  CHECK(r[0].input_tokens == 4808);
  CHECK(r[0].output_tokens == 10);
  CHECK(r[2].input_tokens == 110);
  CHECK(r[3].input_tokens == 2);
  CHECK(r[2].source_line == 5);
}

TEST_CASE("azure: bad rows name file, line and field") {
  const std::string head = "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n";
  check_bad("azure", head + "2023-11-16 18:15:47,0,44\n", 3, "ContextTokens", ">= 1, got 0");
  check_bad("azure", head + "2023-11-16 18:15:47,5,-2\n", 3, "GeneratedTokens", ">= 1, got -2");
  check_bad("azure", head + "2023-11-16 18:15:47,five,2\n", 3, "ContextTokens", "not a number");
  check_bad("azure", head + "2023-02-29 00:00:00,5,2\n", 3, "TIMESTAMP", "not a datetime");
  check_bad("azure", head + "2023-11-16 24:00:00,5,2\n", 3, "TIMESTAMP", "not a datetime");
  check_bad("azure", head + "2023-11-16 18:15:47.,5,2\n", 3, "TIMESTAMP", "not a datetime");
  check_bad("azure", head + "1700000000,5,2\n", 3, "TIMESTAMP", "not a datetime");
  check_bad("azure", head + "2023-11-16 18:15:47,5\n", 3, "GeneratedTokens", "missing field");
  check_bad("azure", "TIMESTAMP,Context,GeneratedTokens\n", 1, "ContextTokens", "column not found");
}

TEST_CASE("mooncake: milliseconds, equal timestamps, hash_ids become block_hashes") {
  const Dir d;
  const std::string path =
      d.file("m.jsonl",
             R"({"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, 48]}
{"timestamp": 27482, "input_length": 5, "output_length": 1, "hash_ids": []}
{"timestamp": 30000, "input_length": 700, "output_length": 3}
)");
  const auto r = read("mooncake", path);
  REQUIRE(r.size() == 3);
  CHECK(r[0].arrival_s == 0);
  CHECK(r[1].arrival_s == 0);
  CHECK(r[2].arrival_s == 2.518);
  CHECK(r[0].id == "0");
  CHECK(r[1].id == "1");
  CHECK(r[0].input_tokens == 6955);
  CHECK(r[0].output_tokens == 52);
  CHECK(r[0].block_hashes == std::vector<std::uint64_t>{46, 47, 48});
  CHECK(r[1].block_hashes.empty());
  CHECK(r[2].block_hashes.empty());
}

TEST_CASE("mooncake: bad rows name file, line and field") {
  const std::string ok = R"({"timestamp": 10, "input_length": 1, "output_length": 1})"
                         "\n";
  check_bad("mooncake", ok + R"({"timestamp": 11, "input_length": 1, "output_length": 0})", 2,
            "output_length", ">= 1");
  check_bad("mooncake", ok + R"({"timestamp": 11, "input_length": -1, "output_length": 2})", 2,
            "input_length", ">= 1");
  check_bad("mooncake", ok + R"({"timestamp": "11", "input_length": 1, "output_length": 2})", 2, "timestamp",
            "finite number");
  check_bad("mooncake",
            ok + R"({"timestamp": 11, "input_length": 1, "output_length": 2, "hash_ids": [1, -2]})", 2,
            "hash_ids", "negative");
  check_bad("mooncake", ok + R"({"timestamp": 11, "input_length": 1, "output_length": 2, "hash_ids": 4})", 2,
            "hash_ids", "expected an array");
  check_bad("mooncake", ok + R"({"timestamp": 11, "input_length": 1})", 2, "output_length", "missing field");
}

TEST_CASE("generator: deterministic per seed, Poisson and gamma rates, duration") {
  const std::map<std::string, std::string> poisson = {{"rate_per_s", "20"}, {"requests", "50000"}};
  const auto a = read("generator", "", poisson, 7);
  const auto b = read("generator", "", poisson, 7);
  const auto c = read("generator", "", poisson, 8);
  REQUIRE(a.size() == 50000);
  CHECK(a[0].arrival_s == 0);
  CHECK(a[0].id == "req-0");
  CHECK(a[49999].id == "req-49999");
  bool same = true;
  for (std::size_t i = 0; i < a.size(); ++i) same = same && a[i].arrival_s == b[i].arrival_s;
  CHECK(same);
  CHECK(a[1].arrival_s != c[1].arrival_s);
  CHECK(a[0].input_tokens == 1024);  // fixed lengths by default
  CHECK(a[123].output_tokens == 256);
  // Mean gap 1/20 s within 2% (the standard error is 0.45%).
  const double mean_gap = a.back().arrival_s / static_cast<double>(a.size() - 1);
  CHECK(mean_gap == doctest::Approx(0.05).epsilon(0.02));

  // Gamma gaps with cv 3: same mean rate, gaps 3x as variable; rate_scale doubles the rate.
  const auto g = read("generator", "",
                      {{"arrival", "gamma"},
                       {"arrival_cv", "3"},
                       {"rate_per_s", "10"},
                       {"rate_scale", "2"},
                       {"requests", "100000"}});
  double sum = 0, sum2 = 0;
  for (std::size_t i = 1; i < g.size(); ++i) {
    const double gap = g[i].arrival_s - g[i - 1].arrival_s;
    sum += gap;
    sum2 += gap * gap;
  }
  const double n = static_cast<double>(g.size() - 1), mean = sum / n;
  CHECK(mean == doctest::Approx(0.05).epsilon(0.03));
  CHECK(std::sqrt(sum2 / n - mean * mean) / mean == doctest::Approx(3).epsilon(0.1));

  // duration_s bounds the arrivals; normal lengths have their mean and stay >= 1.
  const auto t = read("generator", "",
                      {{"rate_per_s", "100"},
                       {"duration_s", "60"},
                       {"input_tokens", "50"},
                       {"input_tokens_sd", "40"},
                       {"output_tokens", "10"}});
  CHECK(t.back().arrival_s < 60);
  CHECK(static_cast<double>(t.size()) == doctest::Approx(6000).epsilon(0.05));
  double in_sum = 0;
  for (const auto& r : t) {
    CHECK(r.input_tokens >= 1);
    CHECK(r.output_tokens == 10);
    in_sum += r.input_tokens;
  }
  CHECK(in_sum / static_cast<double>(t.size()) > 50);  // clamping at 1 raises the mean a little
  CHECK(in_sum / static_cast<double>(t.size()) < 54);
}

TEST_CASE("generator: lengths resampled from a trace at its rate scaled, or its arrivals replayed") {
  const Dir d;
  const std::string src =
      d.file("src.jsonl",
             R"({"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}
{"timestamp": 1000, "input_length": 200, "output_length": 20}
{"timestamp": 2000, "input_length": 300, "output_length": 30}
{"timestamp": 4000, "input_length": 400, "output_length": 40}
)");
  // Source rate: 3 gaps over 4 s = 0.75/s; rate_scale 4 makes it 3/s.
  const auto r =
      read("generator", "",
           {{"source_path", src}, {"source_format", "mooncake"}, {"rate_scale", "4"}, {"requests", "30000"}});
  REQUIRE(r.size() == 30000);
  CHECK(r.back().arrival_s / 29999 == doctest::Approx(1.0 / 3).epsilon(0.02));
  std::set<int> inputs;
  for (const auto& q : r) {
    CHECK(q.output_tokens * 10 == q.input_tokens);  // pairs are kept together
    CHECK(q.block_hashes.empty());
    inputs.insert(q.input_tokens);
  }
  CHECK(inputs == std::set<int>{100, 200, 300, 400});

  const auto replay = read("generator", "",
                           {{"arrival", "trace"},
                            {"source_path", src},
                            {"source_format", "mooncake"},
                            {"rate_scale", "2"},
                            {"duration_s", "1.5"}});
  REQUIRE(replay.size() == 3);  // arrivals 0, 0.5, 1 and 2 s; 2 s is past duration_s
  CHECK(replay[1].arrival_s == 0.5);
  CHECK(replay[2].arrival_s == 1);
  CHECK(replay[1].id == "1");
  CHECK(replay[0].block_hashes == std::vector<std::uint64_t>{1});
}

TEST_CASE("generator: bad keys name the key") {
  auto field_of = [](const std::map<std::string, std::string>& keys) {
    return error_of([&] { read("generator", "", keys); }).field();
  };
  CHECK(field_of({{"rate_per_s", "0"}}) == "service.requests.rate_per_s");
  CHECK(field_of({{"arrival", "burst"}}) == "service.requests.arrival");
  CHECK(field_of({{"arrival", "trace"}}) == "service.requests.arrival");
  CHECK(field_of({{"arrival_cv", "2"}}) == "service.requests.arrival_cv");
  CHECK(field_of({{"requests", "0"}}) == "service.requests.requests");
  CHECK(field_of({{"input_tokens", "0"}}) == "service.requests.input_tokens");
  CHECK(field_of({{"source_path", "x.jsonl"}}) == "service.requests.source_path");
  CHECK(field_of({{"source_path", "x.jsonl"}, {"source_format", "generator"}}) ==
        "service.requests.source_format");
  CHECK(field_of({{"source_path", "x.jsonl"}, {"source_format", "moon"}}) ==
        "service.requests.source_format");
  CHECK(field_of({{"source_path", "x.jsonl"}, {"source_format", "mooncake"}, {"output_tokens", "5"}}) ==
        "service.requests.output_tokens");
}

TEST_CASE("real data: LLMServingSim ShareGPT workload and a measured run") {
  const std::string workload = "serving/llmservingsim/sharegpt-llama-3.1-8b-300-sps10.jsonl";
  const std::string run = "serving/llmservingsim/runs/RTXPRO6000-Llama-3.1-8B/requests.jsonl";
  test::require_shared(workload);
  test::require_shared(run);
  const auto t0 = std::chrono::steady_clock::now();
  const auto w = read("llmservingsim", test::shared_path(workload));
  MESSAGE("sharegpt-300 (2.5 MB with token ids): " << seconds_since(t0) * 1e3 << " ms");
  REQUIRE(w.size() == 300);
  CHECK(w[0].input_tokens == 2358);
  CHECK(w[0].output_tokens == 531);
  CHECK(w[0].arrival_s == 0);
  // 300 Poisson arrivals at 10/s span about 30 s.
  CHECK(w.back().arrival_s > 20);
  CHECK(w.back().arrival_s < 40);
  const auto m = read("llmservingsim", test::shared_path(run));
  REQUIRE(m.size() == 300);
  CHECK(m[0].id == "bench-0");
  CHECK(m[0].input_tokens == 2358);
  CHECK(m[0].output_tokens == 531);
  CHECK(m[1].arrival_s == doctest::Approx(479748.625554681 - 479748.340626232));
}

TEST_CASE("real data: Azure LLM inference traces 2023 (conv, code)") {
  const std::string conv = "serving/azure-llm-2023/AzureLLMInferenceTrace_conv.csv";
  const std::string code = "serving/azure-llm-2023/AzureLLMInferenceTrace_code.csv";
  test::require_shared(conv);
  test::require_shared(code);
  auto t0 = std::chrono::steady_clock::now();
  const auto c = read("azure", test::shared_path(conv));
  MESSAGE("azure conv (19,366 rows): " << seconds_since(t0) * 1e3 << " ms");
  REQUIRE(c.size() == 19366);
  CHECK(c[0].input_tokens == 374);
  CHECK(c[0].output_tokens == 44);
  // 18:15:50.9951690 - 18:15:46.6805900, exactly to the 100 ns of the file.
  CHECK(c[1].arrival_s == 4.314579);
  CHECK(c.back().arrival_s == doctest::Approx(3501.7219370));
  t0 = std::chrono::steady_clock::now();
  const auto k = read("azure", test::shared_path(code));
  MESSAGE("azure code (8,819 rows): " << seconds_since(t0) * 1e3 << " ms");
  CHECK(k.size() == 8819);
}

TEST_CASE("real data: Mooncake conversation trace") {
  const std::string trace = "serving/mooncake/conversation_trace.jsonl";
  test::require_shared(trace);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = read("mooncake", test::shared_path(trace));
  MESSAGE("mooncake conversation (12,031 rows, 3 MB): " << seconds_since(t0) * 1e3 << " ms");
  REQUIRE(r.size() == 12031);
  CHECK(r[0].input_tokens == 6758);
  CHECK(r[0].output_tokens == 500);
  CHECK(r[0].block_hashes.size() == 14);
  CHECK(r[1].block_hashes.front() == 0);  // shared first block
  CHECK(r.back().arrival_s == 3536.999);
  // One hash per 512-token block of the prompt.
  CHECK(std::all_of(r.begin(), r.end(), [](const ServingRequest& q) {
    return q.block_hashes.size() == static_cast<std::size_t>((q.input_tokens + 511) / 512);
  }));
}

TEST_CASE("llmservingsim: input_tok_ids become chained block hashes (equal prefixes, equal hashes)") {
  Dir d;
  std::string a = "[", b = "[", c = "[";
  for (int i = 0; i < 40; ++i) {
    a += (i ? "," : "") + std::to_string(i);
    b += (i ? "," : "") + std::to_string(i < 20 ? i : 1000 + i);  // differs from token 20: second block
    c += (i ? "," : "") + std::to_string(i == 0 ? 7 : i);         // differs at token 0: every block
  }
  const auto path = d.file("t.jsonl",
                           "{\"input_toks\": 40, \"output_toks\": 1, \"arrival_time_ns\": 0, "
                           "\"input_tok_ids\": " +
                               a +
                               "]}\n{\"input_toks\": 40, \"output_toks\": 1, "
                               "\"arrival_time_ns\": 1, \"input_tok_ids\": " +
                               b +
                               "]}\n{\"input_toks\": 40, "
                               "\"output_toks\": 1, \"arrival_time_ns\": 2, \"input_tok_ids\": " +
                               c + "]}\n");
  const auto r = read("llmservingsim", path);
  REQUIRE(r[0].block_hashes.size() == 2);  // two full blocks of 16 in 40 tokens
  CHECK(r[1].block_hashes[0] == r[0].block_hashes[0]);
  CHECK(r[1].block_hashes[1] != r[0].block_hashes[1]);
  CHECK(r[2].block_hashes[0] != r[0].block_hashes[0]);
  CHECK(r[2].block_hashes[1] != r[0].block_hashes[1]);  // chained: the first block's change carries on
  const auto r8 = read("llmservingsim", path, {{"hash_block_tokens", "8"}});
  CHECK(r8[0].block_hashes.size() == 5);
  CHECK(r8[1].block_hashes[1] == r8[0].block_hashes[1]);  // tokens 8-15 equal, same prefix
  CHECK(r8[1].block_hashes[2] != r8[0].block_hashes[2]);  // tokens 16-23 differ from 20
}

TEST_CASE("rows out of arrival order are read in arrival order, counted (a DP vLLM run's queued_ts)") {
  // Two engine cores stamp queued_ts on their own: line 3 arrives 0.2 ms before line 2.
  const Dir d;
  const std::string path =
      d.file("dp.jsonl",
             R"({"request_id": "a", "input_toks": 5, "output_toks": 2, "queued_ts": 100.0}
{"request_id": "b", "input_toks": 6, "output_toks": 2, "queued_ts": 100.0006}
{"request_id": "c", "input_toks": 7, "output_toks": 2, "queued_ts": 100.0004}
{"request_id": "d", "input_toks": 8, "output_toks": 2, "queued_ts": 100.001}
)");
  const auto r = read("llmservingsim", path);
  REQUIRE(r.size() == 4);
  CHECK(r[0].id == "a");
  CHECK(r[1].id == "c");
  CHECK(r[2].id == "b");
  CHECK(r[3].id == "d");
  CHECK(r[1].arrival_s == doctest::Approx(0.0004).epsilon(1e-9));
  CHECK(r[2].arrival_s == doctest::Approx(0.0006).epsilon(1e-9));
  CHECK(r[1].source_line == 3);

  request_input::ArrivalOrder<double> order("f", "queued_ts");
  for (const auto& [t, line] :
       std::vector<std::pair<double, long>>{{1.0, 1}, {3.0, 2}, {2.5, 3}, {1.5, 4}, {4.0, 5}})
    order.check(t, line);
  CHECK(order.reordered() == 2);      // lines 3 and 4 come after line 2's 3.0
  CHECK(order.most_behind() == 1.5);  // line 4: 3.0 - 1.5

  // Azure (100 ns back) and Mooncake (1 ms back) too.
  const auto az = read("azure", d.file("a.csv",
                                       "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                       "2023-11-16 18:15:46.6805900,374,44\n"
                                       "2023-11-16 18:15:46.6805899,375,44\n"));
  REQUIRE(az.size() == 2);
  CHECK(az[0].input_tokens == 375);
  CHECK(az[1].arrival_s == doctest::Approx(1e-7).epsilon(1e-6));
  const auto mc =
      read("mooncake", d.file("m.jsonl", R"({"timestamp": 10, "input_length": 1, "output_length": 1}
{"timestamp": 9, "input_length": 2, "output_length": 1}
)"));
  REQUIRE(mc.size() == 2);
  CHECK(mc[0].input_tokens == 2);
  CHECK(mc[1].arrival_s == doctest::Approx(0.001));
}
