// vTrain ground-truth CSV reader (vtrain.hpp).
#include "models/llm/vtrain.hpp"

#include <array>
#include <fstream>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::llm {
namespace {

constexpr std::array<const char*, 11> kColumns{"# GPUs",
                                               "global batch",
                                               "micro batch",
                                               "hidden size",
                                               "attention heads",
                                               "# layers",
                                               "sequence length",
                                               "tensor parallelism",
                                               "data parallelism",
                                               "pipeline parallelism",
                                               "iteration time (ms)"};

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

std::vector<MeasuredCase> read_vtrain_csv(const std::string& path, const TrainingSetup& base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot read the vTrain ground-truth CSV (missing file?)");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, 1, "", "empty file");
  if (line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const auto header = split(line, ',');
  if (header.size() != kColumns.size())
    throw InputError(path, 1, "",
                     "not a vTrain ground-truth CSV (expected the 11 columns '# GPUs,...,"
                     "iteration time (ms)')");
  for (std::size_t i = 0; i < kColumns.size(); ++i)
    if (std::string(trim(header[i])) != kColumns[i])
      throw InputError(path, 1, kColumns[i], "expected this column, found '" + std::string(header[i]) + "'");

  std::vector<MeasuredCase> out;
  long n = 1;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    const auto f = split(line, ',');
    if (f.size() != kColumns.size())
      throw InputError(path, n, "", "expected 11 fields, found " + std::to_string(f.size()));
    std::array<long, 10> v{};
    for (std::size_t i = 0; i < 10; ++i) {
      v[i] = static_cast<long>(parse_int(trim(f[i]), path, n, kColumns[i]));
      if (v[i] < 1) throw InputError(path, n, kColumns[i], "must be at least 1");
    }
    MeasuredCase c;
    c.source = "vtrain";
    c.file = path, c.line = n;
    c.measured_s = parse_double(trim(f[10]), path, n, kColumns[10]) / 1e3;
    if (c.measured_s <= 0) throw InputError(path, n, kColumns[10], "must be positive");
    c.setup = base;
    c.setup.global_batch = v[1], c.setup.micro_batch = v[2], c.setup.seq = v[6];
    c.setup.tp = static_cast<int>(v[7]), c.setup.dp = static_cast<int>(v[8]),
    c.setup.pp = static_cast<int>(v[9]);
    if (static_cast<long>(c.setup.gpus()) != v[0])
      throw InputError(path, n, kColumns[0], "is not tp x dp x pp = " + std::to_string(c.setup.gpus()));
    c.model = gpt_config(v[5], v[3], v[4], megatron_padded_vocab(50257, c.setup.tp), v[6]);
    c.model.file = path;
    c.name = "g" + std::to_string(v[0]) + "-gb" + std::to_string(v[1]) + "-mb" + std::to_string(v[2]) + "-h" +
             std::to_string(v[3]) + "-a" + std::to_string(v[4]) + "-l" + std::to_string(v[5]) + "-s" +
             std::to_string(v[6]) + "-tp" + std::to_string(v[7]) + "-dp" + std::to_string(v[8]) + "-pp" +
             std::to_string(v[9]);
    c.family = family(c.setup.tp, c.setup.dp, c.setup.pp);
    validate(c.model, c.setup, path + ":" + std::to_string(n));
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace fleetsim::llm
