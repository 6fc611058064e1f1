// Reads one TP degree of an LLMServingSim profile bundle (<dtype>/meta.yaml, tp<N>/*.csv) into
// monotone grids (serving_tables.hpp). What each table measures (LLMServingSim profiler/core):
//   dense.csv        layer, tokens, time_us: one call of a per-token module (e.g. qkv_proj) over a
//                    batch of `tokens` new tokens; a module called several times per decoder layer
//                    (the two RMSNorms) is averaged over its calls.
//   per_sequence.csv layer, sequences, time_us: lm_head (logits) and sampler over `sequences` rows.
//   attention.csv    prefill_chunk, kv_prefill, n_decode, kv_decode, time_us: one attention call for
//                    one prefill chunk of `prefill_chunk` tokens after `kv_prefill` cached ones plus
//                    `n_decode` decodes, each after `kv_decode` cached tokens.
//   moe.csv          tokens, activated_experts, time_us: the whole MoE block (router + experts),
//                    measured at TP 1 only.
//   skew_fit.csv     pc, n_label, skew_rate_label, kv_big_label, kp_label, alpha, n_samples.
//
// The attention grid is ragged (each (prefill_chunk, n_decode) slice has its own kv_prefill and
// kv_decode points, and slices with both a prefill and 256 decodes were not profiled). It is
// resampled onto the union of the axes: inside a slice bilinearly (clamped below, extrapolated
// above); a missing slice takes the nearest lower n_decode at the same prefill_chunk plus the
// pure-decode increment from that n_decode to the wanted one; the empty batch (0, 0) takes the
// smallest prefill chunk without history. Every grid is then made non-decreasing along each axis
// (Grid::make_monotone): more tokens, sequences, decodes or KV never make a kernel faster.
#include <algorithm>
#include <cmath>
#include <filesystem>

