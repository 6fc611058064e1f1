// Pollux's goodput model: see pollux_goodput.hpp. A reimplementation of the semantics of the
// artifact's simulator/goodput.py and speedup.py (petuum/adaptdl, osdi21-artifact); the fit uses
// LBFGSpp's L-BFGS-B with the gradient of the objective derived by hand (the artifact: scipy's
// L-BFGS-B with autograd).
#include "models/job/pollux_goodput.hpp"

#include <LBFGSB.h>
#include <Eigen/Core>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace fleetsim::pollux {

namespace {

constexpr double kEps = 1e-8;  // the artifact's floor/ceil tolerance and lower bound of parameters
constexpr int kParams = 7;     // alpha_c, beta_c, alpha_n, beta_n, alpha_r, beta_r, gamma
using Params = std::array<double, kParams>;

PerfParams to_perf(const Params& p) {
  return {p[0], p[1], p[2], p[3], p[4], p[5], p[6]};
}

/// Which link bounds the all-reduce: across nodes, within one node, or none (one replica).
enum class Link { kNodes, kReplicas, kNone };

Link link_of(int nodes, int replicas) {
  if (nodes > 1) return Link::kNodes;
  if (replicas > 1) return Link::kReplicas;
  return Link::kNone;
}

/// max(replicas - 2, 1e-8): the retrogression multiplier.
double retro_count(int replicas) {
  return std::max(static_cast<double>(replicas) - 2.0, kEps);
}

double network_time(const PerfParams& p, int nodes, int replicas) {
  const double m = retro_count(replicas);
  switch (link_of(nodes, replicas)) {
    case Link::kNodes:
      return p.alpha_n + p.beta_n * m;
    case Link::kReplicas:
      return p.alpha_r + p.beta_r * m;
    case Link::kNone:
      break;
  }
  return kEps + kEps * m;
}

/// log((a^g + n^g)^(1/g)) and the weights a^g / (a^g + n^g), n^g / (a^g + n^g), computed in log
/// space (no overflow for large gamma).
struct LogOptim {
  double value, w_a, w_n;
};

LogOptim log_optim_time(double accum, double network, double gamma) {
  const double la = gamma * std::log(accum), ln = gamma * std::log(network);
  const double top = std::max(la, ln);
  const double ea = std::exp(la - top), en = std::exp(ln - top), s = ea + en;
  return {(top + std::log(s)) / gamma, ea / s, en / s};
}

/// One observation, pre-digested for the objective.
struct Sample {
  double atomic, retro, log_accum, log_optim;
  Link link;
};

/// The artifact's _obj_fn over the free parameters (the fixed ones stay at their values in `full`),
/// with its gradient; remembers the best finite point it evaluated.
class Objective {
 public:
  Objective(std::vector<Sample> samples, Params full, std::vector<int> free)
      : samples_(std::move(samples)), full_(full), free_(std::move(free)), best_x_(full) {}

  double operator()(const Eigen::VectorXd& x, Eigen::VectorXd& grad) {
    Params p = full_;
    for (size_t k = 0; k < free_.size(); ++k) p[free_[k]] = x[static_cast<Eigen::Index>(k)];
    Params g{};
    const double f = value(p, &g);
    for (size_t k = 0; k < free_.size(); ++k) grad[static_cast<Eigen::Index>(k)] = g[free_[k]];
    if (std::isfinite(f) && f < best_f_) {
      best_f_ = f;
      best_x_ = p;
    }
    return f;
  }

