// Collective measurements: nccl-tests and aicb readers and the least-squares fitter (the
// calibration's JSON form: collective_json.cpp).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "models/collective/collective_model.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

std::vector<std::string> tokens(std::string_view line) {
  std::vector<std::string> out;
  std::istringstream in{std::string(line)};
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

bool is_number(std::string_view s) {
  if (s.empty()) return false;
  try {
    parse_double(s, "", 0, "");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

std::string basename_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// "A100" from ".../nccl-allreduce-a100/AR_GPU2_..." (the parent directory's last '-' part).
std::string system_from_path(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return "";
  std::string dir = path.substr(0, slash);
  dir = basename_of(dir);
  auto dash = dir.find_last_of('-');
  if (dir.find("nccl") == std::string::npos || dash == std::string::npos) return "";
  std::string s = dir.substr(dash + 1);
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

/// "A100" from "NVIDIA A100-SXM4-80GB" or "Tesla V100-SXM2-32GB".
std::string system_from_device(std::string_view device) {
  for (const auto& t : tokens(device)) {
    const std::string l = lower(t);
    if (l == "nvidia" || l == "tesla" || l == "amd" || l == "geforce") continue;
    return t.substr(0, t.find('-'));
  }
  return "";
}

std::vector<CollectiveSample> read_lut(std::istream& in, const std::string& path, const std::string& system) {
  const std::string base = basename_of(path);
  auto pos = base.find("GPU");
  int ranks = 0;
  if (pos != std::string::npos)
    for (std::size_t i = pos + 3; i < base.size() && std::isdigit(static_cast<unsigned char>(base[i])); ++i)
      ranks = ranks * 10 + (base[i] - '0');
  if (ranks <= 0)
    throw InputError(path, 0, "ranks",
                     "cannot tell the GPU count: the file name has no 'GPU<n>' (e.g. AR_GPU8_...)");
  const std::string sys = system.empty() ? system_from_path(path) : system;
  std::vector<CollectiveSample> out;
  std::string line;
  long lineno = 1;  // header already read
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    auto f = split(line, ',');
    if (f.size() < 4)
      throw InputError(path, lineno, "",
                       "expected at least 4 comma-separated fields (size(B),count,type,time(ns)), got " +
                           std::to_string(f.size()));
    const double bytes = parse_double(trim(f[0]), path, lineno, "size(B)");
    const double ns = parse_double(trim(f[3]), path, lineno, "time(ns)");
    if (bytes <= 0) throw InputError(path, lineno, "size(B)", "size must be positive");
    if (ns <= 0) throw InputError(path, lineno, "time(ns)", "time must be positive");
    out.push_back({path, lineno, sys, Collective::all_reduce, bytes, ranks, 1, ns * 1e-9, ""});
  }
  if (out.empty()) throw InputError(path, 0, "", "no result rows after the header");
  return out;
}

std::vector<CollectiveSample> read_stdout(std::istream& in, const std::string& path,
                                          const std::string& system) {
  std::optional<Collective> op;
  std::set<int> ranks_seen;
  std::set<std::string> hosts;
  std::string sys = system;
  int size_col = -1, time_col = -1, ngpus = 0, nthreads = 1;
  std::size_t ncols = 0;
  std::vector<CollectiveSample> out;
  std::string line;
  long lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const std::string_view t = trim(line);
    if (t.empty()) continue;
    auto tok = tokens(t);
    if (!op)
      for (const auto& w : tok)
        if (w.size() > 5 && w.ends_with("_perf"))
          if (auto o = parse_collective(basename_of(w))) op = o;
    if (t.front() == '#') {
      tok.erase(tok.begin(), tok.begin() + (tok.front() == "#" ? 1 : 0));
      if (!tok.empty() && tok.front().front() == '#') tok.front().erase(0, 1);
      for (std::size_t i = 0; i + 1 < tok.size(); ++i) {
        if (tok[i] == "nGpus") ngpus = parse_int32(tok[i + 1], path, lineno, "nGpus");
        if (tok[i] == "nThread") nthreads = parse_int32(tok[i + 1], path, lineno, "nThread");
      }
      if (tok.size() >= 2 && tok[0] == "Rank") {
        ranks_seen.insert(parse_int32(tok[1], path, lineno, "Rank"));
        for (std::size_t i = 0; i + 1 < tok.size(); ++i)
          if (tok[i] == "on") hosts.insert(tok[i + 1]);
        if (sys.empty())
          if (auto br = t.find("] "); br != std::string_view::npos)
            sys = system_from_device(t.substr(br + 2));
      }
      auto has = [&](const char* w) { return std::find(tok.begin(), tok.end(), w) != tok.end(); };
      if (size_col < 0 && has("size") && has("count") && has("time")) {
        ncols = tok.size();
        size_col = static_cast<int>(std::find(tok.begin(), tok.end(), "size") - tok.begin());
        time_col = static_cast<int>(std::find(tok.begin(), tok.end(), "time") - tok.begin());
      }
      continue;
    }
    if (size_col < 0 || tok.empty() || !is_number(tok.front())) continue;  // NCCL INFO lines, warnings
    if (tok.size() < ncols)
      throw InputError(
          path, lineno, "",
          "result row has " + std::to_string(tok.size()) + " columns, the header " + std::to_string(ncols));
    const double bytes = parse_double(tok[static_cast<std::size_t>(size_col)], path, lineno, "size");
    const double us = parse_double(tok[static_cast<std::size_t>(time_col)], path, lineno, "time");
    if (bytes <= 0 || us <= 0) continue;  // nccl-tests prints size-0 rows for tiny counts
    out.push_back({path, lineno, sys, Collective::all_reduce, bytes, 0, 1, us * 1e-6, ""});
  }
  if (size_col < 0)
    throw InputError(path, 0, "",
                     "no nccl-tests result table (a '#  size  count  type ... time' header line)");
  if (out.empty()) throw InputError(path, 0, "", "no result rows in the nccl-tests table");
  int ranks = static_cast<int>(ranks_seen.size());
  if (ranks == 0) ranks = ngpus * std::max(1, nthreads);
  if (ranks <= 0)
    throw InputError(path, 0, "ranks", "no '#  Rank <r> ... device' lines and no nGpus: rank count unknown");
  const int nodes = std::max<int>(1, static_cast<int>(hosts.size()));
  for (auto& s : out) {
    s.op = op.value_or(Collective::all_reduce);
    s.ranks = ranks;
    s.nodes = nodes;
    s.system = sys;
  }
  return out;
}

}  // namespace

std::vector<CollectiveSample> read_nccl_tests(const std::string& path, const std::string& system) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open nccl-tests results");
  std::string first;
  long lineno = 0;
  while (std::getline(in, first)) {
    ++lineno;
    if (!trim(first).empty()) break;
  }
  const std::string head = lower(trim(first));
  if (head.starts_with("size(b)")) {
    if (lineno != 1) throw InputError(path, lineno, "", "the LUT header must be the first line");
    return read_lut(in, path, system);
  }
  if (!head.empty() && head.front() == '#') {
    in.clear();
    in.seekg(0);
    return read_stdout(in, path, system);
  }
  throw InputError(path, lineno, "",
                   "not an nccl-tests result: expected a 'size(B),count,type,time(ns),busbw(GB/s),...' LUT "
                   "header or nccl-tests output starting with '#' lines");
}

