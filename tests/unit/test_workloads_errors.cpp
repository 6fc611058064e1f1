// Bad input: every case raises InputError naming the file, the line and the field.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>

#include "tests/unit/test_workloads_util.hpp"
#include "workloads/base/options.hpp"
#include "workloads/base/text.hpp"
#include "workloads/throughputs/throughput_table.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

namespace {

const std::string kOpenbHeader =
    "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,"
    "scheduled_time\n";
const std::string kGoodPod = "pod-a,1000,1024,1,1000,,LS,Running,0,10,0\n";

}  // namespace

TEST_CASE("openb: malformed row (wrong field count) names the first missing column") {
  TempFile f("openb_short.csv", kOpenbHeader + kGoodPod + "pod-b,1000,1024,1\n");
  const auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "gpu_milli");
  CHECK(contains(e.what(), "row has 4 fields, header has 11"));
}

TEST_CASE("openb: non-numeric field") {
  TempFile f("openb_nan.csv", kOpenbHeader + kGoodPod + "pod-b,1000,1024,two,1000,,LS,Running,0,10,0\n");
  const auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "num_gpu");
  CHECK(contains(e.what(), "'two' is not a number"));
}

TEST_CASE("openb: negative duration") {
  TempFile f("openb_negdur.csv",
             kOpenbHeader + kGoodPod + "pod-b,1000,1024,1,1000,,LS,Running,500,400,500\n");
  const auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "deletion_time");
  CHECK(contains(e.what(), "negative duration"));
}

TEST_CASE("openb: negative values") {
  TempFile f("openb_neg.csv", kOpenbHeader + kGoodPod + "pod-b,-5,1024,1,1000,,LS,Running,0,10,0\n");
  auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "cpu_milli");
  CHECK(contains(e.what(), "negative value '-5'"));

  TempFile g("openb_negsubmit.csv", kOpenbHeader + "pod-b,5,1024,1,1000,,LS,Running,-3,10,0\n");
  e = read_error(config("openb", g.path()));
  check_names(e, g.path(), 2, "creation_time");
}

TEST_CASE("openb: absurd GPU count") {
  TempFile f("openb_huge.csv", kOpenbHeader + kGoodPod + "pod-b,1000,1024,1e9,1000,,LS,Running,0,10,0\n");
  const auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "num_gpu");
  CHECK(contains(e.what(), "out of range"));
}

TEST_CASE("openb: GPU share out of range or zero for a GPU pod") {
  TempFile f("openb_milli.csv", kOpenbHeader + kGoodPod + "pod-b,1000,1024,1,1500,,LS,Running,0,10,0\n");
  auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 3, "gpu_milli");
  CHECK(contains(e.what(), "'1500' out of range [0, 1000]"));

  TempFile g("openb_milli0.csv", kOpenbHeader + "pod-b,1000,1024,2,0,,LS,Running,0,10,0\n");
  e = read_error(config("openb", g.path()));
  check_names(e, g.path(), 2, "gpu_milli");

  TempFile h("openb_frac.csv", kOpenbHeader + "pod-b,1000,1024,1,12.5,,LS,Running,0,10,0\n");
  e = read_error(config("openb", h.path()));
  check_names(e, h.path(), 2, "gpu_milli");
  CHECK(contains(e.what(), "not an integer"));
}

TEST_CASE("openb: missing column") {
  TempFile f("openb_nocol.csv", "name,cpu_milli,memory_mib,num_gpus,gpu_milli\npod-a,1,1,1,1000\n");
  const auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 1, "num_gpu");
  CHECK(contains(e.what(), "column not found"));
  CHECK(contains(e.what(), "did you mean 'num_gpus'"));
  CHECK(contains(e.what(), "header has: name, cpu_milli, memory_mib, num_gpus, gpu_milli"));
}

TEST_CASE("openb: empty file and header-only file") {
  TempFile f("openb_empty.csv", "");
  auto e = read_error(config("openb", f.path()));
  check_names(e, f.path(), 0, "");
  CHECK(contains(e.what(), "no header"));

  TempFile g("openb_header_only.csv", kOpenbHeader);
  e = read_error(config("openb", g.path()));
  check_names(e, g.path(), 0, "");
  CHECK(contains(e.what(), "trace has no jobs"));
}

