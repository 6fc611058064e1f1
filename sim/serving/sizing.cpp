#include "sim/serving/sizing.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>

#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

double p99(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double pos = 0.99 * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

}  // namespace

SizingResult size_service(const ServiceSpec& spec, double target, const std::vector<double>& loads,
                          int max_replicas) {
  SizingResult out;
  const PreparedService p = prepare_service(spec);
  for (double load : loads) {
    std::vector<ServingRequest> reqs = p.requests;
    for (auto& r : reqs) r.arrival_s /= load;
    int fewest = -1;
    for (int n = 1; n <= max_replicas; ++n) {
      ServingEngineConfig c = p.engine;
      c.replicas = n;
      c.routing = spec.engine.replicas > 1 || spec.engine.routing != Routing::kRoundRobin
                      ? spec.engine.routing
                      : Routing::kLeastOutstanding;
      const ServingResult res = simulate_serving(reqs, *p.model, c);
      std::vector<double> ttft, tpot;
      for (std::size_t i = 0; i < reqs.size(); ++i) {
        const RequestOutcome& o = res.requests[i];
        if (o.end_s < 0) continue;
        ttft.push_back(o.first_token_s - reqs[i].arrival_s);
        if (reqs[i].output_tokens > 1)
          tpot.push_back((o.end_s - o.first_token_s) / (reqs[i].output_tokens - 1));
      }
      const double a = slo_attainment(spec, reqs, res);
      out.curve.push_back({load, n, n * spec.tensor_parallel, a, p99(ttft), p99(tpot)});
      if (fewest > 0) break;  // one point past the target
      if (a >= target) fewest = n;
    }
    out.fewest.push_back(fewest);
  }
  return out;
}

void write_sizing_csv(std::ostream& out, const SizingResult& r) {
  out << "load,replicas,gpus,slo_attainment,ttft_p99_s,tpot_p99_s\n";
  for (const auto& p : r.curve)
    out << fmt(p.load) << ',' << p.replicas << ',' << p.gpus << ',' << fmt(p.attainment) << ','
        << fmt(p.ttft_p99_s) << ',' << fmt(p.tpot_p99_s) << '\n';
}

}  // namespace fleetsim