std::vector<CollectiveSample> read_aicb_csv(const std::string& path, const std::string& system) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open aicb collective log");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, 0, "", "empty file: no header line");
  auto header = split(line, ',');
  auto col = [&](const char* name) {
    for (std::size_t i = 0; i < header.size(); ++i)
      if (trim(header[i]) == name) return i;
    throw InputError(
        path, 1, name,
        "missing column (aicb header: comm_type,comm_group,comm_group_size,msg_size,...,_elapsed_time,...)");
  };
  const std::size_t c_type = col("comm_type"), c_size = col("comm_group_size"), c_msg = col("msg_size"),
                    c_time = col("_elapsed_time");
  const std::size_t need = std::max({c_type, c_size, c_msg, c_time}) + 1;
  std::vector<CollectiveSample> out;
  long lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    auto f = split(line, ',');
    if (f.size() < need)
      throw InputError(
          path, lineno, "",
          "expected " + std::to_string(header.size()) + " fields, got " + std::to_string(f.size()));
    auto op = parse_collective(f[c_type]);
    const std::string group = std::string(trim(f[c_size]));
    if (!op || group.empty() || group == "None") continue;
    const double bytes = parse_double(trim(f[c_msg]), path, lineno, "msg_size");
    const double ms = parse_double(trim(f[c_time]), path, lineno, "_elapsed_time");
    const int ranks = parse_int32(group, path, lineno, "comm_group_size");
    if (ranks < 1) throw InputError(path, lineno, "comm_group_size", "must be at least 1");
    if (bytes <= 0 || ms <= 0) continue;
    out.push_back({path, lineno, system, *op, bytes, ranks, 1, ms * 1e-3, ""});
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Fitter
// ---------------------------------------------------------------------------------------------