TEST_CASE("philly-gavel: wrong field count, bad numbers, negative arrival") {
  TempFile f("philly_short.trace", "A3C\tcmd\t-n\t1\t100\t0.0\t1\nA3C\tcmd\t-n\t1\t100\n");
  auto e = read_error(config("philly-gavel", f.path()));
  check_names(e, f.path(), 2, "arrival_time");
  CHECK(contains(e.what(), "expected 7 tab-separated fields, found 5"));

  TempFile g("philly_nan.trace", "A3C\tcmd\t-n\t1\t100\t0.0\tfour\n");
  e = read_error(config("philly-gavel", g.path()));
  check_names(e, g.path(), 1, "scale_factor");

  TempFile h("philly_neg.trace", "\nA3C\tcmd\t-n\t1\t100\t-1.5\t1\n");
  e = read_error(config("philly-gavel", h.path()));
  check_names(e, h.path(), 2, "arrival_time");
  CHECK(contains(e.what(), "negative value '-1.5'"));

  TempFile k("philly_steps.trace", "A3C\tcmd\t-n\t1\t0\t1\t1\n");
  e = read_error(config("philly-gavel", k.path()));
  check_names(e, k.path(), 1, "total_steps");

  TempFile m("philly_huge.trace", "A3C\tcmd\t-n\t1\t10\t1\t1000000000\n");
  e = read_error(config("philly-gavel", m.path()));
  check_names(e, m.path(), 1, "scale_factor");
  CHECK(contains(e.what(), "out of range"));
}

TEST_CASE("philly-gavel: job type missing from the throughput table") {
  TempFile f("philly_unknown.trace",
             "A3C\tcmd\t-n\t1\t100\t0\t1\nResNet-50 (batch size 46)\tcmd\t-n\t1\t100\t0\t1\n");
  auto c = config("philly-gavel", f.path());
  c.settings.set("throughputs", fixture("throughputs_small.json"));
  const auto e = read_error(c);
  check_names(e, f.path(), 2, "job_type");
  CHECK(contains(e.what(), "did you mean 'ResNet-50 (batch size 64)'"));
}

TEST_CASE("philly-gavel: unknown GPU type and malformed throughput JSON") {
  auto c = config("philly-gavel", fixture("philly_small.trace"));
  c.settings.set("throughputs", fixture("throughputs_small.json"));
  c.settings.set("gpu_type", "a100");
  auto e = read_error(c);
  check_names(e, "scenario.toml", 0, "workload.gpu_type");
  CHECK(contains(e.what(), "valid: k80, v100"));

  TempFile bad("throughputs_bad.json", "{\n  \"v100\": {\n    \"('A3C', 1)\": {\"null\": 3.0,}\n  }\n}\n");
  c.settings.set("gpu_type", "v100");
  c.settings.set("throughputs", bad.path());
  e = read_error(c);
  check_names(e, bad.path(), 3, "");
  CHECK(contains(e.what(), "malformed JSON"));

  TempFile badkey("throughputs_badkey.json", R"j({"v100": {"A3C-1": {"null": 3.0}}})j");
  c.settings.set("throughputs", badkey.path());
  e = read_error(c);
  check_names(e, badkey.path(), 0, "v100/A3C-1");

  TempFile neg("throughputs_neg.json", R"j({"v100": {"('A3C', 1)": {"null": -3.0}}})j");
  CHECK_THROWS_AS(ThroughputTable::load(neg.path()), InputError);
  CHECK_THROWS_AS(ThroughputTable::load(fixture("does_not_exist.json")), InputError);
}

TEST_CASE("csv: bad date") {
  TempFile f("csv_date.csv", "when,dur,g\n2023-01-01 00:00:00,1,1\n2023-02-30 00:00:00,1,1\n");
  auto c = config("csv", f.path());
  c.settings.set_entries("columns", {{"submit", "when"}, {"duration", "dur"}, {"gpus", "g"}});
  c.settings.set("time_format", "%Y-%m-%d %H:%M:%S");
  auto e = read_error(c);
  check_names(e, f.path(), 3, "when");
  CHECK(contains(e.what(), "'2023-02-30 00:00:00' is not a valid date"));

  TempFile g("csv_date2.csv", "when,dur,g\nyesterday,1,1\n");
  c.path = g.path();
  e = read_error(c);
  check_names(e, g.path(), 2, "when");
  CHECK(contains(e.what(), "'yesterday' does not match time_format"));
}

