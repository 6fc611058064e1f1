#include "models/job/pollux_app.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "models/job/linear_nd.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr double kEps = 1e-8;           // the artifact's tolerance for ceil/floor
constexpr int kMaxScatteredNodes = 16;  // the artifact clamps node counts at its largest measured one

/// The artifact's per-application settings that are not in the data (applications.py): yolov3 runs
/// at most 8 examples per GPU, whatever placements.csv measured.
long max_local_override(const std::string& app) {
  return app == "yolov3" ? 8 : 0;
}

/// Sorted keys of a map bracketing x (clamped at the ends).
template <typename Map>
std::pair<typename Map::const_iterator, typename Map::const_iterator> bracket(const Map& m, double x) {
  auto hi = m.lower_bound(static_cast<typename Map::key_type>(std::ceil(x)));
  if (hi == m.end()) return {std::prev(m.end()), std::prev(m.end())};
  if (static_cast<double>(hi->first) <= x || hi == m.begin()) return {hi, hi};
  return {std::prev(hi), hi};
}

double weight(double x0, double x1, double x) {
  return x1 == x0 ? 0.0 : (x - x0) / (x1 - x0);
}

PolluxStepTimes lerp(const PolluxStepTimes& a, const PolluxStepTimes& b, double w) {
  return {a.step + w * (b.step - a.step), a.sync + w * (b.sync - a.sync)};
}

long to_count(double v, const std::string& file, long line, const std::string& field) {
  if (v < 1 || v != std::floor(v) || v > 1e9)
    throw InputError(file, line, field, "expected a positive integer, got " + fmt(v));
  return static_cast<long>(v);
}

/// Reads a CSV with the named columns; calls f(row, line, column index of each name).
template <typename F>
void read_csv(const fs::path& path, const std::vector<std::string>& names, const std::string& scenario,
              F&& f) {
  const std::string file = path.string();
  const std::string text = load_trace_text(file, scenario);
  CsvParser csv(text, ',', file);
  std::vector<std::string> header, row;
  long line = 0;
  csv.header(header, line);
  for (auto& h : header) h = std::string(trim(h));
  std::vector<std::size_t> cols;
  for (const auto& n : names)
    cols.push_back(static_cast<std::size_t>(column_index(header, n, true, file, line)));
  while (csv.next(row, line)) {
    if (row.size() != header.size())
      throw InputError(
          file, line, "",
          "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
    f(row, line, cols);
  }
}

PolluxStepTimes read_times(const std::vector<std::string>& row, std::size_t c_step, std::size_t c_sync,
                           const std::string& file, long line) {
  PolluxStepTimes t;
  t.step = parse_non_negative(trim(row[c_step]), file, line, "step_time");
  t.sync = parse_non_negative(trim(row[c_sync]), file, line, "sync_time");
  if (t.step <= 0) throw InputError(file, line, "step_time", "a step cannot take 0 s");
  if (t.sync > t.step) throw InputError(file, line, "sync_time", "sync_time exceeds step_time");
  return t;
}

/// The lexicographically smallest rotation of a placement string (the artifact's normal form).
std::string canonical(const std::string& p) {
  std::string best = p;
  for (std::size_t i = 1; i < p.size(); ++i) best = std::min(best, p.substr(i) + p.substr(0, i));
  return best;
}

struct GridAccumulator {
  PolluxStepTimes sum;
  int count = 0;
};

}  // namespace

PolluxApplication::PolluxApplication(PolluxApplication&&) noexcept = default;
PolluxApplication& PolluxApplication::operator=(PolluxApplication&&) noexcept = default;
PolluxApplication::~PolluxApplication() = default;

