#include "workloads/base/options.hpp"

#include <cstdio>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

namespace {

std::string list_text(const std::vector<double>& values) {
  std::vector<std::string> parts;
  for (double v : values) parts.push_back(fmt(v));
  return join(parts, ",");
}

}  // namespace

const Options::Value* Options::find(const std::string& key, const std::string& doc,
                                    std::string fallback) const {
  declared_[key] = doc;
  defaults_[key] = std::move(fallback);
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

double Options::number(const std::string& key, double fallback, const std::string& doc) const {
  const Value* v = find(key, doc, fmt(fallback));
  if (v == nullptr) return fallback;
  return parse_double(v->text, file_of(*v), v->line, table_ + "." + key);
}

long long Options::integer(const std::string& key, long long fallback, const std::string& doc) const {
  const Value* v = find(key, doc, std::to_string(fallback));
  if (v == nullptr) return fallback;
  return parse_int(v->text, file_of(*v), v->line, table_ + "." + key);
}

int Options::int32(const std::string& key, int fallback, const std::string& doc) const {
  const Value* v = find(key, doc, std::to_string(fallback));
  if (v == nullptr) return fallback;
  return parse_int32(v->text, file_of(*v), v->line, table_ + "." + key);
}

std::vector<std::string> Options::texts(const std::string& key, const std::vector<std::string>& fallback,
                                        const std::string& doc) const {
  const Value* v = find(key, doc, join(fallback, ","));
  if (v == nullptr) return fallback;
  if (!v->items.empty() || v->text.empty()) return v->items;
  std::vector<std::string> out;
  for (const auto& part : split(v->text, ',')) out.emplace_back(trim(part));
  return out;
}

std::map<std::string, std::string> Options::entries(const std::string& key, const std::string& doc) const {
  const Value* v = find(key, doc);
  return v == nullptr ? std::map<std::string, std::string>{} : v->entries;
}

InputError Options::error(const std::string& key, const std::string& message) const {
  auto it = values_.find(key);
  const std::string field = table_.empty() ? key : table_ + "." + key;
  if (it == values_.end()) return InputError(file_, 0, field, message);
  return InputError(file_of(it->second), it->second.line, field, message);
}

void Options::set(const std::string& key, double number) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", number);
  values_[key].text = buf;
}

void Options::set_items(const std::string& key, const std::vector<std::string>& items) {
  Value& v = values_[key];
  v.items = items;
  v.text = join(items, ",");
}

void Options::set_entries(const std::string& key, std::map<std::string, std::string> entries) {
  values_[key].entries = std::move(entries);
}

std::vector<double> Options::numbers(const std::string& key, const std::vector<double>& fallback,
                                     const std::string& doc) const {
  const Value* v = find(key, doc, list_text(fallback));
  if (v == nullptr) return fallback;
  std::vector<double> out;
  if (!v->items.empty()) {
    for (const auto& item : v->items)
      out.push_back(parse_double(item, file_of(*v), v->line, table_ + "." + key));
    return out;
  }
  for (const auto& part : split(v->text, ',')) {
    if (trim(part).empty()) continue;
    out.push_back(parse_double(part, file_of(*v), v->line, table_ + "." + key));
  }
  return out;
}

std::string Options::text(const std::string& key, const std::string& fallback, const std::string& doc) const {
  const Value* v = find(key, doc, fallback);
  return v == nullptr ? fallback : v->text;
}

bool Options::flag(const std::string& key, bool fallback, const std::string& doc) const {
  const Value* v = find(key, doc, fallback ? "true" : "false");
  if (v == nullptr) return fallback;
  if (v->text == "true") return true;
  if (v->text == "false") return false;
  throw InputError(file_of(*v), v->line, table_ + "." + key, "expected true or false, got '" + v->text + "'");
}

void Options::check_all_used(const std::string& owner) const {
  std::vector<std::string> valid;
  for (const auto& [k, doc] : declared_) valid.push_back(k);
  for (const auto& [k, v] : values_) {
    if (declared_.count(k) > 0) continue;
    std::string msg = "unknown option '" + k + "' for " + owner;
    if (auto best = closest(k, valid); !best.empty()) msg += " (did you mean '" + best + "'?)";
    msg += valid.empty() ? "; it takes no options" : "; valid: " + join(valid, ", ");
    throw InputError(file_of(v), v.line, table_ + "." + k, msg);
  }
}

std::string Options::describe() const {
  std::string out;
  for (const auto& [k, doc] : declared_) {
    const std::string& def = defaults_.at(k);
    out += k + " = " + (def.empty() ? std::string("\"\"") : def) + ": " + doc + "\n";
  }
  return out;
}

}  // namespace fleetsim