TEST_CASE("csv: missing column, missing mapping, unknown mapping key") {
  TempFile f("csv_cols.csv", "start,dur,gpus\n0,1,1\n");
  auto c = config("csv", f.path());
  c.settings.set_entries("columns", {{"submit", "start"}, {"duration", "duration"}, {"gpus", "gpus"}});
  auto e = read_error(c);
  check_names(e, f.path(), 1, "duration");
  CHECK(contains(e.what(), "column not found"));
  CHECK(contains(e.what(), "header has: start, dur, gpus"));

  c.settings.set_entries("columns", {{"submit", "start"}, {"duration", "dur"}});
  e = read_error(c);
  check_names(e, "scenario.toml", 0, "workload.columns.gpus");

  c.settings.set_entries("columns",
                         {{"submit", "start"}, {"duration", "dur"}, {"gpus", "gpus"}, {"gpu_mili", "x"}});
  e = read_error(c);
  check_names(e, "scenario.toml", 0, "workload.columns.gpu_mili");
  CHECK(contains(e.what(), "did you mean 'gpu_milli'"));
}

TEST_CASE("csv: wrong field count, non-numeric, negative, absurd, unterminated quote") {
  auto c = config("csv", "");
  c.settings.set_entries("columns", {{"submit", "t"}, {"duration", "d"}, {"gpus", "g"}});
  auto run = [&](const std::string& name, const std::string& body) {
    TempFile f(name, "t,d,g\n0,1,1\n" + body);
    c.path = f.path();
    const InputError e = read_error(c);
    return std::make_pair(e, f.path());
  };
  {
    auto [e, p] = run("csv_count.csv", "1,2,3,4\n");
    check_names(e, p, 3, "");
    CHECK(contains(e.what(), "row has 4 fields, header has 3"));
  }
  {
    auto [e, p] = run("csv_count2.csv", "1,2\n");
    check_names(e, p, 3, "g");
  }
  {
    auto [e, p] = run("csv_nan.csv", "1,ten,1\n");
    check_names(e, p, 3, "d");
    CHECK(contains(e.what(), "'ten' is not a number"));
  }
  {
    auto [e, p] = run("csv_neg.csv", "1,-10,1\n");
    check_names(e, p, 3, "d");
    CHECK(contains(e.what(), "negative value '-10'"));
  }
  {
    auto [e, p] = run("csv_huge.csv", "1,10,1e9\n");
    check_names(e, p, 3, "g");
    CHECK(contains(e.what(), "'1e9' out of range [0, 100000]"));
  }
  {
    auto [e, p] = run("csv_inf.csv", "inf,10,1\n");
    check_names(e, p, 3, "t");
  }
  {
    auto [e, p] = run("csv_quote.csv", "1,\"10,1\n2,3,4\n");
    check_names(e, p, 3, "");
    CHECK(contains(e.what(), "unterminated quoted field"));
  }
}

TEST_CASE("read_trace: binary file") {
  std::string bytes = "name,cpu_milli\n";
  bytes += std::string(
      "\x7f"
      "ELF\0\0\x01",
      7);
  TempFile f("binary.csv", bytes);
  for (const char* format : {"openb", "csv", "philly-gavel"}) {
    auto c = config(format, f.path());
    c.settings.set_entries("columns", {{"submit", "a"}, {"duration", "b"}, {"gpus", "c"}});
    const auto e = read_error(c);
    check_names(e, f.path(), 0, "");
    CHECK(contains(e.what(), "binary file"));
  }
}

TEST_CASE("read_trace: missing file, directory, no path") {
  const std::string missing = fixture("no_such_trace.csv");
  auto e = read_error(config("openb", missing));
  check_names(e, missing, 0, "");
  CHECK(contains(e.what(), "not found"));

  const std::string dir = fixture("");
  e = read_error(config("philly-gavel", dir));
  check_names(e, dir, 0, "");
  CHECK(contains(e.what(), "directory"));

  e = read_error(config("openb", ""));
  check_names(e, "scenario.toml", 0, "workload.path");
}

TEST_CASE("philly-gavel: empty trace (only blank lines)") {
  TempFile f("philly_blank.trace", "\n\n   \n");
  const auto e = read_error(config("philly-gavel", f.path()));
  check_names(e, f.path(), 0, "");
  CHECK(contains(e.what(), "trace has no jobs"));
}

