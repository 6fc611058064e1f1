// LLM jobs in the cluster simulation (issue 18 item 5): the "llm-csv" reader, the "llm" job model
// (run time = steps x models/llm's iteration on the GPUs and nodes the job got) and a tiny end-to-end
// run.
#include <doctest/doctest.h>

#include <filesystem>

#include "models/calibration/calibration.hpp"
#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "models/llm/comm.hpp"
#include "models/llm/iteration.hpp"
#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "tests/sim_harness.hpp"
#include "tests/test_util.hpp"
#include "tests/text_checks.hpp"
#include "tests/unit/test_workloads_util.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/jobs/llm_job.hpp"
#include "workloads/jobs/trace_reader.hpp"

using namespace fleetsim;
using test::contains;
using test::input_error_of;

namespace {

// A small Llama-style model: 8 layers, hidden 2048, 16 heads (8 kv), SwiGLU 5632, vocab 32000.
const char* kTinyConfig = R"({"model_type": "llama", "hidden_act": "silu", "hidden_size": 2048,
  "intermediate_size": 5632, "num_attention_heads": 16, "num_hidden_layers": 8, "num_key_value_heads": 8,
  "vocab_size": 32000, "rope_theta": 10000.0, "tie_word_embeddings": false})";

std::filesystem::path models_dir() {
  static const std::filesystem::path dir = [] {
    const auto d = test::temp_dir("llm-models");
    test::write_file(d / "tiny.json", kTinyConfig);
    test::write_file(d / "GPT3-175B.json",
                     test::read_file(std::string(FLEETSIM_SOURCE_DIR) + "/tests/data/llm/gpt3-175b.json"));
    return d;
  }();
  return dir;
}

std::unique_ptr<JobModel> model() {
  JobModelParams p;
  p.settings.set("llm_models", models_dir().string());
  p.settings.set("llm_launch_us", 70);
  p.workload.set("path", "jobs.csv");
  p.scenario_file = "test.toml";
  p.nic_gbps = 400, p.nics_per_node = 8, p.gpus_per_nic = 1, p.intra_node_gbps = 7200;
  return job_models().create("llm", p);
}

JobSpec job(const std::string& model_string, int gpus, double steps = 1000) {
  JobSpec j;
  j.model = model_string;
  j.gpus = gpus;
  j.steps = steps;
  j.source_line = 5;
  return j;
}

std::optional<double> seconds(const JobModel& m, const JobSpec& j, int gpus, int nodes, std::string& why,
                              const std::string& gpu = "H100") {
  return m.run_time_s(j, PlacementSummary{gpu, gpus, nodes, 1, 1000, {}}, why);
}

std::vector<JobSpec> read_llm_csv(const std::string& path) {
  WorkloadConfig wc;
  wc.format = "llm-csv";
  wc.path = path;
  wc.scenario_file = "test.toml";
  return read_trace(wc);
}

}  // namespace

TEST_CASE("llm job strings: format and parse round trip, bad strings say why") {
  LlmJobLayout l{"llama3-70b", 4, 2, 4096, 512, 1};
  CHECK(format_llm_job(l) == "llama3-70b (tp 4, pp 2, seq 4096, batch 512)");
  std::string why;
  const auto back = parse_llm_job("Llama3-70B (tp 4, pp 2, seq 4096, batch 512, micro 2)", why);
  REQUIRE(back);
  CHECK(back->model == "llama3-70b");
  CHECK(back->tp == 4);
  CHECK(back->pp == 2);
  CHECK(back->micro_batch == 2);
  CHECK_FALSE(parse_llm_job("llama3-70b", why));
  CHECK_FALSE(parse_llm_job("x (tp 0, seq 1, batch 1)", why));
  CHECK(contains(why, "positive integer"));
  CHECK_FALSE(parse_llm_job("x (tp 1, ep 2, seq 1, batch 1)", why));
  CHECK(contains(why, "unknown layout key 'ep'"));
  CHECK_FALSE(parse_llm_job("x (tp 1, pp 1)", why));
}

