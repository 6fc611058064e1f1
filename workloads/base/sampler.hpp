#pragma once
// Sampler: the seeded random draws of the workload generators (synthetic jobs, generated request
// traces), written out so that a seed gives the same stream on every standard library (std::
// distributions are implementation-defined). One mt19937_64 stream, consumed in call order.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace fleetsim {

/// splitmix64's stream increment: a stream of draws is splitmix64(s), s += kSplitMixGamma.
constexpr std::uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

/// splitmix64 (Steele, Lea and Flood 2014): a well-mixed 64-bit hash of `x`, the same on every
/// platform. For stateless draws keyed by ids (chunk lengths, derived seeds) and small streams.
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += kSplitMixGamma;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in [0, 1) from the top 53 bits of `bits`.
constexpr double unit_interval(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : rng_(seed) {}

  /// Uniform in [0, 1) with 53 random bits.
  double uniform() { return unit_interval(rng_()); }

  /// Exponential with mean `mean` (inverse transform; 1 - u is in (0, 1]).
  double exponential(double mean) { return -std::log1p(-uniform()) * mean; }

  /// Standard normal (Box-Muller; the second value of each pair is kept for the next call).
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    const double u1 = 1.0 - uniform();  // (0, 1]
    const double u2 = uniform();
    const double r = std::sqrt(-2.0 * std::log(u1));
    const double a = 2.0 * std::numbers::pi * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }

  /// Gamma with shape k and scale 1 (Marsaglia and Tsang 2000; k < 1 through k + 1 and U^(1/k)).
  double gamma(double k) {
    if (k < 1) return gamma(k + 1) * std::pow(1.0 - uniform(), 1.0 / k);
    const double d = k - 1.0 / 3, c = 1.0 / std::sqrt(9 * d);
    while (true) {
      double x = 0, v = 0;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (u < 1 - 0.0331 * x * x * x * x) return d * v;
      if (std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v))) return d * v;
    }
  }

  /// Index in [0, n).
  std::size_t index(std::size_t n) {
    return std::min(n - 1, static_cast<std::size_t>(uniform() * static_cast<double>(n)));
  }

  /// Index drawn with probability proportional to cumulative weights `cum` (ascending, last = total).
  std::size_t pick(const std::vector<double>& cum) {
    const double x = uniform() * cum.back();
    for (std::size_t i = 0; i + 1 < cum.size(); ++i)
      if (x < cum[i]) return i;
    return cum.size() - 1;
  }

 private:
  std::mt19937_64 rng_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace fleetsim
