// fleetsim replay's kernel_classes.csv (report.cpp), declared for `fleetsim docs`; test_output_columns
// checks it against a real replay.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kKernelClasses{{
    .file = "kernel_classes.csv",
    .command = "fleetsim replay",
    .rows = "one row per kernel class (gemm, attention, elementwise, communication, memcpy, other), over "
            "every rank",
    .columns = {{"class", "", "kernel class"},
                {"kernels", "", "GPU operations of the class"},
                {"measured_s", "s", "their traced time, summed"},
                {"predicted_s", "s", "their replayed time, summed"},
                {"measured_share", "", "share of all traced GPU time"},
                {"speedup", "", "measured_s / predicted_s"}},
}};

}  // namespace
}  // namespace fleetsim
