// LLM job model strings (llm_job.hpp).
#include "workloads/jobs/llm_job.hpp"

#include <charconv>
#include <vector>

#include "workloads/base/text.hpp"

namespace fleetsim {

std::string format_llm_job(const LlmJobLayout& l) {
  std::string out = l.model + " (tp " + std::to_string(l.tp) + ", pp " + std::to_string(l.pp) + ", seq " +
                    std::to_string(l.seq) + ", batch " + std::to_string(l.global_batch);
  if (l.micro_batch != 1) out += ", micro " + std::to_string(l.micro_batch);
  return out + ")";
}

std::optional<LlmJobLayout> parse_llm_job(std::string_view text, std::string& why) {
  text = trim(text);
  const auto open = text.find(" (");
  if (open == std::string_view::npos || text.empty() || text.back() != ')') {
    why = "expected '<model> (tp T, pp P, seq S, batch B)', got '" + std::string(text) + "'";
    return std::nullopt;
  }
  LlmJobLayout l;
  l.model = lower(trim(text.substr(0, open)));
  std::string_view rest = text.substr(open + 2, text.size() - open - 3);
  bool seen_seq = false, seen_batch = false;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view part = trim(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    const auto space = part.find(' ');
    const std::string_view key = part.substr(0, space);
    const std::string_view value =
        space == std::string_view::npos ? std::string_view() : trim(part.substr(space));
    long v = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (ec != std::errc() || end != value.data() + value.size() || v < 1) {
      why = "'" + std::string(part) + "': expected '" + std::string(key) + " <positive integer>'";
      return std::nullopt;
    }
    if (key == "tp") {
      l.tp = v;
    } else if (key == "pp") {
      l.pp = v;
    } else if (key == "seq") {
      l.seq = v, seen_seq = true;
    } else if (key == "batch") {
      l.global_batch = v, seen_batch = true;
    } else if (key == "micro") {
      l.micro_batch = v;
    } else {
      why = "unknown layout key '" + std::string(key) + "' (tp, pp, seq, batch, micro)";
      return std::nullopt;
    }
  }
  if (l.model.empty() || !seen_seq || !seen_batch) {
    why = "'" + std::string(text) + "' needs a model name, seq and batch";
    return std::nullopt;
  }
  return l;
}

}  // namespace fleetsim
