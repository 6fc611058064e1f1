#pragma once
// Pollux's goodput model (Qiao et al., OSDI'21; artifact petuum/adaptdl, branch osdi21-artifact,
// simulator/goodput.py and speedup.py), as the Pollux scheduler and its adaptive jobs use it:
//   - a job's step time is modelled from what it has observed so far (PerfParams, fitted by L-BFGS-B
//     on log errors, as the artifact's fit_perf_params does with scipy);
//   - its statistical efficiency from its current gradient statistics (GradParams);
//   - goodput = throughput x efficiency, maximised over the global batch (and its split into atomic
//     batch x accumulation steps);
//   - speedup(n, r) = best goodput on r GPUs over n nodes / a base goodput.
// Pure: no SimGrid.
#include <vector>

namespace fleetsim::pollux {

/// T_compute = alpha_c + beta_c x atomic; T_network = alpha + beta x max(replicas - 2, 0) with
/// (alpha_n, beta_n) across nodes, (alpha_r, beta_r) within one node; T_step = (T_compute^gamma +
/// T_network^gamma)^(1/gamma).
struct PerfParams {
  double alpha_c = 0, beta_c = 0, alpha_n = 0, beta_n = 0, alpha_r = 0, beta_r = 0, gamma = 1;
};

/// Gradient statistics: squared norm of the true gradient and the variance of its estimate.
struct GradParams {
  double sqr = 0, var = 0;
};

/// One measured configuration: the time of one accumulation micro-step (step - sync) and of one
/// optimizer step (incl. the all-reduce) at atomic batch `atomic_bsz` per GPU.
struct Observation {
  int nodes = 1;
  int replicas = 1;
  long atomic_bsz = 1;
  double accum_step_time = 0;
  double optim_step_time = 0;
};

/// The artifact's fit_perf_params: minimises RMSLE(accum) + RMSLE(optim) + 1e-3 (gamma - 1)^2 +
/// 1e-2 ((beta_n / alpha_n)^2 + (beta_r / alpha_r)^2) under bounds, holding fixed the parameters the
/// observations cannot identify (one atomic batch: alpha_c = mean accum / 2; no multi-node: alpha_n,
/// beta_n; no single-node multi-GPU: alpha_r, beta_r; no more than 2 replicas: beta_n, beta_r), then
/// applies its prior (no multi-node: alpha_n >= 1.1 alpha_r, beta_n >= 1.1 beta_r).
/// `observations` must not be empty.
PerfParams fit_perf_params(const std::vector<Observation>& observations);

namespace detail {
/// fit_perf_params' objective at `params` (all seven free), and its analytic gradient into `grad`
/// when given. Exposed for tests (gradient vs finite differences).
double fit_objective(const std::vector<Observation>& observations, const PerfParams& params,
                     PerfParams* grad = nullptr);
}  // namespace detail

/// Best configuration of a job on (nodes, replicas).
struct GoodputChoice {
  double goodput = 0;    ///< examples of progress per second (0: no valid configuration)
  long atomic_bsz = 0;   ///< per GPU and micro-step
  long accum_steps = 0;  ///< extra micro-steps per optimizer step
};

struct BatchLimits {
  long init_batch = 1;  ///< the application's smallest (initial) global batch
  long max_batch = 1;   ///< largest global batch
  long min_atomic = 1;  ///< smallest atomic batch per GPU
  long max_atomic = 1;  ///< largest atomic batch per GPU (memory)
  bool accumulation = true;
};

class GoodputFunction {
 public:
  GoodputFunction(const PerfParams& perf, const GradParams& grad, long init_batch);
  /// Examples per second at this configuration.
  double throughput(int nodes, int replicas, long atomic_bsz, long accum_steps) const;
  /// Statistical efficiency of a global batch (1 at init_batch).
  double efficiency(double batch) const;
  double evaluate(int nodes, int replicas, long atomic_bsz, long accum_steps) const;
  /// The artifact's optimize(): 50 global batches geometrically spaced from max(init_batch,
  /// min_atomic x replicas) to max_batch, each split as the artifact does (accumulation when the
  /// local batch exceeds max_atomic, and at least one extra micro-step on one GPU above init_batch),
  /// invalid atomic batches scored 0; the first best wins.
  GoodputChoice optimize(int nodes, int replicas, const BatchLimits& limits) const;

 private:
  PerfParams perf_;
  GradParams grad_;
  long init_batch_;
};

/// speedup(nodes, replicas) = optimize(nodes, replicas).goodput / base, memoised for replicas < 32.
/// The base is the goodput on one GPU unless set_base() changes it (the Pollux policy sets each
/// job's fair-share goodput).
class SpeedupFunction {
 public:
  SpeedupFunction(const GoodputFunction& goodput, const BatchLimits& limits);
  double operator()(int nodes, int replicas);
  /// Replaces the base by the best goodput on (nodes, replicas) and clears the memo.
  void set_base(int nodes, int replicas);
  const GoodputFunction& goodput() const { return goodput_; }

 private:
  GoodputFunction goodput_;
  BatchLimits limits_;
  double base_ = 1;
  std::vector<double> memo_;  ///< 32 x 32, by (nodes, replicas); < 0 = not computed
};

}  // namespace fleetsim::pollux
