// fleetsim llm plan's plan.csv (written by sim/cli/cmd_llm_plan.cpp from plan.hpp's ranking), declared
// for `fleetsim docs`; test_output_columns checks it against a real plan.
#include "workloads/base/output_docs.hpp"

namespace fleetsim {
namespace {

const OutputDocRegistrar kPlan{{
    .file = "plan.csv",
    .command = "fleetsim llm plan",
    .rows = "one row per layout that fits in memory, best first (time to train, then GPU-hours)",
    .columns = {{"rank", "", "1 = best"},
                {"gpus", "GPUs", "GPUs used"},
                {"tp", "", "tensor-parallel degree"},
                {"pp", "", "pipeline-parallel degree"},
                {"dp", "", "data-parallel degree"},
                {"ep", "", "expert-parallel degree"},
                {"micro_batch", "", "micro-batch size"},
                {"recompute", "", "activation recomputation: none, selective, full"},
                {"zero", "", "ZeRO stage"},
                {"schedule", "", "pipeline schedule"},
                {"iteration_s", "s", "predicted iteration time"},
                {"train_days", "days", "steps x iteration"},
                {"gpu_hours", "GPU-h", "train time x GPUs"},
                {"cost_usd", "USD", "GPU-hours x --usd-per-gpu-hour"},
                {"memory_gib", "GiB", "memory per GPU of the fullest stage"},
                {"tokens_per_s", "tokens/s", "training throughput"},
                {"dominant", "", "largest part of the iteration (compute, tp comm, bubble, ...)"}},
}};

}  // namespace
}  // namespace fleetsim
