#pragma once
// vTrain's ground truth (Bang et al., MICRO 2024; ../shared/data/llm/vtrain and the public
// multi-node set): one measured Megatron-DeepSpeed iteration per row, header
//   # GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,
//   tensor parallelism,data parallelism,pipeline parallelism,iteration time (ms)
// Columns are found by name, in any order and in other spellings (case, '_' for ' ', "global batch
// size", "tp", "iteration time (s)"); a UTF-8 byte-order mark is allowed; columns it does not use
// (the multi-node file's leading "Parameters (billion)") are listed in `notes`; "# GPUs" is optional
// and checked against tp x dp x pp when present. Each row becomes a GPT model (vTrain's
// ShardedGptModel: 4 x hidden GELU MLP, learned positions, tied embeddings, GPT-2 vocabulary padded as
// Megatron pads it) and a training setup with the row's micro batch. Errors name file, line and column.
#include <string>
#include <vector>

#include "models/llm/transformer.hpp"

namespace fleetsim::llm {

struct MeasuredCase {
  std::string source;  ///< "vtrain" | "neusight"
  std::string name;    ///< e.g. "g8-gb32-mb4-h1024-a16-l24-s1024-tp2-dp2-pp2"
  std::string family;  ///< parallelism family: "tp", "dp", "pp", "tp+dp", ..., "tp+dp+pp"
  std::string file;
  long line = 0;
  TransformerConfig model;
  TrainingSetup setup;
  double measured_s = 0;
  std::string gpu;         ///< catalog GPU the case ran on ("": the evaluation's platform)
  bool inference = false;  ///< forward pass only (else forward + backward + optimizer, as measured)
  bool optimizer = true;   ///< the measured time includes the optimizer step
};

/// GPT-2's vocabulary (50,257) padded by Megatron to a multiple of 128 x tp.
long megatron_padded_vocab(long vocab, int tp);

/// Reads a vTrain ground-truth CSV; `base` carries the setup fields the file does not (dtype,
/// recomputation, schedule, overlap); what was read differently from vTrain's header goes to `notes`.
std::vector<MeasuredCase> read_vtrain_csv(const std::string& path, const TrainingSetup& base,
                                          std::vector<std::string>* notes = nullptr);

}  // namespace fleetsim::llm
