#include "sim/experiments/sweep_spec.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "models/job/job_model.hpp"
#include "sim/app/scenario.hpp"
#include "sim/cluster/placer.hpp"
#include "sim/engine/policy.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"
#include "workloads/base/toml_input.hpp"

namespace fleetsim {
namespace {

namespace fs = std::filesystem;

long line_of(const toml::node& n) {
  return static_cast<long>(n.source().begin.line);
}

std::string toml_text(const toml::node& n) {
  toml::table holder;
  holder.insert("v", n);
  std::ostringstream os;
  os << toml::toml_formatter(holder, toml::toml_formatter::default_flags & ~toml::format_flags::indentation);
  std::string s = os.str();
  s = s.substr(s.find('=') + 1);
  return std::string(trim(s));
}

std::string label_of(const toml::node& n) {
  if (const auto* s = n.as_string()) return s->get();
  return toml_text(n);
}

SweepSetting setting(const std::string& key, const toml::node& value, long line) {
  return {key, toml_text(value), label_of(value), line};
}

/// Flattens nested tables into dotted keys ("a" = {b = [1]} -> "a.b"); quoted dotted keys stay as they are.
void flatten(const toml::table& t, const std::string& prefix,
             std::vector<std::pair<std::string, const toml::node*>>& out) {
  for (const auto& [k, n] : t) {
    const std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
    if (const auto* sub = n.as_table())
      flatten(*sub, key, out);
    else
      out.emplace_back(key, &n);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return line_of(*a.second) < line_of(*b.second); });
}

void check_swept_key(const std::string& file, long line, const std::string& key) {
  if (key == "seed")
    throw InputError(file, line, key, "the seed is swept by 'seeds = N' (or a list), not as a key");
  if (key == "output.dir" || key.rfind("output.", 0) == 0)
    throw InputError(file, line, key,
                     "outputs of a sweep go under --out DIR/runs/<id>/: do not sweep output keys");
}

}  // namespace

std::string SweepCombination::id() const {
  std::string n = std::to_string(index);
  return "c" + std::string(n.size() < static_cast<std::size_t>(width) ? width - n.size() : 0, '0') + n;
}

std::string SweepCombination::label() const {
  std::vector<std::string> parts;
  for (const auto& s : settings) parts.push_back(s.key + "=" + s.label);
  return parts.empty() ? std::string("(base scenario)") : join(parts, " ");
}

long SweepSpec::line_of(const std::string& key) const {
  for (const auto& g : grid)
    if (g.key == key) return g.line;
  for (const auto& c : cases)
    for (const auto& s : c.settings)
      if (s.key == key) return s.line;
  return 0;
}

