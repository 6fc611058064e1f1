// LLM training communication (models/llm/comm.hpp): one collective model over the whole size range
// (small-message fits spliced below nccl-tests'), TP all-reduces per micro-batch and layer, NICs
// shared by concurrent DP groups, Megatron's bucketed DP overlap; hand-derived from the fits'
// constants.
#include <doctest/doctest.h>

#include <string>

#include "models/calibration/calibration.hpp"
#include "models/collective/serving_links.hpp"
#include "models/llm/comm.hpp"
#include "models/llm/iteration.hpp"

using namespace fleetsim;
using namespace fleetsim::llm;

namespace {

/// Every kernel takes 1 us.
class FakeKernels final : public KernelModel {
 public:
  KernelPrediction predict(const KernelDesc&, const GpuSpec&) const override {
    return {1e-6, PredictionLabel::measured};
  }
};

/// DP gradient reductions take 1 ns per byte, everything else nothing.
class BytesComm final : public CollectiveModel {
 public:
  CollectivePrediction predict(const CollectiveDesc& d, const CommFabric&) const override {
    return {d.op == Collective::all_reduce && d.ranks == 4 ? 1e-9 * d.bytes : 0.0, "ring", "Simple"};
  }
};

std::shared_ptr<const CollectiveCalibration> shipped() {
  const Calibration cal =
      load_calibration(std::string(FLEETSIM_SOURCE_DIR) + "/models/calibrations/neusight-fp32.json");
  return training_collectives(cal.collectives);
}

LlmPlatform dgx_a100(const CollectiveCalibration& cal) {
  LlmPlatform p;
  p.gpu = &gpu_spec("A100-80GB");
  p.gpus_per_node = 8;
  p.fabric = fabric_for(*p.gpu, 200, 4, 2);  // vTrain's servers: 4 x 200 Gbit/s, 2 GPUs a NIC
  set_link(p, cal);
  return p;
}

}  // namespace

TEST_CASE("llm comm: one TP all-reduce per micro-batch on 8 NVSwitch A100s, from the fits' constants") {
  const auto cal = shipped();
  const auto model = collective_models().create("calibrated", CollectiveModelParams{cal, ""});
  const LlmPlatform p = dgx_a100(*cal);
  CHECK(p.fabric.link == "nvswitch");
  // h 1024, seq 256, micro batch 1, fp16: s b h x 2 = 524,288 bytes, below nccl-tests' 1 MiB: Vidur's
  // A100 NVSwitch 8-GPU LL128 band (vidur_links.cpp): 32.0768 us + 1.75 x 524288 B / 122.3731 GB/s.
  const double small = 3.2076761380747223e-05 + 1.75 * 524288 / 122.37313854974749e9;
  CHECK(small == doctest::Approx(39.5744e-6).epsilon(1e-5));
  CHECK(collective_seconds(*model, p, Collective::all_reduce, 524288, 8, 1) ==
        doctest::Approx(small).epsilon(1e-12));
  // seq 1024: 2 MiB, nccl-tests' 8-GPU band of 1-4 MiB (neusight-fp32.json): 92.868 us, bus bandwidth
  // about 1 PB/s (flat in size: latency-bound).
  const double large = 9.286797780845847e-05 + 1.75 * 2097152 / 999999.9999999999e9;
  CHECK(collective_seconds(*model, p, Collective::all_reduce, 2097152, 8, 1) ==
        doctest::Approx(large).epsilon(1e-12));

  // Through an iteration: one more layer adds 2 forward + 2 backward blocking all-reduces of s b h
  // per micro-batch (no recomputation), each `small`.
  TrainingSetup s;
  s.seq = 256, s.global_batch = 3, s.micro_batch = 1, s.dtype = DType::fp16, s.tp = 8;
  const FakeKernels k;
  const Prediction one = predict_iteration(gpt_config(1, 1024, 16, 51200, 256), s, p, k, *model);
  const Prediction two = predict_iteration(gpt_config(2, 1024, 16, 51200, 256), s, p, k, *model);
  CHECK(one.microbatches == 3);
  CHECK(two.tp_s - one.tp_s == doctest::Approx(3 * 4 * small).epsilon(1e-9));
}

