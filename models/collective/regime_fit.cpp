// The regime fit of a collective curve: NCCL times a call as latency + bytes / bandwidth of the
// protocol it picks for that size (LL for the smallest messages, LL128 on NVLink, Simple for large
// ones), so a measured time-versus-size curve is a few straight pieces with a kink where the
// protocol changes. fit_regimes() finds at most three such pieces: every split of the sorted sizes
// into contiguous bands is tried (prefix sums make each candidate O(1)), each band's latency and bus
// bandwidth come from least squares on relative error, and a further band is kept only when it
// lowers the Bayesian information criterion (n ln(SSE / n) + 2 bands ln n), so a curve with one
// regime gets one band.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "models/collective/collective_model.hpp"

namespace fleetsim {
namespace {

/// Sums over a band of rows for the relative-error least squares of t = a + v c (u = 1/t, w = v/t).
struct Sums {
  double n = 0, u = 0, w = 0, uu = 0, uw = 0, ww = 0;
  Sums operator-(const Sums& o) const { return {n - o.n, u - o.u, w - o.w, uu - o.uu, uw - o.uw, ww - o.ww}; }
};

struct Line {
  double a = 0;  ///< latency, s
  double c = 0;  ///< seconds per bus byte
  double sse = 0;
};

/// Minimises sum ((a + v c - t) / t)^2 over a >= 0, c > 0 (a latency-only line when the time does
/// not grow with size, a bandwidth-only line when the intercept would be negative).
Line solve(const Sums& s) {
  const auto sse = [&](double a, double c) {
    return s.n - 2 * (a * s.u + c * s.w) + a * a * s.uu + 2 * a * c * s.uw + c * c * s.ww;
  };
  const double det = s.uu * s.ww - s.uw * s.uw;
  double a = 0, c = 0;
  if (det > 1e-12 * s.uu * s.ww) {
    a = (s.u * s.ww - s.w * s.uw) / det;
    c = (s.uu * s.w - s.uw * s.u) / det;
  }
  if (a < 0 || det <= 1e-12 * s.uu * s.ww) {
    a = 0;
    c = s.ww > 0 ? s.w / s.ww : 0;
  }
  if (!(c > 0)) {
    c = 0;
    a = s.uu > 0 ? s.u / s.uu : 0;
  }
  return {a, c, std::max(0.0, sse(a, c))};
}

}  // namespace

std::vector<CollectiveBand> fit_regimes(const std::vector<std::pair<double, double>>& xt, double bus_factor,
                                        int max_bands) {
  const std::size_t n = xt.size();
  if (n == 0) throw std::invalid_argument("fit_regimes: no rows");
  if (!std::is_sorted(xt.begin(), xt.end(), [](const auto& a, const auto& b) { return a.first < b.first; }))
    throw std::invalid_argument("fit_regimes: rows must be sorted by size");
  std::vector<Sums> prefix(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = xt[i].second, v = bus_factor * xt[i].first;
    const double u = 1.0 / t, w = v / t;
    const Sums& p = prefix[i];
    prefix[i + 1] = {p.n + 1, p.u + u, p.w + w, p.uu + u * u, p.uw + u * w, p.ww + w * w};
  }
  const auto band = [&](std::size_t lo, std::size_t hi) { return solve(prefix[hi] - prefix[lo]); };
  // A band needs two distinct sizes to place a line; three rows at least against single outliers.
  constexpr std::size_t kMinRows = 3;
  const auto ok = [&](std::size_t lo, std::size_t hi) {
    return hi - lo >= kMinRows && xt[hi - 1].first > xt[lo].first;
  };
  struct Split {
    double sse = std::numeric_limits<double>::infinity();
    std::array<std::size_t, 2> cut{0, 0};
    int bands = 1;
  };
  std::array<Split, 3> best;
  best[0] = {band(0, n).sse, {n, n}, 1};
  const int bands_wanted = std::clamp(max_bands, 1, 3);
  if (bands_wanted >= 2)
    for (std::size_t i = kMinRows; i + kMinRows <= n; ++i) {
      if (!ok(0, i) || !ok(i, n)) continue;
      const double e = band(0, i).sse + band(i, n).sse;
      if (e < best[1].sse) best[1] = {e, {i, n}, 2};
    }
  if (bands_wanted >= 3)
    for (std::size_t i = kMinRows; i + 2 * kMinRows <= n; ++i) {
      if (!ok(0, i)) continue;
      const double head = band(0, i).sse;
      if (head >= best[2].sse) continue;
      for (std::size_t j = i + kMinRows; j + kMinRows <= n; ++j) {
        if (!ok(i, j) || !ok(j, n)) continue;
        const double e = head + band(i, j).sse + band(j, n).sse;
        if (e < best[2].sse) best[2] = {e, {i, j}, 3};
      }
    }
  // Bayesian information criterion over the candidates (2 parameters per band).
  const double rows = static_cast<double>(n);
  const auto bic = [&](const Split& s) {
    return rows * std::log(std::max(s.sse, 1e-300) / rows) + 2.0 * s.bands * std::log(rows);
  };
  const Split* pick = &best[0];
  for (int b = 1; b < bands_wanted; ++b)
    if (std::isfinite(best[static_cast<std::size_t>(b)].sse) &&
        bic(best[static_cast<std::size_t>(b)]) < bic(*pick))
      pick = &best[static_cast<std::size_t>(b)];
  std::vector<std::size_t> edges{0};
  for (int b = 0; b + 1 < pick->bands; ++b) edges.push_back(pick->cut[static_cast<std::size_t>(b)]);
  edges.push_back(n);
  static const char* kLabels[3][3] = {{"Simple", "", ""}, {"LL", "Simple", ""}, {"LL", "LL128", "Simple"}};
  std::vector<CollectiveBand> out;
  for (std::size_t b = 0; b + 1 < edges.size(); ++b) {
    const Line l = band(edges[b], edges[b + 1]);
    CollectiveBand cb;
    cb.min_bytes = xt[edges[b]].first;
    cb.max_bytes = xt[edges[b + 1] - 1].first;
    cb.latency_s = l.a;
    cb.busbw_gbs = l.c > 0 ? 1.0 / (l.c * 1e9) : 1e6;  // no growth with size: 1e6 GB/s
    cb.samples = static_cast<int>(edges[b + 1] - edges[b]);
    cb.protocol = kLabels[pick->bands - 1][b];
    out.push_back(cb);
  }
  return out;
}

}  // namespace fleetsim
