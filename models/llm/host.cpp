// The CPU issuing kernels to one GPU stream (host.hpp).
#include "models/llm/host.hpp"

#include <algorithm>
#include <cmath>

namespace fleetsim::llm {

StreamQueue::StreamQueue(const HostModel& host, bool run_ahead)
    : launch_s_(host.cuda_graphs ? 0 : host.launch_s), run_ahead_(run_ahead || host.cuda_graphs) {
  if (host.cuda_graphs) issued_ = done_ = host.launch_s;  // the graph launch
}

void StreamQueue::issue(double gpu_s, double count) {
  if (count <= 0) return;
  if (!run_ahead_) {
    done_ += count * std::max(gpu_s, launch_s_);
    issued_ = done_;
    return;
  }
  const double whole = std::floor(count);
  // Identical kernels back to back: once the GPU is behind the CPU it stays behind (gpu_s >= launch),
  // or every kernel waits for its launch (gpu_s < launch).
  if (whole >= 1) {
    issued_ += launch_s_;
    done_ = std::max(done_, issued_) + gpu_s;
    const double rest = whole - 1;
    if (rest > 0) {
      if (gpu_s >= launch_s_) {
        issued_ += rest * launch_s_;
        done_ += rest * gpu_s;
      } else {
        issued_ += rest * launch_s_;
        done_ = std::max(done_ + rest * gpu_s, issued_ + gpu_s);
      }
    }
  }
  const double part = count - whole;  // a fractional count: that share of one more kernel
  if (part > 0) {
    issued_ += part * launch_s_;
    done_ = std::max(done_, issued_) + part * gpu_s;
  }
}

void StreamQueue::repeat(const std::vector<QueueItem>& block, long times) {
  double prev_step = -1, prev_lag_step = 0;
  for (long i = 0; i < times; ++i) {
    const double done0 = done_, lag0 = done_ - issued_;
    for (const QueueItem& k : block) issue(k.gpu_s, k.count);
    const double step = done_ - done0, lag_step = (done_ - issued_) - lag0;
    const double tol = 1e-12 + 1e-9 * std::abs(step);
    if (prev_step >= 0 && std::abs(step - prev_step) <= tol && std::abs(lag_step - prev_lag_step) <= tol) {
      const double rest = static_cast<double>(times - i - 1);
      issued_ += rest * (step - lag_step);  // the host moves by the step less the lag's growth
      done_ += rest * step;
      return;
    }
    prev_step = step, prev_lag_step = lag_step;
  }
}

}  // namespace fleetsim::llm
