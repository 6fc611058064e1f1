// requests.csv and serving_timeseries.csv (service.cpp) and fleetsim size's sizing.csv, declared for
// `fleetsim docs`; test_output_columns checks them against real outputs.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kRequests{{
    .file = "requests.csv",
    .command = "fleetsim run",
    .when = "with [[service]]",
    .rows = "one row per request of every service (times empty for a request that never finished)",
    .columns = {{"service", "", "service name"},
                {"request_id", "", "the trace's request id"},
                {"arrival_s", "s", "arrival on the cluster clock"},
                {"first_token_s", "s", "first output token"},
                {"end_s", "s", "last output token"},
                {"input_tokens", "tokens", "prompt length"},
                {"output_tokens", "tokens", "output length"},
                {"ttft_s", "s", "time to first token: first_token_s - arrival_s"},
                {"tpot_s", "s",
                 "time per output token after the first: (end_s - first_token_s) / (output_tokens - 1)"},
                {"e2e_s", "s", "end_s - arrival_s"},
                {"replica", "", "replica (engine core) that finished it"},
                {"preemptions", "", "times it was preempted and recomputed"},
                {"cached_tokens", "tokens", "prompt tokens served from the prefix cache"},
                {"decode_replica", "", "decode replica (empty unless disaggregated)"},
                {"kv_transfer_s", "s",
                 "prefill-to-decode KV transfer time (empty unless disaggregated; measured on the cluster's "
                 "network when the service's KV transfers run there, `kv_transfers`)"}},
}};

const OutputDocRegistrar kServingSeries{{
    .file = "serving_timeseries.csv",
    .command = "fleetsim run",
    .when = "with [[service]]",
    .rows = "one row per replica and second (its first step of that second)",
    .columns = {{"service", "", "service name"},
                {"t_s", "s", "time"},
                {"replica", "", "replica (engine core)"},
                {"running", "", "requests running"},
                {"waiting", "", "requests waiting"},
                {"kv_used", "", "share of KV blocks in use, [0, 1]"}},
}};

const OutputDocRegistrar kSizing{{
    .file = "sizing.csv",
    .command = "fleetsim size",
    .rows = "one row per GPU type, layout, load and replica count tried",
    .columns = {{"gpu", "", "GPU type (catalog name)"},
                {"layout", "", "replica layout: tp<N> or mig:<profile>"},
                {"load", "", "load multiple of the request trace"},
                {"replicas", "", "replicas tried"},
                {"gpus", "GPUs", "GPUs they hold (a MIG instance counts its compute share)"},
                {"slo_attainment", "", "share of requests meeting both SLOs"},
                {"ttft_p99_s", "s", "99th percentile time to first token"},
                {"tpot_p99_s", "s", "99th percentile time per output token"}},
}};

}  // namespace
}  // namespace fleetsim
