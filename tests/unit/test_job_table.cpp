// Streamed outputs (sim/metrics/recorders.hpp): JobTable writes jobs.csv through sorted spill runs and
// must equal a table that keeps every finished job and sorts it at the end (the writer before
// streaming, re-implemented here as the reference), whatever the finishing order and buffer size;
// its JobStats equal the figures computed from all rows; TimeSeries writes each instant's last
// changed sample as the run goes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "sim/metrics/recorders.hpp"
#include "sim/network/network_report.hpp"
#include "workloads/base/text.hpp"

using namespace fleetsim;

namespace {

struct Trace {
  std::vector<JobSpec> specs;
  std::vector<JobRecord> finished;  ///< in finishing order
};

/// `n` jobs; some ids need quoting; every 7th job never finishes; finishing order shuffled.
Trace make_trace(int n, bool network, unsigned seed) {
  Trace t;
  t.specs.resize(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1000);
  for (int i = 0; i < n; ++i) {
    JobSpec& s = t.specs[static_cast<std::size_t>(i)];
    s.id = i % 11 == 3 ? "job \"" + std::to_string(i) + "\",x\ny" : "job-" + std::to_string(i);
    if (i % 7 == 6) continue;
    JobRecord r;
    r.spec = &s;
    r.index = i;
    r.submit_s = i * 1.5;
    r.start_s = r.submit_s + u(rng);
    r.end_s = r.start_s + u(rng);
    r.gpu_type = i % 2 == 0 ? "A100" : "V100";
    r.nodes = 1 + i % 3;
    r.gpus = 0.5 * (1 + i % 4);
    r.restarts = i % 5 == 0 ? 1 : 0;
    r.preempted_s = r.restarts * 10.25;
    r.wasted_gpu_s = u(rng) / 3;
    if (network && i % 3 != 0) {
      r.comm_s = i % 6 == 1 ? 0.0 : u(rng) / 7;
      r.comm_bytes = 1e9 * (1 + i % 4);
    }
    t.finished.push_back(r);
  }
  std::shuffle(t.finished.begin(), t.finished.end(), rng);
  return t;
}

/// The table before streaming: every finished job kept, stable-sorted by index, written at the end.
std::string reference_csv(std::vector<JobRecord> rows) {
  std::stable_sort(rows.begin(), rows.end(),
                   [](const JobRecord& a, const JobRecord& b) { return a.index < b.index; });
  const bool network =
      std::any_of(rows.begin(), rows.end(), [](const JobRecord& r) { return r.comm_s >= 0; });
  std::ostringstream out;
  out << "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s"
      << (network ? ",comm_s,comm_gb_per_s\n" : "\n");
  for (const auto& r : rows) {
    std::string id = r.spec->id;
    if (id.find_first_of(",\"\n") != std::string::npos) {
      std::string q = "\"";
      for (char c : id) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      id = q + "\"";
    }
    out << id << ',' << fmt(r.submit_s) << ',' << fmt(r.start_s) << ',' << fmt(r.end_s) << ','
        << fmt(r.start_s - r.submit_s) << ',' << fmt(r.end_s - r.submit_s) << ',' << fmt(r.gpus, 3) << ','
        << r.gpu_type << ',' << r.nodes << ',' << r.restarts << ',' << fmt(r.preempted_s);
    if (network) {
      const double comm = std::max(0.0, r.comm_s);
      out << ',' << fmt(comm) << ',' << fmt(comm > 0 ? r.comm_bytes / comm / 1e9 : 0.0, 3);
    }
    out << '\n';
  }
  return out.str();
}

struct Streamed {
  std::string csv;
  JobStats stats;
  std::size_t runs = 0;
  long comm_rows = 0;
  nlohmann::ordered_json by_nodes;  ///< summary.json network.comm_s_by_nodes
};

Streamed stream(const Trace& t, std::size_t buffer_rows) {
  const auto scratch = std::filesystem::temp_directory_path() /
                       ("fleetsim-job-table-" + std::to_string(buffer_rows) + ".runs");
  std::ostringstream out;
  JobTable table(out, scratch.string(), buffer_rows);
  table.on_start(8, static_cast<long>(t.specs.size()));
  for (const auto& r : t.finished) table.on_job_finished(r);
  Streamed s;
  s.runs = table.runs();
  table.on_end(0);
  CHECK_FALSE(std::filesystem::exists(scratch));
  s.csv = out.str();
  s.stats = table.stats();
  s.comm_rows = static_cast<long>(table.comm_rows().size());
  s.by_nodes = comm_by_nodes(table.comm_rows());
  return s;
}

}  // namespace

