#include "models/reliability/checkpoint.hpp"

#include <cmath>

namespace fleetsim {

double young_interval_s(double delta_s, double mttf_s) {
  if (!(delta_s > 0) || !(mttf_s > 0)) return 0;
  return std::sqrt(2 * delta_s * mttf_s);
}

double daly_interval_s(double delta_s, double mttf_s) {
  if (!(delta_s > 0) || !(mttf_s > 0)) return 0;
  if (delta_s >= 2 * mttf_s) return mttf_s;
  const double x = delta_s / (2 * mttf_s);
  return std::sqrt(2 * delta_s * mttf_s) * (1 + std::sqrt(x) / 3 + x / 9) - delta_s;
}

double daly_wall_per_work(double tau_s, double delta_s, double restart_s, double mttf_s) {
  if (!(tau_s > 0) || !(mttf_s > 0)) return 1;
  // T_wall / T_s = M e^(R/M) (e^((tau + delta)/M) - 1) / tau
  return mttf_s * std::exp(restart_s / mttf_s) * std::expm1((tau_s + delta_s) / mttf_s) / tau_s;
}

}  // namespace fleetsim