namespace {

/// Least squares on relative error: minimise sum ((a + x c - t) / t)^2 over a >= 0, c > 0.
void fit_band(const std::vector<std::pair<double, double>>& xt, double& a, double& c) {
  const auto k = static_cast<Eigen::Index>(xt.size());
  Eigen::MatrixXd A(k, 2);
  Eigen::VectorXd b = Eigen::VectorXd::Ones(k);
  for (Eigen::Index i = 0; i < k; ++i) {
    const auto& [x, t] = xt[static_cast<std::size_t>(i)];
    A(i, 0) = 1.0 / t;
    A(i, 1) = x / t;
  }
  Eigen::Vector2d sol = Eigen::Vector2d::Zero();
  bool distinct = false;
  for (const auto& p : xt) distinct = distinct || p.first != xt.front().first;
  if (distinct) sol = A.colPivHouseholderQr().solve(b);
  a = sol(0);
  c = sol(1);
  if (!distinct || a < 0) {  // through the origin: bandwidth only
    a = 0;
    c = A.col(1).sum() / A.col(1).squaredNorm();
  }
  if (!(c > 0)) {  // time does not grow with size here: latency only
    c = 1e-15;     // 1e6 GB/s
    Eigen::VectorXd r = A.col(0);
    Eigen::VectorXd rhs = b - c * A.col(1);
    a = std::max(0.0, r.dot(rhs) / r.squaredNorm());
  }
}

}  // namespace

CollectiveCalibration fit_collectives(const std::vector<CollectiveSample>& samples, CollectiveFit fit) {
  using Key = std::tuple<std::string, std::string, int, int, int>;  // system, link, op, ranks, nodes
  std::map<Key, std::vector<const CollectiveSample*>> groups;
  for (const auto& s : samples) {
    if (s.bytes <= 0 || s.seconds <= 0 || s.ranks < 2) continue;
    groups[{s.system, s.link, static_cast<int>(s.op), s.ranks, std::max(1, s.nodes)}].push_back(&s);
  }
  CollectiveCalibration cal;
  for (auto& [key, rows] : groups) {
    std::sort(rows.begin(), rows.end(), [](auto* a, auto* b) { return a->bytes < b->bytes; });
    CollectiveCurve curve;
    curve.system = std::get<0>(key);
    curve.link = std::get<1>(key);
    curve.op = static_cast<Collective>(std::get<2>(key));
    curve.ranks = std::get<3>(key);
    curve.nodes = std::get<4>(key);
    curve.samples = static_cast<int>(rows.size());
    if (fit == CollectiveFit::regimes) {
      std::vector<std::pair<double, double>> xt;
      for (auto* r : rows) xt.emplace_back(r->bytes, r->seconds);
      curve.bands = fit_regimes(xt, bus_factor(curve.op, curve.ranks));
      cal.curves.push_back(std::move(curve));
      continue;
    }
    // Octave bands [2^k, 2^(k+1)); a band needs two distinct sizes to fit latency and bandwidth,
    // so a short band joins the one before it (or, for the first, the one after).
    struct Span {
      int lo_oct, hi_oct;
      std::vector<const CollectiveSample*> rows;
      std::set<double> sizes;
    };
    std::vector<Span> spans;
    for (auto* r : rows) {
      const int oct = static_cast<int>(std::floor(std::log2(r->bytes)));
      if (spans.empty() || spans.back().lo_oct != oct) spans.push_back({oct, oct + 1, {}, {}});
      spans.back().rows.push_back(r);
      spans.back().sizes.insert(r->bytes);
    }
    std::vector<Span> merged;
    for (auto& sp : spans) {
      if (!merged.empty() && (sp.sizes.size() < 2 || merged.back().sizes.size() < 2)) {
        auto& prev = merged.back();
        prev.hi_oct = sp.hi_oct;
        prev.rows.insert(prev.rows.end(), sp.rows.begin(), sp.rows.end());
        prev.sizes.insert(sp.sizes.begin(), sp.sizes.end());
      } else {
        merged.push_back(std::move(sp));
      }
    }
    if (merged.size() > 1 && merged.back().sizes.size() < 2) {
      auto last = std::move(merged.back());
      merged.pop_back();
      merged.back().hi_oct = last.hi_oct;
      merged.back().rows.insert(merged.back().rows.end(), last.rows.begin(), last.rows.end());
      merged.back().sizes.insert(last.sizes.begin(), last.sizes.end());
    }
    const double factor = bus_factor(curve.op, curve.ranks);
    for (const auto& sp : merged) {
      std::vector<std::pair<double, double>> xt;
      for (auto* r : sp.rows) xt.emplace_back(factor * r->bytes, r->seconds);
      double a = 0, c = 0;
      fit_band(xt, a, c);
      curve.bands.push_back({std::ldexp(1.0, sp.lo_oct), std::ldexp(1.0, sp.hi_oct), a, 1.0 / (c * 1e9),
                             static_cast<int>(sp.rows.size()), ""});
    }
    cal.curves.push_back(std::move(curve));
  }
  return cal;
}

}  // namespace fleetsim
