// fleetsim report: finds scripts/report.py from the build folder, writes one self-contained HTML page,
// and on bad input (a missing folder, a file, a folder that is no run/compare/sweep output) exits 2
// naming the folder, with no output file. scripts/report.py --self-test (ctest report_self_test)
// checks the page's sections in detail.
#include <doctest/doctest.h>

#include "tests/test_util.hpp"

using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;

namespace fs = std::filesystem;

TEST_CASE("report: bad input exits 2 naming the folder, and writes no page") {
  const fs::path dir = temp_dir("report-bad");
  const std::string out = (dir / "r.html").string();
  fs::create_directories(dir / "empty");
  write_file(dir / "file.txt", "x");
  for (const fs::path& bad : {dir / "missing", dir / "file.txt", dir / "empty"}) {
    CAPTURE(bad);
    const auto r = run_fleetsim("report " + bad.string() + " --out " + out);
    CHECK(r.code == 2);
    CHECK(r.output.find(bad.string()) != std::string::npos);
    CHECK(!fs::exists(out));
  }
  CHECK(run_fleetsim("report --out " + out).code == 2);     // no folder
  CHECK(run_fleetsim("report " + dir.string()).code == 2);  // no --out
  fs::remove_all(dir);
}

TEST_CASE("report: a run folder gives one self-contained HTML page") {
  const fs::path dir = temp_dir("report-run");
  fs::create_directories(dir / "run");
  write_file(
      dir / "run" / "summary.json",
      R"({"policy": "fifo", "placement": "first-fit", "mean_jct_s": 150, "mean_wait_s": 50, "total_gpus": 4})");
  write_file(dir / "run" / "jobs.csv",
             "job_id,submit_s,start_s,end_s,wait_s,jct_s,gpus,gpu_type,nodes,restarts,preempted_s\n"
             "a,0,0,100,0,100,1,V100,1,0,0\nb,0,100,200,100,200,1,V100,1,0,0\n");
  write_file(
      dir / "run" / "timeseries.csv",
      "time_s,busy_gpus,running_jobs,queued_jobs,completed_jobs\n0,1,1,1,0\n100,1,1,0,1\n200,0,0,0,2\n");
  const fs::path out = dir / "r.html";
  const auto r = run_fleetsim("report " + (dir / "run").string() + " --out " + out.string());
  INFO(r.output);
  REQUIRE(r.code == 0);
  const std::string html = read_file(out);
  CHECK(html.find("data:image/png;base64,") != std::string::npos);
  CHECK(html.find("data-section=\"headline\"") != std::string::npos);
  CHECK(html.find("http://") == std::string::npos);
  CHECK(html.find("https://") == std::string::npos);
  fs::remove_all(dir);
}