#include "models/serving/serving_tables.hpp"
#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::serving {
namespace {

namespace fs = std::filesystem;
using Points = std::vector<std::pair<double, double>>;

std::string read_text(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw InputError(path, 0, "", "cannot read the " + what + " (missing file?)");
  return read_input_file(path);
}

struct CsvRow {
  long line = 0;
  std::vector<std::string> fields;
};

struct Csv {
  std::string file;
  std::vector<std::size_t> column;  ///< index of each wanted column in a row
  std::vector<CsvRow> rows;
  double number(const CsvRow& r, std::size_t wanted, const std::string& name) const {
    return parse_double(r.fields[column[wanted]], file, r.line, name);
  }
  /// A non-negative integer field.
  int count(const CsvRow& r, std::size_t wanted, const std::string& name) const {
    const long long v = parse_int(r.fields[column[wanted]], file, r.line, name);
    if (v < 0 || v > 1000000000) throw InputError(file, r.line, name, "must be a count >= 0");
    return static_cast<int>(v);
  }
  double time_us(const CsvRow& r, std::size_t wanted) const {
    const double v = number(r, wanted, "time_us");
    if (v < 0) throw InputError(file, r.line, "time_us", "must be >= 0");
    return v;
  }
};

Csv read_csv(const std::string& path, const std::vector<std::string>& wanted, const std::string& what) {
  Csv csv{path, {}, {}};
  const auto lines = split(read_text(path, what), '\n');
  std::vector<std::string> header;
  long line_no = 0;
  for (const auto& raw : lines) {
    ++line_no;
    if (trim(raw).empty()) continue;
    auto fields = split(trim(raw), ',');
    for (auto& f : fields) f = std::string(trim(f));
    if (header.empty()) {
      header = fields;
      for (const auto& w : wanted) {
        const auto it = std::find(header.begin(), header.end(), w);
        if (it == header.end())
          throw InputError(path, line_no, w, "missing column (header: " + join(header, ",") + ")");
        csv.column.push_back(static_cast<std::size_t>(it - header.begin()));
      }
      continue;
    }
    if (fields.size() != header.size())
      throw InputError(
          path, line_no, "",
          "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(fields.size()));
    csv.rows.push_back({line_no, std::move(fields)});
  }
  if (csv.rows.empty()) throw InputError(path, 0, "", "the " + what + " has no rows");
  return csv;
}

// Sorted points with duplicate x averaged.
Points sorted_points(Points pts) {
  std::sort(pts.begin(), pts.end());
  Points out;
  std::size_t n = 0;
  for (const auto& [x, y] : pts) {
    if (!out.empty() && out.back().first == x) {
      out.back().second = (out.back().second * static_cast<double>(n) + y) / static_cast<double>(n + 1);
      ++n;
    } else {
      out.emplace_back(x, y);
      n = 1;
    }
  }
  return out;
}

Grid grid_1d(const Points& raw) {
  const Points pts = sorted_points(raw);
  std::vector<double> xs, ys;
  for (const auto& [x, y] : pts) {
    xs.push_back(x);
    ys.push_back(y);
  }
  Grid g({xs}, ys);
  g.make_monotone();
  return g;
}

// layer -> monotone grid over the key column.
std::map<std::string, Grid> layer_tables(const std::string& path, const std::string& key,
                                         const std::string& what) {
  const Csv csv = read_csv(path, {"layer", key, "time_us"}, what);
  std::map<std::string, Points> raw;
  for (const auto& r : csv.rows) {
    const std::string layer = r.fields[csv.column[0]];
    if (layer.empty()) throw InputError(path, r.line, "layer", "empty layer name");
    const int k = csv.count(r, 1, key);
    if (k < 1) throw InputError(path, r.line, key, "must be >= 1");
    raw[layer].emplace_back(k, csv.time_us(r, 2));
  }
  std::map<std::string, Grid> out;
  for (const auto& [layer, pts] : raw) out.emplace(layer, grid_1d(pts));
  return out;
}

std::vector<double> axis_of(const std::vector<int>& values) {
  std::vector<double> out(values.begin(), values.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The attention rows by (prefill_chunk, n_decode) slice, then kv_prefill, then kv_decode.
class AttentionRows {
 public:
  void add(int pc, int kp, int nd, int kvd, double us) { slices_[{pc, nd}][kp].emplace_back(kvd, us); }
  bool empty() const { return slices_.empty(); }

  Grid grid() {
    std::vector<int> pcs, nds, kps, kvds;
    for (auto& [key, rows] : slices_) {
      pcs.push_back(key.first);
      nds.push_back(key.second);
      for (auto& [kp, pts] : rows) {
        kps.push_back(kp);
        pts = sorted_points(pts);
        for (const auto& p : pts) kvds.push_back(static_cast<int>(p.first));
      }
    }
    std::vector<std::vector<double>> axes{axis_of(pcs), axis_of(kps), axis_of(nds), axis_of(kvds)};
    std::vector<double> values;
    values.reserve(axes[0].size() * axes[1].size() * axes[2].size() * axes[3].size());
    for (const double pc : axes[0])
      for (const double kp : axes[1])
        for (const double nd : axes[2])
          for (const double kvd : axes[3])
            values.push_back(value(static_cast<int>(pc), static_cast<int>(nd), kp, kvd));
    Grid g(std::move(axes), std::move(values));
    g.make_monotone();
    return g;
  }

 private:
  using Slice = std::map<int, Points>;  // kv_prefill -> (kv_decode, us)
  std::map<std::pair<int, int>, Slice> slices_;

  static double in_slice(const Slice& s, double kp, double kvd) {
    Points by_kp;
    for (const auto& [k, pts] : s) by_kp.emplace_back(k, piecewise_linear(pts, kvd));
    return piecewise_linear(by_kp, kp);
  }

  const Slice* slice(int pc, int nd) const {
    const auto it = slices_.find({pc, nd});
    return it == slices_.end() ? nullptr : &it->second;
  }

  double value(int pc, int nd, double kp, double kvd) const {
    if (const Slice* s = slice(pc, nd)) return in_slice(*s, kp, kvd);
    if (pc == 0 && nd == 0) {  // the empty batch: as the smallest profiled prefill chunk, no history
      for (const auto& [key, s] : slices_)
        if (key.first > 0 && key.second == 0) return in_slice(s, 0, 0);
    }
    // The nearest lower n_decode at this prefill chunk, plus the pure-decode increment.
    const Slice* lower = nullptr;
    int lower_nd = 0;
    for (const auto& [key, s] : slices_)
      if (key.first == pc && key.second < nd) {
        lower = &s;
        lower_nd = key.second;
      }
    const Slice* decode_hi = slice(0, nd);
    const Slice* decode_lo = lower_nd > 0 ? slice(0, lower_nd) : nullptr;
    if (lower != nullptr && decode_hi != nullptr && (lower_nd == 0 || decode_lo != nullptr)) {
      const double lo = decode_lo != nullptr ? in_slice(*decode_lo, 0, kvd) : 0.0;
      return in_slice(*lower, kp, kvd) + std::max(0.0, in_slice(*decode_hi, 0, kvd) - lo);
    }
    // Otherwise the nearest profiled slice (in grid steps of log2).
    const auto dist = [&](const std::pair<int, int>& k) {
      return std::hypot(std::log2(1.0 + k.first) - std::log2(1.0 + pc),
                        std::log2(1.0 + k.second) - std::log2(1.0 + nd));
    };
    const auto best = std::min_element(slices_.begin(), slices_.end(), [&](const auto& a, const auto& b) {
      return dist(a.first) < dist(b.first);
    });
    return in_slice(best->second, kp, kvd);
  }
};

Grid read_attention(const std::string& path) {
  const Csv csv =
      read_csv(path, {"prefill_chunk", "kv_prefill", "n_decode", "kv_decode", "time_us"}, "attention table");
  AttentionRows rows;
  for (const auto& r : csv.rows) {
    const int pc = csv.count(r, 0, "prefill_chunk");
    const int nd = csv.count(r, 2, "n_decode");
    if (pc == 0 && nd == 0)
      throw InputError(path, r.line, "n_decode", "a row with neither a prefill chunk nor decodes");
    rows.add(pc, csv.count(r, 1, "kv_prefill"), nd, csv.count(r, 3, "kv_decode"), csv.time_us(r, 4));
  }
  return rows.grid();
}

Grid read_moe(const std::string& path) {
  const Csv csv = read_csv(path, {"tokens", "activated_experts", "time_us"}, "MoE table");
  std::map<int, Points> by_experts;  // activated experts -> (tokens, us)
  std::vector<int> tokens;
  for (const auto& r : csv.rows) {
    const int t = csv.count(r, 0, "tokens");
    const int a = csv.count(r, 1, "activated_experts");
    if (t < 1) throw InputError(path, r.line, "tokens", "must be >= 1");
    if (a < 1) throw InputError(path, r.line, "activated_experts", "must be >= 1");
    by_experts[a].emplace_back(t, csv.time_us(r, 2));
    tokens.push_back(t);
  }
  std::vector<double> experts_axis;
  for (auto& [a, pts] : by_experts) {
    pts = sorted_points(pts);
    experts_axis.push_back(a);
  }
  std::vector<double> tokens_axis = axis_of(tokens);
  std::vector<double> values;
  // A row starts at the fewest tokens that can activate that many experts: clamped below.
  for (const double t : tokens_axis)
    for (const auto& [a, pts] : by_experts) values.push_back(piecewise_linear(pts, t));
  Grid g({std::move(tokens_axis), std::move(experts_axis)}, std::move(values));
  g.make_monotone();
  return g;
}

std::vector<double> yaml_numbers(const YamlNode& n, const std::string& file, const std::string& field) {
  std::vector<double> out;
  for (const auto& item : n.items) out.push_back(parse_double(item, file, n.line, field));
  return out;
}

void read_skew_axes(const YamlNode& axes, SkewFit& fit, const std::string& file) {
  const auto get = [&](const std::string& key) -> const YamlNode& {
    const YamlNode* n = axes.find(key);
    if (n == nullptr) throw InputError(file, axes.line, "skew_fit.bucket_axes." + key, "missing");
    return *n;
  };
  const auto pair = [&](const std::string& name, std::vector<double>& bins,
                        std::vector<std::string>& labels) {
    bins = yaml_numbers(get(name + "_bins"), file, "skew_fit.bucket_axes." + name + "_bins");
    labels = get(name + "_labels").items;
    if (labels.empty() || bins.size() != labels.size() + 1)
      throw InputError(file, get(name + "_labels").line, "skew_fit.bucket_axes." + name + "_labels",
                       "needs one label per bin (" + std::to_string(bins.size()) + " bin edges)");
  };
  pair("n", fit.n_bins, fit.n_labels);
  pair("skew_rate", fit.skew_rate_bins, fit.skew_rate_labels);
  pair("kv_big", fit.kv_big_bins, fit.kv_big_labels);
  pair("kp", fit.kp_bins, fit.kp_labels);
}

SkewFit read_skew(const YamlNode& meta, const std::string& meta_file, const std::string& profile_dir,
                  int tp) {
  SkewFit fit;
  const YamlNode* block = meta.find("skew_fit");
  if (block == nullptr) return fit;
  const YamlNode* enabled = block->find("enabled");
  if (enabled == nullptr || lower(enabled->scalar) != "true") return fit;
  const YamlNode* per_tp = block->find("per_tp");
  const YamlNode* entry = per_tp != nullptr ? per_tp->find(std::to_string(tp)) : nullptr;
  if (entry == nullptr) return fit;  // no fit for this TP degree: no correction
  const std::string field = "skew_fit.per_tp." + std::to_string(tp);
  const YamlNode* axes =
      entry->find("bucket_axes") != nullptr ? entry->find("bucket_axes") : block->find("bucket_axes");
  if (axes == nullptr) throw InputError(meta_file, block->line, "skew_fit.bucket_axes", "missing");
  read_skew_axes(*axes, fit, meta_file);
  if (const YamlNode* a = entry->find("alpha_default"))
    fit.alpha_default = parse_double(a->scalar, meta_file, a->line, field + ".alpha_default");
  fit.enabled = true;
  const YamlNode* table = entry->find("bucket_table");
  if (table == nullptr) return fit;  // alpha_default only
  const std::string path = (fs::path(profile_dir) / table->scalar).string();
  const Csv csv = read_csv(path, {"pc", "n_label", "skew_rate_label", "kv_big_label", "kp_label", "alpha"},
                           "skew fit table");
  std::vector<int> pcs;
  for (const auto& r : csv.rows) {
    const int pc = csv.count(r, 0, "pc");
    pcs.push_back(pc);
    std::string key = std::to_string(pc);
    for (std::size_t c = 1; c <= 4; ++c) key += "|" + r.fields[csv.column[c]];
    fit.by_bucket[key] = csv.number(r, 5, "alpha");
  }
  for (const double pc : axis_of(pcs)) fit.prefill_chunks.push_back(static_cast<int>(pc));
  fit.index_buckets();
  return fit;
}

}  // namespace

ServingTables read_serving_tables(const std::string& profile_dir, int tp, bool need_moe) {
  const std::string meta_file = (fs::path(profile_dir) / "meta.yaml").string();
  const YamlNode meta = parse_yaml_subset(read_text(meta_file, "profile's meta.yaml"), meta_file);
  std::vector<int> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(profile_dir, ec)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && name.size() > 2 && name.size() < 8 && name.starts_with("tp") &&
        name.find_first_not_of("0123456789", 2) == std::string::npos)
      found.push_back(std::stoi(name.substr(2)));
  }
  std::sort(found.begin(), found.end());
  int from = 0;  // the largest profiled degree dividing tp
  for (const int f : found)
    if (f > 0 && tp % f == 0) from = f;
  if (from == 0) {
    std::vector<std::string> names;
    for (const int f : found) names.push_back(std::to_string(f));
    throw InputError(profile_dir, 0, "tensor_parallel",
                     "TP degree " + std::to_string(tp) +
                         " cannot be derived: no profiled degree divides it (profiled: " +
                         (names.empty() ? std::string("none") : join(names, ", ")) + ")");
  }
  const fs::path tp_dir = fs::path(profile_dir) / ("tp" + std::to_string(from));
  ServingTables t;
  t.tp = from;
  if (const YamlNode* m = meta.find("model")) t.model_name = m->scalar;
  if (const YamlNode* h = meta.find("hardware")) t.hardware = h->scalar;
  t.dense = layer_tables((tp_dir / "dense.csv").string(), "tokens", "dense table");
  t.per_sequence = layer_tables((tp_dir / "per_sequence.csv").string(), "sequences", "per-sequence table");
  t.attention = read_attention((tp_dir / "attention.csv").string());
  if (need_moe) {
    const fs::path own = tp_dir / "moe.csv";
    t.moe_tp = fs::exists(own) ? from : 1;
    t.moe = read_moe((fs::exists(own) ? own : fs::path(profile_dir) / "tp1" / "moe.csv").string());
  }
  t.skew = read_skew(meta, meta_file, profile_dir, from);
  return t;
}

}  // namespace fleetsim::serving
