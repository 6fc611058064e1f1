#include "sim/failures/failure_config.hpp"

#include <algorithm>
#include <cmath>

#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

constexpr double kPer1000NodeDays = 1.0 / (1000.0 * 86400.0);

using K = KeyKind;
const KeyRegistrar kKeys{{
    {"", "failures", K::kTable, "", "",
     "hardware failures, repair and checkpointing (off unless a rate or a trace "
     "is given)"},
    {"failures", "rate_per_1000_node_days", K::kFloat, "1/(1000 node-days)", "0 = off",
     "node failures per 1000 node-days, all components together", "", at_least(0)},
    {"failures", "mtbf_h", K::kFloat, "h", "", "instead of a rate: mean time between failures of one node",
     "", above(0)},
    {"failures", "interarrival", K::kString, "", "exponential",
     "exponential | weibull (renewal after repair)", "", one_of({"exponential", "weibull"})},
    {"failures", "weibull_shape", K::kFloat, "", "1", "Weibull shape k (< 1: infant mortality)", "",
     above(0)},
    {"failures", "components", K::kStringArray, "", "[\"other\"]",
     "failure causes (gpu, hbm, sram, nic, link, switch, psu, fan, cpu, memory, storage, host, software, "
     "network, other)",
     "", nullptr},
    {"failures", "component_shares", K::kNumberArray, "", "equal",
     "share of the node rate of each component (any scale, normalised)", "", nullptr},
    {"failures", "component_rates_per_1000_node_days", K::kNumberArray, "1/(1000 node-days)", "",
     "instead of a node rate and shares: each component's own rate", "", nullptr},
    {"failures", "lemon_fraction", K::kFloat, "", "0", "share of nodes that fail more often (lemons), [0, 1]",
     "", nullptr},
    {"failures", "lemon_multiplier", K::kFloat, "", "1", "rate multiplier of lemon nodes, >= 1", "",
     at_least(1)},
    {"failures", "domain", K::kString, "", "none",
     "none | leaf: a correlated domain (a leaf switch) takes "
     "down every node under it",
     "", one_of({"none", "leaf"})},
    {"failures", "domain_rate_per_1000_days", K::kFloat, "1/(1000 days)", "0", "failures of one domain", "",
     at_least(0)},
    {"failures", "repair", K::kString, "", "lognormal", "lognormal | empirical (repair_samples_s)", "",
     one_of({"lognormal", "empirical"})},
    {"failures", "repair_median_s", K::kFloat, "s", "3600", "automatic repair: log-normal median", "",
     above(0)},
    {"failures", "repair_sigma", K::kFloat, "", "1", "automatic repair: log-normal sigma", "", at_least(0)},
    {"failures", "repair_samples_s", K::kNumberArray, "s", "", "empirical repair times, drawn uniformly", "",
     nullptr},
    {"failures", "repair_manual_probability", K::kFloat, "", "0",
     "probability that a manual repair stage follows the automatic one, [0, 1]", "", nullptr},
    {"failures", "repair_manual_median_s", K::kFloat, "s", "86400", "manual stage: log-normal median", "",
     above(0)},
    {"failures", "repair_manual_sigma", K::kFloat, "", "1", "manual stage: log-normal sigma", "",
     at_least(0)},
    {"failures", "domain_repair_median_s", K::kFloat, "s", "repair_median_s",
     "domain repair: log-normal median", "", above(0)},
    {"failures", "trace", K::kPath, "", "", "replay this fault trace instead of generated failures", "",
     nullptr},
    {"failures", "trace_format", K::kString, "", "",
     "fault trace format: stepfun | csv (node,start,end,component)", "", nullptr},
    {"failures", "trace_mapping", K::kString, "", "round-robin",
     "trace node i -> cluster node: round-robin (i mod nodes) | random (a seeded permutation)", "",
     one_of({"round-robin", "random"})},
    {"failures", "detection_s", K::kFloat, "s", "0", "time until a failure is noticed, paid by the job", "",
     at_least(0)},
    {"failures", "restart_s", K::kFloat, "s", "0", "time to relaunch an interrupted job", "", at_least(0)},
    {"failures", "restore_s", K::kFloat, "s", "0", "fixed time to read its checkpoint back", "", at_least(0)},
    {"failures", "checkpoint", K::kString, "", "none",
     "none (a failure loses everything since the job's last start) | fixed (checkpoint_interval_s) | auto "
     "(Daly's optimum for the job's size)",
     "", one_of({"none", "fixed", "auto"})},
    {"failures", "checkpoint_interval_s", K::kFloat, "s", "",
     "checkpoint fixed: compute time between checkpoints", "", above(0)},
    {"failures", "checkpoint_write_s", K::kFloat, "s", "0",
     "time to write one checkpoint (no state size given)", "", at_least(0)},
    {"failures", "checkpoint_gb_per_gpu", K::kFloat, "GB", "0", "state written per GPU at a checkpoint", "",
     at_least(0)},
    {"failures", "storage_gb_per_s_per_node", K::kFloat, "GB/s", "0",
     "checkpoint write and restore bandwidth per node (with checkpoint_gb_per_gpu)", "", at_least(0)},
    {"failures", "spare_nodes", K::kInt, "nodes", "0",
     "hot spares: the cluster's last N nodes stay out of service until a failure takes a node down; a spare "
     "then joins at once and the repaired node becomes a spare",
     "", at_least(0)},
    {"failures", "maintenance_interval_h", K::kFloat, "h", "0 = off",
     "planned maintenance: a window opens every this many hours (the first after one interval); its jobs "
     "checkpoint, leave and restart elsewhere (restart_s + restore)",
     "", at_least(0)},
    {"failures", "maintenance_nodes", K::kInt, "nodes", "1",
     "nodes drained per maintenance window, rolling through the cluster in node order", "", at_least(1)},
    {"failures", "maintenance_duration_s", K::kFloat, "s", "3600",
     "how long a maintenance window keeps its nodes", "", above(0)},
}};

