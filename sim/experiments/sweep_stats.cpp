#include "sim/experiments/sweep_stats.hpp"

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <stdexcept>

namespace fleetsim {

double t95(std::size_t dof) {
  if (dof == 0) throw std::invalid_argument("t95: needs at least 1 degree of freedom");
  const boost::math::students_t dist(static_cast<double>(dof));
  return boost::math::quantile(boost::math::complement(dist, 0.025));
}

SampleStats sample_stats(const std::vector<double>& xs) {
  SampleStats s;
  s.n = xs.size();
  if (xs.empty()) return s;
  double sum = 0;
  for (const double x : xs) sum += x;
  s.mean = sum / static_cast<double>(s.n);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  if (s.n < 2) return s;
  double ss = 0;
  for (const double x : xs) ss += (x - s.mean) * (x - s.mean);
  s.std = std::sqrt(ss / static_cast<double>(s.n - 1));
  s.ci95 = t95(s.n - 1) * s.std / std::sqrt(static_cast<double>(s.n));
  return s;
}

PairedStats paired_stats(const std::vector<double>& x, const std::vector<double>& base) {
  if (x.size() != base.size()) throw std::invalid_argument("paired_stats: samples of different sizes");
  std::vector<double> d, r;
  bool relative = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    d.push_back(x[i] - base[i]);
    if (base[i] == 0)
      relative = false;
    else
      r.push_back(100.0 * (x[i] - base[i]) / base[i]);
  }
  PairedStats p;
  p.diff = sample_stats(d);
  p.has_relative = relative && !x.empty();
  if (p.has_relative) p.relative = sample_stats(r);
  return p;
}

}  // namespace fleetsim