  /// Objective at full parameters `p`; its gradient into `grad` when given.
  double value(const Params& p, Params* grad) const {
    const double n = static_cast<double>(samples_.size());
    const double gamma = p[6];
    double sse1 = 0, sse2 = 0;
    Params d1{}, d2{};  // sum of e_i x d(pred_i)/dp, for err1 and err2
    for (const Sample& s : samples_) {
      const double accum = p[0] + p[1] * s.atomic;
      double net = kEps + kEps * s.retro;
      int ia = -1;  // index of the network alpha in use (beta = ia + 1); -1: constant
      if (s.link == Link::kNodes) ia = 2;
      if (s.link == Link::kReplicas) ia = 4;
      if (ia >= 0) net = p[ia] + p[ia + 1] * s.retro;
      const double log_accum = std::log(accum);
      const LogOptim lo = log_optim_time(accum, net, gamma);
      const double e1 = log_accum - s.log_accum, e2 = lo.value - s.log_optim;
      sse1 += e1 * e1;
      sse2 += e2 * e2;
      if (!grad) continue;
      // d log(accum) / d(alpha_c, beta_c) = (1, atomic) / accum.
      d1[0] += e1 / accum;
      d1[1] += e1 * s.atomic / accum;
      // d L / d accum = w_a / accum, d L / d net = w_n / net,
      // d L / d gamma = (w_a log accum + w_n log net - L) / gamma.
      const double da = e2 * lo.w_a / accum, dn = e2 * lo.w_n / net;
      d2[0] += da;
      d2[1] += da * s.atomic;
      if (ia >= 0) {
        d2[ia] += dn;
        d2[ia + 1] += dn * s.retro;
      }
      d2[6] += e2 * (lo.w_a * log_accum + lo.w_n * std::log(net) - lo.value) / gamma;
    }
    const double err1 = std::sqrt(sse1 / n), err2 = std::sqrt(sse2 / n);
    const double rn = p[3] / p[2], rr = p[5] / p[4];
    const double f = err1 + err2 + 1e-3 * (gamma - 1) * (gamma - 1) + 1e-2 * (rn * rn + rr * rr);
    if (grad) {
      // d sqrt(sse / n) = d(sse) / (2 n err); at err = 0 (a perfect fit) the gradient is taken as 0.
      const double c1 = err1 > 0 ? 1.0 / (n * err1) : 0.0, c2 = err2 > 0 ? 1.0 / (n * err2) : 0.0;
      for (int k = 0; k < kParams; ++k) (*grad)[k] = c1 * d1[k] + c2 * d2[k];
      (*grad)[6] += 2e-3 * (gamma - 1);
      (*grad)[3] += 2e-2 * rn / p[2];
      (*grad)[2] -= 2e-2 * rn * rn / p[2];
      (*grad)[5] += 2e-2 * rr / p[4];
      (*grad)[4] -= 2e-2 * rr * rr / p[4];
    }
    return f;
  }

  const Params& best() const { return best_x_; }
  bool found() const { return std::isfinite(best_f_); }

 private:
  std::vector<Sample> samples_;
  Params full_;
  std::vector<int> free_;
  Params best_x_;
  double best_f_ = std::numeric_limits<double>::infinity();
};

/// A line search for LBFGSpp's L-BFGS-B (its LineSearch template interface). The library's own
/// More-Thuente search (LBFGSpp 0.1.0, Debian) can cycle on one trial point until it gives up, which it
/// does on this objective (RMSE of one observation is |error|, with a kink at the optimum). This one:
/// start at `step` (<= step_max); while the sufficient-decrease and strong curvature conditions fail,
/// extrapolate (x2, up to step_max: accepted there if still descending) or shrink a bracket by
/// safeguarded quadratic interpolation. Out of trials, it falls back to the best sufficient-decrease
/// point seen, and throws only if there is none.
template <typename Scalar>
class BracketingLineSearch {
 public:
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;
  template <typename Foo>
  static void LineSearch(Foo& f, Scalar& fx, Vector& x, Vector& grad, Scalar& step, const Scalar& step_max,
                         const Vector& drt, const Vector& xp, const LBFGSpp::LBFGSBParam<Scalar>& param) {
    const Scalar f0 = fx, dg0 = grad.dot(drt);
    if (!(dg0 < 0)) throw std::logic_error("line search: not a descent direction");
    Scalar lo = 0, f_lo = f0, dg_lo = dg0, hi = std::numeric_limits<Scalar>::infinity(), f_hi = 0;
    Scalar best_step = 0, best_f = f0;
    Vector best_x, best_grad;
    for (int it = 0; it < param.max_linesearch; ++it) {
      x.noalias() = xp + step * drt;
      fx = f(x, grad);
      const Scalar dg = grad.dot(drt);
      const bool decrease = fx <= f0 + param.ftol * step * dg0;
      if (decrease && fx < best_f) {
        best_step = step, best_f = fx, best_x = x, best_grad = grad;
      }
      if (!decrease || fx >= f_lo) {
        hi = step, f_hi = fx;  // overshot: the minimum lies in (lo, step)
      } else {
        if (std::abs(dg) <= -param.wolfe * dg0) return;  // strong Wolfe: done
        if (dg > 0) {
          hi = step, f_hi = fx;  // passed the minimum
        } else {
          lo = step, f_lo = fx, dg_lo = dg;  // still descending
          if (!std::isfinite(hi)) {
            if (step >= step_max) return;  // at the box: take it
            step = std::min(2 * step, step_max);
            continue;
          }
        }
      }
      // Next trial inside the bracket: the minimiser of the quadratic through (lo, f_lo, dg_lo) and
      // (hi, f_hi), kept at least 10% of the width away from either end (else the midpoint).
      const Scalar w = hi - lo;
      const Scalar curv = (f_hi - f_lo - dg_lo * w) / (w * w);
      Scalar next = curv > 0 ? lo - dg_lo / (2 * curv) : lo + w / 2;
      if (!std::isfinite(next) || next < lo + w / 10 || next > hi - w / 10) next = lo + w / 2;
      step = next;
    }
    if (best_step <= 0) throw std::runtime_error("line search: no decrease");
    step = best_step, fx = best_f, x = best_x, grad = best_grad;
  }
};

/// numpy.geomspace(start, stop, 50): 10 ** linspace(log10 start, log10 stop), ends exact.
std::array<double, 50> geomspace50(double start, double stop) {
  std::array<double, 50> out{};
  const double ls = std::log10(start), le = std::log10(stop), step = (le - ls) / 49.0;
  for (int i = 0; i < 50; ++i) out[static_cast<size_t>(i)] = std::pow(10.0, i * step + ls);
  out.front() = start;
  out.back() = stop;
  return out;
}

}  // namespace