RepairConfig repair_of(const Options& o) {
  RepairConfig r;
  r.kind = o.text("repair", r.kind);
  r.median_s = o.number("repair_median_s", r.median_s);
  r.sigma = o.number("repair_sigma", r.sigma);
  r.samples_s = o.numbers("repair_samples_s", {});
  for (double v : r.samples_s)
    if (!(v >= 0) || !std::isfinite(v)) throw o.error("repair_samples_s", "repair times must be >= 0 s");
  if (r.kind == "empirical" && r.samples_s.empty())
    throw o.error("repair", "empirical repair needs repair_samples_s");
  r.manual_probability = o.number("repair_manual_probability", 0);
  if (!(r.manual_probability >= 0 && r.manual_probability <= 1))
    throw o.error("repair_manual_probability", "must be in [0, 1]");
  r.manual_median_s = o.number("repair_manual_median_s", r.manual_median_s);
  r.manual_sigma = o.number("repair_manual_sigma", r.manual_sigma);
  return r;
}

}  // namespace

const std::vector<std::string>& known_components() {
  static const std::vector<std::string> kNames = {"gpu",     "hbm",  "sram",     "nic",     "link",
                                                  "switch",  "psu",  "fan",      "cpu",     "memory",
                                                  "storage", "host", "software", "network", "other"};
  return kNames;
}

