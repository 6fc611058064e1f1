// Pipeline schedules: time, bubble, sends, micro-batches in flight (schedule.hpp).
#include "models/llm/schedule.hpp"

#include <algorithm>

namespace fleetsim::llm {

PipelineTime pipeline_time(PipelineSchedule schedule, const std::vector<StagePass>& stages, long m,
                           int virtual_stages) {
  PipelineTime t;
  if (stages.empty() || m < 1) return t;
  double sum = 0, max_f = 0, max_b = 0, max_fb = -1;
  for (std::size_t i = 0; i < stages.size(); ++i) {
    const StagePass& s = stages[i];
    sum += s.forward_s + s.backward_s;
    max_f = std::max(max_f, s.forward_s);
    max_b = std::max(max_b, s.backward_s);
    if (s.forward_s + s.backward_s > max_fb) {
      max_fb = s.forward_s + s.backward_s;
      t.critical = static_cast<int>(i);
    }
  }
  const double mm = static_cast<double>(m);
  t.steady_s = mm * max_fb;
  switch (schedule) {
    case PipelineSchedule::gpipe:
      t.total_s = sum + (mm - 1) * (max_f + max_b);
      break;
    case PipelineSchedule::one_f_one_b:
      t.total_s = t.steady_s + (sum - max_fb);
      break;
    case PipelineSchedule::interleaved:
      t.total_s = t.steady_s + (sum - max_fb) / std::max(1, virtual_stages);
      break;
  }
  t.bubble_s = t.total_s - t.steady_s;
  return t;
}

double pipeline_sends(PipelineSchedule schedule, int p, long m, int virtual_stages) {
  if (p <= 1) return 0;
  const double v = schedule == PipelineSchedule::interleaved ? std::max(1, virtual_stages) : 1;
  return 2 * (v * static_cast<double>(m) + p - 2);
}

double in_flight(PipelineSchedule schedule, int s, int p, long m, int virtual_stages) {
  switch (schedule) {
    case PipelineSchedule::gpipe:
      return static_cast<double>(m);
    case PipelineSchedule::one_f_one_b:
      return static_cast<double>(std::min<long>(m, p - s));
    case PipelineSchedule::interleaved: {
      const long v = std::max(1, virtual_stages);
      const long chunks = std::min(v * m, 2L * (p - s - 1) + (v - 1) * p + 1);
      return static_cast<double>(chunks) / static_cast<double>(v);
    }
  }
  return 1;
}

}  // namespace fleetsim::llm