// ---- fit ----------------------------------------------------------------------------------------

namespace {

std::vector<Sample> digest(const std::vector<Observation>& observations) {
  std::vector<Sample> out;
  out.reserve(observations.size());
  for (const Observation& o : observations) {
    // Times must be positive for the logs; a non-positive one (e.g. step - sync rounding to 0)
    // is clamped to 1e-12 s rather than poisoning the fit with -inf.
    out.push_back({static_cast<double>(o.atomic_bsz), retro_count(o.replicas),
                   std::log(std::max(o.accum_step_time, 1e-12)), std::log(std::max(o.optim_step_time, 1e-12)),
                   link_of(o.nodes, o.replicas)});
  }
  return out;
}

}  // namespace

double detail::fit_objective(const std::vector<Observation>& obs, const PerfParams& p, PerfParams* grad) {
  const Params full{p.alpha_c, p.beta_c, p.alpha_n, p.beta_n, p.alpha_r, p.beta_r, p.gamma};
  const Objective obj(digest(obs), full, {});
  Params g{};
  const double f = obj.value(full, grad ? &g : nullptr);
  if (grad) *grad = to_perf(g);
  return f;
}

PerfParams fit_perf_params(const std::vector<Observation>& observations) {
  if (observations.empty()) throw std::invalid_argument("fit_perf_params: no observations");
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Params init{1e-1, 1e-2, 1e-1, 1e-2, 1e-1, 1e-2, 1.0 + 1e-3};
  Params lower{kEps, kEps, kEps, kEps, kEps, kEps, 1.0};
  Params upper{kInf, kInf, kInf, kInf, kInf, kInf, 10.0};
  std::array<bool, kParams> fixed{};
  auto fix = [&](int i, double v) {
    init[i] = lower[i] = upper[i] = v;
    fixed[i] = true;
  };
  bool one_atomic = true, multi_node = false, single_node_multi = false, over_two = false;
  double accum_sum = 0;
  for (const Observation& o : observations) {
    one_atomic = one_atomic && o.atomic_bsz == observations.front().atomic_bsz;
    multi_node = multi_node || o.nodes > 1;
    single_node_multi = single_node_multi || (o.nodes == 1 && o.replicas > 1);
    over_two = over_two || o.replicas > 2;
    accum_sum += o.accum_step_time;
  }
  // (Not below 0: a mean accum time < 0, i.e. sync > step in the data, would make log(accum) NaN.)
  if (one_atomic) fix(0, std::max(0.0, accum_sum / static_cast<double>(observations.size()) / 2));
  if (!multi_node) fix(2, kEps), fix(3, kEps);
  if (!single_node_multi) fix(4, kEps), fix(5, kEps);
  if (!over_two) fix(3, kEps), fix(5, kEps);

  // Only the free parameters go to the solver (index map), the fixed ones stay in `init`.
  std::vector<int> free;
  for (int i = 0; i < kParams; ++i)
    if (!fixed[i]) free.push_back(i);
  const auto nf = static_cast<Eigen::Index>(free.size());
  Eigen::VectorXd x(nf), lb(nf), ub(nf);
  for (Eigen::Index k = 0; k < nf; ++k) {
    x[k] = init[free[k]];
    lb[k] = lower[free[k]];
    ub[k] = upper[free[k]];
  }
  // scipy's L-BFGS-B defaults: 10 corrections, stop at a projected gradient <= 1e-5 or a relative
  // decrease <= 2.22e-9 (factr 1e7); at most 15000 iterations there, 2000 here (never reached in
  // practice: the fits converge within tens).
  LBFGSpp::LBFGSBParam<double> param;
  param.m = 10;
  param.epsilon = 1e-5;
  param.epsilon_rel = 0;
  param.past = 1;
  param.delta = 2.220446049250313e-09;
  param.max_iterations = 2000;
  param.max_linesearch = 30;
  Objective obj(digest(observations), init, free);
  try {
    LBFGSpp::LBFGSBSolver<double, BracketingLineSearch> solver(param);
    double fx = 0;
    solver.minimize(obj, x, fx, lb, ub);
  } catch (const std::exception&) {
    // The line search found no decrease (a flat or kinked objective near the optimum; scipy
    // reports ABNORMAL_TERMINATION_IN_LNSRCH there and still returns its point), or LBFGSpp
    // refused a direction. Like scipy, keep the best point reached (below); never rethrow.
  }
  // The best point evaluated (the solver's last accepted point unless a trial did better); the
  // initial point when nothing finite was found (cannot happen with positive times).
  Params p = obj.found() ? obj.best() : init;
  for (int i = 0; i < kParams; ++i)
    if (!std::isfinite(p[i])) p[i] = init[i];
  if (!multi_node) {
    // The artifact's prior: crossing nodes costs at least as much as staying within one.
    p[2] = std::max(p[2], p[4] * 1.1);
    p[3] = std::max(p[3], p[5] * 1.1);
  }
  return to_perf(p);
}