std::optional<FailureConfig> FailureConfig::from(const Options& o, std::uint64_t seed,
                                                 std::size_t cluster_nodes) {
  FailureConfig c;
  c.seed = seed;
  c.file = o.file();
  double rate = o.number("rate_per_1000_node_days", 0) * kPer1000NodeDays;
  if (o.has("mtbf_h")) {
    if (o.has("rate_per_1000_node_days")) throw o.error("mtbf_h", "give a rate or an MTBF, not both");
    rate = 1.0 / (o.number("mtbf_h", 1) * 3600.0);
  }
  c.components = o.texts("components", {"other"});
  for (const auto& name : c.components)
    if (std::find(known_components().begin(), known_components().end(), name) == known_components().end()) {
      std::string msg = "unknown component '" + name + "'";
      if (auto best = closest(name, known_components()); !best.empty())
        msg += " (did you mean '" + best + "'?)";
      throw o.error("components", msg + "; valid: " + join(known_components(), ", "));
    }
  const auto n = c.components.size();
  if (o.has("component_rates_per_1000_node_days")) {
    const auto rates = o.numbers("component_rates_per_1000_node_days", {});
    if (rates.size() != n) throw o.error("component_rates_per_1000_node_days", "one rate per component");
    if (o.has("rate_per_1000_node_days") || o.has("mtbf_h"))
      throw o.error("component_rates_per_1000_node_days", "give component rates or a node rate, not both");
    rate = 0;
    for (double r : rates) {
      if (!(r >= 0) || !std::isfinite(r))
        throw o.error("component_rates_per_1000_node_days", "rates must be >= 0");
      c.component_rates.push_back(r * kPer1000NodeDays);
      rate += r * kPer1000NodeDays;
    }
  } else {
    auto shares = o.numbers("component_shares", std::vector<double>(n, 1.0));
    if (shares.size() != n) throw o.error("component_shares", "one share per component");
    double sum = 0;
    for (double s : shares) {
      if (!(s >= 0) || !std::isfinite(s)) throw o.error("component_shares", "shares must be >= 0");
      sum += s;
    }
    if (!(sum > 0)) throw o.error("component_shares", "at least one share must be > 0");
    for (double s : shares) c.component_rates.push_back(rate * s / sum);
  }
  c.node_rate_per_s = rate;
  c.interarrival = o.text("interarrival", c.interarrival);
  c.weibull_shape = o.number("weibull_shape", 1);
  c.lemon_fraction = o.number("lemon_fraction", 0);
  if (!(c.lemon_fraction >= 0 && c.lemon_fraction <= 1)) throw o.error("lemon_fraction", "must be in [0, 1]");
  c.lemon_multiplier = o.number("lemon_multiplier", 1);
  c.domain = o.text("domain", c.domain);
  c.domain_rate_per_s = o.number("domain_rate_per_1000_days", 0) / (1000.0 * 86400.0);
  if (c.domain_rate_per_s > 0 && c.domain == "none")
    throw o.error("domain_rate_per_1000_days", "needs domain = \"leaf\"");
  c.repair = repair_of(o);
  c.domain_repair = c.repair;
  c.domain_repair.median_s = o.number("domain_repair_median_s", c.repair.median_s);
  c.trace = o.text("trace", "");
  c.trace_format = o.text("trace_format", "");
  if (!c.trace.empty() && c.trace_format.empty())
    throw o.error("trace", "needs trace_format (stepfun | csv)");
  if (c.trace.empty() && !c.trace_format.empty()) throw o.error("trace_format", "needs trace (a file)");
  if (!c.trace.empty() && c.generated())
    throw o.error("trace", "replay a trace or generate failures from rates, not both");
  c.trace_mapping = o.text("trace_mapping", c.trace_mapping);
  c.detection_s = o.number("detection_s", 0);
  c.restart_s = o.number("restart_s", 0);
  c.restore_s = o.number("restore_s", 0);
  c.checkpoint = o.text("checkpoint", c.checkpoint);
  c.checkpoint_interval_s = o.number("checkpoint_interval_s", 0);
  if (c.checkpoint == "fixed" && !o.has("checkpoint_interval_s"))
    throw o.error("checkpoint", "fixed needs checkpoint_interval_s");
  c.checkpoint_write_s = o.number("checkpoint_write_s", 0);
  c.checkpoint_gb_per_gpu = o.number("checkpoint_gb_per_gpu", 0);
  c.storage_gb_per_s_per_node = o.number("storage_gb_per_s_per_node", 0);
  if (c.checkpoint_gb_per_gpu > 0 && !(c.storage_gb_per_s_per_node > 0))
    throw o.error("checkpoint_gb_per_gpu", "needs storage_gb_per_s_per_node > 0");
  if (c.checkpoint == "auto" && !(c.checkpoint_write_s > 0) && !(c.checkpoint_gb_per_gpu > 0))
    throw o.error("checkpoint", "auto needs a write cost: checkpoint_write_s or checkpoint_gb_per_gpu");
  const auto nodes = static_cast<long>(cluster_nodes);
  const int spares = o.int32("spare_nodes", 0);
  if (spares >= nodes)
    throw o.error("spare_nodes", std::to_string(spares) + " spares leave no node of the cluster's " +
                                     std::to_string(nodes) + " in service");
  c.spare_nodes = spares;
  c.maintenance_interval_s = o.number("maintenance_interval_h", 0) * 3600.0;
  const int window = o.int32("maintenance_nodes", 1);
  if (window > nodes - c.spare_nodes)
    throw o.error("maintenance_nodes", "a window of " + std::to_string(window) + " nodes is more than the " +
                                           std::to_string(nodes - c.spare_nodes) + " nodes in service");
  c.maintenance_nodes = window;
  c.maintenance_duration_s = o.number("maintenance_duration_s", c.maintenance_duration_s);
  if (c.maintenance_interval_s > 0 && c.maintenance_duration_s >= c.maintenance_interval_s)
    throw o.error("maintenance_duration_s",
                  "a window must end before the next opens (maintenance_interval_h)");
  if (!c.generated() && c.trace.empty() && !(c.maintenance_interval_s > 0))
    return std::nullopt;  // no failure source and no maintenance: nothing attaches
  if (c.trace.empty() && c.checkpoint == "auto" && !(c.node_rate_per_s > 0) && !(c.domain_rate_per_s > 0))
    throw o.error("checkpoint", "auto needs a failure rate");
  return c;
}

}  // namespace fleetsim
