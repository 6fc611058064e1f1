#include "models/kernel/memory_curve.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace fleetsim {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool one_of(const std::string& op, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return op == n; });
}

// Tent (hat) basis on ascending knots, clamped outside: weights of x on each knot, summing to 1.
void tent_weights(double x, const std::vector<double>& knots, std::vector<double>& w) {
  w.assign(knots.size(), 0.0);
  if (knots.empty()) return;
  if (knots.size() == 1 || x <= knots.front()) {
    w.front() = 1;
    return;
  }
  if (x >= knots.back()) {
    w.back() = 1;
    return;
  }
  const auto hi = static_cast<std::size_t>(std::upper_bound(knots.begin(), knots.end(), x) - knots.begin());
  const std::size_t lo = hi - 1;
  const double f = (x - knots[lo]) / (knots[hi] - knots[lo]);
  w[lo] = 1 - f;
  w[hi] = f;
}

std::vector<double> logs(const std::vector<double>& v) {
  std::vector<double> out(v.size());
  std::transform(v.begin(), v.end(), out.begin(), [](double x) { return std::log(x); });
  return out;
}

// Piecewise linear in log(x) through (knots[i], values[i]), clamped outside; no allocation.
double interp_log(double x, const std::vector<double>& knots, const std::vector<double>& values) {
  if (knots.empty() || !(x > 0)) return 0;
  if (x <= knots.front()) return values.front();
  if (x >= knots.back()) return values.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(knots.begin(), knots.end(), x) - knots.begin());
  const std::size_t lo = hi - 1;
  const double f = std::log(x / knots[lo]) / std::log(knots[hi] / knots[lo]);
  return (1 - f) * values[lo] + f * values[hi];
}

bool finite_positive(double x) {
  return std::isfinite(x) && x > 0;
}

void check_table(const std::vector<double>& knots, const std::vector<double>& adj, const char* what) {
  if (knots.size() != adj.size())
    throw std::invalid_argument(std::string("memory curve: ") + what +
                                " knots and adjustments differ in length");
  for (std::size_t i = 0; i < knots.size(); ++i) {
    if (!finite_positive(knots[i]) || (i > 0 && !(knots[i] > knots[i - 1])))
      throw std::invalid_argument(std::string("memory curve: ") + what +
                                  " knots must be positive and strictly ascending");
    if (!std::isfinite(adj[i]))
      throw std::invalid_argument(std::string("memory curve: ") + what + " adjustments must be finite");
  }
}

}  // namespace

double memory_kernel_bytes(std::string_view op_name, long b, long h) {
  if (b < 0 || h < 0) throw std::invalid_argument("memory_kernel_bytes: negative shape");
  const double n = static_cast<double>(b) * static_cast<double>(h);
  const std::string op = lower(op_name);
  constexpr double kF = 4;  // fp32
  if (one_of(op, {"add", "sub", "mul", "div", "pow", "maximum", "minimum"})) return 3 * kF * n;
  if (one_of(op, {"ln", "layernorm", "layer_norm"}))
    return 2 * kF * n + 2 * kF * static_cast<double>(h) + 2 * kF * static_cast<double>(b);
  // softmax, log_softmax, unary and "u" (tensor-scalar) variants, unknown ops: read 1, write 1.
  return 2 * kF * n;
}

double MemoryCurve::inverse_bandwidth(double bytes, double row_len) const {
  double rel = 1 + interp_log(bytes, size_knots_bytes, size_adj);
  if (row_len > 0) rel += interp_log(row_len, row_knots, row_adj);
  return rel / bw_bytes_per_s;
}

double MemoryCurve::seconds(double bytes, double row_len) const {
  if (!(bytes > 0)) return launch_s;
  return launch_s + op_multiplier * bytes * inverse_bandwidth(bytes, row_len);
}

MemoryCurve fit_memory_curve(const std::vector<double>& bytes, const std::vector<double>& seconds) {
  return fit_memory_curve(bytes, seconds, {}, MemoryFitOptions{});
}

