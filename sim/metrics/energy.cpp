#include "sim/metrics/energy.hpp"

#include <algorithm>

#include "models/hardware/gpu_catalog.hpp"

#include "workloads/base/keys.hpp"

namespace fleetsim {

namespace {
constexpr double kJoulesPerKwh = 3.6e6;
}

namespace {

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"power", "busy_fraction", K::kFloat, "", "0.8",
     "power of a GPU allocated to a running job as a fraction of its catalog TDP, (0, 1]; an idle GPU draws "
     "the catalog idle power, a shared GPU in proportion to its allocated share",
     "", in_unit_interval()},
    {"power", "node_base_w", K::kFloat, "W", "400", "non-GPU power per node (CPUs, memory, fans)", "",
     at_least(0)},
    {"power", "nic_w", K::kFloat, "W", "20", "power per NIC incl. transceiver", "", at_least(0)},
    {"power", "switch_w", K::kFloat, "W", "400", "power per fabric switch (leaf or spine)", "", at_least(0)},
    {"power", "pue", K::kFloat, "", "1", "power usage effectiveness, facility / IT energy, >= 1", "",
     at_least(1)},
    {"power", "price_per_kwh", K::kFloat, "", "0 = no cost", "price per facility kWh, any currency", "",
     at_least(0)},
}};

}  // namespace

PowerConfig power_config(const Options& power) {
  PowerConfig c;
  c.busy_fraction = power.number("busy_fraction", c.busy_fraction);
  c.node_base_w = power.number("node_base_w", c.node_base_w);
  c.nic_w = power.number("nic_w", c.nic_w);
  c.switch_w = power.number("switch_w", c.switch_w);
  c.pue = power.number("pue", c.pue);
  c.price_per_kwh = power.number("price_per_kwh", c.price_per_kwh);
  return c;
}

EnergyObserver::EnergyObserver(const PowerConfig& config, const ClusterSpec& cluster) : config_(config) {
  for (const auto& node : cluster.nodes) {
    if (node.gpus <= 0) continue;
    TypePower& t = types_[node.gpu];
    const GpuSpec& g = gpu_spec(node.gpu);
    t.idle_w = g.idle_w;
    t.busy_w = std::max(g.idle_w, config_.busy_fraction * g.tdp_w);
    t.count += node.gpus;
  }
  nodes_ = static_cast<int>(cluster.nodes.size());
  const FabricInventory inv = fabric_inventory(cluster);
  link_w_ =
      static_cast<double>(inv.nics) * config_.nic_w +
      static_cast<double>(inv.leaf_switches + inv.spine_switches + inv.core_switches) * config_.switch_w;
  static_w_ = nodes_ * config_.node_base_w + link_w_;
}

// Allocation changes happen at the current event instant; the power until that instant is the
// one before the change, so changes wait in `pending` until the instant's sample integrates up to it.
void EnergyObserver::change(const JobRecord& job, double sign) {
  if (job.gpus <= 0) return;
  TypePower* type = nullptr;
  if (sign > 0) {
    const auto it = types_.find(job.gpu_type);
    if (it != types_.end()) type = &it->second;
    running_type_[job.index] = type;
  } else {
    const auto it = running_type_.find(job.index);
    if (it == running_type_.end()) return;
    type = it->second;
    running_type_.erase(it);
  }
  if (type != nullptr) type->pending += sign * job.gpus;
}

void EnergyObserver::on_job_started(const JobRecord& job) {
  change(job, +1);
}
void EnergyObserver::on_job_preempted(const JobRecord& job) {
  change(job, -1);
}
void EnergyObserver::on_job_finished(const JobRecord& job) {
  change(job, -1);
}

void EnergyObserver::advance_to(double time_s) {
  if (start_s_ < 0) {
    start_s_ = last_s_ = time_s;
    return;
  }
  const double dt = time_s - last_s_;
  if (dt <= 0) return;
  for (const auto& [name, t] : types_) {
    const double allocated = std::clamp(t.allocated, 0.0, t.count);
    const double idle_j = (t.count - allocated) * t.idle_w * dt;
    idle_gpu_j_ += idle_j;
    gpu_j_ += idle_j + allocated * t.busy_w * dt;
  }
  last_s_ = time_s;
}

void EnergyObserver::on_sample(const StateSample& sample) {
  advance_to(sample.time_s);
  for (auto& [name, t] : types_) {
    t.allocated += t.pending;
    t.pending = 0;
  }
}

void EnergyObserver::on_end(double time_s) {
  advance_to(time_s);
}

EnergyTotals EnergyObserver::totals() const {
  EnergyTotals e;
  e.window_s = start_s_ < 0 ? 0.0 : last_s_ - start_s_;
  e.gpu_kwh = gpu_j_ / kJoulesPerKwh;
  e.idle_gpu_kwh = idle_gpu_j_ / kJoulesPerKwh;
  e.node_kwh = nodes_ * config_.node_base_w * e.window_s / kJoulesPerKwh;
  e.link_kwh = link_w_ * e.window_s / kJoulesPerKwh;
  e.energy_kwh = e.gpu_kwh + e.node_kwh + e.link_kwh;
  e.facility_kwh = e.energy_kwh * config_.pue;
  e.cost = e.facility_kwh * config_.price_per_kwh;
  e.mean_power_w = e.window_s > 0 ? e.energy_kwh * kJoulesPerKwh / e.window_s : 0.0;
  return e;
}

nlohmann::ordered_json energy_figures(const EnergyObserver& energy, long completed_jobs) {
  const EnergyTotals e = energy.totals();
  nlohmann::ordered_json s;
  s["energy_kwh"] = e.energy_kwh;
  s["facility_kwh"] = e.facility_kwh;
  s["gpu_kwh"] = e.gpu_kwh;
  s["idle_gpu_kwh"] = e.idle_gpu_kwh;
  s["node_kwh"] = e.node_kwh;
  s["link_kwh"] = e.link_kwh;
  s["energy_per_completed_job_kwh"] =
      completed_jobs > 0 ? e.energy_kwh / static_cast<double>(completed_jobs) : 0.0;
  s["cost"] = e.cost;
  s["mean_power_w"] = e.mean_power_w;
  s["energy_window_s"] = e.window_s;
  s["pue"] = energy.config().pue;
  s["price_per_kwh"] = energy.config().price_per_kwh;
  return s;
}

}  // namespace fleetsim
