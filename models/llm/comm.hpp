#pragma once
// The one place an LLM iteration prices a collective: tensor-parallel all-reduces (or all-gather +
// reduce-scatter) of a micro-batch's activations, data-parallel gradient reductions, pipeline sends,
// expert all-to-alls. A group of `ranks` ranks `stride` apart (Megatron's order: TP innermost, then
// DP, then PP; ranks fill servers of gpus_per_node in order) spans ceil(ranks x stride /
// gpus_per_node) servers (at most ranks) when ranks x stride exceeds a server, else one; the
// collective model times it on the platform's fabric at the size sent (nccl-tests "size": the whole
// buffer for all-reduce, all-gather and reduce-scatter, one message for send/recv).
#include "models/collective/collective_model.hpp"
#include "models/llm/platform.hpp"

namespace fleetsim::llm {

/// Servers spanned by a group of `ranks` ranks `stride` apart.
int group_span(int ranks, int stride, int gpus_per_node);

/// One collective's time, s (0 for one rank or no bytes).
double collective_seconds(const CollectiveModel& model, const LlmPlatform& p, Collective op, double bytes,
                          int ranks, int stride);

}  // namespace fleetsim::llm
