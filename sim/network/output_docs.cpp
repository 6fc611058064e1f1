// links.csv and link_tiers.csv (network_report.cpp), declared for `fleetsim docs`; test_output_columns
// checks them against real outputs.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kLinks{{
    .file = "links.csv",
    .command = "fleetsim run",
    .when = "with execution.fidelity = network or fabric",
    .rows = "one row per link that carried all-reduce traffic and every fabric link (NIC, leaf uplink, "
            "spine, core), hottest (p99, then mean) first",
    .columns = {{"link", "", "link name in the SimGrid platform"},
                {"tier", "", "nic, leaf-uplink, spine, core, gpu"},
                {"capacity_gbps", "Gbit/s", "capacity"},
                {"mean_util", "", "load / capacity over the whole run"},
                {"p99_util", "", "99th percentile of load / capacity over time"},
                {"gb", "GB", "bytes carried"}},
}};

const OutputDocRegistrar kLinkTiers{{
    .file = "link_tiers.csv",
    .command = "fleetsim run",
    .when = "with execution.fidelity = network or fabric",
    .rows = "one row per tier and time bucket (200 equal buckets over the run)",
    .columns = {{"time_s", "s", "start of the bucket"},
                {"tier", "", "link tier"},
                {"util", "", "the tier's load / the tier's capacity in the bucket"}},
}};

}  // namespace
}  // namespace fleetsim