SweepSpec parse_sweep(const std::string& text, const std::string& name, const std::string& base_dir) {
  toml::table root = parse_toml(text, name);
  SweepSpec spec;
  spec.file = name;
  static const std::vector<std::string> kTop = {"base", "seeds", "metrics", "grid", "case", "baseline"};
  for (const auto& [k, n] : root) {
    const std::string key(k.str());
    if (std::find(kTop.begin(), kTop.end(), key) == kTop.end()) {
      std::string msg = "unknown sweep key '" + key + "'";
      if (auto best = closest(key, kTop); !best.empty()) msg += " (did you mean '" + best + "'?)";
      throw InputError(name, line_of(n), key,
                       msg + "; valid: " + join(kTop, ", ") + " (scenario keys go in [grid] or [[case]])");
    }
  }
  // base
  const toml::node* base = root.get("base");
  if (base == nullptr || !base->is_string() || base->as_string()->get().empty())
    throw InputError(name, base ? line_of(*base) : 0, "base", "missing: the base scenario file (a string)");
  spec.base_line = line_of(*base);
  fs::path bp(base->as_string()->get());
  spec.base = (bp.is_absolute() ? bp : fs::path(base_dir) / bp).lexically_normal().string();
  if (!fs::is_regular_file(spec.base))
    throw InputError(name, spec.base_line, "base", "base scenario '" + spec.base + "' not found");
  // seeds
  if (const toml::node* s = root.get("seeds")) {
    if (s->is_integer()) {
      const long long n = s->as_integer()->get();
      if (n < 1 || n > 100000)
        throw InputError(name, line_of(*s), "seeds", "must be 1..100000 (or a list of seeds)");
      for (long long i = 1; i <= n; ++i) spec.seeds.push_back(static_cast<std::uint64_t>(i));
    } else if (const auto* arr = s->as_array()) {
      for (const auto& e : *arr) {
        if (!e.is_integer() || e.as_integer()->get() < 0)
          throw InputError(name, line_of(e), "seeds", "expected non-negative integers");
        const auto v = static_cast<std::uint64_t>(e.as_integer()->get());
        if (std::find(spec.seeds.begin(), spec.seeds.end(), v) != spec.seeds.end())
          throw InputError(name, line_of(e), "seeds", "seed " + std::to_string(v) + " given twice");
        spec.seeds.push_back(v);
      }
      if (spec.seeds.empty()) throw InputError(name, line_of(*s), "seeds", "empty list");
    } else {
      throw InputError(name, line_of(*s), "seeds", "expected a number of seeds or a list of seeds");
    }
  } else {
    spec.seeds.push_back(1);
  }
  // metrics
  if (const toml::node* m = root.get("metrics")) {
    const auto* arr = m->as_array();
    if (arr == nullptr || arr->empty())
      throw InputError(name, line_of(*m), "metrics", "expected a non-empty list of summary.json keys");
    for (const auto& e : *arr) {
      if (!e.is_string()) throw InputError(name, line_of(e), "metrics", "expected strings");
      spec.metrics.push_back(e.as_string()->get());
    }
  }
  // grid
  if (const toml::node* g = root.get("grid")) {
    if (!g->is_table()) throw InputError(name, line_of(*g), "grid", "expected a table: [grid]");
    std::vector<std::pair<std::string, const toml::node*>> flat;
    flatten(*g->as_table(), "", flat);
    for (const auto& [key, n] : flat) {
      check_swept_key(name, line_of(*n), key);
      const auto* arr = n->as_array();
      if (arr == nullptr)
        throw InputError(name, line_of(*n), key, "a [grid] key takes a list of values, e.g. [1, 2]");
      if (arr->empty()) throw InputError(name, line_of(*n), key, "empty list: give at least one value");
      SweepGridKey gk{key, line_of(*n), {}, 0};
      for (const auto& e : *arr) {
        SweepSetting s = setting(key, e, line_of(e) > 0 ? line_of(e) : gk.line);
        for (const auto& prev : gk.values)
          if (prev.toml == s.toml) throw InputError(name, s.line, key, "value " + s.label + " given twice");
        gk.values.push_back(std::move(s));
      }
      spec.grid.push_back(std::move(gk));
    }
  }
  // cases
  if (const toml::node* c = root.get("case")) {
    if (!c->is_array_of_tables()) throw InputError(name, line_of(*c), "case", "expected [[case]] tables");
    std::size_t i = 0;
    for (const auto& e : *c->as_array()) {
      SweepCase sc;
      sc.line = line_of(e);
      sc.name = "case" + std::to_string(i++);
      std::vector<std::pair<std::string, const toml::node*>> flat;
      flatten(*e.as_table(), "", flat);
      for (const auto& [key, n] : flat) {
        if (key == "name") {
          if (!n->is_string() || n->as_string()->get().empty())
            throw InputError(name, line_of(*n), "case.name", "expected a non-empty string");
          sc.name = n->as_string()->get();
          continue;
        }
        check_swept_key(name, line_of(*n), key);
        for (const auto& g : spec.grid)
          if (g.key == key)
            throw InputError(name, line_of(*n), key,
                             "set by [[case]] '" + sc.name + "' and swept in [grid] (line " +
                                 std::to_string(g.line) + ")");
        sc.settings.push_back(setting(key, *n, line_of(*n)));
      }
      for (const auto& prev : spec.cases)
        if (prev.name == sc.name)
          throw InputError(name, sc.line, "case.name", "case name '" + sc.name + "' given twice");
      spec.cases.push_back(std::move(sc));
    }
  }
  // baseline
  if (const toml::node* b = root.get("baseline")) {
    if (!b->is_table()) throw InputError(name, line_of(*b), "baseline", "expected a table: [baseline]");
    std::vector<std::pair<std::string, const toml::node*>> flat;
    flatten(*b->as_table(), "", flat);
    for (const auto& [key, n] : flat) {
      auto g = std::find_if(spec.grid.begin(), spec.grid.end(),
                            [&](const SweepGridKey& x) { return x.key == key; });
      if (g == spec.grid.end())
        throw InputError(name, line_of(*n), key, "[baseline] names a key that [grid] does not sweep");
      const std::string t = toml_text(*n);
      auto v = std::find_if(g->values.begin(), g->values.end(),
                            [&](const SweepSetting& s) { return s.toml == t; });
      if (v == g->values.end())
        throw InputError(name, line_of(*n), key,
                         "baseline " + label_of(*n) + " is not one of the grid's values");
      g->baseline = static_cast<std::size_t>(v - g->values.begin());
    }
  }
  for (const auto& c : spec.cases)
    for (const auto& s : c.settings)
      if (std::find(spec.keys.begin(), spec.keys.end(), s.key) == spec.keys.end()) spec.keys.push_back(s.key);
  for (const auto& g : spec.grid) spec.keys.push_back(g.key);
  return spec;
}

