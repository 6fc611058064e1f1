#pragma once
// A sweep file (TOML): a base scenario, a [grid] of scenario keys each with a list of values and/or
// [[case]] explicit override sets, seeds, metrics. Every combination (case x grid point) x seed is
// one run: `fleetsim run BASE --set key=value ...` in its own process (sim/experiments/sweep.hpp).
//
//   base = "../scenarios/quickstart.toml"         # relative to the sweep file
//   seeds = 5                                     # 1..5, or a list: [1, 7, 42]
//   metrics = ["mean_jct_s", "p99_wait_s"]        # default: every number of summary.json
//   [grid]
//   "scheduler.policy" = ["fifo", "las"]          # any scenario key (fleetsim keys), values in TOML
//   "cluster.pool.0.nodes" = [8, 10]
//   [baseline]                                    # paired comparisons against these values
//   "scheduler.policy" = "fifo"                   # (default: the first value of each grid key)
//   [[case]]                                      # optional explicit override sets (crossed with the grid)
//   name = "big"
//   "cluster.pool.0.nodes" = 14
#include <cstdint>
#include <string>
#include <vector>

namespace fleetsim {

/// One scenario key set by the sweep: its value as TOML text (for --set) and as a label.
struct SweepSetting {
  std::string key;
  std::string toml;   ///< value in TOML syntax, e.g. "\"fifo\"" or "32"
  std::string label;  ///< value as shown in tables and CSV cells, e.g. fifo or 32
  long line = 0;      ///< line of the key in the sweep file
};

struct SweepGridKey {
  std::string key;
  long line = 0;
  std::vector<SweepSetting> values;
  std::size_t baseline = 0;  ///< index of the value paired comparisons are against
};

struct SweepCase {
  std::string name;
  long line = 0;
  std::vector<SweepSetting> settings;
};

/// One combination of swept settings (case x grid point); every seed of it is one run.
struct SweepCombination {
  std::size_t index = 0;
  std::size_t case_index = 0;            ///< into SweepSpec::cases (0 when there are none)
  std::vector<std::size_t> grid_choice;  ///< per grid key, the index of its value
  std::vector<SweepSetting> settings;    ///< case settings, then grid settings
  std::string id() const;                ///< "c007" (zero-padded to the combination count)
  std::string label() const;             ///< "case=big scheduler.policy=fifo ..." for messages
  int width = 3;
};

struct SweepSpec {
  std::string file;  ///< the sweep file (for messages)
  std::string base;  ///< base scenario path (resolved against the sweep file's folder)
  long base_line = 0;
  std::vector<SweepGridKey> grid;
  std::vector<SweepCase> cases;
  std::vector<std::uint64_t> seeds;
  std::vector<std::string> metrics;  ///< empty: every number of summary.json
  /// The swept keys in order (case keys first seen first, then grid keys), the columns of runs.csv.
  std::vector<std::string> keys;
  long line_of(const std::string& key) const;  ///< line of a swept key in the sweep file (0 if none)
};

/// One run: a combination at one seed.
struct SweepRun {
  std::size_t combination = 0;
  std::uint64_t seed = 0;
  std::string id;                      ///< "c007-s3"
  std::vector<std::string> overrides;  ///< "key=value" for load_scenario / fleetsim run --set
};

/// Parses and checks the sweep file (not the scenario keys: see check_sweep). Throws InputError.
SweepSpec load_sweep(const std::string& path);
/// From TOML text (tests); `base_dir` resolves the base scenario's path.
SweepSpec parse_sweep(const std::string& toml_text, const std::string& name, const std::string& base_dir);

std::vector<SweepCombination> sweep_combinations(const SweepSpec& spec);
std::vector<SweepRun> sweep_runs(const SweepSpec& spec, const std::vector<SweepCombination>& combos);

/// Loads the base scenario with every combination's overrides (and checks policy, placement and job
/// model names) before anything runs. Errors name the sweep file, the line and key, and the combination.
void check_sweep(const SweepSpec& spec, const std::vector<SweepCombination>& combos);

}  // namespace fleetsim
