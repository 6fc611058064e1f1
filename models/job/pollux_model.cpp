// "pollux" job model: run time = steps x measured time per step of the job's application, for the shape
// it got (nodes spanned, GPUs = replicas) and its per-GPU batch, from the Pollux (OSDI'21) profiles.
//
// Profiles: execution.pollux_profiles names a FOLDER with one sub-folder per application (bert, cifar10,
// ...), each holding
//   placements.csv   placement,local_bsz,step_time,sync_time   placement = GPUs per node ("22" = 2 nodes x
//                                                               2 GPUs), up to 4 nodes of up to 4 GPUs
//   scalability.csv  num_nodes,num_replicas,local_bsz,step_time,sync_time   (optional; 6 to 16 nodes)
// measured by Pollux's authors on AWS g4dn.12xlarge nodes (4 NVIDIA T4 GPUs each, 50 Gbit/s).
//
// Job: model = "<application> (batch size <B>)" (the "pollux" reader writes this), steps = its length.
// The global batch B is fixed: local batch = ceil(B / replicas). As in Pollux's simulator, a local batch
// above the largest measured one for the application runs as gradient accumulation: a = ceil(local /
// max) - 1 extra micro-steps of m = ceil(local / (a + 1)) examples, costing step(m) + a x (step(m) -
// sync(m)) (the all-reduce happens once per step).
//
// Shape: the simulator tells the model how many nodes and GPUs a job got, not how they are split, so
// every measured placement string with that many nodes and GPUs is averaged (e.g. "13" and "22" for 2
// nodes x 4 GPUs) — what Pollux's simulator itself falls back to for an unmeasured string. Together with
// scalability.csv this gives step times on a grid (nodes, replicas, local_bsz), interpolated linearly
// in local_bsz, then in replicas among the measured replica counts of that node count, then in nodes
// between the two nearest measured node counts; each axis is clamped at its measured range (no
// extrapolation: e.g. 20 nodes are timed as 16, 8 GPUs in one node as 4 GPUs in one node).
// Pollux interpolates the same data with a Delaunay (LinearND) interpolator; at measured points both agree.
//
// GPU type: the profiles are T4 measurements. On another catalog GPU the compute part (step - sync) is
// scaled by the FP32 peak ratio T4 / that GPU; the sync part is kept (an extrapolation). Shared GPUs
// (gpu_milli < 1000) are not timed. Statistical efficiency (Pollux's goodput) is not modelled.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <utility>

#include "models/hardware/gpu_catalog.hpp"
#include "models/job/job_model.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/keys.hpp"
#include "workloads/base/text.hpp"
#include "workloads/jobs/trace_file.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kProfiledGpu = "T4";

struct StepTimes {
  double step = 0, sync = 0;
};

/// Sorted keys of a map bracketing x (clamped): the largest key <= x and the smallest key >= x.
template <typename Map>
std::pair<typename Map::const_iterator, typename Map::const_iterator> bracket(const Map& m, double x) {
  auto hi = m.lower_bound(static_cast<typename Map::key_type>(std::ceil(x)));
  // lower_bound on ceil(x) for integer keys: first key >= ceil(x) >= x.
  if (hi == m.end()) return {std::prev(m.end()), std::prev(m.end())};
  if (static_cast<double>(hi->first) <= x || hi == m.begin()) return {hi, hi};
  return {std::prev(hi), hi};
}

double weight(double x0, double x1, double x) {
  return x1 == x0 ? 0.0 : (x - x0) / (x1 - x0);
}

StepTimes lerp(const StepTimes& a, const StepTimes& b, double w) {
  return {a.step + w * (b.step - a.step), a.sync + w * (b.sync - a.sync)};
}

class Profile {
 public:
  /// Adds one measurement (several for one grid point are averaged).
  void add(int nodes, int replicas, int local_bsz, StepTimes t) {
    auto& acc = sums_[nodes][replicas][local_bsz];
    acc.first.step += t.step;
    acc.first.sync += t.sync;
    acc.second += 1;
    max_local_bsz_ = std::max(max_local_bsz_, local_bsz);
  }
  void finish() {
    for (const auto& [n, by_r] : sums_)
      for (const auto& [r, by_b] : by_r)
        for (const auto& [b, acc] : by_b)
          grid_[n][r][b] = {acc.first.step / acc.second, acc.first.sync / acc.second};
    sums_.clear();
  }
  bool empty() const { return grid_.empty(); }
  int max_local_bsz() const { return max_local_bsz_; }

  /// Interpolated step and sync time at (nodes, replicas, local batch).
  StepTimes at(double nodes, double replicas, double local_bsz) const {
    const auto [n0, n1] = bracket(grid_, nodes);
    const StepTimes a = at_nodes(n0->second, replicas, local_bsz);
    if (n0 == n1) return a;
    return lerp(a, at_nodes(n1->second, replicas, local_bsz),
                weight(n0->first, n1->first, std::clamp(nodes, 1.0 * n0->first, 1.0 * n1->first)));
  }

