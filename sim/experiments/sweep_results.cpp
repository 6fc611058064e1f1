#include "sim/experiments/sweep_results.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim/experiments/sweep_stats.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

std::string quote(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (const char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.12g", v);
  return buf;
}

void flatten(const Json& j, const std::string& prefix, SweepRunResult& r) {
  for (const auto& [k, v] : j.items()) {
    if (prefix.empty() && (k == "seed" || k == "skipped_reasons")) continue;
    if (k.find("wall") != std::string::npos) continue;  // wall times differ from run to run
    const std::string key = prefix.empty() ? k : prefix + "." + k;
    if (v.is_object()) {
      flatten(v, key, r);
    } else if (v.is_number()) {
      r.metrics[key] = v.get<double>();
      r.metric_order.push_back(key);
    }
  }
}

void write_csv(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp");
  {
    std::ofstream f(tmp, std::ios::binary);
    f << text;
    if (!f) throw InputError(path.string(), 0, "--out", "cannot write file");
  }
  fs::rename(tmp, path);
}

std::string cell_metric(const SweepRunResult& r, const std::string& m) {
  const auto it = r.metrics.find(m);
  return it == r.metrics.end() ? std::string() : num(it->second);
}

/// Values of `metric` over the seeds of combination `c` (run order), and their seeds.
std::vector<std::pair<std::uint64_t, double>> values(const std::vector<SweepRun>& runs,
                                                     const std::vector<SweepRunResult>& results,
                                                     std::size_t c, const std::string& metric) {
  std::vector<std::pair<std::uint64_t, double>> v;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].combination != c || !results[i].ok) continue;
    const auto it = results[i].metrics.find(metric);
    if (it != results[i].metrics.end()) v.emplace_back(runs[i].seed, it->second);
  }
  return v;
}

struct Pair {
  std::string key, setting, baseline, context;
  std::size_t combo = 0, base = 0;
};

std::vector<Pair> pairs(const SweepSpec& spec, const std::vector<SweepCombination>& combos) {
  auto find = [&](std::size_t case_index, const std::vector<std::size_t>& choice) {
    for (const auto& c : combos)
      if (c.case_index == case_index && c.grid_choice == choice) return c.index;
    return combos.size();
  };
  auto context = [&](const SweepCombination& c, const std::string& skip) {
    std::vector<std::string> parts;
    if (!spec.cases.empty() && skip != "case") parts.push_back("case=" + spec.cases[c.case_index].name);
    for (std::size_t g = 0; g < spec.grid.size(); ++g)
      if (spec.grid[g].key != skip)
        parts.push_back(spec.grid[g].key + "=" + spec.grid[g].values[c.grid_choice[g]].label);
    return join(parts, " ");
  };
  std::vector<Pair> out;
  if (spec.cases.size() > 1)
    for (const auto& c : combos)
      if (c.case_index != 0)
        out.push_back({"case", spec.cases[c.case_index].name, spec.cases[0].name, context(c, "case"), c.index,
                       find(0, c.grid_choice)});
  for (std::size_t g = 0; g < spec.grid.size(); ++g) {
    const auto& gk = spec.grid[g];
    if (gk.values.size() < 2) continue;
    for (const auto& c : combos) {
      if (c.grid_choice[g] == gk.baseline) continue;
      auto choice = c.grid_choice;
      choice[g] = gk.baseline;
      out.push_back({gk.key, gk.values[c.grid_choice[g]].label, gk.values[gk.baseline].label,
                     context(c, gk.key), c.index, find(c.case_index, choice)});
    }
  }
  return out;
}

std::string pm(const SampleStats& s, double scale, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f ± %.*f", digits, s.mean * scale, digits, s.ci95 * scale);
  return buf;
}

}  // namespace

SweepRunResult read_run_result(const fs::path& dir) {
  SweepRunResult r;
  std::ifstream rj(dir / "run.json", std::ios::binary);
  if (!rj) {
    r.error = "not run";
    return r;
  }
  try {
    const Json j = Json::parse(rj);
    r.hash = j.value("scenario_hash", "");
    r.ok = j.value("status", "") == "ok";
    r.error = j.value("error", "");
    r.exit_code = j.value("exit_code", -1);
    if (r.ok) {
      std::ifstream sf(dir / "summary.json", std::ios::binary);
      if (!sf) throw std::runtime_error("no summary.json");
      flatten(Json::parse(sf), "", r);
    }
  } catch (const std::exception& e) {
    r.ok = false;
    r.error = std::string("unreadable results: ") + e.what();
  }
  return r;
}

