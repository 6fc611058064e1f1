#pragma once
// The one place an LLM iteration prices a collective: tensor-parallel all-reduces (or all-gather +
// reduce-scatter) of a micro-batch's activations, data-parallel gradient reductions, pipeline sends,
// expert all-to-alls. A group of `ranks` ranks `stride` apart (Megatron's order: TP innermost, then
// DP, then PP; ranks fill servers of gpus_per_node in order) spans the servers its ranks from rank 0
// fall in, floor((ranks - 1) x stride / gpus_per_node) + 1 (at most ranks: the tied-embedding pair
// of the first and last stage of 8 GPUs, 6 apart, is one server); the
// collective model times it on the platform's fabric at the size sent (nccl-tests "size": the whole
// buffer for all-reduce, all-gather and reduce-scatter, one message for send/recv), on the link the
// fabric names (NVSwitch inside a DGX server; its NICs across servers).
// A group across servers shares its servers' NICs with the other groups of its kind: every GPU of
// a server is in one such group and they all run the same collective at once (all DP groups reduce
// their gradients together, all pipeline stages send together), so a group holding g of a server's
// G GPUs gets g / G of the NIC bandwidth the server's G GPUs use.
#include <algorithm>
#include <cmath>
#include <memory>

#include "models/collective/collective_model.hpp"
#include "models/collective/size_ranges.hpp"
#include "models/llm/platform.hpp"

namespace fleetsim::llm {

/// Servers spanned by a group of `ranks` ranks `stride` apart.
int group_span(int ranks, int stride, int gpus_per_node);

/// One collective's time, s (0 for one rank or no bytes).
double collective_seconds(const CollectiveModel& model, const LlmPlatform& p, Collective op, double bytes,
                          int ranks, int stride);

/// Megatron-core's gradient bucket for overlapped DP reduction (DistributedDataParallel with
/// overlap_grad_reduce): max(40 M, 1 M x dp) parameters.
double grad_bucket_params(int dp);

/// Megatron's overlapped gradient reduction, seen from the end of the backward pass: the stage's
/// `params` gradients fill buckets of `bucket_params` in backward order (last layers first), evenly
/// over the last micro-batch's backward pass of `backward_s`; a bucket of n parameters is reduced in
/// `reduce(n)` seconds, one bucket at a time on the communication stream, once it is full, the last
/// one (the first layers and the embedding, the remainder) when the pass ends. With K
/// buckets, each full one taking c and ready at backward_s x i x bucket / params:
///   done = max(max_i (backward_s x i x bucket / params + (K - i) c), backward_s) + c_last,
/// and what is exposed is done - backward_s: c_last when the reductions keep up with the pass.
struct BucketedReduction {
  double total_s = 0;    ///< all buckets' reduction time
  double exposed_s = 0;  ///< after the backward pass
};
template <class Reduce>
BucketedReduction bucketed_reduction(double params, double bucket_params, double backward_s, Reduce reduce) {
  BucketedReduction r;
  if (params <= 0) return r;
  const double bucket = bucket_params > 0 ? std::min(bucket_params, params) : params;
  const double k = std::ceil(params / bucket - 1e-9);  // buckets
  const double last = params - (k - 1) * bucket;
  const double c = k > 1 ? reduce(bucket) : 0, c_last = reduce(last);
  double done = backward_s;
  if (k > 1)  // the slowest start of the full buckets' chain: the first or the last of them
    done = std::max(
        {done, backward_s * bucket / params + (k - 1) * c, backward_s * (k - 1) * bucket / params + c});
  r.total_s = (k - 1) * c + c_last;
  r.exposed_s = done + c_last - backward_s;
  return r;
}

/// The calibration an iteration's collectives are priced from: `cal`'s nccl-tests fits (1 MiB and
/// up) with the built-in small-message measurements (vidur_link_calibration()) spliced in below
/// `boundary_bytes` (size_ranges.hpp), one curve per link kind over the whole size range.
std::shared_ptr<const CollectiveCalibration> training_collectives(const CollectiveCalibration& cal,
                                                                  double boundary_bytes = kSpliceBytes);

/// Names the link kind of the platform's servers on its fabric (the GPU's catalog link,
/// default_link_kind: nvswitch for SXM parts), as `cal` records link kinds (calibrated_link).
void set_link(LlmPlatform& p, const CollectiveCalibration& cal);

}  // namespace fleetsim::llm
