#pragma once
// Run-time estimate error for policies that use estimated durations (sjf, srtf): a per-job
// multiplicative log-normal factor, seeded and portable (own sampler, no std distributions).
#include <cmath>
#include <cstdint>
#include <random>

#include "workloads/base/input_error.hpp"
#include "workloads/base/options.hpp"

namespace fleetsim {

/// Per-job multiplicative estimate error exp(sigma * z), z standard normal (Box-Muller).
class EstimateError {
 public:
  EstimateError(std::uint64_t seed, double sigma) : rng_(seed ^ 0x5eed5f1fULL), sigma_(sigma) {}
  double next() {
    if (!(sigma_ > 0)) return 1.0;
    const double u1 = uniform_open();  // (0, 1]
    const double u2 = uniform_open();
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * 3.14159265358979323846 * u2);
    return std::exp(sigma_ * z);
  }

 private:
  double uniform_open() {
    return static_cast<double>((rng_() >> 11) + 1) * (1.0 / 9007199254740992.0);  // 2^53
  }
  std::mt19937_64 rng_;
  double sigma_;
};

/// The `estimate_error` knob (sigma >= 0).
inline double read_sigma(const Options& o) {
  const double sigma = o.number("estimate_error", 0.0,
                                "sigma of the per-job log-normal run-time estimate error "
                                "(estimate = oracle x exp(sigma z)); 0 = exact (default 0)");
  if (!(sigma >= 0) || !std::isfinite(sigma))
    throw InputError("", 0, "scheduler.options.estimate_error", "must be a finite number >= 0");
  return sigma;
}

}  // namespace fleetsim
