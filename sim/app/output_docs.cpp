// The experiments' files (fleetsim compare, sweep, inflate), declared beside their writers
// (sweep_results.cpp, inflation.cpp, cmd_compare.cpp) for `fleetsim docs`; test_output_columns checks
// them against real outputs.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kComparison{{
    .file = "comparison.csv",
    .command = "fleetsim compare",
    .rows = "one row per policy x placement",
    .columns = {{"policy", "", "scheduling policy"},
                {"placement", "", "placement policy"},
                {"<every scalar key of summary.json>", "",
                 "in summary.json's order (nested blocks left out)"},
                {"run_dir", "", "the run's folder, relative to the output folder"}},
}};

const OutputDocRegistrar kRuns{{
    .file = "runs.csv",
    .command = "fleetsim sweep",
    .rows = "one row per run (combination x seed), sorted by id; no wall times, so byte-identical whatever "
            "--jobs",
    .columns = {{"run", "", "run id, c<combination>-s<seed>"},
                {"combination", "", "combination id"},
                {"case", "", "the [[case]]'s name", "when the sweep has [[case]] tables"},
                {"<each swept key>", "", "its value in this combination"},
                {"seed", "", "the run's seed"},
                {"status", "", "ok or failed"},
                {"error", "", "the failed run's error message"},
                {"scenario_hash", "",
                 "hash of the resolved scenario (a rerun skips runs whose hash matches)"},
                {"<each metric>", "", "the run's summary.json value (nested blocks as block.key)"}},
}};

const OutputDocRegistrar kAggregate{{
    .file = "aggregate.csv",
    .command = "fleetsim sweep",
    .rows = "one row per combination and metric, over the seeds that completed",
    .columns = {{"combination", "", "combination id"},
                {"case", "", "the [[case]]'s name", "when the sweep has [[case]] tables"},
                {"<each swept key>", "", "its value in this combination"},
                {"metric", "", "summary.json key"},
                {"n", "", "seeds that completed"},
                {"mean", "", "mean over seeds"},
                {"std", "", "sample standard deviation"},
                {"ci95", "",
                 "half-width of the 95% interval of the mean (Student t, n - 1 degrees of freedom)"},
                {"min", "", "smallest value"},
                {"max", "", "largest value"}},
}};

const OutputDocRegistrar kPaired{{
    .file = "paired.csv",
    .command = "fleetsim sweep",
    .rows =
        "one row per setting of a grid key (or case) against the baseline setting, everything else equal, "
        "and metric, on the seeds both completed",
    .columns = {{"key", "", "the grid key (or case)"},
                {"setting", "", "its value compared"},
                {"baseline", "", "the baseline value"},
                {"context", "", "the other keys' values"},
                {"metric", "", "summary.json key"},
                {"n", "", "paired seeds"},
                {"mean_diff", "", "mean of setting - baseline over the seeds"},
                {"ci95_diff", "", "half-width of its 95% interval"},
                {"mean_rel_pct", "%",
                 "mean of the per-seed relative differences (empty when a baseline value is 0)"},
                {"ci95_rel_pct", "%", "half-width of its 95% interval"}},
}};

const OutputDocRegistrar kInflation{{
    .file = "inflation.csv",
    .command = "fleetsim inflate",
    .rows = "one row per placement, seed and recorded load step",
    .columns = {{"placement", "", "placement policy"},
                {"seed", "", "draw of the arriving pods"},
                {"arrived_pct", "%", "requested GPUs arrived so far / cluster GPUs"},
                {"allocated_pct", "%", "GPUs allocated / cluster GPUs"},
                {"failed_pods", "", "pods that fitted nowhere so far"}},
}};

const OutputDocRegistrar kInflationSummary{{
    .file = "inflation_summary.csv",
    .command = "fleetsim inflate",
    .rows = "one row per placement, over its seeds",
    .columns = {{"placement", "", "placement policy"},
                {"seeds", "", "seeds run"},
                {"allocated_pct_at_100_mean", "%",
                 "GPUs allocated when 100% of the cluster's GPUs had arrived: mean"},
                {"allocated_pct_at_100_min", "%", "the same: smallest"},
                {"allocated_pct_at_100_max", "%", "the same: largest"},
                {"failed_pods_mean", "", "pods that fitted nowhere, mean"},
                {"final_arrived_pct_mean", "%", "arrived load at the end, mean"},
                {"final_allocated_pct_mean", "%", "allocated share at the end, mean"},
                {"frag_gpus_end_mean", "GPUs", "cluster fragmentation at the end, mean"},
                {"frag_pct_of_free_end_mean", "%", "the same, percent of the free GPU capacity"},
                {"wall_s_mean", "s", "wall time per seed, mean"}},
}};

}  // namespace
}  // namespace fleetsim
