#pragma once
// The exact solution the fabric's sharing fields are checked against (tests/unit/test_max_min.cpp,
// test_headroom.cpp): jobs sharing one processor-sharing link, each computing z_j then sending d_j
// (its time alone), with phases mixed at random.
#include <algorithm>
#include <vector>

namespace fleetsim::test {

/// Exact iteration times of the jobs on a link with room for `room` flows at the alone rate (each
/// flow at most at its alone rate; room 1: plain processor sharing). The closed network's product
/// form: P(S talking) ~ prod_{j in S} d_j prod_{j not in S} z_j x |S|! / prod_{k <= |S|} min(k, room),
/// and job j's throughput E[1{j in S} min(1, room / |S|)] / d_j.
inline std::vector<double> product_form(const std::vector<double>& z, const std::vector<double>& d,
                                        int room = 1) {
  const std::size_t n = z.size();
  double total = 0;
  std::vector<double> served(n, 0.0);
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    double w = 1;
    int k = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const bool in = ((mask >> j) & 1u) != 0;
      w *= in ? d[j] : z[j];
      if (in) {
        ++k;
        w *= static_cast<double>(k) / std::min(k, room);
      }
    }
    total += w;
    const double share = k == 0 ? 0.0 : std::min(1.0, static_cast<double>(room) / k);
    for (std::size_t j = 0; j < n; ++j)
      if (((mask >> j) & 1u) != 0) served[j] += w * share;
  }
  std::vector<double> t(n);
  for (std::size_t j = 0; j < n; ++j) t[j] = d[j] * total / served[j];
  return t;
}

}  // namespace fleetsim::test