TEST_CASE("llm model: run time = steps x the models/llm iteration for the same layout and GPU") {
  const auto m = model();
  std::string why;
  const JobSpec j = job("tiny (tp 2, pp 2, seq 2048, batch 64)", 16, 500);
  CHECK(m->can_time(j, why));
  const auto t = seconds(*m, j, 16, 2, why);
  REQUIRE_MESSAGE(t, why);

  // The same prediction by hand: DP = 16 / (2 x 2) = 4, 8 GPUs per node, the scenario's fabric.
  const llm::TransformerConfig cfg = llm::read_transformer_config((models_dir() / "tiny.json").string());
  llm::TrainingSetup s;
  s.tp = 2, s.pp = 2, s.dp = 4, s.seq = 2048, s.global_batch = 64, s.micro_batch = 1;
  s.recompute_auto = true, s.zero = 1, s.sequence_parallel = true;  // llm_recompute: auto
  const GpuSpec& h100 = gpu_spec("H100", "", 0, "gpu");
  llm::LlmPlatform p;
  p.gpu = &h100;
  p.gpus_per_node = 8;
  p.fabric = fabric_for(h100, 400, 8, 1);
  p.fabric.intra_gbs = 7200.0 / 8;
  p.host.launch_s = 70e-6;
  Calibration cal;
  const auto kernels = kernel_models().create("calibrated", cal.kernels, "", 0, "k");
  CollectiveModelParams cp;
  cp.calibration = llm::training_collectives(cal.collectives);  // with the small-message fits
  const auto collectives = collective_models().create("calibrated", cp, "", 0, "c");
  llm::set_link(p, *cp.calibration);
  const llm::Prediction pr = llm::predict_iteration(cfg, s, p, *kernels, *collectives);
  REQUIRE(pr.feasible);
  CHECK(*t == doctest::Approx(500 * pr.total_s).epsilon(1e-12));
  CHECK(pr.total_s > 0);

  const auto shape = m->iteration_shape(j, PlacementSummary{"H100", 16, 2, 1, 1000, {}});
  REQUIRE(shape);
  CHECK(shape->compute_s + shape->exposed_comm_s == doctest::Approx(pr.total_s));
  CHECK(shape->exposed_comm_s == doctest::Approx(pr.dp_exposed_s + pr.pp_s));
}

TEST_CASE("llm model: a job spread over more nodes is not faster, a faster GPU is faster") {
  const auto m = model();
  std::string why;
  const JobSpec j = job("tiny (tp 2, pp 2, seq 2048, batch 64)", 16);
  const double two = *seconds(*m, j, 16, 2, why), four = *seconds(*m, j, 16, 4, why),
               eight = *seconds(*m, j, 16, 8, why), sixteen = *seconds(*m, j, 16, 16, why);
  CHECK(two <= four);
  CHECK(four <= eight);
  CHECK(eight <= sixteen);
  CHECK(two < sixteen);  // TP over the NIC costs
  const auto a100 = seconds(*m, j, 16, 2, why, "A100-80GB");
  REQUIRE(a100);
  CHECK(two < *a100);
  // More data-parallel GPUs at the same global batch: fewer steps' worth of work per GPU.
  CHECK(*seconds(*m, j, 32, 4, why) < two);
}

TEST_CASE("llm model: jobs it cannot time say why, bad model strings name the trace line") {
  const auto m = model();
  std::string why;
  const JobSpec j = job("tiny (tp 4, pp 2, seq 2048, batch 64)", 8);
  CHECK_FALSE(seconds(*m, j, 12, 2, why));
  CHECK(contains(why, "does not divide the 12 GPUs"));
  CHECK_FALSE(seconds(*m, job("tiny (tp 1, pp 1, seq 2048, batch 6)", 4), 4, 1, why));
  CHECK(contains(why, "layout does not fit the 4 GPUs"));
  CHECK_FALSE(seconds(*m, j, 8, 1, why, "H100-NOPE"));
  CHECK(contains(why, "not in the catalog"));
  CHECK_FALSE(m->run_time_s(j, PlacementSummary{"H100", 8, 1, 1, 500, {}}, why));
  CHECK(contains(why, "shared GPUs"));
  // GPT-3 175B on 8 GPUs without model parallelism does not fit in 80 GB.
  CHECK_FALSE(seconds(*m, job("gpt3-175b (tp 8, pp 1, seq 2048, batch 8)", 8), 8, 1, why));
  CHECK(contains(why, "does not fit in memory"));

  std::string msg =
      input_error_of([&] { m->can_time(job("llama-9t (tp 1, pp 1, seq 8, batch 8)", 1), why); });
  CHECK(contains(msg, "jobs.csv:5: field 'model'"));
  CHECK(contains(msg, "no config 'llama-9t.json'"));
  CHECK(contains(msg, "gpt3-175b, tiny"));
  msg = input_error_of([&] { m->can_time(job("tiny", 1), why); });
  CHECK(contains(msg, "jobs.csv:5: field 'model'"));
  msg = input_error_of([&] { m->can_time(job("tiny (tp 3, pp 1, seq 8, batch 8)", 3), why); });  // 16 heads
  CHECK(contains(msg, "jobs.csv:5: field 'model'"));
  CHECK(contains(msg, "tp"));
  msg =
      input_error_of([&] { m->can_time(job("tiny (tp 1, pp 16, seq 8, batch 16)", 16), why); });  // 8 layers
  CHECK(contains(msg, "jobs.csv:5"));
  CHECK(contains(input_error_of([] {
                   JobModelParams p;
                   p.scenario_file = "s.toml";
                   job_models().create("llm", p);
                 }),
                 "execution.llm_models"));
}

