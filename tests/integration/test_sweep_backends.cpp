// fleetsim sweep's other backends, end to end through the real binary: --mpi under mpirun (runs.csv
// byte-identical to the local backend's, failures recorded, one rank alone), --slurm-array with
// --run-one and --collect, and --mpi in a build without MPI.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "sim/experiments/sweep_mpi.hpp"
#include "tests/test_util.hpp"
#include "tests/text_checks.hpp"
#include "tests/tiny_queue_case.hpp"

using fleetsim::test::contains;
using fleetsim::test::read_file;
using fleetsim::test::run_fleetsim;
using fleetsim::test::temp_dir;
using fleetsim::test::write_file;
namespace fs = std::filesystem;

namespace {

constexpr const char* kPolicySweep = R"(base = "s.toml"
seeds = 3
[grid]
"scheduler.policy" = ["fifo", "fifo-skip"]
"scheduler.placement" = ["first-fit", "consolidate"]
)";

fs::path make_case(const std::string& sweep) {
  return fleetsim::test::make_tiny_sweep_case("sweep-backends", sweep);
}

std::string sweep(const fs::path& dir, const std::string& out, const std::string& args) {
  return "sweep " + (dir / "sweep.toml").string() + " --out " + (dir / out).string() + " " + args;
}

/// `mpirun -n ranks [mpirun_args] fleetsim <args>`, output captured.
fleetsim::test::CmdResult run_mpi(int ranks, const std::string& args, const std::string& mpirun_args = "") {
  const auto tmp = temp_dir("mpi");
  const std::string cmd = "mpirun -n " + std::to_string(ranks) + " --oversubscribe --allow-run-as-root " +
                          mpirun_args + " " + std::string(FLEETSIM_BINARY) + " " + args + " >" +
                          (tmp / "out.txt").string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  fleetsim::test::CmdResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.output = read_file(tmp / "out.txt");
  fs::remove_all(tmp);
  return r;
}

void require_mpi() {
  if (!fleetsim::mpi_built()) {
    std::printf("SKIPPED: this build has no MPI (install libopenmpi-dev and rebuild)\n");
    std::fflush(stdout);
    std::_Exit(fleetsim::test::kSkipCode);
  }
  fleetsim::test::require_program("mpirun", "OpenMPI: apt-get install openmpi-bin");
}

}  // namespace