void write_sweep_results(const SweepSpec& spec, const std::vector<SweepCombination>& combos,
                         const std::vector<SweepRun>& runs, const std::vector<SweepRunResult>& results,
                         const fs::path& out, bool quiet) {
  // Metrics: the sweep's list, or every number of the runs' summaries (first seen first, by run id).
  std::vector<std::string> metrics = spec.metrics;
  if (metrics.empty()) {
    for (const auto& r : results)
      for (const auto& m : r.metric_order)
        if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
  } else {
    for (const auto& m : metrics) {
      bool seen = false;
      for (const auto& r : results) seen = seen || r.metrics.count(m) > 0;
      if (!seen)
        std::fprintf(stderr,
                     "fleetsim sweep: %s: metrics: '%s' is in no run's summary.json (its cells are empty)\n",
                     spec.file.c_str(), m.c_str());
    }
  }
  const bool has_cases = !spec.cases.empty();
  auto combo_cells = [&](const SweepCombination& c) {
    std::string s = c.id();
    if (has_cases) s += "," + quote(spec.cases[c.case_index].name);
    for (const auto& k : spec.keys) {
      std::string v;
      for (const auto& st : c.settings)
        if (st.key == k) v = st.label;
      s += "," + quote(v);
    }
    return s;
  };
  std::string head = "combination";
  if (has_cases) head += ",case";
  for (const auto& k : spec.keys) head += "," + quote(k);

  std::ostringstream rc;  // runs.csv
  rc << "run," << head << ",seed,status,error,scenario_hash";
  for (const auto& m : metrics) rc << ',' << quote(m);
  rc << '\n';
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = results[i];
    rc << runs[i].id << ',' << combo_cells(combos[runs[i].combination]) << ',' << runs[i].seed << ','
       << (r.ok ? "ok" : "failed") << ',' << quote(r.error) << ',' << r.hash;
    for (const auto& m : metrics) rc << ',' << cell_metric(r, m);
    rc << '\n';
  }
  write_csv(out / "runs.csv", rc.str());

  std::ostringstream ac;  // aggregate.csv
  ac << head << ",metric,n,mean,std,ci95,min,max\n";
  std::vector<std::map<std::string, SampleStats>> agg(combos.size());
  for (const auto& c : combos)
    for (const auto& m : metrics) {
      std::vector<double> xs;
      for (const auto& [seed, x] : values(runs, results, c.index, m)) xs.push_back(x);
      const SampleStats s = sample_stats(xs);
      agg[c.index][m] = s;
      ac << combo_cells(c) << ',' << quote(m) << ',' << s.n;
      if (s.n > 0)
        ac << ',' << num(s.mean) << ',' << num(s.std) << ',' << num(s.ci95) << ',' << num(s.min) << ','
           << num(s.max);
      else
        ac << ",,,,,";
      ac << '\n';
    }
  write_csv(out / "aggregate.csv", ac.str());

  std::ostringstream pc;  // paired.csv
  pc << "key,setting,baseline,context,metric,n,mean_diff,ci95_diff,mean_rel_pct,ci95_rel_pct\n";
  struct Line {
    Pair p;
    std::string metric;
    PairedStats s;
  };
  std::vector<Line> lines;
  for (const auto& p : pairs(spec, combos)) {
    if (p.base >= combos.size()) continue;
    for (const auto& m : metrics) {
      std::vector<double> x, b;
      const auto xb = values(runs, results, p.base, m);
      for (const auto& [seed, v] : values(runs, results, p.combo, m))
        for (const auto& [bs, bv] : xb)
          if (bs == seed) {
            x.push_back(v);
            b.push_back(bv);
          }
      const PairedStats s = paired_stats(x, b);
      pc << quote(p.key) << ',' << quote(p.setting) << ',' << quote(p.baseline) << ',' << quote(p.context)
         << ',' << quote(m) << ',' << s.diff.n << ',';
      if (s.diff.n > 0)
        pc << num(s.diff.mean) << ',' << num(s.diff.ci95);
      else
        pc << ',';
      if (s.has_relative)
        pc << ',' << num(s.relative.mean) << ',' << num(s.relative.ci95);
      else
        pc << ",,";
      pc << '\n';
      lines.push_back({p, m, s});
    }
  }
  write_csv(out / "paired.csv", pc.str());
  if (quiet) return;

  // The table: a few headline metrics, mean ± 95% CI half-width over seeds.
  std::vector<std::string> shown;
  if (!spec.metrics.empty()) {
    shown.assign(spec.metrics.begin(),
                 spec.metrics.begin() + static_cast<long>(std::min<std::size_t>(5, spec.metrics.size())));
  } else {
    for (const char* m : {"mean_jct_s", "p99_jct_s", "mean_wait_s", "makespan_s", "gpu_utilization"})
      if (std::find(metrics.begin(), metrics.end(), m) != metrics.end()) shown.push_back(m);
  }
  std::printf("fleetsim sweep: %s: mean ± 95%% CI half-width over %zu seeds (Student t)\n", spec.file.c_str(),
              spec.seeds.size());
  std::size_t wl = 11;
  for (const auto& c : combos) wl = std::max(wl, c.label().size());
  std::printf("  %-*s", static_cast<int>(wl), "combination");
  for (const auto& m : shown) std::printf("  %22s", m.c_str());
  std::printf("  %5s\n", "n");
  for (const auto& c : combos) {
    std::printf("  %-*s", static_cast<int>(wl), c.label().c_str());
    std::size_t n = 0;
    for (const auto& m : shown) {
      const auto& s = agg[c.index][m];
      n = std::max(n, s.n);
      std::printf("  %22s", s.n == 0 ? "-" : pm(s, 1, s.mean != 0 && std::abs(s.mean) < 10 ? 4 : 1).c_str());
    }
    std::printf("  %5zu\n", n);
  }
  bool header = false;
  for (const auto& l : lines) {
    if (shown.empty() || l.metric != shown.front() || l.s.diff.n == 0) continue;  // all in paired.csv
    if (!header)
      std::printf("  paired on the same seeds (setting vs baseline: mean difference ± 95%% CI):\n");
    header = true;
    std::printf("    %s: %s vs %s%s%s: ", l.p.key.c_str(), l.p.setting.c_str(), l.p.baseline.c_str(),
                l.p.context.empty() ? "" : " at ", l.p.context.c_str());
    if (l.s.has_relative)
      std::printf("%+.1f%% ± %.1f%% %s (n=%zu)\n", l.s.relative.mean, l.s.relative.ci95, l.metric.c_str(),
                  l.s.diff.n);
    else
      std::printf("%+g ± %g %s (n=%zu)\n", l.s.diff.mean, l.s.diff.ci95, l.metric.c_str(), l.s.diff.n);
  }
}

}  // namespace fleetsim