TEST_CASE("llm-csv reader: layout in the model string, tokens to steps, bad rows name file, line, field") {
  const auto dir = test::temp_dir("llm-csv");
  const auto p = dir / "jobs.csv";
  test::write_file(p,
                   "id,submit,model,tp,pp,dp,seq,global_batch,steps,tokens\n"
                   "b,60,Llama3-70B,4,2,16,4096,512,,2e9\n"
                   "a,0,tiny,1,1,2,2048,64,100,\n");
  const auto jobs = read_llm_csv(p.string());
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].id == "a");
  CHECK(jobs[0].gpus == 2);
  CHECK(jobs[0].steps == 100);
  CHECK(jobs[0].model == "tiny (tp 1, pp 1, seq 2048, batch 64)");
  CHECK(jobs[1].gpus == 128);
  CHECK(jobs[1].steps == 954);  // ceil(2e9 / (512 x 4096)) = ceil(953.67)
  CHECK(jobs[1].model == "llama3-70b (tp 4, pp 2, seq 4096, batch 512)");

  auto bad = [&](const std::string& header, const std::string& row) {
    test::write_file(p, header + "\n" + row + "\n");
    return input_error_of([&] { read_llm_csv(p.string()); });
  };
  const std::string h = "submit,model,tp,pp,gpus,seq,global_batch,steps";
  CHECK(contains(bad(h, "0,tiny,0,1,8,2048,64,10"), "jobs.csv:2: field 'tp'"));
  CHECK(contains(bad(h, "0,tiny,4,1,6,2048,64,10"), "jobs.csv:2: field 'gpus'"));
  CHECK(contains(bad(h, "0,tiny,1,1,8,2048,60,10"), "jobs.csv:2: field 'global_batch'"));
  CHECK(contains(bad(h, "0,tiny,1,1,8,2048,64,"), "jobs.csv:2: field 'steps'"));
  CHECK(contains(bad(h, "-1,tiny,1,1,8,2048,64,1"), "jobs.csv:2: field 'submit'"));
  CHECK(contains(bad(h, "0,,1,1,8,2048,64,1"), "jobs.csv:2: field 'model'"));
  CHECK(contains(bad(h, "0,tiny,1,1,8,2.5,64,1"), "jobs.csv:2: field 'seq'"));
  CHECK(contains(bad("submit,model,tp,pp,gpus,dp,seq,global_batch,steps", "0,tiny,1,1,8,4,2048,64,1"),
                 "field 'gpus'"));
  CHECK(
      contains(bad("submit,model,tp,pp,seq,global_batch,steps", "0,tiny,1,1,2048,64,1"), "'dp' or a 'gpus'"));
  CHECK(contains(bad("submit,model,tp,seq,global_batch,steps,gpus", "0,tiny,1,2048,64,1,1"), "pp"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("llm end to end: two jobs on two 8-GPU H100 nodes finish at steps x iteration") {
  const auto dir = test::temp_dir("llm-e2e");
  test::write_file(dir / "jobs.csv",
                   "id,submit,model,tp,pp,dp,seq,global_batch,steps\n"
                   "a,0,tiny,2,1,4,2048,64,200\n"
                   "b,10,tiny,1,1,8,2048,64,300\n");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"h\"\nnodes = 2\ngpus_per_node = 8\ngpu = \"H100\"\n"
      "[cluster.network]\nnic_gbps = 400\nnics_per_node = 8\nintra_node_gbps = 7200\n"
      "[workload]\nformat = \"llm-csv\"\npath = \"jobs.csv\"\n"
      "[execution]\njob_model = \"llm\"\nllm_models = \"" +
      models_dir().string() +
      "\"\nllm_launch_us = 70\n"
      "[scheduler]\npolicy = \"fifo\"\n[output]\ndir = \"out\"\n";
  const Scenario sc = parse_scenario(toml, (dir / "s.toml").string(), dir.string());
  RunOptions opt;
  opt.quiet = true;
  const auto summary = run_scenario(sc, opt).summary;
  CHECK(summary["job_model"] == "llm");
  CHECK(summary["completed"] == 2);
  const auto m = model();
  std::string why;
  const double ta = *seconds(*m, job("tiny (tp 2, pp 1, seq 2048, batch 64)", 8, 200), 8, 1, why);
  const double tb = *seconds(*m, job("tiny (tp 1, pp 1, seq 2048, batch 64)", 8, 300), 8, 1, why);
  auto jobs = test::read_jobs_csv(dir / "out" / "jobs.csv");
  CHECK(jobs["a"].end - jobs["a"].start == doctest::Approx(ta).epsilon(1e-6));
  CHECK(jobs["b"].end - jobs["b"].start == doctest::Approx(tb).epsilon(1e-6));
  std::filesystem::remove_all(dir);
}

TEST_CASE("scenarios/llm-fleet.toml parses, and the llm model can time each of its jobs") {
  const Scenario sc = load_scenario(std::string(FLEETSIM_SOURCE_DIR) + "/scenarios/llm-fleet.toml");
  CHECK(sc.execution.job_model == "llm");
  const auto jobs = load_jobs(sc);
  CHECK(jobs.size() == 260);
  JobModelParams p;
  p.settings = sc.execution.settings;
  p.workload = sc.workload.settings;
  p.scenario_file = sc.file;
  const auto m = job_models().create("llm", p);
  std::string why;
  for (const JobSpec& j : jobs) {
    INFO(j.model);
    CHECK(m->can_time(j, why));
    const int per_node = 8, nodes = (j.gpus + per_node - 1) / per_node;
    CHECK_MESSAGE(m->run_time_s(j, PlacementSummary{"H100", j.gpus, nodes, 1, 1000, {}}, why), why);
  }
}

TEST_CASE("llm model: llm_tensor_core_efficiency slows the bf16 GEMMs, and must be above 0 and at most 1") {
  auto with = [](const char* efficiency) {
    JobModelParams p;
    p.settings.set("llm_models", models_dir().string());
    p.settings.set("llm_calibration",
                   std::string(FLEETSIM_SOURCE_DIR) + "/models/calibrations/neusight-fp32.json");
    if (efficiency != nullptr) p.settings.set("llm_tensor_core_efficiency", efficiency);
    p.workload.set("path", "jobs.csv");
    p.scenario_file = "test.toml";
    p.nic_gbps = 400, p.nics_per_node = 8, p.gpus_per_nic = 1, p.intra_node_gbps = 7200;
    return job_models().create("llm", p);
  };
  std::string why;
  const JobSpec j = job("tiny (tp 1, pp 1, seq 2048, batch 64)", 8);
  const double base = *seconds(*with(nullptr), j, 8, 1, why);
  const double one = *seconds(*with("1"), j, 8, 1, why);
  const double half = *seconds(*with("0.5"), j, 8, 1, why);
  CHECK(one == doctest::Approx(base).epsilon(1e-12));  // the calibration's default is 1
  CHECK(half > 1.2 * one);                             // GEMMs dominate: close to 2x, not more
  CHECK(half < 2.0 * one);
  const auto dir = test::temp_dir("llm-tce");
  const std::string toml =
      "[cluster]\n[[cluster.pool]]\nname = \"h\"\nnodes = 1\ngpus_per_node = 8\ngpu = \"H100\"\n"
      "[workload]\nformat = \"llm-csv\"\npath = \"jobs.csv\"\n"
      "[execution]\njob_model = \"llm\"\nllm_tensor_core_efficiency = 1.5\n";
  const std::string msg =
      input_error_of([&] { parse_scenario(toml, (dir / "s.toml").string(), dir.string()); });
  CHECK(contains(msg, "llm_tensor_core_efficiency"));
  CHECK(contains(msg, "(0, 1]"));
  std::filesystem::remove_all(dir);
}
