#pragma once
// Checkpoint intervals: the optimum time between checkpoints of a job that fails at random, pure
// functions (no SimGrid). Young (CACM 1974) gives the first-order optimum sqrt(2 delta M); Daly
// ("A higher order estimate of the optimum checkpoint interval for restart dumps", FGCS 22(3), 2006,
// eq. 37) the higher-order one used for checkpoint = "auto":
//   tau = sqrt(2 delta M) [1 + 1/3 sqrt(delta / (2M)) + 1/9 (delta / (2M))] - delta   (delta < 2M)
//   tau = M                                                                          (delta >= 2M)
// with delta the checkpoint write time and M the job's mean time to interrupt (for a job on N nodes
// of per-node failure rate r, M = 1 / (N r)). The restart time R does not change the optimum.
namespace fleetsim {

/// Young's first-order optimum sqrt(2 delta M), s (delta, M in s; 0 if either is not > 0).
double young_interval_s(double delta_s, double mttf_s);
/// Daly's higher-order optimum, s (the compute time between two checkpoints).
double daly_interval_s(double delta_s, double mttf_s);
/// Expected wall time per unit of work of a job checkpointing every tau with write time delta,
/// restart time R, under exponential failures of mean M (Daly eq. 20, exact for that model): the
/// inverse of the best effective training time ratio the job can reach.
double daly_wall_per_work(double tau_s, double delta_s, double restart_s, double mttf_s);

}  // namespace fleetsim