 private:
  using ByBatch = std::map<int, StepTimes>;
  using ByReplicas = std::map<int, ByBatch>;

  static StepTimes at_batch(const ByBatch& m, double b) {
    const auto [b0, b1] = bracket(m, b);
    if (b0 == b1) return b0->second;
    return lerp(b0->second, b1->second, weight(b0->first, b1->first, b));
  }
  static StepTimes at_nodes(const ByReplicas& m, double r, double b) {
    const auto [r0, r1] = bracket(m, r);
    const StepTimes a = at_batch(r0->second, b);
    if (r0 == r1) return a;
    return lerp(a, at_batch(r1->second, b), weight(r0->first, r1->first, r));
  }

  std::map<int, std::map<int, std::map<int, std::pair<StepTimes, int>>>> sums_;
  std::map<int, ByReplicas> grid_;
  int max_local_bsz_ = 0;
};

int to_int(double v, const std::string& file, long line, const std::string& field) {
  if (v < 1 || v != std::floor(v) || v > 1e9)
    throw InputError(file, line, field, "expected a positive integer, got " + fmt(v));
  return static_cast<int>(v);
}

StepTimes read_times(const std::vector<std::string>& row, int c_step, int c_sync, const std::string& file,
                     long line) {
  StepTimes t;
  t.step = parse_non_negative(trim(row[static_cast<std::size_t>(c_step)]), file, line, "step_time");
  t.sync = parse_non_negative(trim(row[static_cast<std::size_t>(c_sync)]), file, line, "sync_time");
  if (t.step <= 0) throw InputError(file, line, "step_time", "a step cannot take 0 s");
  if (t.sync > t.step) throw InputError(file, line, "sync_time", "sync_time exceeds step_time");
  return t;
}

/// Reads a profile CSV; calls f(row, line, column index of each `names` entry).
template <typename F>
void read_csv(const fs::path& path, const std::vector<std::string>& names, const std::string& scenario,
              F&& f) {
  const std::string file = path.string();
  const std::string text = load_trace_text(file, scenario);
  CsvParser csv(text, ',', file);
  std::vector<std::string> header, row;
  long line = 0;
  if (!csv.next(header, line)) throw InputError(file, 0, "", "empty file: no header line");
  for (auto& h : header) h = std::string(trim(h));
  std::vector<int> cols;
  for (const auto& n : names) cols.push_back(column_index(header, n, true, file, line));
  while (csv.next(row, line)) {
    if (row.size() != header.size())
      throw InputError(
          file, line, "",
          "row has " + std::to_string(row.size()) + " fields, header has " + std::to_string(header.size()));
    f(row, line, cols);
  }
}

Profile load_profile(const fs::path& dir, const std::string& scenario) {
  Profile p;
  const std::string placements_file = (dir / "placements.csv").string();
  read_csv(dir / "placements.csv", {"placement", "local_bsz", "step_time", "sync_time"}, scenario,
           [&](const std::vector<std::string>& row, long line, const std::vector<int>& c) {
             const std::string& file = placements_file;
             const std::string_view placement = trim(row[static_cast<std::size_t>(c[0])]);
             if (placement.empty()) throw InputError(file, line, "placement", "empty placement");
             int replicas = 0;
             for (char ch : placement) {
               if (ch < '1' || ch > '9')
                 throw InputError(file, line, "placement",
                                  "'" + std::string(placement) +
                                      "' is not a string of GPUs per node (digits 1-9, e.g. \"22\")");
               replicas += ch - '0';
             }
             const int local =
                 to_int(parse_double(trim(row[static_cast<std::size_t>(c[1])]), file, line, "local_bsz"),
                        file, line, "local_bsz");
             p.add(static_cast<int>(placement.size()), replicas, local,
                   read_times(row, c[2], c[3], file, line));
           });
  if (fs::exists(dir / "scalability.csv")) {
    const std::string scalability_file = (dir / "scalability.csv").string();
    read_csv(dir / "scalability.csv", {"num_nodes", "num_replicas", "local_bsz", "step_time", "sync_time"},
             scenario, [&](const std::vector<std::string>& row, long line, const std::vector<int>& c) {
               const std::string& file = scalability_file;
               auto num = [&](int k, const char* field) {
                 return to_int(
                     parse_double(trim(row[static_cast<std::size_t>(c[static_cast<std::size_t>(k)])]), file,
                                  line, field),
                     file, line, field);
               };
               const int nodes = num(0, "num_nodes"), replicas = num(1, "num_replicas");
               if (replicas < nodes)
                 throw InputError(file, line, "num_replicas", "fewer replicas than nodes");
               p.add(nodes, replicas, num(2, "local_bsz"), read_times(row, c[3], c[4], file, line));
             });
  }
  p.finish();
  return p;
}

