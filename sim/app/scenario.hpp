#pragma once
// Scenario: the typed, validated form of a scenario TOML file (plus --set overrides).
// Every key, its type, unit and default is declared once, by its owner (workloads/base/keys.hpp:
// trace readers, job models, the network hook, the energy model, sim/app/scenario_keys.cpp); unknown
// keys are errors that suggest the closest valid key; errors name file, line and key. Sections whose
// keys belong to others ([workload], [execution]) are kept as Options bags that their owners read.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/metrics/energy.hpp"
#include "sim/platform/cluster_spec.hpp"
#include "workloads/base/options.hpp"
#include "workloads/jobs/trace_reader.hpp"

namespace fleetsim {

struct SchedulerConfig {
  std::string policy = "fifo";          ///< scheduling policy registry name
  std::string placement = "first-fit";  ///< placement policy registry name
  Options options;                      ///< [scheduler.options]: the policy's knobs
  Options placement_options;            ///< [scheduler.placement_options]: the placer's knobs
};

struct ExecutionConfig {
  /// Job model registry name, or "auto" (models/job/job_model.hpp: the first registered model whose
  /// auto rule accepts the scenario).
  std::string job_model = "auto";
  /// Every [execution] key, for the engine (EngineConfig::from), the job model and the execution hooks.
  Options settings;
};

struct OutputConfig {
  std::string dir = "results";  ///< output folder (created)
  bool timeseries = true;       ///< write timeseries.csv
};

struct Scenario {
  std::string file;  ///< the scenario file (for messages)
  std::uint64_t seed = 1;
  ClusterSpec cluster;
  WorkloadConfig workload;
  long workload_limit = 0;  ///< read at most this many jobs (0 = all), e.g. a slice for golden tests
  SchedulerConfig scheduler;
  ExecutionConfig execution;
  OutputConfig output;
  PowerConfig power;  ///< [power]: the energy model's figures (sim/metrics/energy.hpp)
  Options failures;   ///< [failures]: read by sim/failures (failure_config.cpp declares the keys)
  /// [[service]] tables and their [service.requests] tables: read by sim/serving (service.cpp and the
  /// request readers declare the keys).
  struct ServiceTables {
    Options service;
    Options requests;
  };
  std::vector<ServiceTables> services;
  /// Line of each key in the file (0 or absent when it came from --set), for later messages.
  std::map<std::string, long> key_lines;
  std::set<std::string> overridden;  ///< keys given with --set
  /// Every input path value (all path keys but output.dir), resolved, with where it was given.
  struct InputPath {
    std::string key, file;  ///< file: the scenario, or "--set"
    long line = 0;
    std::string path;
  };
  std::vector<InputPath> input_paths;

  /// (file, line) of a key, for InputError.
  std::string key_file(const std::string& key) const;
  long key_line(const std::string& key) const;
};

/// Every scenario key with its type, unit and default, one per line (for docs and --help).
std::string describe_scenario_keys();

/// Load and validate a scenario. `overrides` are "dotted.key=value" strings (value in TOML syntax,
/// bare words taken as strings); relative paths in the file resolve against the file's folder,
/// those given in overrides against the current directory.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
/// Throws InputError naming the scenario file, line and key of the first input path (trace, profiles,
/// model config, fault trace, ...) that does not exist: fleetsim run and size call it first (compare and
/// sweep runs are fleetsim run), so a mistyped path is named by its key rather than only by the missing file.
void check_input_paths(const Scenario& s);
/// The scenario file with `overrides` applied, as TOML text (keys sorted; not validated: use
/// load_scenario). What a sweep records as a run's resolved scenario and hashes to resume.
std::string resolved_scenario_text(const std::string& path, const std::vector<std::string>& overrides);
/// Only the [cluster] section of a scenario file (the whole file is still validated against the
/// schema, so an unknown key anywhere is an error naming file, line and key; other sections are
/// optional). For commands that need a platform but no workload (fleetsim replay --scenario, fleetsim
/// llm --platform); `overrides` as load_scenario's.
ClusterSpec load_cluster(const std::string& path, const std::vector<std::string>& overrides = {});
/// Same as load_scenario, from TOML text (tests); `name` is used in messages, `base_dir` resolves relative
/// paths.
Scenario parse_scenario(const std::string& toml_text, const std::string& name, const std::string& base_dir,
                        const std::vector<std::string>& overrides = {});

}  // namespace fleetsim
