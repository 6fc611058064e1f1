// Trace readers on tiny fixtures (tests/data/workloads): every parsed value checked exactly.
#include <doctest/doctest.h>

#include "tests/unit/test_workloads_util.hpp"
#include "workloads/jobs/trace_file.hpp"
#include "workloads/jobs/trace_reader.hpp"

using namespace fleetsim;
using namespace fleetsim::test;

TEST_CASE("trace reader registry lists the four formats") {
  const auto& r = trace_readers();
  CHECK(r.kind() == "trace format");
  for (const char* name : {"csv", "openb", "philly-gavel", "synthetic"}) {
    INFO(name);
    CHECK(r.contains(name));
  }
  for (const auto& e : r.entries()) CHECK(!e.description.empty());
}

TEST_CASE("openb: pods parsed, sorted by creation time") {
  const std::string path = fixture("openb_small.csv");
  const auto jobs = read_trace(config("openb", path));
  REQUIRE(jobs.size() == 5);
  // Sorted by submit (stable): b(50) a(100) e(150) c(200) d(300).
  CHECK(jobs[0].id == "pod-b");
  CHECK(jobs[1].id == "pod-a");
  CHECK(jobs[2].id == "pod-e");
  CHECK(jobs[3].id == "pod-c");
  CHECK(jobs[4].id == "pod-d");

  const JobSpec& b = jobs[0];
  CHECK(b.submit_s == 50);
  REQUIRE(b.duration_s);
  CHECK(*b.duration_s == 30);
  CHECK(b.gpus == 1);
  CHECK(b.gpu_milli == 460);
  CHECK(b.gpu_types == std::vector<std::string>{"V100M16", "G2"});
  CHECK(b.cpu_milli == 6000);
  CHECK(b.memory_mib == 12288);
  CHECK(b.single_node);
  CHECK(b.user == "BE");
  CHECK(b.model.empty());
  CHECK(!b.steps);
  CHECK(b.source_line == 3);

  const JobSpec& a = jobs[1];
  CHECK(a.submit_s == 100);
  CHECK(*a.duration_s == 1000);
  CHECK(a.gpus == 1);
  CHECK(a.gpu_milli == 1000);
  CHECK(a.gpu_types.empty());
  CHECK(a.user == "LS");
  CHECK(a.source_line == 2);

  const JobSpec& e = jobs[2];
  CHECK(e.gpus == 2);
  CHECK(e.gpu_milli == 500);
  CHECK(e.memory_mib == 30517.5);
  CHECK(*e.duration_s == 250);
  CHECK(e.user == "Guaranteed");

  const JobSpec& c = jobs[3];
  CHECK(c.gpus == 8);
  CHECK(*c.duration_s == 0);  // deleted at creation: a zero-length pod is allowed
  CHECK(c.gpu_types == std::vector<std::string>{"V100M32"});

  const JobSpec& d = jobs[4];  // CPU-only pod, no deletion time: duration unknown
  CHECK(d.gpus == 0);
  CHECK(d.gpu_milli == 0);
  CHECK(!d.duration_s);
  CHECK(d.submit_s == 300);
}

TEST_CASE("openb: variant without time columns submits everything at 0 in file order") {
  const auto jobs = read_trace(config("openb", fixture("openb_notimes.csv")));
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].id == "pod-0");
  CHECK(jobs[1].id == "pod-1");
  CHECK(jobs[1].gpus == 4);
  CHECK(jobs[2].gpu_milli == 250);
  for (const auto& j : jobs) {
    CHECK(j.submit_s == 0);
    CHECK(!j.duration_s);
  }
}

TEST_CASE("openb: CRLF line ends, BOM and columns in another order") {
  TempFile f("openb_crlf.csv",
             "\xEF\xBB\xBFqos,name,creation_time,deletion_time,num_gpu,gpu_milli,cpu_milli,memory_mib\r\n"
             "LS,p1,10,20,1,1000,1000,2048\r\n"
             "\r\n"
             "BE,p2,5,7,1,300,500,1024\r\n");
  const auto jobs = read_trace(config("openb", f.path()));
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].id == "p2");
  CHECK(jobs[0].source_line == 4);
  CHECK(jobs[0].gpu_milli == 300);
  CHECK(*jobs[0].duration_s == 2);
  CHECK(jobs[1].id == "p1");
  CHECK(jobs[1].user == "LS");
  CHECK(jobs[1].memory_mib == 2048);
}

