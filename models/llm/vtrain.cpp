// vTrain ground-truth CSV reader (vtrain.hpp).
#include "models/llm/vtrain.hpp"

#include <array>
#include <fstream>
#include <optional>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::llm {
namespace {

enum Field { kGpus, kGlobal, kMicro, kHidden, kHeads, kLayers, kSeq, kTp, kDp, kPp, kTime, kFields };

/// Each field's name as vTrain writes it, then other spellings (compared after normalise()).
const std::array<std::vector<const char*>, kFields> kNames{{
    {"# gpus", "gpus", "num gpus", "number of gpus", "# of gpus"},
    {"global batch", "global batch size", "gbs"},
    {"micro batch", "micro batch size", "mbs"},
    {"hidden size", "hidden", "d model"},
    {"attention heads", "heads", "num attention heads", "# heads"},
    {"# layers", "layers", "num layers", "number of layers", "# of layers"},
    {"sequence length", "seq length", "seq len", "max length", "seq"},
    {"tensor parallelism", "tensor parallel size", "tensor parallel", "tp"},
    {"data parallelism", "data parallel size", "data parallel", "dp"},
    {"pipeline parallelism", "pipeline parallel size", "pipeline parallel", "pp"},
    {"iteration time (ms)", "iteration time", "time (ms)", "iteration time ms", "iteration time (s)"},
}};

/// Lower case, '_' as ' ', runs of blanks as one, no blanks at the ends or inside parentheses.
std::string normalise(std::string_view text) {
  std::string out;
  for (char c : lower(trim(text))) {
    if (c == '_' || c == '\t') c = ' ';
    if (c == ' ' && (out.empty() || out.back() == ' ' || out.back() == '(')) continue;
    if (c == ')' && !out.empty() && out.back() == ' ') out.pop_back();
    out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

std::optional<Field> field_of(const std::string& column) {
  for (int f = 0; f < kFields; ++f)
    for (const char* n : kNames[static_cast<std::size_t>(f)])
      if (column == n) return static_cast<Field>(f);
  return std::nullopt;
}

std::string family(int tp, int dp, int pp) {
  std::string f;
  for (auto [name, v] : {std::pair{"tp", tp}, {"dp", dp}, {"pp", pp}})
    if (v > 1) f += (f.empty() ? "" : "+") + std::string(name);
  return f.empty() ? "single" : f;
}

}  // namespace

long megatron_padded_vocab(long vocab, int tp) {
  const long multiple = 128L * tp;
  return (vocab + multiple - 1) / multiple * multiple;
}

std::vector<MeasuredCase> read_vtrain_csv(const std::string& path, const TrainingSetup& base,
                                          std::vector<std::string>* notes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot read the vTrain ground-truth CSV (missing file?)");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, 1, "", "empty file");
  if (line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const auto header = split(line, ',');
  std::array<long, kFields> column{};
  column.fill(-1);
  std::array<std::string, kFields> label;  // each field's column as the file names it (for errors)
  for (int f = 0; f < kFields; ++f)
    label[static_cast<std::size_t>(f)] = kNames[static_cast<std::size_t>(f)][0];
  std::vector<std::string> ignored;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string name = normalise(header[i]);
    const auto f = field_of(name);
    if (!f) {
      ignored.push_back(std::string(trim(header[i])));
      continue;
    }
    if (column[*f] >= 0)
      throw InputError(path, 1, header[i], "a second column for '" + std::string(kNames[*f][0]) + "'");
    column[*f] = static_cast<long>(i);
    label[*f] = std::string(trim(header[i]));
  }
  std::vector<std::string> missing;
  for (int f = 0; f < kFields; ++f)
    if (f != kGpus && column[static_cast<std::size_t>(f)] < 0)
      missing.push_back(kNames[static_cast<std::size_t>(f)][0]);
  if (!missing.empty())
    throw InputError(
        path, 1, missing.front(),
        "not a vTrain ground-truth CSV: missing column(s) '" + join(missing, "', '") +
            "' (vTrain writes '# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
            "sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration "
            "time (ms)', the multi-node file with 'Parameters (billion)' first)");
  const double time_scale =
      normalise(header[static_cast<std::size_t>(column[kTime])]).ends_with("(s)") ? 1 : 1e-3;
  if (notes != nullptr && !ignored.empty())
    notes->push_back(path + ": column(s) '" + join(ignored, "', '") +
                     "' not used (the model comes from the other columns)");

  std::vector<MeasuredCase> out;
  long n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    const auto f = split(line, ',');
    if (f.size() != header.size())
      throw InputError(
          path, n, "",
          "expected " + std::to_string(header.size()) + " fields, found " + std::to_string(f.size()));
    std::array<long, kFields> v{};
    for (int k = 0; k < kTime; ++k) {
      const long at = column[static_cast<std::size_t>(k)];
      if (at < 0) continue;
      const std::string& name = label[static_cast<std::size_t>(k)];
      v[static_cast<std::size_t>(k)] =
          static_cast<long>(parse_int(trim(f[static_cast<std::size_t>(at)]), path, n, name));
      if (v[static_cast<std::size_t>(k)] < 1) throw InputError(path, n, name, "must be at least 1");
    }
    MeasuredCase c;
    c.source = "vtrain";
    c.file = path, c.line = n;
    c.measured_s =
        parse_double(trim(f[static_cast<std::size_t>(column[kTime])]), path, n, label[kTime]) * time_scale;
    if (c.measured_s <= 0) throw InputError(path, n, label[kTime], "must be positive");
    c.setup = base;
    c.setup.global_batch = v[kGlobal], c.setup.micro_batch = v[kMicro], c.setup.seq = v[kSeq];
    c.setup.tp = static_cast<int>(v[kTp]), c.setup.dp = static_cast<int>(v[kDp]),
    c.setup.pp = static_cast<int>(v[kPp]);
    if (column[kGpus] >= 0 && static_cast<long>(c.setup.gpus()) != v[kGpus])
      throw InputError(path, n, label[kGpus], "is not tp x dp x pp = " + std::to_string(c.setup.gpus()));
    c.model =
        gpt_config(v[kLayers], v[kHidden], v[kHeads], megatron_padded_vocab(50257, c.setup.tp), v[kSeq]);
    c.model.file = path;
    c.name = "g" + std::to_string(c.setup.gpus()) + "-gb" + std::to_string(v[kGlobal]) + "-mb" +
             std::to_string(v[kMicro]) + "-h" + std::to_string(v[kHidden]) + "-a" +
             std::to_string(v[kHeads]) + "-l" + std::to_string(v[kLayers]) + "-s" + std::to_string(v[kSeq]) +
             "-tp" + std::to_string(v[kTp]) + "-dp" + std::to_string(v[kDp]) + "-pp" + std::to_string(v[kPp]);
    c.family = family(c.setup.tp, c.setup.dp, c.setup.pp);
    validate(c.model, c.setup, path + ":" + std::to_string(n));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace fleetsim::llm