MemoryCurve fit_memory_curve(const std::vector<double>& bytes, const std::vector<double>& seconds,
                             const std::vector<double>& row_lens, const MemoryFitOptions& options) {
  const std::size_t n = bytes.size();
  if (seconds.size() != n)
    throw std::invalid_argument("fit_memory_curve: bytes and seconds differ in length (" + std::to_string(n) +
                                " vs " + std::to_string(seconds.size()) + ")");
  if (!row_lens.empty() && row_lens.size() != n)
    throw std::invalid_argument("fit_memory_curve: row_lens must be empty or as long as bytes");
  for (std::size_t i = 0; i < n; ++i) {
    if (!finite_positive(bytes[i]) || !finite_positive(seconds[i]))
      throw std::invalid_argument("fit_memory_curve: point " + std::to_string(i) +
                                  " has a non-positive or non-finite size or time");
    if (!row_lens.empty() && !finite_positive(row_lens[i]))
      throw std::invalid_argument("fit_memory_curve: point " + std::to_string(i) +
                                  " has a non-positive row length");
  }
  const auto [mn, mx] = std::minmax_element(bytes.begin(), bytes.end());
  if (n < 2 || !(*mx > *mn))
    throw std::invalid_argument("fit_memory_curve: needs at least 2 points with distinct sizes, got " +
                                std::to_string(n) + " point(s)" + (n >= 2 ? " all of one size" : ""));

  // Knots: size knots log-spaced over the data; row knots at the distinct row lengths.
  std::vector<double> sk;
  if (options.size_knots >= 2) {
    const double l0 = std::log(*mn), l1 = std::log(*mx);
    for (int i = 0; i < options.size_knots; ++i)
      sk.push_back(std::exp(l0 + (l1 - l0) * i / (options.size_knots - 1)));
  }
  std::vector<double> rk(row_lens);
  std::sort(rk.begin(), rk.end());
  rk.erase(std::unique(rk.begin(), rk.end()), rk.end());
  const std::vector<double> lsk = logs(sk), lrk = logs(rk);
  const std::size_t ns = sk.empty() ? 0 : sk.size() - 1, nr = rk.empty() ? 0 : rk.size() - 1;
  const auto p = static_cast<Eigen::Index>(2 + ns + nr);
  if (static_cast<Eigen::Index>(n) < p)
    throw std::invalid_argument("fit_memory_curve: " + std::to_string(n) + " points for " +
                                std::to_string(p) + " parameters (" + std::to_string(rk.size()) +
                                " distinct row lengths, " + std::to_string(sk.size()) + " size knots)");

  // Columns: 1, s, s*phi_j(log s) (j >= 1), s*psi_i(log h) (i >= 1); rows divided by t so the
  // residuals are relative.
  Eigen::MatrixXd x(static_cast<Eigen::Index>(n), p);
  std::vector<double> w;
  for (std::size_t i = 0; i < n; ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    const double s = bytes[i];
    x(r, 0) = 1;
    x(r, 1) = s;
    Eigen::Index c = 2;
    tent_weights(std::log(s), lsk, w);
    for (std::size_t j = 1; j < w.size(); ++j) x(r, c++) = s * w[j];
    if (!rk.empty()) {
      tent_weights(std::log(row_lens[i]), lrk, w);
      for (std::size_t j = 1; j < w.size(); ++j) x(r, c++) = s * w[j];
    }
    x.row(r) /= seconds[i];
  }

  auto solve = [&](const Eigen::VectorXd& wt, bool intercept) {
    const Eigen::Index c0 = intercept ? 0 : 1;
    Eigen::MatrixXd a = wt.asDiagonal() * x.rightCols(p - c0);
    Eigen::VectorXd scale = a.colwise().norm().transpose();
    for (Eigen::Index k = 0; k < scale.size(); ++k)
      if (!(scale(k) > 0)) scale(k) = 1;
    a = a * scale.cwiseInverse().asDiagonal();
    Eigen::MatrixXd normal = a.transpose() * a;
    for (Eigen::Index k = 2 - c0; k < normal.rows(); ++k) normal(k, k) += options.ridge;
    Eigen::VectorXd sol = normal.ldlt().solve(a.transpose() * wt);
    Eigen::VectorXd coef = Eigen::VectorXd::Zero(p);
    coef.tail(p - c0) = sol.cwiseQuotient(scale);
    return coef;
  };

  Eigen::VectorXd wt = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(n));
  Eigen::VectorXd coef;
  const int iters = options.robust ? std::max(1, options.max_iter) : 1;
  for (int it = 0; it < iters; ++it) {
    coef = solve(wt, true);
    if (coef(0) < 0) coef = solve(wt, false);
    if (!options.robust) break;
    const Eigen::VectorXd res = (x * coef).array() - 1.0;
    std::vector<double> absdev(res.data(), res.data() + res.size());
    const auto mid = absdev.begin() + static_cast<std::ptrdiff_t>(absdev.size() / 2);
    std::nth_element(absdev.begin(), mid, absdev.end());
    const double med = *mid;
    for (double& v : absdev) v = std::abs(v - med);
    std::nth_element(absdev.begin(), mid, absdev.end());
    const double cut = 1.345 * std::max(1.4826 * *mid, 1e-4);
    Eigen::VectorXd next(wt.size());
    for (Eigen::Index k = 0; k < res.size(); ++k)
      next(k) = std::abs(res(k)) <= cut ? 1.0 : std::sqrt(cut / std::abs(res(k)));
    if ((next - wt).cwiseAbs().maxCoeff() < 1e-6) break;
    wt = next;
  }

  MemoryCurve out;
  const double k0 = coef(1);
  out.launch_s = coef(0);
  bool ok = k0 > 0 && std::isfinite(k0);
  if (ok) {
    out.bw_bytes_per_s = 1 / k0;
    if (!sk.empty()) {
      out.size_knots_bytes = sk;
      out.size_adj.assign(sk.size(), 0.0);
      for (std::size_t j = 1; j < sk.size(); ++j)
        out.size_adj[j] = coef(static_cast<Eigen::Index>(1 + j)) / k0;
    }
    if (!rk.empty()) {
      out.row_knots = rk;
      out.row_adj.assign(rk.size(), 0.0);
      for (std::size_t j = 1; j < rk.size(); ++j)
        out.row_adj[j] = coef(static_cast<Eigen::Index>(1 + ns + j)) / k0;
      // Centre the row table on the fitted rows so seconds(bytes) is the average row length's.
      double c = 0;
      for (double h : row_lens) c += interp_log(h, out.row_knots, out.row_adj);
      c /= static_cast<double>(n);
      out.bw_bytes_per_s /= 1 + c;
      for (double& v : out.size_adj) v /= 1 + c;
      for (double& v : out.row_adj) v = (v - c) / (1 + c);
    }
    // Guard: the inverse bandwidth must stay positive over the fitted range.
    for (std::size_t i = 0; i < n && ok; ++i)
      ok = out.inverse_bandwidth(bytes[i], row_lens.empty() ? 0 : row_lens[i]) > 0;
  }
  if (!ok) {  // degenerate data: fall back to a constant bandwidth (median bytes / second)
    std::vector<double> ratio(n);
    for (std::size_t i = 0; i < n; ++i) ratio[i] = bytes[i] / seconds[i];
    std::nth_element(ratio.begin(), ratio.begin() + static_cast<std::ptrdiff_t>(n / 2), ratio.end());
    out = MemoryCurve{};
    out.launch_s = 0;
    out.bw_bytes_per_s = ratio[n / 2];
  }
  return out;
}

