// Checkpoint intervals: Daly's (FGCS 2006) worked values and Young's first-order term.
#include <doctest/doctest.h>

#include <cmath>

#include "models/reliability/checkpoint.hpp"

using namespace fleetsim;

TEST_CASE("checkpoint auto interval equals Daly's worked values (R = 10 min, delta = 5 min)") {
  constexpr double kMin = 60;
  // Daly's table: M = 24 h -> 117 min, 6 h -> 57 min, 15 min -> 9.1 min (R does not enter tau).
  CHECK(daly_interval_s(5 * kMin, 24 * 60 * kMin) / kMin == doctest::Approx(116.7).epsilon(0.005));
  CHECK(std::round(daly_interval_s(5 * kMin, 24 * 60 * kMin) / kMin) == 117);
  CHECK(std::round(daly_interval_s(5 * kMin, 6 * 60 * kMin) / kMin) == 57);
  CHECK(daly_interval_s(5 * kMin, 15 * kMin) / kMin == doctest::Approx(9.14).epsilon(0.005));
  // delta >= 2M: checkpoint every M.
  CHECK(daly_interval_s(40 * kMin, 15 * kMin) == doctest::Approx(15 * kMin));
}

TEST_CASE("Young's sqrt(2 delta M) is the first-order term of Daly's optimum") {
  CHECK(young_interval_s(300, 86400) == doctest::Approx(std::sqrt(2.0 * 300 * 86400)));
  // For delta << M Daly -> Young - delta.
  const double delta = 1, m = 1e8;
  CHECK(daly_interval_s(delta, m) == doctest::Approx(young_interval_s(delta, m) - delta).epsilon(1e-4));
  CHECK(young_interval_s(0, 100) == 0);
}

TEST_CASE("Daly's wall time per unit of work is minimal near the optimum") {
  const double delta = 300, r = 600, m = 6 * 3600;
  const double best = daly_interval_s(delta, m);
  const double at = daly_wall_per_work(best, delta, r, m);
  CHECK(at < daly_wall_per_work(best * 0.5, delta, r, m));
  CHECK(at < daly_wall_per_work(best * 2, delta, r, m));
  CHECK(at > 1);
}
