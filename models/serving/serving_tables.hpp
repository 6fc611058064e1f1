#pragma once
// Internal to models/serving: the tables behind ServingStepModel (step_model.hpp) and how they are
// read. Every table becomes a Grid: values on a rectilinear grid, made non-decreasing along every
// axis, read by multilinear interpolation.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "models/serving/step_model.hpp"

namespace fleetsim::serving {

/// Values on a rectilinear grid: axes strictly increasing, values row-major (last axis fastest).
class Grid {
 public:
  static constexpr std::size_t kMaxDims = 8;
  Grid() = default;
  Grid(std::vector<std::vector<double>> axes, std::vector<double> values);

  std::size_t dims() const { return axes_.size(); }
  const std::vector<double>& axis(std::size_t d) const { return axes_[d]; }
  double node(std::span<const std::size_t> index) const;

  /// Replaces the values by the mean of their smallest non-decreasing majorant (running maximum
  /// along each axis in turn) and their largest non-decreasing minorant (running minimum from the
  /// top): non-decreasing along every axis, unchanged where the values already were.
  void make_monotone();

  /// Multilinear interpolation at `x` (one coordinate per axis). Below an axis's first node the
  /// coordinate is clamped to it; above its last node the value is extrapolated linearly from the
  /// last two nodes.
  double operator()(std::span<const double> x) const;

 private:
  std::vector<std::vector<double>> axes_;
  std::vector<std::size_t> strides_;
  std::vector<double> values_;
};

/// Piecewise-linear through sorted (x, y) points: clamped below the first x, extrapolated from
/// the last two points above the last x.
double piecewise_linear(const std::vector<std::pair<double, double>>& points, double x);

/// The skew correction of decode attention (LLMServingSim's skew_fit): alpha by bucket.
struct SkewFit {
  bool enabled = false;
  double alpha_default = 0;
  std::vector<double> n_bins, skew_rate_bins, kv_big_bins, kp_bins;
  std::vector<std::string> n_labels, skew_rate_labels, kv_big_labels, kp_labels;
  std::vector<int> prefill_chunks;          ///< the pc values of the bucket table, sorted
  std::map<std::string, double> by_bucket;  ///< "pc|n|skew_rate|kv_big|kp" labels -> alpha
  /// The same, keyed by bucket indices (index_buckets(); lookups allocate nothing).
  std::unordered_map<std::uint64_t, double> by_index;
  static std::uint64_t key(std::size_t pc, std::size_t n, std::size_t sr, std::size_t kv, std::size_t kp) {
    return (static_cast<std::uint64_t>(pc) << 32) | (n << 24) | (sr << 16) | (kv << 8) | kp;
  }
  /// Fills by_index from by_bucket and prefill_chunks (labels not on the axes are left out).
  void index_buckets();
  /// Alpha for a batch (the bucket's value, else alpha_default; 0 when disabled), in [0, 1].
  double alpha(int prefill_chunk, int n_decode, double skew_rate, double kv_big, double kv_prefill) const;
};

/// One TP degree's profile tables, in microseconds.
struct ServingTables {
  std::map<std::string, Grid> dense;         ///< layer -> time by tokens
  std::map<std::string, Grid> per_sequence;  ///< layer -> time by sequences
  Grid attention;                            ///< (prefill_chunk, kv_prefill, n_decode, kv_decode)
  std::optional<Grid> moe;                   ///< (tokens, activated_experts), if profiled
  int moe_tp = 1;                            ///< the TP degree the MoE table was measured at
  int tp = 1;                                ///< the TP degree these tables were measured at
  SkewFit skew;
  std::string model_name;  ///< meta.yaml `model`, "" if absent
  std::string hardware;    ///< meta.yaml `hardware` (the profiled GPU), "" if absent
};

/// Reads <profile_dir>/meta.yaml and tp<j>/{dense,per_sequence,attention}.csv (moe.csv of tp<j>
/// or else tp1 when `need_moe`, skew_fit.csv when meta.yaml enables it), j the largest profiled TP
/// degree that divides `tp` (tp itself when profiled; the step model derives the rest). Throws
/// InputError when no profiled degree divides it.
ServingTables read_serving_tables(const std::string& profile_dir, int tp, bool need_moe);

/// What the step model needs from a Hugging Face config.json.
struct ServingModelConfig {
  ServingModelFacts facts;
  int hidden_size = 0;
  int heads = 0;     ///< num_attention_heads
  int kv_heads = 0;  ///< num_key_value_heads
  int vocab = 0;
  int experts = 0;  ///< routed experts per MoE layer; 0 for a dense model
  int experts_per_token = 0;
};
/// Throws InputError(file, line, key) on unreadable JSON or a missing or bad key.
ServingModelConfig read_model_config(const std::string& path);

/// A minimal YAML subset (block mappings by indentation, scalars, flow lists [a, b], "- a" items,
/// comments): enough for LLMServingSim's meta.yaml.
struct YamlChild;
struct YamlNode {
  long line = 0;
  std::string scalar;
  std::vector<std::string> items;
  std::vector<YamlChild> children;  ///< a named struct, not std::pair: pair's traits need YamlNode complete
  const YamlNode* find(const std::string& key) const;
};
struct YamlChild {
  std::string key;
  YamlNode node;
};
YamlNode parse_yaml_subset(const std::string& text, const std::string& file);

}  // namespace fleetsim::serving