PolluxApplication PolluxApplication::load(const fs::path& dir, const std::string& scenario) {
  PolluxApplication app;
  app.name_ = lower(dir.filename().string());
  app.folder_ = dir.string();
  // Throughput: placements.csv, then scalability.csv.
  std::map<std::tuple<int, int, int>, GridAccumulator> grouped;  // (nodes, replicas, local), sorted
  const std::string placements = (dir / "placements.csv").string();
  read_csv(dir / "placements.csv", {"placement", "local_bsz", "step_time", "sync_time"}, scenario,
           [&](const std::vector<std::string>& row, long line, const std::vector<std::size_t>& c) {
             const std::string placement(trim(row[c[0]]));
             if (placement.empty()) throw InputError(placements, line, "placement", "empty placement");
             int replicas = 0;
             for (char ch : placement) {
               if (ch < '1' || ch > '9')
                 throw InputError(
                     placements, line, "placement",
                     "'" + placement + "' is not a string of GPUs per node (digits 1-9, e.g. \"22\")");
               replicas += ch - '0';
             }
             const long local = to_count(parse_double(trim(row[c[1]]), placements, line, "local_bsz"),
                                         placements, line, "local_bsz");
             const PolluxStepTimes t = read_times(row, c[2], c[3], placements, line);
             app.by_placement_[canonical(placement)].push_back({static_cast<double>(local), t});
             auto& g = grouped[{static_cast<int>(placement.size()), replicas, static_cast<int>(local)}];
             g.sum.step += t.step;
             g.sum.sync += t.sync;
             ++g.count;
             app.min_local_ = app.min_local_ == 0 ? local : std::min(app.min_local_, local);
             app.max_local_ = std::max(app.max_local_, local);
           });
  if (app.by_placement_.empty()) throw InputError(placements, 0, "", "no measurements");
  for (auto& [key, rows] : app.by_placement_)
    std::stable_sort(rows.begin(), rows.end(),
                     [](const Measured& a, const Measured& b) { return a.local < b.local; });
  if (const long cap = max_local_override(app.name_); cap > 0) app.max_local_ = std::min(app.max_local_, cap);

  std::vector<double> points, values;
  auto add_point = [&](int nodes, int replicas, int local, PolluxStepTimes t) {
    points.insert(points.end(), {1.0 * nodes, 1.0 * replicas, 1.0 * local});
    values.insert(values.end(), {t.step, t.sync});
  };
  std::map<std::tuple<int, int, int>, GridAccumulator> all = grouped;
  for (const auto& [k, g] : grouped)
    add_point(std::get<0>(k), std::get<1>(k), std::get<2>(k), {g.sum.step / g.count, g.sum.sync / g.count});
  if (fs::exists(dir / "scalability.csv")) {
    const std::string file = (dir / "scalability.csv").string();
    read_csv(dir / "scalability.csv", {"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"},
             scenario,
             [&](const std::vector<std::string>& row, long line, const std::vector<std::size_t>& c) {
               auto num = [&](std::size_t k, const char* field) {
                 return static_cast<int>(
                     to_count(parse_double(trim(row[c[k]]), file, line, field), file, line, field));
               };
               const int nodes = num(0, "num_nodes"), replicas = num(1, "num_replicas"),
                         local = num(2, "local_bsz");
               if (replicas < nodes)
                 throw InputError(file, line, "num_replicas", "fewer replicas than nodes");
               const PolluxStepTimes t = read_times(row, c[3], c[4], file, line);
               add_point(nodes, replicas, local, t);
               auto& g = all[{nodes, replicas, local}];
               g.sum.step += t.step;
               g.sum.sync += t.sync;
               ++g.count;
             });
  }
  for (const auto& [k, g] : all)
    app.grid_[std::get<0>(k)][std::get<1>(k)][std::get<2>(k)] = {g.sum.step / g.count, g.sum.sync / g.count};
  try {
    app.scattered_ = std::make_unique<LinearNdInterpolator>(3, 2, std::move(points), std::move(values));
  } catch (const std::runtime_error&) {
    app.scattered_.reset();  // too few or flat points: the clamped grid times every unmeasured shape
  }

  // Statistical efficiency: validation-<B>.csv.
  std::error_code ec;
  std::map<long, std::vector<double>> progress_by_batch;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string f = e.path().filename().string();
    if (f.rfind("validation-", 0) != 0 || e.path().extension() != ".csv") continue;
    const std::string digits = f.substr(11, f.size() - 11 - 4);
    long batch = 0;
    for (char ch : digits)
      batch = (ch >= '0' && ch <= '9' && batch < 1'000'000'000L) ? 10 * batch + (ch - '0') : -1;
    if (batch <= 0 || digits.empty())
      throw InputError(e.path().string(), 0, "",
                       "expected validation-<batch size>.csv, e.g. validation-128.csv");
    const std::string file = e.path().string();
    Curve& curve = app.validation_[batch];
    auto& prog = progress_by_batch[batch];
    read_csv(e.path(), {"progress", "grad_sqr", "grad_var"}, scenario,
             [&](const std::vector<std::string>& row, long line, const std::vector<std::size_t>& c) {
               prog.push_back(parse_non_negative(trim(row[c[0]]), file, line, "progress"));
               curve.grad_sqr.push_back(parse_non_negative(trim(row[c[1]]), file, line, "grad_sqr"));
               curve.grad_var.push_back(parse_non_negative(trim(row[c[2]]), file, line, "grad_var"));
               if (prog.size() > 1 && prog.back() < prog[prog.size() - 2])
                 throw InputError(file, line, "progress", "progress decreases");
             });
    if (prog.empty()) throw InputError(file, 0, "", "no epochs (one row per epoch expected)");
  }
  if (ec) throw InputError(app.folder_, 0, "", "cannot list folder: " + ec.message());
  if (app.validation_.empty())
    throw InputError(app.folder_, 0, "", "no validation-<batch size>.csv (statistical-efficiency traces)");
  std::size_t epochs = SIZE_MAX;
  for (const auto& [b, p] : progress_by_batch) epochs = std::min(epochs, p.size());
  app.epochs_ = static_cast<int>(epochs);
  app.progress_.assign(epochs + 1, 0.0);
  for (std::size_t e = 1; e <= epochs; ++e) {
    double least = INFINITY;
    for (const auto& [b, p] : progress_by_batch) least = std::min(least, p[e - 1]);
    app.progress_[e] = least;
  }
  return app;
}

