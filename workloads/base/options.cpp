#include "workloads/base/options.hpp"

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

const Options::Value* Options::find(const std::string& key, const std::string& doc) const {
  declared_[key] = doc;
  auto it = values_.find(key);
  return it == values_.end() ? nullptr : &it->second;
}

double Options::number(const std::string& key, double fallback, const std::string& doc) const {
  const Value* v = find(key, doc);
  if (v == nullptr) return fallback;
  return parse_double(v->text, file_of(*v), v->line, table_ + "." + key);
}

std::vector<double> Options::numbers(const std::string& key, const std::vector<double>& fallback,
                                     const std::string& doc) const {
  const Value* v = find(key, doc);
  if (v == nullptr) return fallback;
  std::vector<double> out;
  for (const auto& part : split(v->text, ',')) {
    if (trim(part).empty()) continue;
    out.push_back(parse_double(part, file_of(*v), v->line, table_ + "." + key));
  }
  return out;
}

std::string Options::text(const std::string& key, const std::string& fallback, const std::string& doc) const {
  const Value* v = find(key, doc);
  return v == nullptr ? fallback : v->text;
}

bool Options::flag(const std::string& key, bool fallback, const std::string& doc) const {
  const Value* v = find(key, doc);
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
  for (const auto& [k, doc] : declared_) out += k + ": " + doc + "\n";
  return out;
}

}  // namespace fleetsim
