#pragma once
// The linear program of Gavel's heterogeneity-aware max-min fairness policy (Narayanan et al.,
// "Heterogeneity-Aware Cluster Scheduling Policies for Deep Learning Workloads", OSDI'20, §4.1),
// as a pure function (GLPK inside; no SimGrid, no simulation state) so it can be tested alone.
//
// Variables: X[j][k] in [0, 1], the fraction of wall time job j should spend on GPU type k.
// Normalised effective throughput of job j (Gavel's objective term, scale factor included):
//   u_j(X) = scale_j * sum_k X[j][k] * T[j][k] / T_eq[j],
//   T_eq[j] = sum_k T[j][k] * capacity[k] / sum_k capacity[k]
// T_eq is the job's throughput under an equal, type-proportional time share (Gavel's X^equal:
// the same fraction of time on every GPU of the cluster). With all types equally fast u_j is the
// job's GPU-time share, so the policy degenerates to max-min fairness over GPUs (LAS-like).
//   stage 1: maximise t  s.t.  u_j(X) >= t                            for every job j
//                              sum_k X[j][k] <= 1                      for every job j
//                              sum_j scale_j * X[j][k] <= capacity[k]  for every type k
// Stage 1 only fixes the minimum; it often leaves capacity unassigned (any X with the same minimum
// is optimal). Stage 2 keeps u_j >= t* (to a relative 1e-6) and maximises sum_j u_j: the spare
// capacity goes where it adds the most normalised throughput (a one-step stand-in for Gavel's
// water-filling variant). X[j][k] is fixed to 0 where T[j][k] <= 0 (the job cannot run there) or
// scale_j > capacity[k]; a job that can run nowhere gets X = 0 and is left out of the minimum.
#include <vector>

namespace fleetsim {

struct GavelLpProblem {
  std::vector<double> capacity;                 ///< GPUs of each type (K entries)
  std::vector<int> scale;                       ///< GPUs each job uses at once (n entries, >= 1)
  std::vector<std::vector<double>> throughput;  ///< n x K rates, any unit per job; <= 0: cannot run there
};

struct GavelLpSolution {
  bool ok = false;                     ///< false: GLPK failed (x all 0)
  double level = 0;                    ///< t*, the max-min normalised effective throughput
  std::vector<std::vector<double>> x;  ///< n x K time fractions, clipped to [0, 1]
  std::vector<double> normalized;      ///< u_j at x, per job
};

GavelLpSolution solve_max_min_fairness(const GavelLpProblem& problem);

}  // namespace fleetsim
