#pragma once
// Memory-bound GPU kernels (element-wise, layer-norm, softmax): bytes moved per call, and a fitted
// time-vs-bytes curve with a launch overhead.
//
// Curve form (all times in seconds, sizes in bytes):
//   seconds(bytes, row_len) = launch_s + op_multiplier * bytes * inv_bw(bytes, row_len)
//   inv_bw(bytes, row_len)  = (1 + size_adj(bytes) + row_adj(row_len)) / bw_bytes_per_s
// size_adj is piecewise linear in log(bytes) through (size_knots_bytes[i], size_adj[i]), and
// row_adj piecewise linear in log(row_len) through (row_knots[i], row_adj[i]); both are clamped to
// their end values outside the knots and are zero when their tables are empty. With no tables the
// effective bandwidth bytes / (seconds - 0) = bw * s / (s + s_half), s_half = launch_s * bw, i.e. it
// saturates in size towards bw_bytes_per_s. The row table captures what size alone cannot: for
// layer-norm and softmax the achieved bandwidth depends on the row length (one block per row,
// vectorisation for power-of-two rows, on-chip reuse of a row); seconds(bytes) without a row length
// uses row_adj = 0, which the fit centres on the fitted rows' average.
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

namespace fleetsim {

/// Bytes moved by one call of a memory-bound kernel on an fp32 tensor of b rows by h columns
/// (n = b*h elements, 4 bytes each). Assumptions (DRAM traffic, caches ignored):
///  - binary ops add, sub, mul, div, pow (and maximum, minimum): read 2 tensors, write 1 -> 12 n;
///  - unary / scalar ops, the "u" variants (addu, subu, mulu, divu, powu) and gelu, relu, tanh,
///    sigmoid, silu, exp, log, neg, abs, sqrt, dropout, copy: read 1, write 1 -> 8 n;
///  - ln / layernorm: read x, write y (8 n), read gamma and beta (8 h), write per-row mean and rstd
///    (8 b);
///  - softmax / log_softmax: read x once, write y (8 n), rows are assumed to stay on chip between
///    the max, sum and normalise passes;
///  - unknown op: 2 tensors (8 n).
/// Op names are matched case-insensitively. Throws std::invalid_argument if b or h is negative.
double memory_kernel_bytes(std::string_view op, long b, long h);

struct MemoryCurve {
  double launch_s = 0;                   ///< fixed per-call cost, s
  double bw_bytes_per_s = 1e12;          ///< reference (asymptotic) DRAM bandwidth, bytes/s
  std::vector<double> size_knots_bytes;  ///< ascending, > 0; optional
  std::vector<double> size_adj;          ///< relative inverse-bandwidth adjustment at each size knot
  std::vector<double> row_knots;         ///< ascending row lengths (elements), > 0; optional
  std::vector<double> row_adj;           ///< relative inverse-bandwidth adjustment at each row knot
  double op_multiplier = 1;              ///< scales the transfer part (per-op correction)

  /// Seconds per byte of the transfer part (without op_multiplier); row_len <= 0 means unknown.
  double inverse_bandwidth(double bytes, double row_len = 0) const;
  /// Achieved transfer bandwidth (bytes/s, without launch, op_multiplier and row term).
  double bandwidth(double bytes) const { return 1.0 / inverse_bandwidth(bytes); }
  /// Seconds per call for a kernel moving `bytes` (row length unknown: row_adj = 0).
  double seconds(double bytes) const { return seconds(bytes, 0); }
  /// Seconds per call with the row length (elements per row) known; row_len <= 0 means unknown.
  double seconds(double bytes, double row_len) const;
};

struct MemoryFitOptions {
  int size_knots = 0;   ///< 0 (or 1): affine in bytes; >= 2: that many log-spaced size knots
  bool robust = true;   ///< Huber IRLS on relative residuals
  double ridge = 1e-6;  ///< relative ridge on the size / row adjustments
  int max_iter = 20;
};

/// Fits launch_s and bw_bytes_per_s (t = launch + bytes / bw) by least squares on relative
/// residuals (Eigen), Huber-robust. Needs >= 2 points with >= 2 distinct sizes, all positive and
/// finite; throws std::invalid_argument otherwise. A negative intercept is clamped to 0.
MemoryCurve fit_memory_curve(const std::vector<double>& bytes, const std::vector<double>& seconds);
/// As above, plus a row-length table (knots at the distinct row lengths given; row_lens may be
/// empty for none) and optional size knots. Needs at least as many points as parameters
/// (2 + (distinct row lengths - 1) + (size_knots - 1)).
MemoryCurve fit_memory_curve(const std::vector<double>& bytes, const std::vector<double>& seconds,
                             const std::vector<double>& row_lens, const MemoryFitOptions& options = {});

/// True for row-wise reductions (ln / layernorm / layer_norm, softmax / log_softmax), whose achieved
/// bandwidth depends on the row length and needs the row table.
bool memory_op_uses_rows(std::string_view op);
/// The recommended fit per (device, op): for memory_op_uses_rows(op) with row_lens given and enough
/// points, the row-table fit; otherwise (or if that throws for too few points) the affine fit.
/// Throws std::invalid_argument only when the affine fit does.
MemoryCurve fit_memory_curve_for_op(std::string_view op, const std::vector<double>& bytes,
                                    const std::vector<double>& seconds, const std::vector<double>& row_lens);

/// Transfers a curve to another GPU: bandwidth multiplied by bandwidth_ratio (target / source
/// memory bandwidth), launch_s multiplied by launch_ratio; the shape tables are kept.
/// Throws std::invalid_argument unless both ratios are positive and finite.
MemoryCurve scaled(const MemoryCurve& curve, double bandwidth_ratio, double launch_ratio = 1);

/// {"launch_s", "bw_bytes_per_s", "op_multiplier", optional "size_knots_bytes"/"size_adj",
///  "row_knots"/"row_adj"}.
nlohmann::json to_json(const MemoryCurve& curve);
/// Inverse of to_json; "launch_s" and "bw_bytes_per_s" are required. Throws std::invalid_argument
/// naming the key on a missing / mistyped key, mismatched table lengths or unsorted knots.
MemoryCurve memory_curve_from_json(const nlohmann::json& j);

/// The accuracy check's split: indices 0..n-1 shuffled by Fisher-Yates driven by raw
/// std::mt19937(seed) outputs (for i = n-1 down to 1: j = gen() % (i + 1); swap(idx[i], idx[j])),
/// portable across standard libraries. The first n/2 (floor) are the fit rows, the rest held out.
std::vector<std::size_t> half_split_order(std::size_t n, unsigned seed = 42);

}  // namespace fleetsim
