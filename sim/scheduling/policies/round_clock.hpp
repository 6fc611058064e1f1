#pragma once
// RoundClock: the fixed scheduling rounds of round-based policies (as in Pollux's simulator: decisions
// at multiples of round_s, from round_s on). The policy asks at() on every schedule() call and
// wake() while it has jobs, so the engine calls it again at the next round.
#include <cmath>

#include "sim/engine/policy.hpp"
#include "workloads/base/input_error.hpp"

namespace fleetsim {

class RoundClock {
 public:
  explicit RoundClock(const Options& o) {
    round_s_ = o.number("round_s", 60.0, "time between scheduling rounds, s (default 60)");
    if (!(round_s_ > 0) || !std::isfinite(round_s_))
      throw InputError("", 0, "scheduler.options.round_s", "must be finite and > 0");
  }
  double round_s() const { return round_s_; }
  /// Is `now` a round (a positive multiple of round_s)?
  bool at(double now) const {
    const double k = std::round(now / round_s_);
    return k >= 1 && std::abs(now - k * round_s_) <= 1e-6;
  }
  /// Asks for a wake-up at the next round after now (once per round).
  void wake(Launcher& launcher) {
    const double next = (std::floor(launcher.now() / round_s_ + 1e-9) + 1) * round_s_;
    if (next == asked_) return;
    launcher.wake_at(next);
    asked_ = next;
  }

 private:
  double round_s_ = 60;
  double asked_ = -1;
};

}  // namespace fleetsim
