#pragma once
// Registry<Interface, Args...>: named factories with one-line descriptions, selected by a config key.
// Unknown names raise InputError listing every valid name (and the closest one), in the manner of
// SimGrid's model registry. Implementations register themselves from their own .cpp file with a
// static Registrar, so adding a policy/reader/model is one new file.
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

template <typename Interface, typename... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Interface>(Args...)>;
  struct Entry {
    std::string name;
    std::string description;
    Factory factory;
  };

  explicit Registry(std::string kind) : kind_(std::move(kind)) {}

  void add(std::string name, std::string description, Factory factory) {
    entries_.push_back({std::move(name), std::move(description), std::move(factory)});
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.name < b.name; });
  }

  bool contains(std::string_view name) const { return find(name) != nullptr; }

  const Entry* find(std::string_view name) const {
    for (const auto& e : entries_)
      if (e.name == name) return &e;
    return nullptr;
  }

  /// Creates the implementation registered as `name`; `where` (file, line, key) names the config
  /// entry for the error message.
  std::unique_ptr<Interface> create(std::string_view name, Args... args, const std::string& file = "",
                                    long line = 0, const std::string& key = "") const {
    const Entry* e = find(name);
    if (e == nullptr) throw InputError(file, line, key, unknown_message(name));
    return e->factory(std::forward<Args>(args)...);
  }

  std::string unknown_message(std::string_view name) const {
    std::vector<std::string> names;
    for (const auto& e : entries_) names.push_back(e.name);
    std::string msg = "unknown " + kind_ + " '" + std::string(name) + "'";
    if (auto best = closest(name, names); !best.empty()) msg += " (did you mean '" + best + "'?)";
    msg += "; valid: " + join(names, ", ");
    return msg;
  }

  const std::vector<Entry>& entries() const { return entries_; }
  const std::string& kind() const { return kind_; }

 private:
  std::string kind_;
  std::vector<Entry> entries_;
};

}  // namespace fleetsim
