// The files every run writes (jobs.csv, timeseries.csv, skipped.csv), declared beside their writers
// (recorders.cpp) for `fleetsim docs`; test_output_columns checks them against real outputs.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kJobs{{
    .file = "jobs.csv",
    .command = "fleetsim run",
    .rows = "one row per completed job, in trace order",
    .columns = {{"job_id", "", "the trace's job id"},
                {"submit_s", "s", "arrival"},
                {"start_s", "s", "first start"},
                {"end_s", "s", "completion"},
                {"wait_s", "s", "start_s - submit_s: time to the first start"},
                {"jct_s", "s", "end_s - submit_s: job completion time, time preempted included"},
                {"gpus", "GPUs", "GPUs held (fractional for shared GPUs: GPUs x gpu_milli / 1000)"},
                {"gpu_type", "", "GPU type it ran on (catalog name)"},
                {"nodes", "", "nodes it ran on"},
                {"restarts", "", "restarts after preemption or interruption"},
                {"preempted_s", "s", "time spent preempted"},
                {"comm_s", "s", "time in all-reduce on the fabric", "with the network and fabric fidelities"},
                {"comm_gb_per_s", "GB/s", "bytes per ring flow / comm_s: the bandwidth the job got",
                 "with the network and fabric fidelities"}},
}};

const OutputDocRegistrar kTimeseries{{
    .file = "timeseries.csv",
    .command = "fleetsim run",
    .when = "unless output.timeseries = false",
    .rows = "one row per event instant at which something changed",
    .columns = {{"time_s", "s", "simulated time"},
                {"busy_gpus", "GPUs", "allocated GPU capacity (shares summed)"},
                {"running_jobs", "", "jobs running"},
                {"queued_jobs", "", "jobs waiting (arrived, not running)"},
                {"completed_jobs", "", "jobs completed so far"}},
}};

const OutputDocRegistrar kSkipped{{
    .file = "skipped.csv",
    .command = "fleetsim run",
    .rows = "one row per well-formed job that can never run on this cluster (counted, not an error)",
    .columns = {{"job_id", "", "the trace's job id"},
                {"line", "", "its line in the trace file"},
                {"reason", "",
                 "why it cannot run: too many GPUs, no GPU of an allowed type, no throughput, ..."}},
}};

}  // namespace
}  // namespace fleetsim
