// Grid (monotone multilinear tables), piecewise-linear lookup, the skew-fit alpha lookup and the
// YAML subset reader used by the serving step model (serving_tables.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

#include "models/serving/serving_tables.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::serving {

Grid::Grid(std::vector<std::vector<double>> axes, std::vector<double> values)
    : axes_(std::move(axes)), values_(std::move(values)) {
  if (axes_.size() > kMaxDims) throw std::invalid_argument("Grid: more than 8 axes");
  std::size_t size = 1;
  strides_.assign(axes_.size(), 1);
  for (std::size_t d = axes_.size(); d-- > 0;) {
    if (axes_[d].empty()) throw std::invalid_argument("Grid: empty axis");
    if (!std::is_sorted(axes_[d].begin(), axes_[d].end()) ||
        std::adjacent_find(axes_[d].begin(), axes_[d].end()) != axes_[d].end())
      throw std::invalid_argument("Grid: axis not strictly increasing");
    strides_[d] = size;
    size *= axes_[d].size();
  }
  if (values_.size() != size) throw std::invalid_argument("Grid: value count does not match the axes");
}

double Grid::node(std::span<const std::size_t> index) const {
  std::size_t flat = 0;
  for (std::size_t d = 0; d < axes_.size(); ++d) flat += index[d] * strides_[d];
  return values_[flat];
}

void Grid::make_monotone() {
  std::vector<double> upper = values_;
  std::vector<double> lower = values_;
  for (std::size_t d = 0; d < axes_.size(); ++d) {
    const std::size_t n = axes_[d].size();
    const std::size_t stride = strides_[d];
    for (std::size_t i = 0; i < upper.size(); ++i)
      if ((i / stride) % n > 0) upper[i] = std::max(upper[i], upper[i - stride]);
    for (std::size_t i = lower.size(); i-- > 0;)
      if ((i / stride) % n + 1 < n) lower[i] = std::min(lower[i], lower[i + stride]);
  }
  for (std::size_t i = 0; i < values_.size(); ++i) values_[i] = 0.5 * (upper[i] + lower[i]);
}

double Grid::operator()(std::span<const double> x) const {
  const std::size_t dims = axes_.size();
  // Fixed-size scratch (no allocation per lookup: the serving engine calls this every step).
  std::array<std::size_t, kMaxDims> lo{};
  std::array<double, kMaxDims> t{};
  std::array<bool, kMaxDims> spans{};
  for (std::size_t d = 0; d < dims; ++d) {
    const auto& a = axes_[d];
    if (a.size() == 1 || x[d] <= a.front()) continue;
    const auto it = std::upper_bound(a.begin(), a.end(), x[d]);
    const std::size_t i = it == a.end() ? a.size() - 2 : static_cast<std::size_t>(it - a.begin()) - 1;
    lo[d] = i;
    t[d] = (x[d] - a[i]) / (a[i + 1] - a[i]);
    spans[d] = true;
  }
  double out = 0;
  for (std::size_t corner = 0; corner < (std::size_t{1} << dims); ++corner) {
    double weight = 1;
    std::size_t flat = 0;
    bool used = true;
    for (std::size_t d = 0; d < dims; ++d) {
      const bool hi = ((corner >> d) & 1U) != 0;
      if (hi && !spans[d]) {
        used = false;
        break;
      }
      if (spans[d]) weight *= hi ? t[d] : 1.0 - t[d];
      flat += (lo[d] + (hi ? 1 : 0)) * strides_[d];
    }
    if (used) out += weight * values_[flat];
  }
  return out;
}

double piecewise_linear(const std::vector<std::pair<double, double>>& points, double x) {
  if (points.empty()) throw std::invalid_argument("piecewise_linear: no points");
  if (points.size() == 1 || x <= points.front().first) return points.front().second;
  const auto it = std::upper_bound(points.begin(), points.end(), x,
                                   [](double v, const std::pair<double, double>& p) { return v < p.first; });
  const std::size_t i =
      it == points.end() ? points.size() - 2 : static_cast<std::size_t>(it - points.begin()) - 1;
  const auto& [x0, y0] = points[i];
  const auto& [x1, y1] = points[i + 1];
  return y0 + (x - x0) / (x1 - x0) * (y1 - y0);
}

// ---- Skew fit ----

namespace {

// Buckets are (bins[i], bins[i + 1]]; past the last edge the last one.
std::size_t bucket_index(const std::vector<double>& bins, const std::vector<std::string>& labels, double v) {
  for (std::size_t i = 0; i < labels.size(); ++i)
    if (v <= bins[i + 1]) return i;
  return labels.size() - 1;
}

}  // namespace

void SkewFit::index_buckets() {
  by_index.clear();
  auto find = [](const std::vector<std::string>& labels, const std::string& v) {
    const auto it = std::find(labels.begin(), labels.end(), v);
    return it == labels.end() ? std::string::npos : static_cast<std::size_t>(it - labels.begin());
  };
  for (const auto& [text, alpha_value] : by_bucket) {
    const auto f = split(text, '|');
    if (f.size() != 5) continue;
    const auto pc = std::find(prefill_chunks.begin(), prefill_chunks.end(), std::atoi(f[0].c_str()));
    const std::size_t idx[4] = {find(n_labels, f[1]), find(skew_rate_labels, f[2]), find(kv_big_labels, f[3]),
                                find(kp_labels, f[4])};
    if (pc == prefill_chunks.end() ||
        std::find(std::begin(idx), std::end(idx), std::string::npos) != std::end(idx))
      continue;
    by_index[key(static_cast<std::size_t>(pc - prefill_chunks.begin()), idx[0], idx[1], idx[2], idx[3])] =
        alpha_value;
  }
}

