// NeuSight label reader (neusight.hpp).
#include "models/llm/neusight.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "models/hardware/gpu_catalog.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::llm {
namespace {

namespace fs = std::filesystem;

/// "NVIDIA_A100-PCIE-40GB", "NVIDIA_H100_80GB_HBM3" -> the catalog GPU; a repaired spelling is noted.
std::string catalog_gpu(const fs::path& folder, NeuSightLabels& out) {
  const std::string name = folder.filename().string();
  const GpuMatch g = resolve_gpu(name);
  if (g.gpu == nullptr) return gpu_spec(name, folder.string(), 0, "GPU folder").name;  // the error
  if (!g.repaired.empty()) out.repaired.push_back(folder.string() + ": " + g.repaired);
  return g.gpu->name;
}

long positive(const std::string& text, const std::string& file, const std::string& what) {
  try {
    std::size_t used = 0;
    const long v = std::stol(text, &used);
    if (used == text.size() && v > 0) return v;
  } catch (const std::exception&) {
  }
  throw InputError(file, 0, what, "expected a positive integer in the file name, got '" + text + "'");
}

void read_gpu_folder(const fs::path& folder, const std::string& configs, const TrainingSetup& base,
                     std::map<std::string, TransformerConfig>& models, NeuSightLabels& out) {
  const std::string gpu = catalog_gpu(folder, out);
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(folder))
    if (e.path().extension() == ".json") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const fs::path& f : files) {
    const std::string file = f.string(), stem = f.stem().string();
    const auto parts = split(stem, '-');
    if (parts.size() < 4 || (parts[1] != "train" && parts[1] != "inf")) {
      out.skipped.push_back({file, "not a <model>-<train|inf>-<seq>-<batch> label"});
      continue;
    }
    if (parts.back() == "fusion") {
      out.skipped.push_back({file, "fused kernels (-fusion)"});
      continue;
    }
    const std::string model(parts[0]);
    const fs::path config = fs::path(configs) / (model + ".json");
    if (!fs::exists(config)) {
      out.skipped.push_back({file, "no model config " + config.string()});
      continue;
    }
    auto it = models.find(model);
    if (it == models.end()) it = models.emplace(model, read_transformer_config(config.string())).first;

    MeasuredCase c;
    c.source = "neusight";
    c.file = file;
    c.name = gpu + "/" + stem;
    c.gpu = gpu;
    c.model = it->second;
    c.inference = parts[1] == "inf";
    c.optimizer = false;
    c.setup = base;
    c.setup.dtype = DType::fp32;
    c.setup.recompute = Recompute::none, c.setup.recompute_auto = false;  // PyTorch eager: no checkpointing
    // Hugging Face models in PyTorch eager mode, timed up to the logits (no loss); no dropout when
    // inferring; BERT inference as sequence classification (pooler + classifier, no masked-LM head).
    c.setup.eager = true;
    c.setup.dropout = !c.inference;
    c.setup.loss = false;
    c.setup.classifier_head = c.inference && c.model.model_type == "bert";
    c.setup.seq = positive(std::string(parts[2]), file, "seq");
    c.setup.global_batch = c.setup.micro_batch = positive(std::string(parts[3]), file, "batch");
    c.setup.tp = c.setup.pp = c.setup.dp = c.setup.ep = 1;
    c.family = parts[1];
    if (parts.size() >= 5) {
      const std::string dist(parts[4]);
      if (dist == "dp4") {
        c.setup.dp = 4;
        c.setup.micro_batch = c.setup.global_batch / 4;
      } else if (dist == "tp4") {
        c.setup.tp = 4;
      } else if (dist.starts_with("pp4_")) {
        c.setup.pp = 4;
        c.setup.schedule = PipelineSchedule::gpipe;
        c.setup.micro_batch = c.setup.global_batch / positive(dist.substr(4), file, "micro-batches");
      } else {
        out.skipped.push_back({file, "unknown parallel suffix '" + dist + "'"});
        continue;
      }
      c.family += "+" + dist.substr(0, 3);
    }
    if (c.setup.micro_batch < 1) throw InputError(file, 0, "batch", "smaller than the ranks that split it");
    std::ifstream in(f, std::ios::binary);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
      throw InputError(file, 0, "", std::string("malformed JSON: ") + e.what());
    }
    const auto e2e = j.find("e2e_latency");
    if (e2e == j.end() || !e2e->is_number() || !(e2e->get<double>() > 0))
      throw InputError(file, 0, "e2e_latency", "expected a positive number of milliseconds");
    c.measured_s = e2e->get<double>() / 1e3;
    validate(c.model, c.setup, file);
    out.cases.push_back(std::move(c));
  }
}

}  // namespace

NeuSightLabels read_neusight_labels(const std::string& folder, const std::string& configs,
                                    const TrainingSetup& base) {
  if (!fs::is_directory(folder)) throw InputError(folder, 0, "FILES", "not a NeuSight label folder");
  if (configs.empty())
    throw InputError(folder, 0, "--configs", "NeuSight labels need the model configs' folder (--configs)");
  if (!fs::is_directory(configs)) throw InputError(configs, 0, "--configs", "not a folder");
  NeuSightLabels out;
  std::map<std::string, TransformerConfig> models;
  bool has_labels = false;
  std::vector<fs::path> gpus;
  for (const auto& e : fs::directory_iterator(folder)) {
    if (e.path().extension() == ".json") has_labels = true;
    if (e.is_directory()) gpus.push_back(e.path());
  }
  if (has_labels) {
    read_gpu_folder(folder, configs, base, models, out);
    return out;
  }
  std::sort(gpus.begin(), gpus.end());
  if (gpus.empty()) throw InputError(folder, 0, "FILES", "no labels (*.json) and no GPU folders in it");
  for (const fs::path& g : gpus) read_gpu_folder(g, configs, base, models, out);
  return out;
}

}  // namespace fleetsim::llm
