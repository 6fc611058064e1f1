// Fleet ranking inputs and the fleet rerun (see fleet.hpp).
#include "sim/diagnosis/fleet.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>

#include "sim/app/runner.hpp"
#include "sim/app/scenario.hpp"
#include "sim/diagnosis/what_if.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim::diagnosis {
namespace {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<long> lines;
  int col(const std::vector<std::string>& names) const {
    for (const auto& n : names)
      for (std::size_t i = 0; i < header.size(); ++i)
        if (lower(header[i]) == n) return static_cast<int>(i);
    return -1;
  }
};

Table read_table(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw InputError(file, 0, "", "cannot read the file");
  Table t;
  std::string line;
  long n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    std::vector<std::string> f = split(line, ',');
    for (auto& x : f) x = std::string(trim(x));
    if (t.header.empty()) {
      t.header = f;
      continue;
    }
    if (f.size() < t.header.size())
      throw InputError(
          file, n, "",
          "expected " + std::to_string(t.header.size()) + " fields, got " + std::to_string(f.size()));
    t.rows.push_back(std::move(f));
    t.lines.push_back(n);
  }
  if (t.header.empty()) throw InputError(file, 0, "", "the file is empty");
  return t;
}

}  // namespace

FleetTable read_fleet_table(const std::string& file, const std::vector<std::string>& diagnosed,
                            double fleet_gpu_hours) {
  const Table t = read_table(file);
  FleetTable out;
  out.file = file;
  const int model = t.col({"model", "job", "profile"});
  if (model < 0) throw InputError(file, 1, "model", "the header must name a model (or job) column");
  const int share = t.col({"share"}), hours = t.col({"gpu_hours"}), gpus = t.col({"gpus", "num_gpu", "gpu"}),
            dur = t.col({"duration", "duration_s"});
  const bool shares = fleet_gpu_hours > 0;
  if (shares && share < 0) throw InputError(file, 1, "share", "a shares table needs a share column");
  if (!shares && hours < 0 && (gpus < 0 || dur < 0))
    throw InputError(file, 1, gpus < 0 ? "gpus" : "duration",
                     "a jobs table needs gpu_hours, or gpus and duration (seconds)" +
                         std::string(share >= 0 ? " (a shares table needs --fleet-gpu-hours)" : ""));
  std::map<std::string, std::size_t> index;
  for (const auto& d : diagnosed) {
    index.emplace(d, out.shares.size());
    out.shares.push_back({d, 0, 0});
  }
  double share_sum = 0;
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    const long ln = t.lines[i];
    double h = 0;
    if (shares) {
      const double s = parse_double(r[static_cast<std::size_t>(share)], file, ln, "share");
      if (s < 0 || s > 1) throw InputError(file, ln, "share", "a share is between 0 and 1");
      share_sum += s;
      h = s * fleet_gpu_hours;
    } else if (hours >= 0) {
      h = parse_double(r[static_cast<std::size_t>(hours)], file, ln, "gpu_hours");
    } else {
      h = parse_double(r[static_cast<std::size_t>(gpus)], file, ln, "gpus") *
          parse_double(r[static_cast<std::size_t>(dur)], file, ln, "duration") / 3600;
    }
    if (!(h >= 0)) throw InputError(file, ln, shares ? "share" : "gpu_hours", "GPU-hours must be >= 0");
    out.total_gpu_hours += h;
    auto it = index.find(r[static_cast<std::size_t>(model)]);
    if (it == index.end()) {
      ++out.unmatched_rows;
      out.unmatched_gpu_hours += h;
      continue;
    }
    out.shares[it->second].gpu_hours += h;
    ++out.shares[it->second].rows;
  }
  if (shares && share_sum > 1 + 1e-9)
    throw InputError(file, 0, "share", "the shares add up to more than 1 (" + fmt(share_sum) + ")");
  if (shares) out.total_gpu_hours = fleet_gpu_hours;
  return out;
}

RerunResult rerun_fleet(const std::string& scenario, const std::vector<std::string>& sets,
                        const std::string& jobs_csv, const std::map<std::string, double>& speedup,
                        const std::string& fixed_csv, const std::string& baseline_dir,
                        const std::string& fixed_dir) {
  Table t = read_table(jobs_csv);
  const int model = t.col({"model", "job", "profile"}), dur = t.col({"duration", "duration_s"}),
            submit = t.col({"submit"}), gpus = t.col({"gpus"}), id = t.col({"id"});
  for (const auto& [c, name] :
       {std::pair{model, "model"}, {dur, "duration"}, {submit, "submit"}, {gpus, "gpus"}})
    if (c < 0)
      throw InputError(jobs_csv, 1, name,
                       "the fleet rerun (--scenario) reads the jobs table as a csv workload: it needs the "
                       "columns submit, gpus, duration and model");
  RerunResult res;
  {
    std::ofstream f(fixed_csv);
    f << join(t.header, ",") << "\n";
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      auto row = t.rows[i];
      auto it = speedup.find(row[static_cast<std::size_t>(model)]);
      if (it != speedup.end() && it->second > 0 && it->second != 1) {
        const double d = parse_double(row[static_cast<std::size_t>(dur)], jobs_csv, t.lines[i], "duration");
        char b[64];
        std::snprintf(b, sizeof b, "%.9g", d / it->second);
        row[static_cast<std::size_t>(dur)] = b;
        ++res.jobs_changed;
      }
      f << join(row, ",") << "\n";
    }
    if (!f) throw InputError(fixed_csv, 0, "--out", "cannot write the fixed jobs table");
  }
  auto overrides = [&](const std::string& path, const std::string& out) {
    std::vector<std::string> o = sets;
    o.push_back("workload.format=csv");
    o.push_back("workload.path=" + path);
    o.push_back("workload.columns.submit=" + t.header[static_cast<std::size_t>(submit)]);
    o.push_back("workload.columns.gpus=" + t.header[static_cast<std::size_t>(gpus)]);
    o.push_back("workload.columns.duration=" + t.header[static_cast<std::size_t>(dur)]);
    o.push_back("workload.columns.model=" + t.header[static_cast<std::size_t>(model)]);
    if (id >= 0) o.push_back("workload.columns.id=" + t.header[static_cast<std::size_t>(id)]);
    o.push_back("output.dir=" + out);
    return o;
  };
  auto run = [&](const std::vector<std::string>& o) {
    return [scenario, o]() {
      const Scenario s = load_scenario(scenario, o);
      RunOptions opt;
      opt.quiet = true;
      opt.progress = false;
      return run_scenario(s, opt).summary.dump();
    };
  };
  const auto out =
      run_forked({run(overrides(jobs_csv, baseline_dir)), run(overrides(fixed_csv, fixed_dir))}, 2);
  res.baseline = nlohmann::json::parse(out[0]);
  res.fixed = nlohmann::json::parse(out[1]);
  return res;
}

}  // namespace fleetsim::diagnosis
