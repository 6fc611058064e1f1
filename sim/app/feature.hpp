#pragma once
// Features: optional parts of a run (energy, network and fabric fidelity, failures, services, any
// future one) plug into `fleetsim run` as one registration each, from their own file (sim/app/features/
// holds the shipped ones). A feature is built from the scenario (or not, when the scenario does not use
// it), attaches its hooks, observers and tenants to the engine, and after the run writes its own
// output files and summary.json entries. The runner knows none of them: it builds every registered
// feature, attaches them in their declared order, runs, then lets each complete its work and write.
//
// Order is declared, not implied: a registration names the features it must attach after (e.g.
// services after failures, so that held spares are out of service before replicas are placed). The
// order is the topological order of those declarations, ties by name; it is also the order of the
// completion and writing steps and of the features' summary entries.
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/app/scenario.hpp"
#include "sim/engine/simulation.hpp"
#include "sim/metrics/recorders.hpp"

namespace fleetsim {

/// Where a feature writes after the run: staged files (moved into the output folder only when the
/// whole run succeeds) and its summary.json entries.
class FeatureOutputs {
 public:
  virtual ~FeatureOutputs() = default;
  /// A stream for output file `name` (one of the registration's `outputs`).
  virtual std::ofstream open(const std::string& name) = 0;
  /// Headline figures, placed among the run's own (before total_gpus): flat keys.
  virtual nlohmann::ordered_json& figures() = 0;
  /// Top-level summary entry `key`, placed after the run's figures, in feature order.
  virtual nlohmann::ordered_json& entry(const std::string& key) = 0;
};

class Feature {
 public:
  virtual ~Feature() = default;
  /// Before the run: attach hooks, observers and node tenants to the engine. They must live as long
  /// as the feature.
  virtual void attach(Simulation& sim) = 0;
  /// After the run, every feature's before any writes: finish the feature's own work (e.g. simulate a
  /// service's requests on the placements its replicas held), which other features may then read
  /// through the engine's interfaces (NodeTenant::requests_rerouted).
  virtual void complete() {}
  /// Then: write its files and summary entries. `jobs` is the run's job table.
  virtual void write(FeatureOutputs& out, const JobTable& jobs) const = 0;
};

struct FeatureEntry {
  std::string name;
  std::string description;
  /// Files the feature may write (the runner removes stale copies of those it did not write).
  std::vector<std::string> outputs;
  /// Features it attaches after (names of other registrations).
  std::vector<std::string> after;
  /// The feature for this scenario; nullptr when the scenario does not use it. Throws InputError on
  /// bad input (before anything runs).
  std::function<std::unique_ptr<Feature>(const Scenario&)> make;
};

/// Every registered feature in the declared order. A registration naming an unknown feature in
/// `after`, or a cycle, is a programming error (std::logic_error naming it).
std::vector<const FeatureEntry*> ordered_features();
/// The same order for any list of entries (pointers into `entries`).
std::vector<const FeatureEntry*> order_features(const std::vector<FeatureEntry>& entries);

/// Registers a feature from its own .cpp: `const FeatureRegistrar kFeature{{"name", ...}};`.
struct FeatureRegistrar {
  explicit FeatureRegistrar(FeatureEntry entry);
};

}  // namespace fleetsim