TEST_CASE("llm comm: nccl-tests from 1 MiB, the small-message fit below it, on the link it was measured on") {
  const auto cal = shipped();
  const auto* a100 = [&]() -> const CollectiveCurve* {
    for (const auto& c : cal->curves)
      if (c.system == "A100" && c.op == Collective::all_reduce && c.ranks == 8 && c.nodes == 1) return &c;
    return nullptr;
  }();
  REQUIRE(a100 != nullptr);
  CHECK(a100->link == "nvswitch");
  CHECK(a100->bands.front().min_bytes == 2048);                   // Vidur's smallest
  CHECK(a100->band_for(1048575).protocol == "LL128");             // Vidur's regime below the splice
  CHECK(a100->band_for(kSpliceBytes).min_bytes == kSpliceBytes);  // nccl-tests' from it
  CHECK(a100->band_for(1e9).busbw_gbs == doctest::Approx(231.97369970538125));
  for (std::size_t i = 1; i < a100->bands.size(); ++i)
    CHECK(a100->bands[i].min_bytes > a100->bands[i - 1].min_bytes);
  // H100 has only the small-message measurements: kept whole.
  bool h100 = false;
  for (const auto& c : cal->curves) h100 = h100 || (c.system == "H100" && c.link == "nvswitch");
  CHECK(h100);
  // A PCIe A100 (NVLink-bridged pairs in the catalog) is not priced from NVSwitch curves: Vidur's
  // pair curve, 4 GPUs (two pairs over PCIe), Simple band: 58.03 us + 1.5 x 4 MB / 23.606 GB/s.
  LlmPlatform pcie;
  pcie.gpu = &gpu_spec("A100-PCIE-40GB");
  pcie.fabric = fabric_for(*pcie.gpu);
  set_link(pcie, *cal);
  CHECK(pcie.fabric.link == "nvlink-pair");
  const auto model = collective_models().create("calibrated", CollectiveModelParams{cal, ""});
  CHECK(collective_seconds(*model, pcie, Collective::all_reduce, 4e6, 4, 1) ==
        doctest::Approx(5.8034171159642835e-05 + 1.5 * 4e6 / 23.606238902906526e9).epsilon(1e-12));
  // A link no curve of the system was measured on: the analytic model.
  pcie.fabric.link = "pcie-p2p";
  CHECK(collective_seconds(*model, pcie, Collective::all_reduce, 4e6, 4, 1) ==
        doctest::Approx(
            predict_analytic({Collective::all_reduce, 4e6, 4, 1}, pcie.fabric, cal->analytic).seconds));
}

TEST_CASE("llm comm: DP groups across servers share the servers' NICs (TP 8, DP 8 on 8 DGX A100)") {
  const auto cal = shipped();
  const auto model = collective_models().create("calibrated", CollectiveModelParams{cal, ""});
  const LlmPlatform p = dgx_a100(*cal);
  CHECK(group_span(8, 8, 8) == 8);
  CHECK(group_span(2, 6, 8) == 1);  // the tied-embedding pair of stages 0 and 3 on 8 GPUs (TP 1, DP 2)
  CHECK(group_span(16, 1, 8) == 2);
  // One rank per server; the server's 8 GPUs all reduce at once over its 4 x 25 GB/s: 12.5 GB/s a
  // group. Ring over 8 servers, Simple: 1.75 x bytes / (12.5 GB/s x 0.80) + 2 x 7 hops x 2.7 us x 5.7.
  const double bytes = 100e6;
  const double t = 1.75 * bytes / (12.5e9 * 0.80) + 14 * 2.7e-6 * 5.7;
  CHECK(t == doctest::Approx(17.7155e-3).epsilon(1e-4));
  CHECK(collective_seconds(*model, p, Collective::all_reduce, bytes, 8, 8) ==
        doctest::Approx(t).epsilon(1e-9));
}

/// Pipeline sends take 1 ns per byte, TP all-gathers 2 ns per byte, everything else nothing.
class SendComm final : public CollectiveModel {
 public:
  CollectivePrediction predict(const CollectiveDesc& d, const CommFabric&) const override {
    if (d.op == Collective::send_recv) return {1e-9 * d.bytes, "p2p", "Simple"};
    if (d.op == Collective::all_gather) return {2e-9 * d.bytes, "ring", "Simple"};
    return {0.0, "ring", "Simple"};
  }
};

