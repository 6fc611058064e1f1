// Streamed traces (issue 17): a generator's JobStream equals the trace read whole, and the engine's
// TraceJobs holds only the jobs read and not yet done. No SimGrid run in this process.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "sim/engine/trace_jobs.hpp"
#include "tests/test_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/jobs/trace_reader.hpp"

using namespace fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace {

WorkloadConfig synthetic(long jobs) {
  std::map<std::string, Options::Value> values;
  values["jobs"] = Options::Value{std::to_string(jobs), 3, "", {}, {}};
  values["models"] = Options::Value{"", 4, "", {"a", "b", "c"}, {}};
  WorkloadConfig c;
  c.format = "synthetic";
  c.scenario_file = "s.toml";
  c.seed = 7;
  c.settings = Options(std::move(values), "s.toml", "workload");
  return c;
}

bool same(const JobSpec& a, const JobSpec& b) {
  return a.id == b.id && a.submit_s == b.submit_s && a.gpus == b.gpus && a.duration_s == b.duration_s &&
         a.model == b.model && a.user == b.user && a.source_line == b.source_line;
}

/// The config's stream gives the trace read whole, job for job, on two passes.
void check_stream_equals_whole(const WorkloadConfig& c) {
  const std::vector<JobSpec> whole = read_trace(c);
  auto stream = stream_trace(c);
  REQUIRE(stream);
  REQUIRE(stream->size() == whole.size());
  for (int pass = 0; pass < 2; ++pass) {
    stream->rewind();
    JobSpec j;
    std::size_t n = 0;
    for (; stream->next(j); ++n) {
      REQUIRE(n < whole.size());
      CHECK(same(j, whole[n]));
    }
    CHECK(n == whole.size());
  }
}

Request request_of(const JobSpec& j) {
  Request r;
  r.gpus = j.gpus;
  return r;
}

}  // namespace

TEST_CASE("streamed trace: the synthetic generator's stream equals the trace read whole, twice over") {
  const WorkloadConfig c = synthetic(2000);
  check_stream_equals_whole(c);
  const std::vector<JobSpec> whole = read_trace(c);
  // workload.limit: the first jobs only.
  auto limited = stream_trace(c, 10);
  REQUIRE(limited->size() == 10);
  JobSpec j;
  std::size_t n = 0;
  while (limited->next(j)) CHECK(same(j, whole[n++]));
  CHECK(n == 10);
  // A format without a stream (read whole).
  WorkloadConfig openb = c;
  openb.format = "openb";
  CHECK(stream_trace(openb) == nullptr);
}

namespace {
WorkloadConfig csv_trace(const std::filesystem::path& file, const std::string& time_format = "") {
  std::map<std::string, Options::Value> values;
  Options::Value columns;
  columns.line = 3;
  columns.entries = {{"submit", "t"}, {"duration", "d"}, {"gpus", "g"}, {"user", "u"}};
  values["columns"] = columns;
  if (!time_format.empty()) values["time_format"] = Options::Value{time_format, 4, "", {}, {}};
  WorkloadConfig c;
  c.format = "csv";
  c.path = file.string();
  c.scenario_file = "s.toml";
  c.settings = Options(std::move(values), "s.toml", "workload");
  return c;
}
}  // namespace

TEST_CASE("streamed trace: a CSV file in submit order streams and equals the file read whole") {
  const auto dir = temp_dir("csvstream");
  // seconds, with a quoted field holding the delimiter and a newline; ids default to job-<row>
  write_file(dir / "a.csv", "t,d,g,u\n0,10,1,alice\n5,20,2,\"bob,\nsmith\"\n5,30,4,carol\n9.5,1,0,dave\n");
  // datetimes: shifted so the first is 0
  write_file(dir / "b.csv",
             "t,d,g,u\n2024-01-01 00:00:10,10,1,a\n2024-01-01 00:01:00,20,2,b\n2024-01-01 01:00:00,30,4,c\n");
  check_stream_equals_whole(csv_trace(dir / "a.csv"));
  check_stream_equals_whole(csv_trace(dir / "b.csv", "%Y-%m-%d %H:%M:%S"));
  const auto b = read_trace(csv_trace(dir / "b.csv", "%Y-%m-%d %H:%M:%S"));
  CHECK(b[0].submit_s == 0);
  CHECK(b[2].submit_s == 3590);
  CHECK(read_trace(csv_trace(dir / "a.csv"))[1].id == "job-1");
  CHECK(read_trace(csv_trace(dir / "a.csv"))[1].user == "bob,\nsmith");
  // Out of order: no stream (read whole, then sorted); empty: no stream (read_trace names the file).
  write_file(dir / "c.csv", "t,d,g,u\n5,10,1,a\n0,20,2,b\n");
  CHECK(stream_trace(csv_trace(dir / "c.csv")) == nullptr);
  CHECK(read_trace(csv_trace(dir / "c.csv"))[0].user == "b");
  write_file(dir / "d.csv", "t,d,g,u\n");
  CHECK(stream_trace(csv_trace(dir / "d.csv")) == nullptr);
  // A bad row fails the stream's checking pass, naming file, line and field, as the whole read does.
  write_file(dir / "e.csv", "t,d,g,u\n0,10,1,a\n1,ten,2,b\n");
  CHECK_THROWS_WITH_AS(stream_trace(csv_trace(dir / "e.csv")), doctest::Contains("e.csv:3"), InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "streamed trace: TraceJobs holds only the jobs read and not yet done, in memory or streamed alike") {
  const WorkloadConfig c = synthetic(1000);
  const std::vector<JobSpec> whole = read_trace(c);
  TraceJobs kept(read_trace(c));
  TraceJobs streamed(stream_trace(c));
  CHECK(streamed.streamed());
  CHECK_FALSE(kept.streamed());
  for (TraceJobs* t : {&kept, &streamed}) {
    t->set_make_request(request_of);
    std::size_t visited = 0;
    t->for_each([&](std::size_t i, const JobSpec& j, const Request& r) {
      CHECK(i == visited++);
      CHECK(same(j, whole[i]));
      CHECK(r.gpus == whole[i].gpus);
    });
    CHECK(visited == 1000);
  }
  CHECK(streamed.held() == 0);  // validation keeps nothing
  // Jobs 0..9 arrive and finish in order; 10..19 arrive and stay.
  for (std::size_t i = 0; i < 20; ++i) {
    CHECK(same(streamed.spec(i), whole[i]));
    CHECK(streamed.request(i).gpus == whole[i].gpus);
  }
  const JobSpec* twelve = &streamed.spec(12);
  for (std::size_t i = 0; i < 10; ++i) streamed.done(i);
  CHECK(streamed.held() == 10);
  CHECK_THROWS_AS(streamed.spec(3), std::logic_error);  // done: released
  // Asking for job 500 reads 20..500; dropping a job never read reads (and drops) up to it.
  CHECK(same(streamed.spec(500), whole[500]));
  CHECK(streamed.held() == 10 + 481);
  streamed.done(700);
  CHECK(streamed.held() == 10 + 481 + 199);  // 501..700 read, 700 dropped
  CHECK(&streamed.spec(12) == twelve);       // a held job keeps its address while others come and go
  CHECK(same(*twelve, whole[12]));
  for (std::size_t i = 10; i < 1000; ++i) streamed.done(i);
  CHECK(streamed.held() == 0);
  CHECK_THROWS_AS(streamed.spec(1000), std::logic_error);  // not in the trace
  // In memory, done() keeps everything.
  kept.done(3);
  CHECK(same(kept.spec(3), whole[3]));
  CHECK(kept.held() == 1000);
}