TEST_CASE("sweep --mpi: runs.csv under mpirun -n 3 is the local backend's byte for byte, and resumes") {
  require_mpi();
  const auto dir = make_case(kPolicySweep);
  REQUIRE(run_fleetsim(sweep(dir, "local", "--jobs 2 -q")).code == 0);
  const auto r = run_mpi(3, sweep(dir, "mpi", "--mpi"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK_MESSAGE(contains(r.output, "12 to run, 0 done before; 2 at a time"), r.output);
  CHECK(contains(r.output, "[12/12]"));
  for (const char* f : {"runs.csv", "aggregate.csv", "paired.csv"})
    CHECK_MESSAGE(read_file(dir / "mpi" / f) == read_file(dir / "local" / f), f);
  const auto again = run_mpi(3, sweep(dir, "mpi", "--mpi"));
  REQUIRE(again.code == 0);
  CHECK_MESSAGE(contains(again.output, "0 to run, 12 done before"), again.output);
  CHECK(read_file(dir / "mpi" / "runs.csv") == read_file(dir / "local" / "runs.csv"));
  fs::remove_all(dir);
}

TEST_CASE(
    "sweep --mpi: a worker rank killed at run 10 of 30: its run goes to a live rank, results complete") {
  require_mpi();
  const auto dir =
      make_case("base = \"s.toml\"\nseeds = 15\n[grid]\n\"scheduler.policy\" = [\"fifo\", \"fifo-skip\"]\n");
  REQUIRE(run_fleetsim(sweep(dir, "local", "--jobs 2 -q")).code == 0);
  // The hook makes the rank dealt pending run 10 SIGKILL itself while that run's process runs.
  const std::string kill = "-x FLEETSIM_TEST_KILL_WORKER_AT_RUN=10";
  const auto r = run_mpi(3, sweep(dir, "mpi", "--mpi --worker-timeout 2"), "--enable-recovery " + kill);
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK_MESSAGE(contains(r.output, "silent for 2 s (dead?): run "), r.output);
  CHECK(contains(r.output, "goes to another rank"));
  CHECK(contains(r.output, "[30/30]"));
  CHECK(contains(r.output, "30 runs (30 run now, 0 reused), 0 failed"));
  for (const char* f : {"runs.csv", "aggregate.csv", "paired.csv"})
    CHECK_MESSAGE(read_file(dir / "mpi" / f) == read_file(dir / "local" / f), f);
  // Without --enable-recovery Open MPI ends the whole job when the rank dies; a rerun resumes.
  const auto aborted = run_mpi(3, sweep(dir, "plain", "--mpi"), kill);
  CHECK_MESSAGE(aborted.code != 0, aborted.output);
  CHECK(contains(aborted.output, "--enable-recovery"));
  CHECK_FALSE(fs::exists(dir / "plain" / "runs.csv"));
  const auto resumed = run_mpi(3, sweep(dir, "plain", "--mpi"));
  REQUIRE_MESSAGE(resumed.code == 0, resumed.output);
  CHECK_MESSAGE(contains(resumed.output, "done before"), resumed.output);
  CHECK_FALSE(contains(resumed.output, "30 to run, 0 done before"));  // the runs completed before were kept
  for (const char* f : {"runs.csv", "aggregate.csv", "paired.csv"})
    CHECK_MESSAGE(read_file(dir / "plain" / f) == read_file(dir / "local" / f), f);
  fs::remove_all(dir);
}

TEST_CASE("sweep --mpi: a failing run is recorded with its error and the other runs complete") {
  require_mpi();
  const auto dir = make_case("");
  write_file(dir / "sweep.toml", "base = \"s.toml\"\nseeds = 2\n[grid]\n\"workload.path\" = [\"" +
                                     (dir / "trace.csv").string() + "\", \"" +
                                     (dir / "missing.csv").string() + "\"]\n");
  const auto r = run_mpi(3, sweep(dir, "out", "--mpi"));
  CHECK_MESSAGE(r.code == 1, r.output);
  CHECK(contains(r.output, "2 of 4 runs failed"));
  const std::string csv = read_file(dir / "out" / "runs.csv");
  CHECK(contains(csv, "c000-s1,c000,"));
  CHECK(contains(csv, "c000-s2,c000,"));
  CHECK(contains(csv, ",ok,,"));
  CHECK(contains(csv, ",failed,"));
  CHECK(contains(csv, "missing.csv"));
  fs::remove_all(dir);
}

TEST_CASE("sweep --mpi: bad input is exit 2 on every rank and nothing runs") {
  require_mpi();
  const auto dir = make_case("base = \"s.toml\"\nseeds = 1\n[grid]\n\"scheduler.polcy\" = [\"fifo\"]\n");
  const auto r = run_mpi(3, sweep(dir, "out", "--mpi"));
  CHECK_MESSAGE(r.code == 2, r.output);
  CHECK(contains(r.output, "scheduler.polcy"));
  CHECK(!fs::exists(dir / "out" / "runs.csv"));
  fs::remove_all(dir);
}

TEST_CASE("sweep --mpi: with one rank, rank 0 runs everything itself") {
  require_mpi();
  const auto dir = make_case(kPolicySweep);
  REQUIRE(run_fleetsim(sweep(dir, "local", "--jobs 2 -q")).code == 0);
  const auto r = run_mpi(1, sweep(dir, "mpi", "--mpi --jobs 2"));
  REQUIRE_MESSAGE(r.code == 0, r.output);
  CHECK_MESSAGE(contains(r.output, "12 to run, 0 done before; 2 at a time"), r.output);
  CHECK(read_file(dir / "mpi" / "runs.csv") == read_file(dir / "local" / "runs.csv"));
  fs::remove_all(dir);
}

TEST_CASE(
    "sweep --slurm-array: the script names every pending run, --run-one runs one, --collect builds "
    "runs.csv") {
  const auto dir = make_case(kPolicySweep);
  REQUIRE(run_fleetsim(sweep(dir, "local", "--jobs 2 -q")).code == 0);
  const auto s = run_fleetsim(sweep(dir, "out", "--slurm-array"));
  REQUIRE_MESSAGE(s.code == 0, s.output);
  CHECK(contains(s.output, "#SBATCH --array=0-11\n"));
  CHECK(contains(s.output, "--run-one \"$SLURM_ARRAY_TASK_ID\""));
  CHECK(contains(s.output, "--collect"));
  for (const char* id : {"c000-s1", "c000-s2", "c000-s3", "c001-s1", "c001-s2", "c001-s3", "c002-s1",
                         "c002-s2", "c002-s3", "c003-s1", "c003-s2", "c003-s3"}) {
    CHECK_MESSAGE(contains(s.output, std::string(" ") + id + "\n"), id);
    CHECK(fs::exists(dir / "out" / "runs" / id / "scenario.toml"));
  }
  CHECK(contains(s.output, read_file(dir / "out" / "slurm" / "sweep.sbatch")));  // printed and written
  for (int i = 0; i < 12; ++i) {
    const auto one = run_fleetsim(sweep(dir, "out", "--run-one " + std::to_string(i)));
    REQUIRE_MESSAGE(one.code == 0, one.output);
  }
  const auto bad = run_fleetsim(sweep(dir, "out", "--run-one 12"));
  CHECK(bad.code == 2);
  CHECK_MESSAGE(contains(bad.output, "runs.txt: field '--run-one': no run 12"), bad.output);
  const auto c = run_fleetsim(sweep(dir, "out", "--collect"));
  REQUIRE_MESSAGE(c.code == 0, c.output);
  CHECK(contains(c.output, "12 runs (0 run now, 12 reused), 0 failed"));
  CHECK(read_file(dir / "out" / "runs.csv") == read_file(dir / "local" / "runs.csv"));
  CHECK(read_file(dir / "out" / "aggregate.csv") == read_file(dir / "local" / "aggregate.csv"));
  // Everything is complete now: the script has nothing to run.
  const auto done = run_fleetsim(sweep(dir, "out", "--slurm-array"));
  CHECK(done.code == 0);
  CHECK(!contains(done.output, "#SBATCH --array"));
  CHECK(contains(done.output, "nothing to run"));
  fs::remove_all(dir);
}

TEST_CASE("sweep --mpi without MPI support is exit 2 saying how to get it") {
  const std::string msg = fleetsim::mpi_missing_error().what();
  CHECK(contains(msg, "field '--mpi'"));
  CHECK(contains(msg, "libopenmpi-dev"));
  CHECK(contains(msg, "rebuild"));
  if (fleetsim::mpi_built()) return;  // this build has MPI: the message path is all there is to test
  const auto dir = make_case(kPolicySweep);
  const auto r = run_fleetsim(sweep(dir, "out", "--mpi"));
  CHECK(r.code == 2);
  CHECK(contains(r.output, "libopenmpi-dev"));
  fs::remove_all(dir);
}

TEST_CASE("sweep: --mpi, --slurm-array, --run-one and --collect exclude each other, and --run-one is >= 0") {
  const auto dir = make_case(kPolicySweep);
  CHECK(run_fleetsim(sweep(dir, "out", "--mpi --collect")).code == 2);
  CHECK(run_fleetsim(sweep(dir, "out", "--slurm-array --run-one 0")).code == 2);
  const auto neg = run_fleetsim(sweep(dir, "out", "--run-one -1"));
  CHECK(neg.code == 2);
  CHECK_MESSAGE(contains(neg.output, "field '--run-one': must be >= 0"), neg.output);
  fs::remove_all(dir);
}
