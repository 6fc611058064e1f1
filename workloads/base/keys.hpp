#pragma once
// Scenario keys: each owner (a trace reader, a job model, the network hook, the energy model, the
// app) declares the keys it reads from its own .cpp with a static KeyRegistrar: name, kind, unit,
// default, doc, and the formats or models it applies to. The scenario loader validates a file
// against these declarations (unknown keys suggest the closest, wrong types and out-of-range values
// name file, line and key), hands each section to its owners as an Options bag, and `fleetsim keys`
// and the README's key table are printed from them. A new reader or job model with its own keys is
// one new file.
#include <functional>
#include <string>
#include <vector>

#include "workloads/base/options.hpp"

namespace fleetsim {

enum class KeyKind {
  kInt,
  kFloat,
  kString,
  kPath,  ///< a string naming a file or folder, resolved against the scenario's folder
  kBool,
  kTable,        ///< a section with declared keys of its own
  kTableArray,   ///< [[...]]: elements have the keys of "<table>[]"
  kIntArray,     ///< [1, 2]
  kNumberArray,  ///< [0.5, 1]
  kStringArray,  ///< ["a", "b"], non-empty strings
  kStringTable,  ///< a table of name = "string" with declared keys (e.g. workload.columns)
  kFreeTable,    ///< a free-form table of knobs read by a policy (Options)
};

/// Checks a present value after the types were checked; throws options.error(key, ...) when out of range.
using KeyCheck = std::function<void(const Options& options, const std::string& key)>;

struct KeyDecl {
  std::string table = "";  ///< dotted section ("" = top level; "[]": any element of an array of tables)
  std::string name = "";
  KeyKind kind = KeyKind::kString;
  std::string unit = "";        ///< "s", "GB", "W", ... ("" = none)
  std::string fallback = "";    ///< default as documented ("" = none)
  std::string doc = "";         ///< meaning
  std::string applies_to = "";  ///< formats / job models / fidelities it applies to ("" = all)
  KeyCheck check = nullptr;
};

/// A key that no longer exists: using it is an error that says what to write instead.
struct RetiredKey {
  std::string table;
  std::string name;
  std::string message;
};

class KeyRegistry {
 public:
  void add(KeyDecl decl);
  void retire(RetiredKey key) { retired_.push_back(std::move(key)); }
  /// Declarations of one table, in documentation order (generic keys first, then by owner).
  std::vector<const KeyDecl*> in_table(const std::string& table) const;
  const KeyDecl* find(const std::string& table, const std::string& name) const;
  const RetiredKey* retired(const std::string& table, const std::string& name) const;
  /// Tables in documentation order.
  std::vector<std::string> tables() const;

 private:
  std::vector<KeyDecl> keys_;
  std::vector<RetiredKey> retired_;
};

KeyRegistry& scenario_keys();

struct KeyRegistrar {
  KeyRegistrar(std::initializer_list<KeyDecl> decls, std::initializer_list<RetiredKey> retired = {});
};

/// "an integer", "a number", ... for messages.
const char* kind_name(KeyKind k);
/// "integer", "number", "path", ... for tables.
const char* kind_word(KeyKind k);

/// Common range checks for KeyDecl::check.
KeyCheck at_least(double min);                    ///< value >= min
KeyCheck above(double min);                       ///< value > min
KeyCheck in_unit_interval();                      ///< value in (0, 1]
KeyCheck in_closed(double lo, double hi);         ///< value in [lo, hi]
KeyCheck in_half_open(double lo, double hi);      ///< value in [lo, hi)
KeyCheck one_of(std::vector<std::string> valid);  ///< a string among `valid`

/// Plain text: one section per table, "  key  doc [unit] (default X)" lines.
std::string describe_keys_text();
/// A Markdown table of every key (the README's scenario-key table).
std::string describe_keys_markdown();

}  // namespace fleetsim
