#include "sim/serving/sizing.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>

#include "models/hardware/gpu_catalog.hpp"
#include "models/hardware/mig.hpp"
#include "sim/metrics/recorders.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

ReplicaLayout parse_layout(const std::string& text, const std::string& option) {
  ReplicaLayout l;
  if (text.rfind("mig:", 0) == 0 && text.size() > 4) {
    l.mig = text.substr(4);
    return l;
  }
  if (text.rfind("tp", 0) == 0 && text.size() > 2 &&
      text.find_first_not_of("0123456789", 2) == std::string::npos && text.size() < 6) {
    l.tensor_parallel = std::stoi(text.substr(2));
    if (l.tensor_parallel >= 1) return l;
  }
  throw InputError(option, 0, text, "expected a layout such as tp1, tp2 or mig:3g");
}

ServiceSpec with_layout(const ServiceSpec& spec, const std::string& gpu, const ReplicaLayout& layout) {
  ServiceSpec s = spec;
  s.gpu = gpu_spec(gpu).name;
  s.tensor_parallel = layout.tensor_parallel;
  s.mig.clear();
  s.mig_share = 1;
  s.mig_memory_gib = 0;
  s.mps_share = 0;
  if (!layout.mig.empty()) {
    const MigProfile* m = find_mig(s.gpu, layout.mig);
    if (m == nullptr) throw spec.options.error("mig", s.gpu + " has no MIG profile '" + layout.mig + "'");
    s.tensor_parallel = 1;
    s.mig = m->name;
    s.mig_share = m->compute_share();
    s.mig_memory_gib = m->memory_gib;
  }
  return s;
}

SizingResult size_service(const ServiceSpec& spec, double target, const std::vector<double>& loads,
                          int max_replicas) {
  SizingResult out;
  const PreparedService p = prepare_service(spec);
  out.rejected_note = p.rejected_note;
  for (double load : loads) {
    std::vector<ServingRequest> reqs = p.requests;
    for (auto& r : reqs) r.arrival_s /= load;
    // Attainment does not fall as replicas grow (tested), so double until the target is met, then
    // bisect between the last miss and the first hit: ~2 log2(max) runs instead of max.
    std::map<int, SizingPoint> points;
    auto attain = [&](int n) {
      if (const auto it = points.find(n); it != points.end()) return it->second.attainment;
      ServingEngineConfig c = p.engine;
      c.replicas = n;
      // Disaggregated: n replicas split in the spec's prefill:decode ratio, at least one each
      // (a single replica runs colocated).
      if (p.engine.prefill_replicas > 0)
        c.prefill_replicas =
            n < 2 ? 0
                  : std::clamp(static_cast<int>(std::lround(static_cast<double>(n) *
                                                            p.engine.prefill_replicas / p.engine.replicas)),
                               1, n - 1);
      c.routing = spec.engine.replicas > 1 || spec.engine.routing != "round-robin" ? spec.engine.routing
                                                                                   : "least-outstanding";
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
      const double gpus =
          n * (!spec.mig.empty()    ? spec.mig_share
               : spec.mps_share > 0 ? spec.mps_share
                                    : static_cast<double>(spec.tensor_parallel) * spec.data_parallel);
      points[n] = {load, n, gpus, a, percentile(ttft, 99), percentile(tpot, 99)};
      return a;
    };
    int miss = 0, hit = -1;
    for (int n = 1;; n = std::min(2 * n, max_replicas)) {
      if (attain(n) >= target) {
        hit = n;
        break;
      }
      miss = n;
      if (n == max_replicas) break;
    }
    while (hit > 0 && hit - miss > 1) {
      const int mid = miss + (hit - miss) / 2;
      (attain(mid) >= target ? hit : miss) = mid;
    }
    if (hit > 0 && hit < max_replicas) attain(hit + 1);  // one point past the target
    const int fewest = hit;
    for (const auto& [n, point] : points) out.curve.push_back(point);
    out.fewest.push_back(fewest);
  }
  return out;
}

void write_sizing_csv_header(std::ostream& out) {
  out << "load,replicas,gpus,slo_attainment,ttft_p99_s,tpot_p99_s\n";
}

void write_sizing_csv_rows(std::ostream& out, const SizingResult& r, const std::string& prefix) {
  for (const auto& p : r.curve)
    out << prefix << fmt(p.load) << ',' << p.replicas << ',' << fmt(p.gpus) << ',' << fmt(p.attainment) << ','
        << fmt(p.ttft_p99_s) << ',' << fmt(p.tpot_p99_s) << '\n';
}

void write_sizing_csv(std::ostream& out, const SizingResult& r) {
  write_sizing_csv_header(out);
  write_sizing_csv_rows(out, r, "");
}

}  // namespace fleetsim
