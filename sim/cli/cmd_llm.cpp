// fleetsim llm predict --model CONFIG.json [--gpu T | --platform SCENARIO] [setup flags] [--out DIR]
// fleetsim llm eval --out DIR [--platform SCENARIO] [--configs DIR] [--calibration CAL] FILES...
// fleetsim llm plan: cmd_llm_plan.cpp.
// LLM training iteration time (models/llm): one configuration's breakdown (prediction.json and a
// table), or every measured case of vTrain ground-truth CSVs against the prediction
// (predictions.csv, summary.json). The platform is a scenario's first pool (GPU, GPUs per server) and
// its [cluster.network] (NIC, intra-node bandwidth); by default one 8 x A100-SXM4-80GB NVSwitch server (DGX
// A100). Outputs are staged: a bad input exits 2 with nothing written.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "models/llm/neusight.hpp"
#include "models/llm/vtrain.hpp"
#include "sim/app/staging.hpp"
#include "sim/cli/cli_util.hpp"
#include "sim/cli/command.hpp"
#include "sim/cli/llm_cli.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::cli {
namespace {

using namespace fleetsim::llm;

int run_predict(const CommonArgs& a, const SetupArgs& sa, const std::string& model_file,
                const std::string& out) {
  const TransformerConfig m = read_transformer_config(model_file);
  const TrainingSetup s = to_setup(sa);
  validate(m, s, model_file);
  const Models models = make_models(a);
  const Prediction r = predict_iteration(m, s, models.platform, *models.kernels, *models.collectives);
  std::printf("%s on %d x %s (tp %d, pp %d, dp %d, ep %d), %ld micro-batches of %ld x %ld tokens\n",
              model_file.c_str(), s.gpus(), models.platform.gpu->name.c_str(), s.tp, s.pp, s.dp, s.ep,
              r.microbatches, s.micro_batch, s.seq);
  print_breakdown(r);
  if (!r.feasible)
    std::fprintf(stderr, "fleetsim: warning: the layout does not fit in memory: %s\n", r.infeasible.c_str());
  if (models.default_network && s.gpus() > models.platform.gpus_per_node)
    std::fprintf(
        stderr,
        "fleetsim: warning: %d GPUs span %d servers of the default platform (one %.0f Gbit/s NIC per "
        "server): give --platform SCENARIO for the cluster's network\n",
        s.gpus(), (s.gpus() + models.platform.gpus_per_node - 1) / models.platform.gpus_per_node,
        models.platform.fabric.inter_gbs * 8);
  if (!out.empty()) {
    Staging staging(out, "--out");
    staging.open("prediction.json") << to_json(r, m, s, models.platform).dump(2) << "\n";
    staging.commit();
  }
  return 0;
}

struct Row {
  MeasuredCase c;
  double predicted_s = 0;
  double ape = 0;
  Prediction p;
};

nlohmann::json stats(const std::vector<double>& apes) {
  std::vector<double> v = apes;
  std::sort(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  const auto p90 =
      v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<std::size_t>(std::ceil(0.9 * v.size())) - 1)];
  return {{"cases", v.size()},
          {"mape_pct", v.empty() ? 0.0 : sum / static_cast<double>(v.size())},
          {"p90_pct", p90}};
}

/// What the case measured, predicted: a forward pass (inference: the stages' forward passes of one
/// micro-batch), or the iteration without the optimizer step when the measurement has none.
double predicted_s(const MeasuredCase& c, const Models& models, Prediction& p) {
  LlmPlatform platform = models.platform;
  if (!c.gpu.empty()) {  // NeuSight: the label's GPU, in 4-GPU servers (NVLink or PCIe, from the catalog)
    platform.gpu = &gpu_spec(c.gpu);
    platform.gpus_per_node = 4;
    platform.fabric = fabric_for(*platform.gpu);
  }
  p = predict_iteration(c.model, c.setup, platform, *models.kernels, *models.collectives);
  if (c.inference) {
    double forward = 0;
    for (const StageTime& st : p.stages) forward += st.forward_s;
    return forward + platform.host_overhead_s;
  }
  return c.optimizer ? p.total_s : p.total_s - p.optimizer_s;
}

