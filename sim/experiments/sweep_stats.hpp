#pragma once
// Statistics of a sweep over seeds: mean, sample standard deviation and the 95% confidence interval
// of the mean (Student t with n-1 degrees of freedom, Boost.Math), and paired differences between two
// settings run on the same seeds.
#include <cstddef>
#include <vector>

namespace fleetsim {

struct SampleStats {
  std::size_t n = 0;
  double mean = 0, std = 0;  ///< sample standard deviation (n-1); 0 when n < 2
  double ci95 = 0;           ///< half-width of the 95% interval of the mean; 0 when n < 2
  double min = 0, max = 0;
};

/// Two-sided 95% Student t quantile for `dof` degrees of freedom (dof >= 1).
double t95(std::size_t dof);

SampleStats sample_stats(const std::vector<double>& xs);

struct PairedStats {
  SampleStats diff;  ///< of x_i - base_i
  bool has_relative = false;
  SampleStats relative;  ///< of 100 * (x_i - base_i) / base_i, in %, when no base_i is 0
};

/// x and base: values of the same seeds, in the same order.
PairedStats paired_stats(const std::vector<double>& x, const std::vector<double>& base);

}  // namespace fleetsim