/// "<application> (batch size <B>)" -> (application, B); B = 0 when absent or malformed.
std::pair<std::string, long> parse_model(const std::string& model) {
  static const std::string kTag = " (batch size ";
  const auto pos = model.find(kTag);
  if (pos == std::string::npos || model.back() != ')') return {lower(trim(model)), 0};
  const std::string digits = model.substr(pos + kTag.size(), model.size() - 1 - pos - kTag.size());
  long b = 0;
  for (char ch : digits) {
    if (ch < '0' || ch > '9' || b > 1'000'000'000L) return {lower(trim(model.substr(0, pos))), 0};
    b = 10 * b + (ch - '0');
  }
  return {lower(trim(model.substr(0, pos))), b};
}

class PolluxModel final : public JobModel {
 public:
  explicit PolluxModel(const JobModelParams& p) {
    const std::string folder = p.settings.text("pollux_profiles", "");
    if (folder.empty())
      throw InputError(p.scenario_file, 0, "execution.pollux_profiles",
                       "the pollux job model needs execution.pollux_profiles = the folder of Pollux profiles "
                       "(<application>/placements.csv)");
    std::error_code ec;
    if (!fs::is_directory(folder, ec))
      throw InputError(folder, 0, "execution.pollux_profiles",
                       fs::exists(folder, ec)
                           ? "not a folder (the pollux job model reads <application>/placements.csv)"
                           : "no such folder");
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (e.is_directory() && fs::exists(e.path() / "placements.csv")) dirs.push_back(e.path());
    if (ec) throw InputError(folder, 0, "execution.pollux_profiles", "cannot list folder: " + ec.message());
    std::sort(dirs.begin(), dirs.end());
    for (const auto& d : dirs) {
      Profile prof = load_profile(d, p.scenario_file);
      if (!prof.empty()) profiles_.emplace(lower(d.filename().string()), std::move(prof));
    }
    if (profiles_.empty())
      throw InputError(folder, 0, "execution.pollux_profiles",
                       "no application profiles (<application>/placements.csv) in this folder");
    if (const GpuSpec* g = find_gpu(kProfiledGpu)) profiled_fp32_ = g->fp32_tflops;
  }

  std::optional<double> run_time_s(const JobSpec& job, const PlacementSummary& where,
                                   std::string& why) const override {
    long batch = 0;
    const Profile* prof = resolve(job, batch, why);
    if (prof == nullptr) return std::nullopt;
    if (where.gpu_milli < 1000) {
      why = "the pollux model does not time shared GPUs";
      return std::nullopt;
    }
    const int replicas = std::max(1, where.gpus);
    const int nodes = std::clamp(where.nodes, 1, replicas);
    const long local = (batch + replicas - 1) / replicas;
    const long max_local = prof->max_local_bsz();
    const long accum = (local + max_local - 1) / max_local - 1;
    const long micro = (local + accum) / (accum + 1);
    const StepTimes t = prof->at(nodes, replicas, static_cast<double>(micro));
    double compute = t.step - t.sync;
    if (where.gpu_type != kProfiledGpu) {
      const GpuSpec* g = find_gpu(where.gpu_type);
      if (g == nullptr || g->fp32_tflops <= 0 || profiled_fp32_ <= 0) {
        why = "GPU type " + where.gpu_type + " has no FP32 peak to scale the T4 profiles by";
        return std::nullopt;
      }
      compute *= profiled_fp32_ / g->fp32_tflops;
    }
    const double step = compute + t.sync + static_cast<double>(accum) * compute;
    return *job.steps * step;
  }

  bool can_time(const JobSpec& job, std::string& why) const override {
    long batch = 0;
    return resolve(job, batch, why) != nullptr;
  }

 private:
  const Profile* resolve(const JobSpec& job, long& batch, std::string& why) const {
    if (!job.steps) {
      why = "no step count in the trace";
      return nullptr;
    }
    const auto [app, b] = parse_model(job.model);
    const auto it = profiles_.find(app);
    if (it == profiles_.end()) {
      why = "no Pollux profile for application '" + app + "'";
      return nullptr;
    }
    if (b <= 0) {
      why = "no batch size in model '" + job.model + "' (expected '<application> (batch size N)')";
      return nullptr;
    }
    batch = b;
    return &it->second;
  }

  std::map<std::string, Profile> profiles_;
  double profiled_fp32_ = 0;
};

const KeyRegistrar kKeys{{
    {"execution", "pollux_profiles", KeyKind::kPath, "", "",
     "folder of Pollux profiles, <application>/placements.csv and scalability.csv", "pollux"},
}};

const JobModelRegistrar kRegistrar{"pollux",
                                   "run time = steps x measured step time for the job's nodes, GPUs and "
                                   "local batch (Pollux profiles folder)",
                                   [](const JobModelParams& p) { return std::make_unique<PolluxModel>(p); }};

}  // namespace
}  // namespace fleetsim