void warn(const std::string& what) {
  std::fprintf(stderr, "fleetsim: warning: %s\n", what.c_str());
}

int run_eval(const CommonArgs& a, const SetupArgs& sa, const std::vector<std::string>& files,
             const std::string& out, const std::string& configs) {
  if (out.empty()) throw InputError("", 0, "--out", "an output folder is required");
  const TrainingSetup base = to_setup(sa);
  const Models models = make_models(a);
  std::vector<Row> rows;
  std::vector<SkippedCase> skipped;
  std::vector<std::string> notes;
  long multi_node_default = 0;
  for (const std::string& f : files) {
    std::vector<MeasuredCase> cases;
    if (std::filesystem::is_directory(f)) {
      NeuSightLabels labels = read_neusight_labels(f, configs, base);
      cases = std::move(labels.cases);
      skipped.insert(skipped.end(), labels.skipped.begin(), labels.skipped.end());
      notes.insert(notes.end(), labels.repaired.begin(), labels.repaired.end());
    } else {
      cases = read_vtrain_csv(f, base, &notes);
    }
    for (MeasuredCase& c : cases) {
      Row r;
      r.predicted_s = predicted_s(c, models, r.p);
      r.ape = 100 * std::abs(r.predicted_s / c.measured_s - 1);
      if (c.gpu.empty()) {
        c.gpu = models.platform.gpu->name;
        if (models.default_network && c.setup.gpus() > models.platform.gpus_per_node) ++multi_node_default;
      }
      r.c = std::move(c);
      rows.push_back(std::move(r));
    }
  }
  for (const std::string& n : notes) warn(n);
  long not_fitting = 0;
  for (const Row& r : rows) not_fitting += r.p.feasible ? 0 : 1;
  if (not_fitting > 0)
    warn(std::to_string(not_fitting) + " of " + std::to_string(rows.size()) +
         " cases do not fit in the GPU's memory as set up (fits = 0 in predictions.csv; --recompute auto "
         "picks "
         "the least recomputation that fits)");
  if (multi_node_default > 0)
    warn(std::to_string(multi_node_default) + " cases span more than one " +
         std::to_string(models.platform.gpus_per_node) + "-GPU server of the default platform (one " +
         fmt(models.platform.fabric.inter_gbs * 8, 0) +
         " Gbit/s NIC per server): give --platform SCENARIO with the measured cluster's network (vTrain's: "
         "scenarios/llm/vtrain-a100.toml)");
  Staging staging(out, "--out");
  {
    auto csv = staging.open("predictions.csv");
    csv << "source,case,family,gpu,measured_ms,predicted_ms,ape_pct,recompute,memory_gb,fits\n";
    char buf[384];
    for (const Row& r : rows) {
      std::snprintf(buf, sizeof buf, "%s,%s,%s,%s,%.4f,%.4f,%.3f,%s,%.2f,%d\n", r.c.source.c_str(),
                    r.c.name.c_str(), r.c.family.c_str(), r.c.gpu.c_str(), r.c.measured_s * 1e3,
                    r.predicted_s * 1e3, r.ape, std::string(to_string(r.p.recompute)).c_str(),
                    r.p.memory_bytes / 1e9, r.p.feasible ? 1 : 0);
      csv << buf;
    }
  }
  std::map<std::string, std::vector<double>> by_source, by_family;
  std::vector<double> all;
  for (const Row& r : rows) {
    by_source[r.c.source + "/" + r.c.gpu].push_back(r.ape);
    by_family[r.c.source + "/" + r.c.family].push_back(r.ape);
    all.push_back(r.ape);
  }
  nlohmann::json j;
  j["overall"] = stats(all);
  j["fits"] = {{"cases", rows.size()}, {"not_fitting", not_fitting}};
  j["notes"] = notes;
  if (multi_node_default > 0) j["multi_node_on_default_platform"] = multi_node_default;
  for (const auto& [k, v] : by_source) j["by_source_gpu"][k] = stats(v);
  for (const auto& [k, v] : by_family) j["by_family"][k] = stats(v);
  j["setup"] = {{"dtype", to_string(base.dtype)},
                {"recompute", base.recompute_auto ? "auto" : std::string(to_string(base.recompute))},
                {"schedule", to_string(base.schedule)},
                {"overlap_grad", base.overlap_grad},
                {"kernel_model", a.kernel_model},
                {"collective_model", a.collective_model},
                {"calibration", a.calibration},
                {"platform", a.platform},
                {"launch_us", a.launch_us},
                {"cuda_graphs", a.cuda_graphs},
                {"host_overhead_ms", a.host_overhead_ms},
                {"tensor_core_efficiency", a.tensor_core_efficiency}};
  j["skipped"] = nlohmann::json::array();
  for (const SkippedCase& k : skipped) j["skipped"].push_back({{"file", k.file}, {"reason", k.reason}});
  staging.open("summary.json") << j.dump(2) << "\n";
  staging.commit();
  run_plot_script("plot_llm_eval.py", "FLEETSIM_PLOT_LLM_EVAL", {out}, "predictions.csv");
  std::printf("%-24s %6s %9s %9s\n", "group", "cases", "MAPE %", "p90 %");
  auto line = [](const std::string& k, const nlohmann::json& s) {
    std::printf("%-24s %6d %9.2f %9.2f\n", k.c_str(), s["cases"].get<int>(), s["mape_pct"].get<double>(),
                s["p90_pct"].get<double>());
  };
  line("all", j["overall"]);
  for (const auto& [k, v] : j["by_source_gpu"].items()) line(k, v);
  for (const auto& [k, v] : j["by_family"].items()) line(k, v);
  if (!skipped.empty())
    std::printf("skipped %zu labels (summary.json lists them with the reason)\n", skipped.size());
  return 0;
}