TEST_CASE("llm comm: a pipeline send is each TP rank's 1/t of the activation, then a TP all-gather") {
  // h 1024, seq 256, micro batch 1, fp16: the activation s b h x 2 = 524,288 bytes. TP 4: each rank
  // sends 131,072 bytes (131.072 us) and the receiving TP group all-gathers the 524,288 (1,048.576
  // us). PP 2, 4 micro-batches: 2 (m + p - 2) = 8 sends on the critical path: 9.437184 ms.
  const auto cal = shipped();
  LlmPlatform p = dgx_a100(*cal);
  const FakeKernels k;
  const SendComm comm;
  TrainingSetup s;
  s.seq = 256, s.global_batch = 4, s.micro_batch = 1, s.dtype = DType::fp16, s.tp = 4, s.pp = 2;
  const TransformerConfig m = gpt_config(2, 1024, 16, 51200, 256);
  CHECK(predict_iteration(m, s, p, k, comm).pp_s == doctest::Approx(8 * (131072e-9 + 2 * 524288e-9)));
  // Sequence parallelism: the activation is already split over TP; no all-gather.
  s.sequence_parallel = true;
  CHECK(predict_iteration(m, s, p, k, comm).pp_s == doctest::Approx(8 * 131072e-9));
  // TP 1: the whole activation, nothing to gather.
  s.sequence_parallel = false, s.tp = 1;
  CHECK(predict_iteration(m, s, p, k, comm).pp_s == doctest::Approx(8 * 524288e-9));
}

TEST_CASE("llm comm: Megatron's bucketed DP reduction behind the last backward pass, hand-derived") {
  // 100 M parameters in buckets of 40 M: two full ones (10 ms each) ready at 40% and 80% of a 30 ms
  // backward pass, the last 20 M (6 ms) at its end. Comm stream: 12-22, 24-34, 34-40: 10 ms exposed.
  const auto ms = [](double n) { return n == 40e6 ? 10e-3 : 6e-3; };
  const BucketedReduction slow = bucketed_reduction(100e6, 40e6, 30e-3, ms);
  CHECK(slow.total_s == doctest::Approx(26e-3));
  CHECK(slow.exposed_s == doctest::Approx(10e-3));
  // Reductions that keep up expose only the last bucket.
  const auto fast = [](double n) { return n == 40e6 ? 2e-3 : 1e-3; };
  CHECK(bucketed_reduction(100e6, 40e6, 30e-3, fast).exposed_s == doctest::Approx(1e-3));
  // One bucket cannot start before the pass ends.
  CHECK(bucketed_reduction(30e6, 40e6, 30e-3, ms).exposed_s == doctest::Approx(6e-3));
  CHECK(grad_bucket_params(8) == 40e6);
  CHECK(grad_bucket_params(64) == 64e6);

  // Through an iteration (DP 4, 1 ns per gradient byte): the exposed part is the rule's with the
  // critical stage's backward pass, and without overlap the whole reduction follows the pass.
  TrainingSetup s;
  s.seq = 128, s.global_batch = 4, s.micro_batch = 1, s.dtype = DType::fp16, s.dp = 4;
  const TransformerConfig m = gpt_config(8, 1024, 16, 51200, 128);
  LlmPlatform p;
  p.gpu = &gpu_spec("A100-80GB");
  const FakeKernels k;
  const Prediction r = predict_iteration(m, s, p, k, BytesComm{});
  const double params = r.stages[0].params;
  const auto one_ns = [](double n) { return 2e-9 * n; };
  const BucketedReduction want = bucketed_reduction(params, 40e6, r.stages[0].backward_s, one_ns);
  CHECK(params > 40e6);  // more than one bucket
  CHECK(r.dp_s == doctest::Approx(2e-9 * params));
  CHECK(r.dp_exposed_s == doctest::Approx(want.exposed_s));
  CHECK(r.dp_exposed_s < r.dp_s);
  s.overlap_grad = false;
  CHECK(predict_iteration(m, s, p, k, BytesComm{}).dp_exposed_s == doctest::Approx(2e-9 * params));
}
