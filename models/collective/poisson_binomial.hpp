#pragma once
// The distribution of the flows of a link's sharers present (a Poisson-binomial sum: sharer k present
// with probability p_k, carrying c_k flows), built by convolution, for the sharing fields
// (max_min.cpp's headroom, worst_link.cpp's worst link). Pure.
#include <cstddef>

namespace fleetsim {

/// to[s] = P(S + X = s) for s < w, from[s] = P(S = s) and X = c with probability p, else 0. `to` may
/// be `from` (in place: filled from the top down).
inline void add_presence(const double* from, double* to, std::size_t w, double p, int c) {
  const auto shift = static_cast<std::size_t>(c);
  for (std::size_t s = w; s-- > 0;) to[s] = from[s] * (1 - p) + (s >= shift ? from[s - shift] * p : 0.0);
}

/// E[(t - S)^+] from pmf[s] = P(S = s) for s < top (top >= ceil(t), or past S's largest value).
inline double shortfall(double t, const double* pmf, std::size_t top) {
  double below = 0;
  for (std::size_t s = 0; s < top; ++s) below += (t - static_cast<double>(s)) * pmf[s];
  return below;
}

}  // namespace fleetsim
