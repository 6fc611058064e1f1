#pragma once
// ThroughputTable: measured training throughputs in Gavel's format (Narayanan et al., OSDI'20):
//   { "<gpu type>[_unconsolidated]": { "('<job type>', <scale>)": { "null": <steps/s alone>,
//                                                                    "('<other>', <s>)": [<own>, <other's>] }
//                                                                    } }
// Rates are steps per second of the whole job (all its `scale` GPUs together). A measured 0 means the
// job does not run there (e.g. out of memory) and is returned as 0. Loaded once and precomputed into
// hash maps keyed by (GPU type, consolidated, job type, scale), so each lookup is a couple of hashes.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace fleetsim {

class ThroughputTable {
 public:
  /// Rate found by rate_up_to(): the measured rate and the scale it was measured at.
  struct ScaledRate {
    double rate = 0;  ///< steps/s
    int scale = 1;    ///< scale the rate was measured at (<= the requested scale)
  };

  ThroughputTable() = default;

  /// Reads and validates a Gavel throughput JSON. Throws InputError naming the file (and the line for
  /// malformed JSON, the entry for a malformed key or rate).
  static ThroughputTable load(const std::string& path);
  /// Same, from JSON text (`origin` names it in messages).
  static ThroughputTable parse(std::string_view json_text, const std::string& origin);

  /// Isolated rate (steps/s) of `job_type` at `scale` GPUs on `gpu_type` ("v100"; case-insensitive).
  /// `consolidated` = false selects the "<type>_unconsolidated" table (multi-GPU jobs spread over
  /// servers). nullopt when the table has no such entry.
  std::optional<double> rate(std::string_view gpu_type, std::string_view job_type, int scale,
                             bool consolidated = true) const;

  /// Like rate(), but skipping entries with rate 0, and when `scale` itself has no positive rate,
  /// falling back to the largest smaller measured scale that has one (the extra GPUs are assumed to
  /// give no speed-up: a conservative estimate). nullopt when no scale <= `scale` has a positive rate.
  std::optional<ScaledRate> rate_up_to(std::string_view gpu_type, std::string_view job_type, int scale,
                                       bool consolidated = true) const;

  /// Co-location rates when `job_type`@`scale` shares its GPUs with `other_type`@`other_scale`:
  /// (this job's steps/s, the other job's steps/s). nullopt when not measured.
  std::optional<std::pair<double, double>> pair_rate(std::string_view gpu_type, std::string_view job_type,
                                                     int scale, std::string_view other_type, int other_scale,
                                                     bool consolidated = true) const;

  /// GPU types (lower case, without the "_unconsolidated" suffix), sorted.
  std::vector<std::string> gpu_types() const { return gpu_types_; }
  /// Job types appearing in the table, sorted.
  std::vector<std::string> job_types() const;
  /// Scales measured for `job_type` on `gpu_type` (consolidated table), ascending.
  std::vector<int> scales(std::string_view gpu_type, std::string_view job_type) const;
  bool has_gpu_type(std::string_view gpu_type) const { return gpu_index(gpu_type) >= 0; }
  bool has_job_type(std::string_view job_type) const { return job_index(job_type) >= 0; }
  std::size_t size() const { return rates_.size(); }  ///< number of isolated-rate entries
  const std::string& origin() const { return origin_; }

 private:
  struct StringHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  int gpu_index(std::string_view gpu_type) const;
  int job_index(std::string_view job_type) const;
  int intern_job(const std::string& name);
  static std::uint64_t key(int gpu, bool consolidated, int job, int scale);
  static std::uint64_t pair_key(int gpu, bool consolidated, int job, int scale, int other, int other_scale);

  std::string origin_;
  std::vector<std::string> gpu_types_;  // sorted, index = gpu id
  std::vector<std::string> job_names_;  // index = job id (insertion order)
  std::unordered_map<std::string, int, StringHash, std::equal_to<>> job_ids_;
  std::unordered_map<std::uint64_t, double> rates_;
  /// (gpu, consolidated, job) -> measured (scale, rate), ascending scale.
  std::unordered_map<std::uint64_t, std::vector<std::pair<int, double>>> by_job_;
  std::unordered_map<std::uint64_t, std::pair<double, double>> pair_rates_;
};

}  // namespace fleetsim
