#pragma once
// An LLM training job's model and layout, carried in JobSpec::model as text so that any reader can
// write it and the `llm` job model (models/job/llm_job_model.cpp) can read it back:
//   "<model> (tp <T>, pp <P>, seq <S>, batch <B>)"            e.g. "llama3-70b (tp 4, pp 2, seq 4096, batch
//   512)"
// with optional ", micro <M>" (sequences per micro-batch, default 1). <model> names a config.json
// (<model>.json) in the job model's folder (execution.llm_models). DP is not part of it: it follows
// from the GPUs the job gets (DP = GPUs / (TP x PP)). Same style as the "(batch size N)" of the
// pollux and philly-gavel readers.
#include <optional>
#include <string>
#include <string_view>

namespace fleetsim {

struct LlmJobLayout {
  std::string model;  ///< config name (lower case, trimmed)
  long tp = 1, pp = 1, seq = 0, global_batch = 0, micro_batch = 1;
};

/// The model string of a layout (see above).
std::string format_llm_job(const LlmJobLayout& l);
/// Parses a model string; nullopt with `why` (naming the part) when it is not in the form above.
std::optional<LlmJobLayout> parse_llm_job(std::string_view text, std::string& why);

}  // namespace fleetsim