PolluxBatch PolluxApplication::fixed_batch(long batch, int replicas) const {
  const long r = std::max(1, replicas);
  PolluxBatch out;
  const long local = static_cast<long>(std::ceil(static_cast<double>(batch) / static_cast<double>(r) - kEps));
  out.accum =
      static_cast<long>(std::ceil(static_cast<double>(local) / static_cast<double>(max_local_) - kEps)) - 1;
  if (r == 1 && batch > init_batch()) out.accum = std::max(1L, out.accum);
  out.atomic =
      static_cast<long>(std::ceil(static_cast<double>(local) / static_cast<double>(out.accum + 1) - kEps));
  const long count = r * (out.accum + 1);
  out.atomic = std::max(1L, std::min(out.atomic, max_batch() / count));
  out.batch = r * out.atomic * (out.accum + 1);
  return out;
}

std::optional<PolluxStepTimes> PolluxApplication::exact(const std::vector<int>& placement,
                                                        double atomic) const {
  std::string key;
  for (int g : placement) {
    if (g < 1 || g > 9) return std::nullopt;
    key.push_back(static_cast<char>('0' + g));
  }
  const auto it = by_placement_.find(canonical(key));
  if (it == by_placement_.end()) return std::nullopt;
  const auto& rows = it->second;
  if (atomic < rows.front().local || atomic > rows.back().local) return std::nullopt;
  auto hi = std::lower_bound(rows.begin(), rows.end(), atomic,
                             [](const Measured& m, double x) { return m.local < x; });
  if (hi->local == atomic || hi == rows.begin()) return hi->t;
  const auto lo = std::prev(hi);
  return lerp(lo->t, hi->t, weight(lo->local, hi->local, atomic));
}

PolluxStepTimes PolluxApplication::grid(double nodes, double replicas, double atomic) const {
  auto at_batch = [](const std::map<int, PolluxStepTimes>& m, double b) {
    const auto [b0, b1] = bracket(m, b);
    return b0 == b1 ? b0->second : lerp(b0->second, b1->second, weight(b0->first, b1->first, b));
  };
  auto at_replicas = [&](const std::map<int, std::map<int, PolluxStepTimes>>& m, double r) {
    const auto [r0, r1] = bracket(m, r);
    const PolluxStepTimes a = at_batch(r0->second, atomic);
    return r0 == r1 ? a : lerp(a, at_batch(r1->second, atomic), weight(r0->first, r1->first, r));
  };
  const auto [n0, n1] = bracket(grid_, nodes);
  const PolluxStepTimes a = at_replicas(n0->second, replicas);
  if (n0 == n1) return a;
  return lerp(a, at_replicas(n1->second, replicas),
              weight(n0->first, n1->first, std::clamp(nodes, 1.0 * n0->first, 1.0 * n1->first)));
}

PolluxStepTimes PolluxApplication::step_times(const std::vector<int>& placement, double atomic) const {
  if (auto t = exact(placement, atomic)) return *t;
  int replicas = 0;
  for (int g : placement) replicas += g;
  const auto nodes = static_cast<int>(placement.size());
  if (scattered_ != nullptr)
    if (auto v = scattered_->at({1.0 * std::min(nodes, kMaxScatteredNodes), 1.0 * replicas, atomic}))
      return {(*v)[0], (*v)[1]};
  return grid(nodes, replicas, atomic);
}

std::pair<double, double> PolluxApplication::grad_stats(double batch, int epoch) const {
  const auto [lo, hi] = bracket(validation_, batch);
  const auto row = [&](const Curve& c) {
    return static_cast<std::size_t>(std::clamp(epoch, 0, static_cast<int>(c.grad_sqr.size()) - 1));
  };
  double sqr = lo->second.grad_sqr[row(lo->second)], var = lo->second.grad_var[row(lo->second)];
  if (lo != hi) {
    const double w = weight(static_cast<double>(lo->first), static_cast<double>(hi->first), batch);
    sqr += w * (hi->second.grad_sqr[row(hi->second)] - sqr);
    var += w * (hi->second.grad_var[row(hi->second)] - var);
  }
  return {sqr, var};
}

double PolluxApplication::gain(double batch, int epoch) const {
  const auto [sqr, var] = grad_stats(batch, epoch);
  const double scale = batch / static_cast<double>(init_batch());
  const double denom = var / scale + sqr;
  return denom > 0 ? (var + sqr) / denom : 1.0;
}

}  // namespace fleetsim