bool memory_op_uses_rows(std::string_view op_name) {
  return one_of(lower(op_name), {"ln", "layernorm", "layer_norm", "softmax", "log_softmax"});
}

MemoryCurve fit_memory_curve_for_op(std::string_view op, const std::vector<double>& bytes,
                                    const std::vector<double>& seconds, const std::vector<double>& row_lens) {
  if (memory_op_uses_rows(op) && !row_lens.empty()) {
    try {
      return fit_memory_curve(bytes, seconds, row_lens);
    } catch (const std::invalid_argument&) {
      // too few points for the row table (or bad row lengths): fall back to the affine fit below
    }
  }
  return fit_memory_curve(bytes, seconds);
}

MemoryCurve scaled(const MemoryCurve& curve, double bandwidth_ratio, double launch_ratio) {
  if (!finite_positive(bandwidth_ratio) || !finite_positive(launch_ratio))
    throw std::invalid_argument("scaled: bandwidth_ratio and launch_ratio must be positive and finite");
  MemoryCurve out = curve;
  out.bw_bytes_per_s *= bandwidth_ratio;
  out.launch_s *= launch_ratio;
  return out;
}

nlohmann::json to_json(const MemoryCurve& curve) {
  nlohmann::json j{{"launch_s", curve.launch_s},
                   {"bw_bytes_per_s", curve.bw_bytes_per_s},
                   {"op_multiplier", curve.op_multiplier}};
  if (!curve.size_knots_bytes.empty()) {
    j["size_knots_bytes"] = curve.size_knots_bytes;
    j["size_adj"] = curve.size_adj;
  }
  if (!curve.row_knots.empty()) {
    j["row_knots"] = curve.row_knots;
    j["row_adj"] = curve.row_adj;
  }
  return j;
}

