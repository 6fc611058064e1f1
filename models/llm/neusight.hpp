#pragma once
// NeuSight's measured end-to-end latencies (Lee et al., ASPLOS'25; ../shared/data/llm/neusight):
// label folders labels/<GPU>/ holding <model>-<train|inf>-<seq>-<batch>[-dp4|-tp4|-pp4_<k>][-fusion].json
// with `e2e_latency` in ms (train: forward + backward, no optimizer step; inf: forward), measured in
// fp32 with PyTorch 2.1 and Hugging Face models. The GPU comes from the folder name, in any spelling
// the catalog resolves (resolve_gpu: "NVIDIA_H100_80GB_HBM3", "Tesla_T4"), the model from
// <configs>/<model>.json, the case from the file name:
//   batch    the global batch; -dp4: 4 data-parallel ranks of batch / 4; -tp4: 4 tensor-parallel ranks;
//            -pp4_<k>: 4 pipeline stages and k micro-batches of batch / k (GPipe)
// Fused-kernel cases (-fusion), cases whose config is missing and files that are not labels are
// skipped and listed with the reason. A folder may be one GPU's or hold several GPUs' folders.
#include <string>
#include <vector>

#include "models/llm/vtrain.hpp"

namespace fleetsim::llm {

struct SkippedCase {
  std::string file;
  std::string reason;
};

struct NeuSightLabels {
  std::vector<MeasuredCase> cases;
  std::vector<SkippedCase> skipped;
  std::vector<std::string> repaired;  ///< GPU folder names read in another spelling (resolve_gpu)
};

/// Reads every label of `folder` (see above); `base` carries what the names do not say (schedule,
/// recomputation, overlap); dtype is fp32. Errors (a malformed label or config, an unknown GPU folder)
/// name the file and key.
NeuSightLabels read_neusight_labels(const std::string& folder, const std::string& configs,
                                    const TrainingSetup& base);

}  // namespace fleetsim::llm