TEST_CASE("read_trace: unknown format") {
  const auto e = read_error(config("opnb", fixture("openb_small.csv")));
  check_names(e, "scenario.toml", 0, "workload.format");
  CHECK(contains(e.what(), "unknown trace format 'opnb'"));
  CHECK(contains(e.what(), "did you mean 'openb'"));
  CHECK(contains(e.what(), "valid: csv, llm-csv, llm-synthetic, openb, philly-gavel, pollux, synthetic"));
}

TEST_CASE("synthetic: invalid parameters name the scenario key") {
  auto c = config("synthetic", "");
  c.settings.set("jobs", static_cast<double>(0));
  check_names(read_error(c), "scenario.toml", 0, "workload.jobs");
  c.settings.set("jobs", static_cast<double>(10));
  c.settings.set("arrival_rate_per_hour", static_cast<double>(0));
  check_names(read_error(c), "scenario.toml", 0, "workload.arrival_rate_per_hour");
  c.settings.set("arrival_rate_per_hour", static_cast<double>(10));
  c.settings.set_items("gpus_weights", {"1", "2"});
  const auto e = read_error(c);
  check_names(e, "scenario.toml", 0, "workload.gpus_weights");
  CHECK(contains(e.what(), "2 weights for 6 gpus_values"));
  c.settings.set_items("gpus_values", {"1", "2"});
  c.settings.set_items("gpus_weights", {"1", "-2"});
  check_names(read_error(c), "scenario.toml", 0, "workload.gpus_weights");
  c.settings.set_items("gpus_weights", {"0", "0"});
  check_names(read_error(c), "scenario.toml", 0, "workload.gpus_weights");
  c.settings.set_items("gpus_weights", {"1", "1"});
  c.settings.set_items("gpus_values", {"1", "-2"});
  check_names(read_error(c), "scenario.toml", 0, "workload.gpus_values");
  c.settings.set_items("gpus_values", {"1", "2"});
  c.settings.set("duration_median_s", static_cast<double>(-1));
  check_names(read_error(c), "scenario.toml", 0, "workload.duration_median_s");
  c.settings.set("duration_median_s", static_cast<double>(100));
  c.settings.set("duration_sigma", static_cast<double>(-1));
  check_names(read_error(c), "scenario.toml", 0, "workload.duration_sigma");
  c.settings.set("duration_sigma", static_cast<double>(1));
  c.settings.set("duration_max_s", static_cast<double>(1));
  check_names(read_error(c), "scenario.toml", 0, "workload.duration_max_s");
}

TEST_CASE("int32: a value stored as int is range-checked, never a wrapped cast") {
  // Options::int32 is what every int-typed knob reads through: 3e9 once wrapped to a negative count.
  Options o({}, "scenario.toml", "execution");
  o.set("big", "3000000000");
  o.set("low", "-2147483649");
  o.set("max", "2147483647");
  o.set("min", "-2147483648");
  o.set("frac", "2.5");
  CHECK(o.int32("max", 0) == 2147483647);
  CHECK(o.int32("min", 0) == -2147483647 - 1);
  CHECK(o.int32("absent", 7) == 7);
  for (const char* key : {"big", "low"}) {
    try {
      (void)o.int32(key, 0);
      FAIL("no error for " << key);
    } catch (const InputError& e) {
      check_names(e, "scenario.toml", 0, std::string("execution.") + key);
      CHECK(contains(e.what(), "out of range"));
    }
  }
  CHECK_THROWS_WITH_AS((void)o.int32("frac", 0), doctest::Contains("is not an integer"), InputError);
  // the same check for numbers read from a data file (a JSON count, a log's rank)
  CHECK(to_int32(64.0, "f.json", 3, "ranks") == 64);
  CHECK_THROWS_WITH_AS((void)to_int32(1e12, "f.json", 3, "ranks"), doctest::Contains("f.json:3"), InputError);
  CHECK_THROWS_AS((void)to_int32(std::nan(""), "f.json", 3, "ranks"), InputError);
  CHECK_THROWS_WITH_AS((void)parse_int32("4294967296", "log.txt", 9, "nGpus"), doctest::Contains("nGpus"),
                       InputError);
}