TEST_CASE("philly-gavel: fields without throughputs (no durations)") {
  const auto jobs = read_trace(config("philly-gavel", fixture("philly_small.trace")));
  REQUIRE(jobs.size() == 4);
  // Arrivals 0, 30.5, 10, 40 -> sorted 0, 10, 30.5, 40; ids follow file order.
  CHECK(jobs[0].id == "job-0");
  CHECK(jobs[1].id == "job-2");
  CHECK(jobs[2].id == "job-1");
  CHECK(jobs[3].id == "job-3");
  CHECK(jobs[0].model == "ResNet-50 (batch size 64)");
  CHECK(jobs[0].submit_s == 0);
  CHECK(*jobs[0].steps == 1000);
  CHECK(jobs[0].gpus == 1);
  CHECK(jobs[1].gpus == 4);
  CHECK(jobs[1].submit_s == 10);
  CHECK(jobs[2].model == "Transformer (batch size 128)");
  CHECK(jobs[2].submit_s == 30.5);
  CHECK(*jobs[2].steps == 500);
  CHECK(jobs[2].gpus == 2);
  CHECK(jobs[2].source_line == 2);
  CHECK(jobs[3].model == "A3C");
  for (const auto& j : jobs) {
    CHECK(!j.duration_s);
    CHECK(!j.single_node);
    CHECK(j.gpu_milli == 1000);
    CHECK(j.gpu_types.empty());
  }
}

TEST_CASE("philly-gavel: durations from the throughput table") {
  auto c = config("philly-gavel", fixture("philly_small.trace"));
  c.settings.set("throughputs", fixture("throughputs_small.json"));
  SUBCASE("v100 (default)") {
    const auto jobs = read_trace(c);
    REQUIRE(jobs.size() == 4);
    CHECK(*jobs[0].duration_s == doctest::Approx(1000 / 10.0));  // (ResNet-50, 1)
    CHECK(*jobs[1].duration_s == doctest::Approx(2000 / 32.0));  // (ResNet-50, 4)
    CHECK(*jobs[2].duration_s == doctest::Approx(500 / 20.0));   // (Transformer, 2)
    CHECK(*jobs[3].duration_s == doctest::Approx(300 / 3.0));    // (A3C, 2): falls back to scale 1
  }
  SUBCASE("k80, named in another case") {
    c.settings.set("gpu_type", "K80");
    const auto jobs = read_trace(c);
    CHECK(*jobs[0].duration_s == doctest::Approx(1000 / 2.5));
    CHECK(*jobs[1].duration_s == doctest::Approx(2000 / 2.5));  // (ResNet-50, 4) measured 0: scale 1
    CHECK(*jobs[2].duration_s == doctest::Approx(500 / 3.5));
    CHECK(*jobs[3].duration_s == doctest::Approx(300 / 1.0));
  }
}

TEST_CASE("csv: quoted fields, datetimes shifted to 0, optional columns") {
  auto c = config("csv", fixture("jobs_small.csv"));
  c.settings.set_entries("columns", {{"submit", "start"},
                                     {"duration", "runtime_s"},
                                     {"gpus", "num_gpus"},
                                     {"id", "job_id"},
                                     {"user", "vc"},
                                     {"gpu_type", "gpu model"},
                                     {"model", "note"}});
  c.settings.set("time_format", "%Y-%m-%d %H:%M:%S");
  const auto jobs = read_trace(c);
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[0].id == "j2");
  CHECK(jobs[0].submit_s == 0);
  CHECK(*jobs[0].duration_s == 30.5);
  CHECK(jobs[0].gpus == 1);
  CHECK(jobs[0].user == "vc-b");
  CHECK(jobs[0].gpu_types == std::vector<std::string>{"A100", "H100"});
  CHECK(jobs[0].model == "multi\nline \"quoted\" note");
  CHECK(jobs[0].source_line == 3);
  CHECK(jobs[1].id == "j1");
  CHECK(jobs[1].submit_s == 600);
  CHECK(jobs[1].gpus == 2);
  CHECK(jobs[1].model == "hello, world");
  CHECK(jobs[1].gpu_types == std::vector<std::string>{"V100"});
  CHECK(jobs[2].id == "j3");
  CHECK(jobs[2].submit_s == 3600);
  CHECK(*jobs[2].duration_s == 0);
  CHECK(jobs[2].gpus == 0);
  CHECK(jobs[2].gpu_milli == 0);
  CHECK(jobs[2].gpu_types.empty());
  CHECK(jobs[2].source_line == 5);
  for (const auto& j : jobs) CHECK(!j.single_node);
}

