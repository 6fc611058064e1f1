// CUDA-event timing shared by the benchmarks: warm-up, batches of back-to-back calls, median.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "common.hpp"

namespace mb {

struct EventPair {
  cudaEvent_t a{}, b{};
  EventPair() {
    MB_CUDA(cudaEventCreate(&a));
    MB_CUDA(cudaEventCreate(&b));
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  ~EventPair() {
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  // Milliseconds per call of fn, over `inner` back-to-back calls enqueued on stream s.
  template <class F>
  double time_ms(cudaStream_t s, int inner, F&& fn) {
    MB_CUDA(cudaEventRecord(a, s));
    for (int i = 0; i < inner; ++i) fn();
    MB_CUDA(cudaEventRecord(b, s));
    MB_CUDA(cudaEventSynchronize(b));
    float ms = 0;
    MB_CUDA(cudaEventElapsedTime(&ms, a, b));
    return static_cast<double>(ms) / inner;
  }
};

// Median latency in ms per call: 2 warm-up calls, one estimate, then `reps` timed batches of enough
// back-to-back calls to last about 0.5 ms (CUDA event resolution is about 0.5 us), at most 200.
template <class F>
double measure_ms(cudaStream_t s, int reps, F&& fn) {
  EventPair ev;
  fn();
  fn();
  const double est = ev.time_ms(s, 1, fn);
  const int inner = static_cast<int>(std::clamp(std::ceil(0.5 / std::max(est, 1e-4)), 1.0, 200.0));
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) v.push_back(ev.time_ms(s, inner, fn));
  return median(v);
}

}  // namespace mb