SweepSpec load_sweep(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path, 0, "", "cannot open sweep file");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string dir = fs::path(path).parent_path().string();
  return parse_sweep(ss.str(), path, dir.empty() ? "." : dir);
}

std::vector<SweepCombination> sweep_combinations(const SweepSpec& spec) {
  std::size_t total = std::max<std::size_t>(1, spec.cases.size());
  for (const auto& g : spec.grid) total *= g.values.size();
  const int width = std::max(3, static_cast<int>(std::to_string(total - 1).size()));
  std::vector<SweepCombination> out;
  for (std::size_t k = 0; k < total; ++k) {
    SweepCombination c;
    c.index = k;
    c.width = width;
    std::size_t rest = k;
    c.grid_choice.assign(spec.grid.size(), 0);
    for (std::size_t g = spec.grid.size(); g-- > 0;) {  // the last grid key varies fastest
      c.grid_choice[g] = rest % spec.grid[g].values.size();
      rest /= spec.grid[g].values.size();
    }
    c.case_index = rest;
    if (!spec.cases.empty()) c.settings = spec.cases[c.case_index].settings;
    for (std::size_t g = 0; g < spec.grid.size(); ++g)
      c.settings.push_back(spec.grid[g].values[c.grid_choice[g]]);
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<SweepRun> sweep_runs(const SweepSpec& spec, const std::vector<SweepCombination>& combos) {
  std::uint64_t max_seed = 0;
  for (auto s : spec.seeds) max_seed = std::max(max_seed, s);
  const std::size_t sw = std::to_string(max_seed).size();
  std::vector<SweepRun> runs;
  for (const auto& c : combos)
    for (const auto seed : spec.seeds) {
      SweepRun r;
      r.combination = c.index;
      r.seed = seed;
      const std::string s = std::to_string(seed);
      r.id = c.id() + "-s" + std::string(sw - s.size(), '0') + s;
      for (const auto& st : c.settings) r.overrides.push_back(st.key + "=" + st.toml);
      r.overrides.push_back("seed=" + s);
      runs.push_back(std::move(r));
    }
  return runs;
}

void check_sweep(const SweepSpec& spec, const std::vector<SweepCombination>& combos) {
  for (const auto& c : combos) {
    std::vector<std::string> overrides;
    for (const auto& st : c.settings) overrides.push_back(st.key + "=" + st.toml);
    overrides.push_back("seed=" + std::to_string(spec.seeds.front()));
    const std::string where = "combination " + c.id() + " (" + c.label() + ")";
    auto fail = [&](const std::string& key, const std::string& msg) {
      const long line = spec.line_of(key);
      if (line > 0) throw InputError(spec.file, line, key, where + ": " + msg);
      throw InputError(spec.base, 0, key, msg + " (base scenario of " + spec.file + ", " + where + ")");
    };
    Scenario sc;
    try {
      sc = load_scenario(spec.base, overrides);
    } catch (const InputError& e) {
      if (e.file() != "--set")
        throw InputError(
            e.file(), e.line(), e.field(),
            std::string(e.what()).substr(InputError::format(e.file(), e.line(), e.field(), "").size()) +
                " (base scenario of " + spec.file + ", " + where + ")");
      const std::string prefix = InputError::format(e.file(), e.line(), e.field(), "");
      std::string msg = e.what();
      if (msg.rfind(prefix, 0) == 0) msg = msg.substr(prefix.size());
      // The field may be below a swept key (a swept table) or above it: name the swept key.
      std::string key = e.field();
      for (const auto& k : spec.keys)
        if (key == k || key.rfind(k + ".", 0) == 0 || k.rfind(key + ".", 0) == 0) key = k;
      const long line = spec.line_of(key);
      throw InputError(spec.file, line, key == e.field() ? key : e.field(), where + ": " + msg);
    }
    if (!schedulers().contains(sc.scheduler.policy))
      fail("scheduler.policy", schedulers().unknown_message(sc.scheduler.policy));
    if (!placers().contains(sc.scheduler.placement))
      fail("scheduler.placement", placers().unknown_message(sc.scheduler.placement));
    if (sc.execution.job_model != "auto" && !job_models().contains(sc.execution.job_model))
      fail("execution.job_model", job_models().unknown_message(sc.execution.job_model));
  }
}

}  // namespace fleetsim
