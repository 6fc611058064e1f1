#pragma once
// Energy and cost of a run: an observer that integrates cluster power exactly over the event
// timeline (power is piecewise constant between event instants, so the integral has no sampling
// error).
//
// Power model (assumptions; every figure is a [power] key, see PowerConfig):
//  - GPU: an unallocated GPU draws the catalog's idle_w; a GPU allocated to a running job draws
//    busy_fraction x the catalog's tdp_w (default 0.8: training jobs keep GPUs busy but rarely at
//    board limit for a whole job; an assumption, set it from nvidia-smi measurements of your jobs).
//    A GPU shared by fractional jobs (gpu_milli < 1000) draws idle_w + share x (busy - idle_w),
//    linear in its allocated share. Preempted jobs release their GPUs (idle); a restarting job's
//    checkpoint-restore time counts as busy.
//  - Node: node_base_w per node, constant (CPUs, memory, fans, storage, NVSwitches): CPU load is
//    not modelled.
//  - Network: nic_w per NIC (incl. its transceiver) and switch_w per fabric switch (leaf and spine,
//    counted by fabric_inventory), constant: switch and NIC power barely depends on load.
//  - Facility: IT energy x pue; cost = facility kWh x price_per_kwh.
// The window integrated is [first event, last event] of the simulation (the first job arrival to
// the last completion); idle power before the first arrival is not counted.
//
// Why an observer and not SimGrid's host/link energy plugins: in the `delay` fidelity the GPU hosts
// run no SimGrid activity (a job is a timer), so the plugins' load-based power would only ever see
// idle hosts; expressing "allocated" through P-states would need one P-state per share level for
// fractional GPUs; and the plugins log per resource at every engine return. The observer gives the
// same piecewise-constant integral exactly from the job events, for any fidelity.
#include <map>

#include <nlohmann/json.hpp>
#include <string>
#include <unordered_map>

#include "sim/engine/observer.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "workloads/base/options.hpp"

namespace fleetsim {

/// The [power] section of a scenario.
struct PowerConfig {
  double busy_fraction = 0.8;  ///< board power of an allocated GPU as a fraction of its TDP, (0, 1]
  double node_base_w = 400;    ///< non-GPU power per node, W (2 server CPUs + memory, fans, disks)
  double nic_w = 20;           ///< per NIC incl. transceiver, W (200 Gbit/s ConnectX-6 class)
  double switch_w = 400;       ///< per fabric switch (leaf or spine), W (40-64 port IB/Ethernet class)
  double pue = 1.0;            ///< power usage effectiveness, >= 1 (1 = report IT energy only)
  double price_per_kwh = 0;    ///< energy price per facility kWh, in any currency (0 = no cost)
};

/// The [power] keys (declared and range-checked in energy.cpp) over the defaults above.
PowerConfig power_config(const Options& power);

/// Energy figures of a run (kWh unless noted).
struct EnergyTotals {
  double window_s = 0;      ///< integrated time span, s
  double gpu_kwh = 0;       ///< all GPUs (busy and idle)
  double idle_gpu_kwh = 0;  ///< GPUs (or the unallocated share of shared GPUs) while idle
  double node_kwh = 0;      ///< node base power
  double link_kwh = 0;      ///< NICs and switches
  double energy_kwh = 0;    ///< IT energy: gpu + node + link
  double facility_kwh = 0;  ///< energy_kwh x PUE
  double cost = 0;          ///< facility_kwh x price_per_kwh
  double mean_power_w = 0;  ///< energy_kwh over the window, W (IT)
};

class EnergyObserver final : public SimObserver {
 public:
  EnergyObserver(const PowerConfig& config, const ClusterSpec& cluster);
  void on_job_started(const JobRecord& job) override;
  void on_job_preempted(const JobRecord& job) override;
  void on_job_finished(const JobRecord& job) override;
  void on_sample(const StateSample& sample) override;
  void on_end(double time_s) override;

  EnergyTotals totals() const;
  const PowerConfig& config() const { return config_; }

 private:
  struct TypePower {
    double count = 0;      ///< GPUs of this type in the cluster
    double idle_w = 0;     ///< per GPU
    double busy_w = 0;     ///< per GPU, allocated
    double allocated = 0;  ///< GPUs (shares summed) allocated now
    double pending = 0;    ///< allocation change at the current instant, applied at its sample
  };
  void change(const JobRecord& job, double sign);
  void advance_to(double time_s);

  PowerConfig config_;
  std::map<std::string, TypePower> types_;
  /// Job index -> the GPU type it holds (an entry of types_; null: a type without power figures).
  std::unordered_map<int, TypePower*> running_type_;
  double static_w_ = 0;  ///< node base + network power, W
  double link_w_ = 0;    ///< network part of static_w_, W
  int nodes_ = 0;
  double start_s_ = -1;  ///< first sample instant (-1: none yet)
  double last_s_ = 0;
  double gpu_j_ = 0, idle_gpu_j_ = 0;
};

/// The run's energy figures for summary.json: energy_kwh (IT), facility_kwh (x PUE), gpu_kwh,
/// idle_gpu_kwh, node_kwh, link_kwh, energy_per_completed_job_kwh (IT; 0 with no job completed), cost
/// (facility kWh x price), mean_power_w, energy_window_s, pue, price_per_kwh.
nlohmann::ordered_json energy_figures(const EnergyObserver& energy, long completed_jobs);

}  // namespace fleetsim