// ---- goodput ------------------------------------------------------------------------------------

GoodputFunction::GoodputFunction(const PerfParams& perf, const GradParams& grad, long init_batch)
    : perf_(perf), grad_(grad), init_batch_(init_batch) {}

double GoodputFunction::throughput(int nodes, int replicas, long atomic_bsz, long accum_steps) const {
  const double accum = perf_.alpha_c + perf_.beta_c * static_cast<double>(atomic_bsz);
  const double net = network_time(perf_, nodes, replicas);
  const double optim = std::exp(log_optim_time(accum, net, perf_.gamma).value);
  const double total = static_cast<double>(accum_steps) * accum + optim;
  return static_cast<double>(replicas) * static_cast<double>(atomic_bsz) *
         static_cast<double>(accum_steps + 1) / total;
}

double GoodputFunction::efficiency(double batch) const {
  // (PGNS + init_batch) / (PGNS + batch) with PGNS = var / sqr x init_batch.
  const double scale = batch / static_cast<double>(init_batch_);
  const double denom = grad_.var / scale + grad_.sqr;
  const double gain = denom > 0 ? (grad_.var + grad_.sqr) / denom : 1.0;
  return gain / scale;
}

double GoodputFunction::evaluate(int nodes, int replicas, long atomic_bsz, long accum_steps) const {
  const double batch =
      static_cast<double>(replicas) * static_cast<double>(atomic_bsz) * static_cast<double>(accum_steps + 1);
  return throughput(nodes, replicas, atomic_bsz, accum_steps) * efficiency(batch);
}

GoodputChoice GoodputFunction::optimize(int nodes, int replicas, const BatchLimits& limits) const {
  const double r = replicas;
  const double min_batch =
      std::max(static_cast<double>(init_batch_), static_cast<double>(limits.min_atomic) * r);
  const auto batches = geomspace50(min_batch, static_cast<double>(limits.max_batch));
  const double max_atomic = static_cast<double>(limits.max_atomic);
  GoodputChoice best;
  bool first = true;
  for (const double batch : batches) {
    const double local = batch / r;
    long accum = 0;
    if (limits.accumulation) {
      accum = static_cast<long>(std::ceil(local / max_atomic - kEps)) - 1;
      if (replicas == 1 && local > static_cast<double>(init_batch_) + kEps) accum = std::max(accum, 1L);
    }
    const long atomic = static_cast<long>(std::ceil(local / static_cast<double>(accum + 1) - kEps));
    const bool valid = limits.min_atomic <= atomic && atomic <= limits.max_atomic;
    const double goodput = valid ? evaluate(nodes, replicas, atomic, accum) : 0.0;
    // numpy.argmax: the first maximum.
    if (first || goodput > best.goodput) best = {goodput, atomic, accum};
    first = false;
  }
  return best;
}

// ---- speedup ------------------------------------------------------------------------------------

namespace {
constexpr int kMemo = 32;
}

SpeedupFunction::SpeedupFunction(const GoodputFunction& goodput, const BatchLimits& limits)
    : goodput_(goodput), limits_(limits) {
  set_base(1, 1);
}

double SpeedupFunction::operator()(int nodes, int replicas) {
  if (replicas <= 0) return 0.0;  // the artifact's memo[0, 0] = 0
  const bool memo = replicas < kMemo && nodes >= 0 && nodes < kMemo;
  double& slot = memo_[static_cast<size_t>(memo ? nodes * kMemo + replicas : 0)];
  if (memo && slot >= 0) return slot;
  const double s = goodput_.optimize(nodes, replicas, limits_).goodput / base_;
  if (memo) slot = s;
  return s;
}

void SpeedupFunction::set_base(int nodes, int replicas) {
  base_ = goodput_.optimize(nodes, replicas, limits_).goodput;
  memo_.assign(static_cast<size_t>(kMemo * kMemo), -1.0);
}

}  // namespace fleetsim::pollux