MemoryCurve memory_curve_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("memory curve json: expected an object");
  auto number = [&](const char* key, bool required, double fallback) {
    if (!j.contains(key)) {
      if (required) throw std::invalid_argument(std::string("memory curve json: missing key '") + key + "'");
      return fallback;
    }
    if (!j.at(key).is_number())
      throw std::invalid_argument(std::string("memory curve json: key '") + key + "' must be a number");
    return j.at(key).get<double>();
  };
  auto array = [&](const char* key) {
    std::vector<double> out;
    if (!j.contains(key)) return out;
    const auto& a = j.at(key);
    if (!a.is_array() || !std::all_of(a.begin(), a.end(), [](const auto& e) { return e.is_number(); }))
      throw std::invalid_argument(std::string("memory curve json: key '") + key +
                                  "' must be an array of numbers");
    for (const auto& e : a) out.push_back(e.get<double>());
    return out;
  };
  MemoryCurve c;
  c.launch_s = number("launch_s", true, 0);
  c.bw_bytes_per_s = number("bw_bytes_per_s", true, 0);
  c.op_multiplier = number("op_multiplier", false, 1);
  if (!(c.launch_s >= 0) || !std::isfinite(c.launch_s))
    throw std::invalid_argument("memory curve json: key 'launch_s' must be >= 0");
  if (!finite_positive(c.bw_bytes_per_s))
    throw std::invalid_argument("memory curve json: key 'bw_bytes_per_s' must be > 0");
  if (!finite_positive(c.op_multiplier))
    throw std::invalid_argument("memory curve json: key 'op_multiplier' must be > 0");
  c.size_knots_bytes = array("size_knots_bytes");
  c.size_adj = array("size_adj");
  c.row_knots = array("row_knots");
  c.row_adj = array("row_adj");
  check_table(c.size_knots_bytes, c.size_adj, "size");
  check_table(c.row_knots, c.row_adj, "row");
  return c;
}

std::vector<std::size_t> half_split_order(std::size_t n, unsigned seed) {
  std::vector<std::size_t> idx(n);
  for (std::size_t i = 0; i < n; ++i) idx[i] = i;
  std::mt19937 gen(seed);
  for (std::size_t i = n; i-- > 1;) {
    const std::size_t j = static_cast<std::size_t>(gen()) % (i + 1);
    std::swap(idx[i], idx[j]);
  }
  return idx;
}

}  // namespace fleetsim