double SkewFit::alpha(int prefill_chunk, int n_decode, double skew_rate, double kv_big,
                      double kv_prefill) const {
  if (!enabled) return 0;
  double a = alpha_default;
  if (!prefill_chunks.empty()) {
    // The bucket table's nearest prefill chunk (log scale); no prefill only matches pc 0.
    int pc = prefill_chunks.front();
    double best = 1e300;
    for (const int c : prefill_chunks) {
      if ((c == 0) != (prefill_chunk == 0)) continue;
      const double d = c == 0 ? 0.0 : std::fabs(std::log2(c) - std::log2(std::max(prefill_chunk, 1)));
      if (d < best) {
        best = d;
        pc = c;
      }
    }
    std::size_t pc_i = 0;
    while (prefill_chunks[pc_i] != pc) ++pc_i;
    const std::size_t sr = bucket_index(skew_rate_bins, skew_rate_labels, std::clamp(skew_rate, 0.0, 1.0));
    const std::size_t kp = bucket_index(kp_bins, kp_labels, kv_prefill);
    // The batch's bucket, else the nearest profiled one below it in longest KV, then in decodes
    // (beyond the profiled KV or batch, the regime of the largest profiled one).
    bool found = false;
    for (std::size_t ni = bucket_index(n_bins, n_labels, n_decode) + 1; ni-- > 0 && !found;)
      for (std::size_t ki = bucket_index(kv_big_bins, kv_big_labels, kv_big) + 1; ki-- > 0 && !found;) {
        const auto it = by_index.find(key(pc_i, ni, sr, ki, kp));
        if (it == by_index.end()) continue;
        a = it->second;
        found = true;
      }
  }
  return std::clamp(a, 0.0, 1.0);
}

// ---- YAML subset ----

const YamlNode* YamlNode::find(const std::string& key) const {
  for (const auto& [k, v] : children)
    if (k == key) return &v;
  return nullptr;
}

namespace {

std::string unquote(std::string_view s) {
  s = trim(s);
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"') && s.back() == s.front())
    return std::string(s.substr(1, s.size() - 2));
  return std::string(s);
}

// The text before a comment ('#' at the start or after a blank, outside quotes).
std::string_view strip_comment(std::string_view line) {
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) {
      return line.substr(0, i);
    }
  }
  return line;
}

std::vector<std::string> flow_list(std::string_view text, const std::string& file, long line) {
  text = trim(text);
  if (text.size() < 2 || text.back() != ']')
    throw InputError(file, line, "", "unterminated flow list '" + std::string(text) + "'");
  std::vector<std::string> out;
  const auto inner = trim(text.substr(1, text.size() - 2));
  if (inner.empty()) return out;
  for (const auto& item : split(inner, ',')) out.push_back(unquote(item));
  return out;
}

}  // namespace

YamlNode parse_yaml_subset(const std::string& text, const std::string& file) {
  YamlNode root;
  // Open mappings: (indent of their keys' parent line, node); the root's indent is -1.
  std::vector<std::pair<int, YamlNode*>> stack{{-1, &root}};
  long line_no = 0;
  for (const auto& raw : split(text, '\n')) {
    ++line_no;
    const auto content = strip_comment(raw);
    if (trim(content).empty()) continue;
    const auto first = content.find_first_not_of(' ');
    if (content[first] == '\t') throw InputError(file, line_no, "", "tabs are not allowed for indentation");
    const int indent = static_cast<int>(first);
    const auto body = trim(content.substr(first));
    if (body == "-" || body.starts_with("- ")) {
      while (stack.size() > 1 && stack.back().first > indent) stack.pop_back();
      stack.back().second->items.push_back(unquote(body.substr(1)));
      continue;
    }
    const auto colon = body.find(": ");
    const bool ends_with_colon = body.back() == ':';
    if (colon == std::string_view::npos && !ends_with_colon)
      throw InputError(file, line_no, "", "expected 'key: value', got '" + std::string(body) + "'");
    const std::size_t key_end = colon == std::string_view::npos ? body.size() - 1 : colon;
    const std::string key = unquote(body.substr(0, key_end));
    const auto value = trim(body.substr(std::min(body.size(), key_end + 1)));
    while (stack.size() > 1 && stack.back().first >= indent) stack.pop_back();
    auto& parent = *stack.back().second;
    parent.children.push_back({key, YamlNode{}});
    YamlNode& node = parent.children.back().node;
    node.line = line_no;
    if (value.empty()) {
      stack.emplace_back(indent, &node);
    } else if (value.front() == '[') {
      node.items = flow_list(value, file, line_no);
    } else {
      node.scalar = unquote(value);
    }
  }
  return root;
}

}  // namespace fleetsim::serving
