#include "workloads/base/keys.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

// Sections in documentation order; tables not listed come after, by name.
constexpr const char* kSectionOrder[] = {
    "",          "cluster",   "cluster.pool[]", "cluster.network", "workload", "workload.columns",
    "scheduler", "execution", "power",          "output"};

std::size_t section_rank(const std::string& table) {
  const auto* end = std::end(kSectionOrder);
  const auto* it = std::find(std::begin(kSectionOrder), end, table);
  return static_cast<std::size_t>(it - std::begin(kSectionOrder));
}

bool is_section(KeyKind k) {
  return k == KeyKind::kTable || k == KeyKind::kTableArray;
}

}  // namespace

void KeyRegistry::add(KeyDecl decl) {
  keys_.push_back(std::move(decl));
}

std::vector<const KeyDecl*> KeyRegistry::in_table(const std::string& table) const {
  std::vector<const KeyDecl*> out;
  for (const auto& k : keys_)
    if (k.table == table) out.push_back(&k);
  // Generic keys first, then grouped by what they apply to; declaration order within a group.
  std::stable_sort(out.begin(), out.end(), [](const KeyDecl* a, const KeyDecl* b) {
    if (a->applies_to.empty() != b->applies_to.empty()) return a->applies_to.empty();
    return a->applies_to < b->applies_to;
  });
  return out;
}

const KeyDecl* KeyRegistry::find(const std::string& table, const std::string& name) const {
  for (const auto& k : keys_)
    if (k.table == table && k.name == name) return &k;
  return nullptr;
}

const RetiredKey* KeyRegistry::retired(const std::string& table, const std::string& name) const {
  for (const auto& k : retired_)
    if (k.table == table && k.name == name) return &k;
  return nullptr;
}

std::vector<std::string> KeyRegistry::tables() const {
  std::vector<std::string> out;
  for (const auto& k : keys_)
    if (std::find(out.begin(), out.end(), k.table) == out.end()) out.push_back(k.table);
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    const auto ra = section_rank(a);
    const auto rb = section_rank(b);
    return ra != rb ? ra < rb : a < b;
  });
  return out;
}

KeyRegistry& scenario_keys() {
  static KeyRegistry registry;
  return registry;
}

KeyRegistrar::KeyRegistrar(std::initializer_list<KeyDecl> decls, std::initializer_list<RetiredKey> retired) {
  for (const auto& d : decls) scenario_keys().add(d);
  for (const auto& r : retired) scenario_keys().retire(r);
}

const char* kind_name(KeyKind k) {
  switch (k) {
    case KeyKind::kInt:
      return "an integer";
    case KeyKind::kFloat:
      return "a number";
    case KeyKind::kString:
    case KeyKind::kPath:
      return "a string";
    case KeyKind::kBool:
      return "true or false";
    case KeyKind::kTable:
    case KeyKind::kStringTable:
    case KeyKind::kFreeTable:
      return "a table";
    case KeyKind::kTableArray:
      return "an array of tables ([[...]])";
    case KeyKind::kIntArray:
    case KeyKind::kNumberArray:
    case KeyKind::kStringArray:
      return "an array";
  }
  return "?";
}

const char* kind_word(KeyKind k) {
  switch (k) {
    case KeyKind::kInt:
      return "integer";
    case KeyKind::kFloat:
      return "number";
    case KeyKind::kString:
      return "string";
    case KeyKind::kPath:
      return "path";
    case KeyKind::kBool:
      return "bool";
    case KeyKind::kTable:
    case KeyKind::kStringTable:
    case KeyKind::kFreeTable:
      return "table";
    case KeyKind::kTableArray:
      return "tables";
    case KeyKind::kIntArray:
      return "integers";
    case KeyKind::kNumberArray:
      return "numbers";
    case KeyKind::kStringArray:
      return "strings";
  }
  return "?";
}

KeyCheck at_least(double min) {
  return [min](const Options& o, const std::string& key) {
    const double v = o.number(key, 0);
    if (!(v >= min) || !std::isfinite(v)) throw o.error(key, "must be >= " + fmt(min) + ", got " + fmt(v));
  };
}

KeyCheck above(double min) {
  return [min](const Options& o, const std::string& key) {
    const double v = o.number(key, 0);
    if (!(v > min) || !std::isfinite(v)) throw o.error(key, "must be > " + fmt(min) + ", got " + fmt(v));
  };
}

namespace {

/// A value in the interval from lo to hi, each end open or closed; errors write it "(lo, hi]" etc.
KeyCheck in_interval(double lo, bool lo_open, double hi, bool hi_open) {
  const std::string name = (lo_open ? "(" : "[") + fmt(lo) + ", " + fmt(hi) + (hi_open ? ")" : "]");
  return [=](const Options& o, const std::string& key) {
    const double v = o.number(key, 0);
    const bool above_lo = lo_open ? v > lo : v >= lo;
    const bool below_hi = hi_open ? v < hi : v <= hi;
    if (!(above_lo && below_hi)) throw o.error(key, "must be in " + name + ", got " + fmt(v));
  };
}

}  // namespace

KeyCheck in_unit_interval() {
  return in_interval(0, true, 1, false);
}

KeyCheck in_closed(double lo, double hi) {
  return in_interval(lo, false, hi, false);
}

KeyCheck in_half_open(double lo, double hi) {
  return in_interval(lo, false, hi, true);
}

KeyCheck one_of(std::vector<std::string> valid) {
  return [valid = std::move(valid)](const Options& o, const std::string& key) {
    const std::string v = o.text(key, "");
    if (std::find(valid.begin(), valid.end(), v) != valid.end()) return;
    std::string msg = "unknown value '" + v + "'";
    if (auto best = closest(v, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
    throw o.error(key, msg + "; valid: " + join(valid, ", "));
  };
}

namespace {

std::string full_doc(const KeyDecl& k) {
  std::string out;
  if (!k.applies_to.empty()) out += k.applies_to + ": ";
  out += k.doc;
  if (!k.unit.empty()) out += ", " + k.unit;
  if (!k.fallback.empty()) out += " (default " + k.fallback + ")";
  return out;
}

std::string markdown_cell(std::string s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string describe_keys_text() {
  const KeyRegistry& reg = scenario_keys();
  std::string out;
  for (const auto& table : reg.tables()) {
    out += table.empty() ? std::string("(top level)") : "[" + table + "]";
    out += "\n";
    for (const KeyDecl* k : reg.in_table(table)) {
      if (is_section(k->kind)) continue;
      char buf[64];
      std::snprintf(buf, sizeof buf, "  %-24s ", k->name.c_str());
      out += buf + full_doc(*k) + "\n";
    }
  }
  return out;
}

std::string describe_keys_markdown() {
  const KeyRegistry& reg = scenario_keys();
  std::string out =
      "| key | type | unit | default | applies to | meaning |\n| --- | --- | --- | --- | --- | --- |\n";
  for (const auto& table : reg.tables()) {
    for (const KeyDecl* k : reg.in_table(table)) {
      if (is_section(k->kind)) continue;
      const std::string key = table.empty() ? k->name : table + "." + k->name;
      out += "| `" + key + "` | " + kind_word(k->kind) + " | " + markdown_cell(k->unit) + " | " +
             markdown_cell(k->fallback) + " | " + markdown_cell(k->applies_to) + " | " +
             markdown_cell(k->doc) + " |\n";
    }
  }
  return out;
}

}  // namespace fleetsim
