#include "sim/scheduling/policies/gavel_lp.hpp"

#include <glpk.h>

#include <algorithm>
#include <memory>

namespace fleetsim {
namespace {

struct ProbDeleter {
  void operator()(glp_prob* p) const { glp_delete_prob(p); }
};

bool run_simplex(glp_prob* lp) {
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  return glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT;
}

}  // namespace

GavelLpSolution solve_max_min_fairness(const GavelLpProblem& p) {
  const int n = static_cast<int>(p.scale.size());
  const int types = static_cast<int>(p.capacity.size());
  GavelLpSolution sol;
  sol.x.assign(static_cast<std::size_t>(n), std::vector<double>(static_cast<std::size_t>(types), 0.0));
  sol.normalized.assign(static_cast<std::size_t>(n), 0.0);
  double total = 0;
  for (double c : p.capacity) total += std::max(0.0, c);
  if (n == 0 || types == 0 || total <= 0) {
    sol.ok = true;
    return sol;
  }

  // Coefficient of X[j][k] in u_j; 0 where the job cannot run.
  std::vector<std::vector<double>> coef(static_cast<std::size_t>(n),
                                        std::vector<double>(static_cast<std::size_t>(types), 0.0));
  std::vector<char> eligible(static_cast<std::size_t>(n), 0);
  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    const int scale = std::max(1, p.scale[ju]);
    double equal = 0;
    for (int k = 0; k < types; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const double t = p.throughput[ju][ku];
      if (t > 0 && scale <= p.capacity[ku]) equal += t * p.capacity[ku] / total;
    }
    if (equal <= 0) continue;
    eligible[ju] = 1;
    for (int k = 0; k < types; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const double t = p.throughput[ju][ku];
      if (t > 0 && scale <= p.capacity[ku]) coef[ju][ku] = scale * t / equal;
    }
  }

  glp_term_out(GLP_OFF);
  std::unique_ptr<glp_prob, ProbDeleter> owner(glp_create_prob());
  glp_prob* lp = owner.get();
  glp_set_obj_dir(lp, GLP_MAX);
  // Columns: X[j][k] = 1 + j * types + k, then t.
  const int t_col = n * types + 1;
  glp_add_cols(lp, t_col);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < types; ++k) {
      const int col = 1 + j * types + k;
      if (coef[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)] > 0)
        glp_set_col_bnds(lp, col, GLP_DB, 0.0, 1.0);
      else
        glp_set_col_bnds(lp, col, GLP_FX, 0.0, 0.0);
    }
  glp_set_col_bnds(lp, t_col, GLP_LO, 0.0, 0.0);
  glp_set_obj_coef(lp, t_col, 1.0);

  // Rows: fairness (u_j - t >= 0) for eligible jobs, one time budget per job, one capacity per type.
  std::vector<int> ia{0}, ja{0};
  std::vector<double> ar{0.0};
  auto add = [&](int row, int col, double v) {
    ia.push_back(row);
    ja.push_back(col);
    ar.push_back(v);
  };
  int row = 0;
  for (int j = 0; j < n; ++j) {
    if (eligible[static_cast<std::size_t>(j)] == 0) continue;
    row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, GLP_LO, 0.0, 0.0);
    for (int k = 0; k < types; ++k) {
      const double c = coef[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)];
      if (c > 0) add(row, 1 + j * types + k, c);
    }
    add(row, t_col, -1.0);
  }
  for (int j = 0; j < n; ++j) {
    row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0, 1.0);
    for (int k = 0; k < types; ++k) add(row, 1 + j * types + k, 1.0);
  }
  for (int k = 0; k < types; ++k) {
    row = glp_add_rows(lp, 1);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0, std::max(0.0, p.capacity[static_cast<std::size_t>(k)]));
    for (int j = 0; j < n; ++j)
      add(row, 1 + j * types + k, std::max(1, p.scale[static_cast<std::size_t>(j)]));
  }
  glp_load_matrix(lp, static_cast<int>(ia.size()) - 1, ia.data(), ja.data(), ar.data());

  if (!run_simplex(lp)) return sol;
  sol.level = glp_get_obj_val(lp);
  std::vector<double> x1(static_cast<std::size_t>(t_col), 0.0);
  for (int col = 1; col < t_col; ++col) x1[static_cast<std::size_t>(col - 1)] = glp_get_col_prim(lp, col);

  // Stage 2: keep the minimum, spend the rest where it adds the most normalised throughput.
  glp_set_col_bnds(lp, t_col, GLP_LO, sol.level * (1.0 - 1e-6), 0.0);
  glp_set_obj_coef(lp, t_col, 0.0);
  for (int j = 0; j < n; ++j)
    for (int k = 0; k < types; ++k)
      glp_set_obj_coef(lp, 1 + j * types + k, coef[static_cast<std::size_t>(j)][static_cast<std::size_t>(k)]);
  if (run_simplex(lp))
    for (int col = 1; col < t_col; ++col) x1[static_cast<std::size_t>(col - 1)] = glp_get_col_prim(lp, col);

  for (int j = 0; j < n; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    for (int k = 0; k < types; ++k) {
      const auto ku = static_cast<std::size_t>(k);
      const double v = std::clamp(x1[static_cast<std::size_t>(j * types + k)], 0.0, 1.0);
      sol.x[ju][ku] = v;
      sol.normalized[ju] += coef[ju][ku] * v;
    }
  }
  sol.ok = true;
  return sol;
}

}  // namespace fleetsim