TEST_CASE("csv: seconds, another delimiter, steps instead of durations, resource columns") {
  TempFile f("jobs_semicolon.csv",
             "t;n;steps;share;cpu;mem;app\n"
             "5.5;1;1200;250;4000;8192;bert\n"
             "0;2;;1000;;;\n"
             "7;1;800;;0;0;\"ncf;v2\"\n");
  auto c = config("csv", f.path());
  c.settings.set("delimiter", ";");
  c.settings.set_entries("columns", {{"submit", "t"},
                                     {"gpus", "n"},
                                     {"steps", "steps"},
                                     {"gpu_milli", "share"},
                                     {"cpu_milli", "cpu"},
                                     {"memory_mib", "mem"},
                                     {"model", "app"}});
  SUBCASE("a row without steps and without a duration column is an error") {
    const auto e = read_error(c);
    check_names(e, f.path(), 3, "steps");
  }
  SUBCASE("with a duration column for the step-less row") {
    TempFile g("jobs_semicolon2.csv",
               "t;n;steps;share;cpu;mem;app;d\n"
               "5.5;1;1200;250;4000;8192;bert;\n"
               "0;2;;1000;;;;60\n"
               "7;1;800;;0;0;\"ncf;v2\";\n");
    c.path = g.path();
    {
      auto cols = c.settings.entries("columns");
      cols["duration"] = "d";
      c.settings.set_entries("columns", cols);
    }
    const auto jobs = read_trace(c);
    REQUIRE(jobs.size() == 3);
    CHECK(jobs[0].id == "job-1");
    CHECK(jobs[0].gpus == 2);
    CHECK(*jobs[0].duration_s == 60);
    CHECK(!jobs[0].steps);
    CHECK(jobs[1].id == "job-0");
    CHECK(jobs[1].submit_s == 5.5);
    CHECK(*jobs[1].steps == 1200);
    CHECK(!jobs[1].duration_s);
    CHECK(jobs[1].gpu_milli == 250);
    CHECK(jobs[1].cpu_milli == 4000);
    CHECK(jobs[1].memory_mib == 8192);
    CHECK(jobs[1].model == "bert");
    CHECK(jobs[2].model == "ncf;v2");
    CHECK(jobs[2].gpu_milli == 1000);
  }
}

TEST_CASE("csv: datetime formats with T separator and fractional seconds") {
  TempFile f("jobs_iso.csv",
             "when,dur,g\n"
             "2024-02-29T23:59:59.5,10,1\n"
             "2024-03-01T00:00:01,10,1\n");
  auto c = config("csv", f.path());
  c.settings.set_entries("columns", {{"submit", "when"}, {"duration", "dur"}, {"gpus", "g"}});
  c.settings.set("time_format", "%Y-%m-%dT%H:%M:%S");
  const auto jobs = read_trace(c);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].submit_s == 0);
  CHECK(jobs[1].submit_s == doctest::Approx(1.5));
}

TEST_CASE("csv parser: quotes, CRLF, trailing delimiter, blank lines, line numbers") {
  const std::string text =
      "a,\"b,1\",c\r\n"
      "\r\n"
      "\"x\ny\",,\"\"\"q\"\"\"\n"
      "   \n"
      "last,\"end\"\r";
  CsvParser p(text, ',', "t.csv");
  std::vector<std::string> f;
  long line = 0;
  REQUIRE(p.next(f, line));
  CHECK(line == 1);
  CHECK(f == std::vector<std::string>{"a", "b,1", "c"});
  REQUIRE(p.next(f, line));
  CHECK(line == 3);
  CHECK(f == std::vector<std::string>{"x\ny", "", "\"q\""});
  REQUIRE(p.next(f, line));
  CHECK(line == 6);
  CHECK(f == std::vector<std::string>{"last", "end"});
  CHECK(!p.next(f, line));

  CsvParser q("a;b;\n;\n", ';', "t.csv");
  REQUIRE(q.next(f, line));
  CHECK(f == std::vector<std::string>{"a", "b", ""});
  REQUIRE(q.next(f, line));
  CHECK(line == 2);
  CHECK(f == std::vector<std::string>{"", ""});
  CHECK(!q.next(f, line));

  CsvParser bad("\"a\"b,c\n", ',', "t.csv");
  try {
    bad.next(f, line);
    FAIL("expected InputError");
  } catch (const InputError& e) {
    check_names(e, "t.csv", 1, "");
    CHECK(contains(e.what(), "after closing quote"));
  }
}