const CommandRegistrar kRegistrar{
    "llm",
    "LLM training: predict one iteration (predict), check against measured iterations (eval), search "
    "layouts (plan)",
    [](CLI::App& sub) -> Runner {
      auto common = std::make_shared<CommonArgs>();
      auto setup = std::make_shared<SetupArgs>();
      auto eval_setup = std::make_shared<SetupArgs>();
      // vTrain's measured runs as its config_*.json describe them: Megatron-DeepSpeed fp16, 1F1B, no
      // gradient bucketing (use_gradient_bucket false), activation checkpointing (use_checkpoint true:
      // full recomputation of every layer). NeuSight labels set their own (fp32, eager, none).
      eval_setup->dtype = "fp16", eval_setup->recompute = "full", eval_setup->no_overlap = true;
      auto model = std::make_shared<std::string>();
      auto out = std::make_shared<std::string>();
      auto configs = std::make_shared<std::string>();
      auto files = std::make_shared<std::vector<std::string>>();
      sub.require_subcommand(1);
      CLI::App* predict =
          sub.add_subcommand("predict", "one configuration: breakdown table and prediction.json");
      predict->add_option("--model", *model, "Hugging Face config.json")->required();
      predict->add_option("--out", *out, "folder for prediction.json");
      add_common(predict, *common);
      add_setup(predict, *setup);
      CLI::App* eval =
          sub.add_subcommand("eval", "measured iterations (vTrain CSVs, NeuSight labels) vs predictions");
      eval->add_option("--out", *out, "output folder")->required();
      eval->add_option("--configs", *configs, "model configs' folder (for NeuSight label folders)");
      eval->add_option("FILES", *files,
                       "vTrain ground-truth CSVs and NeuSight label folders (labels/ or labels/<GPU>/)")
          ->required();
      add_common(eval, *common);
      add_setup(eval, *eval_setup);
      auto plan = add_plan(sub);
      return [=, &sub]() {
        if (sub.got_subcommand("plan")) return run_plan(*plan);
        if (sub.got_subcommand("predict")) return run_predict(*common, *setup, *model, *out);
        return run_eval(*common, *eval_setup, *files, *out, *configs);
      };
    }};

}  // namespace
}  // namespace fleetsim::cli
