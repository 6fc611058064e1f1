// What a service's run reports beyond its summary: requests.csv and serving_timeseries.csv rows
// (columns declared in sim/serving/output_docs.cpp) and the energy its replicas draw.
#include <algorithm>
#include <ostream>

#include "models/hardware/gpu_catalog.hpp"

#include "sim/serving/service.hpp"
#include "workloads/base/csv_quote.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

double service_gpu_energy_kwh(const ServiceSpec& spec, const ServiceRun& run, const PowerConfig& power) {
  const GpuSpec& gpu = gpu_spec(spec.gpu);
  const double busy_w = std::max(gpu.idle_w, power.busy_fraction * gpu.tdp_w);
  const double on_gpu_s = run.summary.value("gpu_hours", 0.0) * 3600;  // on-time x share
  const double busy_gpu_s = run.result.busy_s * replica_gpu_share(spec) / spec.data_parallel;  // per rank
  return (on_gpu_s * gpu.idle_w + busy_gpu_s * (busy_w - gpu.idle_w)) / 3.6e6;
}

void write_requests_header(std::ostream& out) {
  out << "service,request_id,arrival_s,first_token_s,end_s,input_tokens,output_tokens,ttft_s,tpot_s,e2e_s,"
         "replica,preemptions,cached_tokens,decode_replica,kv_transfer_s\n";
}

void write_requests_rows(std::ostream& out, const ServiceSpec& spec, const ServiceRun& run) {
  for (std::size_t i = 0; i < run.requests.size(); ++i) {
    const ServingRequest& r = run.requests[i];
    const RequestOutcome& o = run.result.requests[i];
    out << csv_quote(spec.name) << ',' << csv_quote(r.id) << ',' << fmt(r.arrival_s) << ',';
    if (o.end_s >= 0)
      out << fmt(o.first_token_s) << ',' << fmt(o.end_s) << ',';
    else
      out << ",,";
    out << r.input_tokens << ',' << r.output_tokens << ',';
    if (o.end_s >= 0)
      out << fmt(o.first_token_s - r.arrival_s) << ',' << fmt(request_tpot(r, o)) << ','
          << fmt(o.end_s - r.arrival_s);
    else
      out << ",,";
    out << ',' << o.replica << ',' << o.preemptions << ',' << o.cached_tokens << ',';
    if (o.decode_replica >= 0)
      out << o.decode_replica << ',' << fmt(o.kv_transfer_s);
    else
      out << ',';
    out << '\n';
  }
}

void write_serving_series_header(std::ostream& out) {
  out << "service,t_s,replica,running,waiting,kv_used\n";
}

void write_serving_series_rows(std::ostream& out, const ServiceSpec& spec, const ServiceRun& run) {
  for (const auto& s : run.result.samples)
    out << csv_quote(spec.name) << ',' << fmt(s.t) << ',' << s.replica << ',' << s.running << ',' << s.waiting
        << ',' << fmt(s.kv_used) << '\n';
}

}  // namespace fleetsim
