// failures.csv and failure_jobs.csv (failure_report.cpp), declared for `fleetsim docs`;
// test_output_columns checks them against real outputs.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kFailures{{
    .file = "failures.csv",
    .command = "fleetsim run",
    .when = "with [failures]",
    .rows = "one row per failure, repair and maintenance window",
    .columns = {{"time_s", "s", "when it happened"},
                {"event", "", "failure, repair, maintenance or maintenance_end"},
                {"node", "", "the node (the first of several)"},
                {"nodes", "", "nodes taken down"},
                {"component", "", "failure cause (gpu, nic, switch, ...; planned for maintenance)"},
                {"jobs_hit", "", "jobs interrupted"},
                {"gpu_hours_lost", "GPU-h", "work lost by the interrupted jobs"},
                {"repaired_s", "s", "when the nodes are back"},
                {"replicas_hit", "", "serving replicas taken down"},
                {"requests_rerouted", "", "their requests sent to other replicas"}},
}};

const OutputDocRegistrar kFailureJobs{{
    .file = "failure_jobs.csv",
    .command = "fleetsim run",
    .when = "with [failures]",
    .rows = "one row per job",
    .columns = {{"job_id", "", "the trace's job id"},
                {"gpus", "GPUs", "GPUs held"},
                {"interruptions", "", "failures and maintenance windows that interrupted it"},
                {"checkpoint_interval_s", "s", "compute time between checkpoints (0: none)"},
                {"redone_gpu_h", "GPU-h", "work done again after falling back to a checkpoint"},
                {"restart_gpu_h", "GPU-h", "detection, restart and restore time"},
                {"checkpoint_gpu_h", "GPU-h", "time writing checkpoints"},
                {"ettr", "",
                 "effective training time ratio: its run time without failures / its time from start to end "
                 "(at most 1; -1 if unfinished)"}},
}};

}  // namespace
}  // namespace fleetsim