TEST_CASE("jobs.csv streamed through spilled runs equals the kept-and-sorted table") {
  for (const bool network : {false, true}) {
    const Trace t = make_trace(500, network, network ? 7u : 3u);
    const std::string want = reference_csv(t.finished);
    for (const std::size_t buffer :
         {std::size_t{1}, std::size_t{3}, std::size_t{64}, JobTable::kBufferRows}) {
      CAPTURE(network);
      CAPTURE(buffer);
      const Streamed s = stream(t, buffer);
      CHECK(s.csv == want);
      if (buffer < t.finished.size()) CHECK(s.runs > 0);
      if (buffer == JobTable::kBufferRows) CHECK(s.runs == 0);
      CHECK(s.comm_rows == std::count_if(t.finished.begin(), t.finished.end(),
                                         [](const JobRecord& r) { return r.comm_s >= 0; }));
      // each job's nodes survive the spill: communication by ring width, summed in trace order
      std::vector<JobRecord> rows = t.finished;
      std::stable_sort(rows.begin(), rows.end(),
                       [](const JobRecord& a, const JobRecord& b) { return a.index < b.index; });
      double by[3] = {0, 0, 0};  // nodes 1, 2, 3 (make_trace's)
      for (const auto& r : rows)
        if (r.comm_s >= 0) by[r.nodes - 1] += r.comm_s;
      CHECK(s.by_nodes["1"].get<double>() == by[0]);
      CHECK(s.by_nodes["2"].get<double>() == by[1]);
      CHECK(s.by_nodes["3-4"].get<double>() == by[2]);
      CHECK(s.by_nodes["65+"].get<double>() == 0);
    }
  }
}

TEST_CASE("JobTable stats: sums in trace order and exact percentiles, whatever the buffer") {
  const Trace t = make_trace(300, false, 11u);
  std::vector<JobRecord> rows = t.finished;
  std::sort(rows.begin(), rows.end(),
            [](const JobRecord& a, const JobRecord& b) { return a.index < b.index; });
  double jct_sum = 0, wait_sum = 0, wasted = 0, first = rows.front().submit_s, last = 0;
  long restarts = 0;
  std::vector<double> jct, wait;
  for (const auto& r : rows) {
    jct.push_back(r.end_s - r.submit_s);
    wait.push_back(r.start_s - r.submit_s);
    jct_sum += jct.back();
    wait_sum += wait.back();
    wasted += r.wasted_gpu_s;
    restarts += r.restarts;
    first = std::min(first, r.submit_s);
    last = std::max(last, r.end_s);
  }
  const Streamed small = stream(t, 5), big = stream(t, JobTable::kBufferRows);
  for (const JobStats* s : {&small.stats, &big.stats}) {
    CHECK(s->jct.size() == rows.size());
    // Bit-identical: the same additions in the same (trace) order.
    CHECK(s->jct_sum == jct_sum);
    CHECK(s->wait_sum == wait_sum);
    CHECK(s->wasted_gpu_s == wasted);
    CHECK(s->restarts == restarts);
    CHECK(s->first_submit == first);
    CHECK(s->last_end == last);
    for (const double p : {0.0, 50.0, 99.0, 100.0}) {
      CHECK(percentile_sorted(s->jct, p) == percentile(jct, p));
      CHECK(percentile_sorted(s->wait, p) == percentile(wait, p));
    }
  }
}

TEST_CASE("JobTable: no finished job writes the header only") {
  std::ostringstream out;
  JobTable table(out, (std::filesystem::temp_directory_path() / "fleetsim-job-table-empty.runs").string());
  table.on_start(8, 0);
  table.on_end(0);
  CHECK(out.str() == "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s\n");
  CHECK(table.stats().jct.empty());
}

TEST_CASE("timeseries.csv streamed: the last changed sample of each instant, written as the run goes") {
  std::ostringstream out;
  TimeSeries ts(&out);
  ts.on_start(4, 3);
  auto sample = [&](double t, double busy, long running, long queued, long completed) {
    ts.on_sample({t, busy, running, queued, completed});
  };
  sample(0, 0, 0, 0, 0);
  sample(1, 1, 1, 1, 0);
  sample(1, 2, 2, 0, 0);  // replaces the first sample at t = 1
  sample(2, 2, 2, 0, 0);  // unchanged: not written
  sample(3, 0, 0, 0, 2);
  const std::string before_end = out.str();
  CHECK(before_end.find("3,") == std::string::npos);  // the newest sample is held until the next instant
  ts.on_end(3);
  CHECK(out.str() ==
        "time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n0,0,0,0,0\n1,2,2,0,0\n3,0,0,0,2\n");
  CHECK(ts.busy_gpu_seconds() == doctest::Approx(0 * 1 + 2 * 1 + 2 * 1));
}

TEST_CASE("communication by ring width: each job in its bucket, every bucket written") {
  // distinct powers of two: each bucket's sum says exactly which jobs landed in it
  const std::vector<std::pair<int, double>> jobs = {
      {1, 1},    {2, 2},    {3, 4},    {4, 8},     {5, 16},    {8, 32},    {9, 64},
      {16, 128}, {17, 256}, {32, 512}, {33, 1024}, {64, 2048}, {65, 4096}, {100000, 8192}};
  std::vector<CommRow> rows;
  for (const auto& [nodes, comm] : jobs) rows.push_back({comm, 10.0, nodes});
  const auto j = comm_by_nodes(rows);
  const std::vector<std::pair<std::string, double>> want = {{"1", 1},
                                                            {"2", 2},
                                                            {"3-4", 4 + 8},
                                                            {"5-8", 16 + 32},
                                                            {"9-16", 64 + 128},
                                                            {"17-32", 256 + 512},
                                                            {"33-64", 1024 + 2048},
                                                            {"65+", 4096 + 8192}};
  REQUIRE(j.size() == want.size());
  std::size_t k = 0;
  for (const auto& [key, value] : j.items()) {  // in order of width
    CHECK(key == want[k].first);
    CHECK(value.get<double>() == want[k].second);
    ++k;
  }
  CHECK(comm_by_nodes({}).size() == want.size());  // no job: every bucket, at 0
}
