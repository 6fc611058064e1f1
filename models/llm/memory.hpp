#pragma once
// Memory of one GPU in a training iteration, per pipeline stage: what decides whether a layout runs.
// Pure arithmetic on the model and the setup.
//
// Model state (ZeRO, Rajbhandari et al., SC'20, section 3.1: mixed precision keeps 2 bytes of fp16/bf16
// weights, 2 of gradients and K = 12 of fp32 master weights, momentum and variance per parameter;
// fp32 training 4 + 4 + 8): weights, gradients and optimizer state of the stage's parameters; ZeRO 1
// divides the optimizer state by dp, ZeRO 2 also the gradients, ZeRO 3 also the weights.
//
// Activations of one layer and one micro-batch (Korthikanti et al., "Reducing Activation Recomputation
// in Large Transformer Models", MLSys 2023, Table 2; bytes with 2-byte tensors and 1-byte dropout masks,
// twice that for fp32), s = sequence, b = micro batch, h = hidden, a = heads, t = TP, f = intermediate,
// k = key/value width (kv heads x head dim):
//   unsplit   10 s b h                (two layer-norm inputs, the QKV and MLP inputs, two dropout masks)
//   split     4 s b h + 4 s b k + 4 s b f (gated MLP: 6 s b f; MoE: x top-k)   divided by t
//   attention 5 a s^2 b               divided by t
//   none       unsplit + split / t + attention / t      (sequence parallel: all three / t)
//   selective  unsplit + split / t                      (the attention core is recomputed)
//   full       2 s b h, the layer's input (sequence parallel: / t); and while a layer is recomputed
//              its whole set, once per GPU
// For GPT (k = h, f = 4h) these are Table 2's rows: s b h (34 + 5 a s / h) without TP,
// s b h (10 + 24 / t + 5 a s / (h t)) with TP, s b h (34 / t + 5 a s / (h t)) with sequence
// parallelism, s b h (10 + 24 / t) selective, 34 s b h / t selective with SP, 2 s b h full.
// A stage holds its layers' activations for the micro-batches in flight under its schedule
// (schedule.hpp: 1F1B p - s, GPipe m, interleaved Megatron's warm-up), the first stage also the
// embedding output's dropout mask (s b h per micro-batch in flight) and the last stage the fp32 logits
// of one micro-batch for the loss (4 s b V / t).
// Not counted: framework workspace, NCCL buffers, allocator fragmentation (a few GB in practice).
#include <string>
#include <vector>

#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct MemoryBreakdown {
  double weights = 0, grads = 0, optimizer = 0, activations = 0;  ///< bytes
  double total() const { return weights + grads + optimizer + activations; }
};

/// Layers and parameters (before ZeRO) of one pipeline stage on one GPU.
struct StageShape {
  int layers = 0;
  double params = 0;
};

/// Megatron's even split (the first stages take the remainder); stage 0 holds the embedding, the last
/// stage the final norm and (untied or p > 1) the head.
std::vector<StageShape> stage_shapes(const TransformerConfig& m, const TrainingSetup& s);
/// Parameters of one transformer layer on one GPU (dense part split by TP, experts by TP and EP).
double layer_params_per_gpu(const TransformerConfig& m, const TrainingSetup& s);

/// Activation bytes of one layer and one micro-batch under `r` (see above; the full-recompute case
/// returns what is kept, the layer input).
double layer_activation_bytes(const TransformerConfig& m, const TrainingSetup& s, Recompute r);

/// Memory of one GPU of `stage` (see above), with `s.recompute`.
MemoryBreakdown stage_memory(const TransformerConfig& m, const TrainingSetup& s, int stage,
                             const StageShape& shape);

/// The largest stage's memory with `s.recompute`.
MemoryBreakdown peak_memory(const TransformerConfig& m, const TrainingSetup& s);

/// The least recomputation (none, then selective, then full) whose peak fits in `capacity_bytes`;
/// full when none fits (the caller reports that it does not fit).
Recompute least_recompute(const TransformerConfig& m, const TrainingSetup& s, double capacity_bytes);

}  // namespace fleetsim::llm
