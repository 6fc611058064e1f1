// Kineto trace reader (see kineto_trace.hpp): one simdjson On-Demand pass over the whole file (no
// DOM tape), zlib for .gz. Strings without escapes are viewed in place; only kept events' strings are
// interned. Any JSON error found on the way is reported by a full DOM parse, so messages for
// malformed input are those of the DOM reader.
#include "workloads/kineto_trace.hpp"

#include <fcntl.h>
#include <simdjson.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "workloads/input_error.hpp"

namespace fleetsim {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// ASCII lower case: std::tolower in the "C" locale the program runs in, inlined.
char lower_char(char c) {
  return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

// Case-insensitive equality against a lower-case literal, without allocating.
bool iequals(std::string_view s, std::string_view lower_lit) {
  if (s.size() != lower_lit.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (lower_char(s[i]) != lower_lit[i]) return false;
  return true;
}

// Case-insensitive search of a lower-case literal, without allocating.
bool icontains(std::string_view s, std::string_view lower_lit) {
  if (lower_lit.size() > s.size()) return false;
  for (std::size_t i = 0; i + lower_lit.size() <= s.size(); ++i) {
    std::size_t j = 0;
    while (j < lower_lit.size() && lower_char(s[i + j]) == lower_lit[j]) ++j;
    if (j == lower_lit.size()) return true;
  }
  return false;
}

bool category_of(std::string_view cat, KinetoCat& out) {
  static const std::pair<std::string_view, KinetoCat> kMap[] = {
      {"cpu_op", KinetoCat::cpu_op},
      {"operator", KinetoCat::cpu_op},
      {"cuda_runtime", KinetoCat::runtime},
      {"cuda_driver", KinetoCat::runtime},
      {"runtime", KinetoCat::runtime},
      {"kernel", KinetoCat::kernel},
      {"gpu_memcpy", KinetoCat::memcpy},
      {"memcpy", KinetoCat::memcpy},
      {"gpu_memset", KinetoCat::memset},
      {"memset", KinetoCat::memset},
      {"cuda_sync", KinetoCat::sync},
      {"user_annotation", KinetoCat::user_annotation},
      {"gpu_user_annotation", KinetoCat::gpu_annotation},
  };
  for (const auto& [k, v] : kMap)
    if (iequals(cat, k)) {
      out = v;
      return true;
    }
  return false;
}

// Categories that Kineto writes but the replay does not need.
bool ignored_category(std::string_view cat) {
  static const std::string_view kIgnored[] = {
      "python_function", "trace",   "cpu_instant_event", "overhead",           "ac2g", "fwdbwd", "", "gpu_op",
      "python_op",       "user_op", "mtia_runtime",      "privateuse1_runtime"};
  return std::any_of(std::begin(kIgnored), std::end(kIgnored),
                     [&](std::string_view k) { return iequals(cat, k); });
}

namespace dom = simdjson::dom;
namespace od = simdjson::ondemand;

// Interns event strings (kernel names repeat thousands of times) into the trace's own chunks.
class Interner {
 public:
  explicit Interner(KinetoTrace& t) : t_(t) {}
  std::string_view operator()(std::string_view s) {
    if (s.empty()) return {};
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    if (s.size() > left_) {
      const std::size_t size = std::max<std::size_t>(s.size(), 1u << 20);
      t_.strings.push_back(std::make_unique<char[]>(size));
      next_ = t_.strings.back().get();
      left_ = size;
    }
    std::copy(s.begin(), s.end(), next_);
    const std::string_view stored(next_, s.size());
    next_ += s.size();
    left_ -= s.size();
    index_.emplace(stored, stored);
    return stored;
  }

 private:
  KinetoTrace& t_;
  std::unordered_map<std::string_view, std::string_view> index_;
  char* next_ = nullptr;
  std::size_t left_ = 0;
};

// A JSON error met during the On-Demand pass; parse_padded reports it through a DOM parse.
struct Malformed {
  simdjson::error_code error;
};

void check(simdjson::error_code e) {
  if (e) throw Malformed{e};
}

// Text between the quotes of a string starting at `p` (just after the opening quote) when it has
// no escapes; false when it has one.
bool plain_string(const char* p, std::string_view& out) {
  for (const char* q = p;; ++q) {
    if (*q == '"') {
      out = std::string_view(p, static_cast<std::size_t>(q - p));
      return true;
    }
    if (*q == '\\') return false;
  }
}

// Object key, unescaped (in place when it has no escapes).
std::string_view key_of(od::field& f) {
  std::string_view k;
  if (plain_string(f.key().raw(), k)) return k;
  check(f.unescaped_key().get(k));
  return k;
}

void validate(od::value& v);

// String value ("" for other types, which are checked as JSON); points into the input or the
// parser's string buffer.
std::string_view str_of(od::value& v) {
  const std::string_view tok = v.raw_json_token();
  if (tok.empty() || tok[0] != '"') {
    validate(v);
    return {};
  }
  std::string_view s;
  if (plain_string(tok.data() + 1, s)) return s;
  check(v.get_string().get(s));
  return s;
}

std::int64_t int_of(od::value& v, std::int64_t fallback = -1) {
  std::int64_t i = 0;
  if (!v.get_int64().get(i)) return i;
  double d = 0;
  if (!v.get_double().get(d)) return static_cast<std::int64_t>(d);
  validate(v);
  return fallback;
}

double num_of(od::value& v, double fallback = 0) {
  double d = 0;
  if (!v.get_double().get(d)) return d;
  const std::string_view tok = v.raw_json_token();
  if (tok.empty() || tok[0] != '"') {
    validate(v);
    return fallback;
  }
  try {
    return std::stod(std::string(str_of(v)));
  } catch (...) {
    return fallback;
  }
}

// Walks a value the reader does not use, so that bad JSON inside it is an error as with a DOM parse
// (On-Demand alone skips such values unchecked).
void validate(od::value& v) {
  od::json_type type{};
  check(v.type().get(type));
  switch (type) {
    case od::json_type::array: {
      od::array a;
      check(v.get_array().get(a));
      for (auto r : a) {
        od::value e;
        check(std::move(r).get(e));
        validate(e);
      }
      break;
    }
    case od::json_type::object: {
      od::object o;
      check(v.get_object().get(o));
      for (auto r : o) {
        od::field f;
        check(std::move(r).get(f));
        key_of(f);
        validate(f.value());
      }
      break;
    }
    case od::json_type::number: {
      od::number n;
      check(v.get_number().get(n));
      break;
    }
    case od::json_type::string:
      str_of(v);
      break;
    case od::json_type::boolean: {
      bool b = false;
      check(v.get_bool().get(b));
      break;
    }
    case od::json_type::null: {
      bool null = false;
      check(v.is_null().get(null));
      if (!null) throw Malformed{simdjson::N_ATOM_ERROR};
      break;
    }
  }
}

// Minified JSON of a value as simdjson's DOM serializer writes it: in place when every number is
// a plain integer and no string has an escape (what Kineto writes for shapes and types), else
// through a DOM parse of the value's text.
std::string minified(od::value& v) {
  std::string_view raw;
  od::json_type type{};
  check(v.type().get(type));
  if (type == od::json_type::array) {
    od::array a;
    check(v.get_array().get(a));
    check(a.raw_json().get(raw));
  } else if (type == od::json_type::object) {
    od::object o;
    check(v.get_object().get(o));
    check(o.raw_json().get(raw));
  } else {
    raw = v.raw_json_token();
  }
  std::string out;
  out.reserve(raw.size());
  bool plain = true;
  for (std::size_t i = 0; i < raw.size() && plain; ++i) {
    const char c = raw[i];
    if (c == '"') {
      const std::size_t end = raw.find('"', i + 1);
      const std::string_view s = raw.substr(i, end == std::string_view::npos ? end : end - i + 1);
      plain = end != std::string_view::npos &&
              std::none_of(s.begin(), s.end(), [](char ch) { return ch == '\\' || (ch >= 0 && ch < 0x20); });
      out += s;
      i = end;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
    } else if (c == '[' || c == ']' || c == '{' || c == '}' || c == ',' || c == ':') {
      out += c;
    } else {
      std::size_t j = i + (c == '-' ? 1 : 0);
      const std::size_t digits_from = j;
      while (j < raw.size() && raw[j] >= '0' && raw[j] <= '9') ++j;
      const std::size_t n = j - digits_from;
      plain = n > 0 && n <= 18 && (raw[digits_from] != '0' || (n == 1 && c != '-'));
      plain =
          plain && (j == raw.size() || std::string_view(" \t\n\r,]}").find(raw[j]) != std::string_view::npos);
      out.append(raw.substr(i, j - i));
      i = j - 1;
    }
  }
  if (plain) return out;
  dom::parser parser;
  dom::element e;
  check(parser.parse(simdjson::padded_string(raw)).get(e));
  return simdjson::minify(e);
}

int dtype_size(std::string_view dt) {
  const std::string l = lower(dt);
  if (l.find("double") != std::string::npos || l.find("64") != std::string::npos) return 8;
  if (l.find("half") != std::string::npos || l.find("16") != std::string::npos) return 2;
  if (l.find("int8") != std::string::npos || l.find("byte") != std::string::npos ||
      l.find("char") != std::string::npos || l.find("bool") != std::string::npos)
    return 1;
  return 4;
}

void read_args(od::object args, KinetoEvent& ev, Interner& intern) {
  for (auto fr : args) {
    od::field field;
    check(std::move(fr).get(field));
    const std::string_view k = key_of(field);
    od::value& v = field.value();
    if (k == "correlation") {
      ev.correlation = int_of(v);
    } else if (k == "External id" || k == "external id") {
      ev.external_id = int_of(v);
    } else if (k == "device") {
      ev.device = static_cast<int>(int_of(v));
    } else if (k == "stream") {
      ev.stream = int_of(v);
    } else if (k == "bytes") {
      ev.bytes = num_of(v);
    } else if (k == "Collective name") {
      ev.collective = lower(str_of(v));
    } else if (k == "Process Group Name") {
      ev.process_group = std::string(str_of(v));
    } else if (k == "Group size") {
      ev.group_size = static_cast<int>(int_of(v, 0));
    } else if (k == "Seq" || k == "seq") {
      ev.collective_seq = int_of(v);
    } else if (k == "In msg nelems") {
      ev.bytes = num_of(v);  // scaled by the dtype below
    } else if (k == "dtype") {
      ev.input_types = intern(str_of(v));
    } else if (k == "cuda_sync_kind") {
      ev.sync_kind = std::string(str_of(v));
    } else if (k == "wait_on_stream") {
      ev.wait_on_stream = int_of(v);
    } else if (k == "wait_on_cuda_event_record_corr_id") {
      ev.wait_on_event_record_corr = int_of(v);
    } else if (k == "Input Dims" || k == "Input dims") {
      ev.input_dims = intern(minified(v));
    } else if (k == "Input type") {
      ev.input_types = intern(minified(v));
    } else {
      validate(v);
    }
  }
}

// Fields of a small object looked up by name: the first occurrence of a key wins, as in a DOM lookup.
template <class F>
void for_first_fields(od::object o, std::initializer_list<std::string_view> keys, F&& f) {
  std::uint32_t seen = 0;
  for (auto fr : o) {
    od::field field;
    check(std::move(fr).get(field));
    std::string_view k;
    check(field.unescaped_key().get(k));
    std::uint32_t bit = 1;
    bool used = false;
    for (const std::string_view key : keys) {
      if (k == key && (seen & bit) == 0) {
        seen |= bit;
        f(k, field.value());
        used = true;
        break;
      }
      bit <<= 1;
    }
    if (!used) validate(field.value());
  }
}

void read_distributed(od::object d, KinetoTrace& t) {
  t.has_distributed_info = true;
  for (auto fr : d) {
    od::field field;
    check(std::move(fr).get(field));
    std::string_view k;
    check(field.unescaped_key().get(k));
    od::value& fv = field.value();
    if (k == "rank") {
      t.rank = static_cast<int>(std::max<std::int64_t>(0, int_of(fv, 0)));
    } else if (k == "world_size") {
      t.world_size = std::max<int>(1, static_cast<int>(int_of(fv, 1)));
    } else if (k == "backend") {
      t.backend = std::string(str_of(fv));
    } else if (k == "pg_config") {
      od::array arr;
      if (fv.get_array().get(arr)) {
        validate(fv);
        continue;
      }
      for (auto pr : arr) {
        od::value pe;
        check(std::move(pr).get(pe));
        od::object po;
        if (pe.get_object().get(po)) {
          validate(pe);
          continue;
        }
        KinetoProcessGroup pg;
        for_first_fields(po, {"pg_name", "pg_desc", "pg_size", "ranks"},
                         [&](std::string_view key, od::value& v) {
                           if (key == "pg_name") {
                             pg.name = std::string(str_of(v));
                           } else if (key == "pg_desc") {
                             pg.desc = std::string(str_of(v));
                           } else if (key == "pg_size") {
                             pg.size = static_cast<int>(int_of(v, 0));
                           } else {
                             od::array ranks;
                             if (v.get_array().get(ranks)) return validate(v);
                             for (auto rr : ranks) {
                               od::value r;
                               check(std::move(rr).get(r));
                               pg.ranks.push_back(static_cast<int>(int_of(r, 0)));
                             }
                           }
                         });
        t.process_groups.push_back(std::move(pg));
      }
    } else {
      validate(fv);
    }
  }
}

void read_devices(od::array arr, KinetoTrace& t) {
  for (auto dr : arr) {
    od::value de;
    check(std::move(dr).get(de));
    od::object o;
    if (de.get_object().get(o)) {
      validate(de);
      continue;
    }
    KinetoDevice d;
    for_first_fields(o, {"id", "name", "totalGlobalMem", "numSms"}, [&](std::string_view key, od::value& v) {
      if (key == "id") {
        d.id = static_cast<int>(int_of(v, 0));
      } else if (key == "name") {
        d.name = std::string(str_of(v));
      } else if (key == "totalGlobalMem") {
        d.memory_bytes = num_of(v);
      } else {
        d.sms = static_cast<int>(int_of(v, 0));
      }
    });
    t.devices.push_back(std::move(d));
  }
}

void read_event(od::object o, KinetoTrace& t, Interner& intern) {
  std::string_view ph, cat, name;
  bool has_ts = false, has_dur = false;
  bool complete = true;  // false from a "ph" other than "X": the rest is only checked
  KinetoEvent& ev = t.events.emplace_back();
  auto drop = [&] { t.events.pop_back(); };
  for (auto fr : o) {
    od::field field;
    check(std::move(fr).get(field));
    const std::string_view k = key_of(field);
    od::value& v = field.value();
    if (!complete) {
      validate(v);
    } else if (k == "ph") {
      ph = str_of(v);
      complete = ph == "X";
    } else if (k == "cat") {
      cat = str_of(v);
    } else if (k == "name") {
      name = str_of(v);
    } else if (k == "pid") {
      ev.pid = int_of(v);
    } else if (k == "tid") {
      ev.tid = int_of(v);
    } else if (k == "ts") {
      ev.ts = num_of(v, -1);
      has_ts = true;
    } else if (k == "dur") {
      ev.dur = std::max(0.0, num_of(v, 0));
      has_dur = true;
    } else if (k == "args") {
      od::object args;
      if (!v.get_object().get(args))
        read_args(args, ev, intern);
      else
        validate(v);
    } else {
      validate(v);
    }
  }
  if (!complete || ph != "X") return drop();
  if (!category_of(cat, ev.cat)) {
    if (!ignored_category(cat)) ++t.unknown_categories[std::string(cat)];
    return drop();
  }
  if (!has_ts || !has_dur) {
    ++t.unknown_categories["<X event without ts/dur>"];
    return drop();
  }
  ev.name = intern(name);
  if (ev.cat == KinetoCat::kernel) {
    if (!ev.collective.empty()) ev.bytes *= dtype_size(ev.input_types);
    if (ev.collective.empty()) ev.collective = collective_from_kernel_name(ev.name);
  } else {
    ev.collective.clear();
    ev.collective_seq = -1;
  }
  const bool gpu = ev.cat == KinetoCat::kernel || ev.cat == KinetoCat::memcpy || ev.cat == KinetoCat::memset;
  if (gpu) {
    if (ev.device < 0) ev.device = static_cast<int>(std::max<std::int64_t>(0, ev.pid));
    if (ev.stream < 0) ev.stream = ev.tid;
    ++t.gpu_events;
  }
}

}  // namespace

std::string KinetoTrace::device_name(int device) const {
  for (const auto& d : devices)
    if (d.id == device) return d.name;
  return devices.empty() ? std::string() : devices.front().name;
}

std::string read_maybe_gzip(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, 0, "", "cannot open the trace file");
  unsigned char magic[2] = {0, 0};
  f.read(reinterpret_cast<char*>(magic), 2);
  const bool gz = f.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  if (!gz) {
    f.clear();
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::size_t>(f.tellg());
    f.seekg(0);
    std::string text(size, '\0');
    f.read(text.data(), static_cast<std::streamsize>(size));
    return text;
  }
  // The gzip trailer holds the inflated size (mod 2^32): reserve it, plus simdjson's padding.
  f.seekg(-4, std::ios::end);
  unsigned char isize[4] = {0, 0, 0, 0};
  f.read(reinterpret_cast<char*>(isize), 4);
  const std::size_t hint = f ? std::size_t{isize[0]} | std::size_t{isize[1]} << 8 |
                                   std::size_t{isize[2]} << 16 | std::size_t{isize[3]} << 24
                             : 0;
  f.close();
  gzFile g = gzopen(path.c_str(), "rb");
  if (g == nullptr) throw InputError(path, 0, "", "cannot open the gzip trace file");
  gzbuffer(g, 1 << 20);
  std::string out;
  out.reserve(hint + simdjson::SIMDJSON_PADDING);
  std::vector<char> buf(1 << 20);
  for (;;) {
    const int n = gzread(g, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int code = 0;
      const std::string msg = gzerror(g, &code);
      gzclose(g);
      throw InputError(path, 0, "", "corrupt gzip data: " + msg);
    }
    if (n == 0) break;
    out.append(buf.data(), static_cast<std::size_t>(n));
  }
  int code = 0;
  const std::string msg = gzerror(g, &code);
  gzclose(g);
  if (code != Z_OK && code != Z_STREAM_END)
    throw InputError(path, 0, "", "truncated or corrupt gzip file (" + msg + ")");
  return out;
}

namespace {

// Large buffers fault in 4 KiB pages one by one; on virtual machines that dominates parsing. Ask
// for transparent huge pages (no-op where THP is off).
void advise_huge(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = 2u << 20;
  if (p == nullptr || bytes < 2 * kHuge) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (a + kHuge - 1) & ~(kHuge - 1), hi = (a + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

// simdjson's structural index (4 bytes per JSON token, allocated by each parser) is the largest
// buffer a parse writes; in 4 KiB pages its faults cost several times the parse itself. The
// On-Demand parser keeps it private, so the active implementation (simdjson's documented switch)
// becomes this wrapper of the detected one, which advises huge pages for it; all else is delegated.
class HugePageImplementation final : public simdjson::implementation {
 public:
  explicit HugePageImplementation(const simdjson::implementation* inner)
      : simdjson::implementation(inner->name(), inner->description(), inner->required_instruction_sets()),
        inner_(inner) {}
  HugePageImplementation(const HugePageImplementation&) = delete;
  HugePageImplementation& operator=(const HugePageImplementation&) = delete;
  ~HugePageImplementation() override {
    if (simdjson::get_active_implementation() == this) simdjson::get_active_implementation() = inner_;
  }
  simdjson::error_code create_dom_parser_implementation(
      std::size_t capacity, std::size_t max_depth,
      std::unique_ptr<simdjson::internal::dom_parser_implementation>& dst) const noexcept override {
    const simdjson::error_code err = inner_->create_dom_parser_implementation(capacity, max_depth, dst);
    if (!err && dst) advise_huge(dst->structural_indexes.get(), capacity * sizeof(std::uint32_t));
    return err;
  }
  simdjson::error_code minify(const std::uint8_t* buf, std::size_t len, std::uint8_t* dst,
                              std::size_t& dst_len) const noexcept override {
    return inner_->minify(buf, len, dst, dst_len);
  }
  bool validate_utf8(const char* buf, std::size_t len) const noexcept override {
    return inner_->validate_utf8(buf, len);
  }

 private:
  const simdjson::implementation* inner_;
};

void use_huge_page_index() {
  static const HugePageImplementation wrapper([] {
    // The first call through the active implementation makes simdjson pick the best one for this CPU.
    [[maybe_unused]] const bool utf8 = simdjson::get_active_implementation()->validate_utf8("", 0);
    const simdjson::implementation* best = simdjson::get_active_implementation();
    return best;
  }());
  static const bool installed = (simdjson::get_active_implementation() = &wrapper, true);
  (void)installed;
}

// A plain (not gzip) trace file mapped read-only, followed by simdjson's padding (zero pages):
// no copy of the text and no page zeroing. Empty when the file cannot be mapped or is gzip.
class MappedFile {
 public:
  static std::optional<MappedFile> open(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::optional<MappedFile> out;
    struct stat st {};
    unsigned char magic[2] = {0, 0};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 2 && ::pread(fd, magic, 2, 0) == 2 &&
        !(magic[0] == 0x1f && magic[1] == 0x8b)) {
      const auto size = static_cast<std::size_t>(st.st_size);
      const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
      const std::size_t span = (size + simdjson::SIMDJSON_PADDING + page - 1) / page * page;
      void* base = ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (base != MAP_FAILED) {
        if (::mmap(base, size, PROT_READ, MAP_PRIVATE | MAP_FIXED | MAP_POPULATE, fd, 0) != MAP_FAILED)
          out.emplace(static_cast<const char*>(base), size, span);
        else
          ::munmap(base, span);
      }
    }
    ::close(fd);
    return out;
  }
  MappedFile(const char* data, std::size_t size, std::size_t span) : data_(data), size_(size), span_(span) {}
  MappedFile(MappedFile&& o) noexcept
      : data_(std::exchange(o.data_, nullptr)), size_(o.size_), span_(o.span_) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  MappedFile& operator=(MappedFile&&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) ::munmap(const_cast<char*>(data_), span_);
  }
  simdjson::padded_string_view view() const { return simdjson::padded_string_view(data_, size_, span_); }

 private:
  const char* data_;
  std::size_t size_, span_;
};

// The error for input the On-Demand pass rejected: a DOM parse names what is wrong with the JSON,
// then the checks on the trace's shape, as the DOM reader made them.
[[noreturn]] void report_malformed(simdjson::padded_string_view text, const std::string& file,
                                   simdjson::error_code ondemand_error) {
  dom::parser parser;
  dom::element doc;
  simdjson::error_code err = parser.parse(text.data(), text.size(), false).get(doc);
  if (!err) {
    dom::object root;
    if (doc.get_object().get(root))
      throw InputError(file, 0, "", "not a Kineto trace: the top level is not a JSON object");
    dom::array events;
    if (root["traceEvents"].get_array().get(events))
      throw InputError(file, 0, "traceEvents",
                       "not a Kineto trace: no 'traceEvents' array (expected a PyTorch profiler "
                       "Chrome-trace JSON)");
    err = ondemand_error;
  }
  throw InputError(
      file, 0, "",
      std::string("not a Kineto trace: invalid or truncated JSON (") + simdjson::error_message(err) + ")");
}

KinetoTrace parse_padded(simdjson::padded_string_view text, const std::string& file) {
  KinetoTrace t;
  t.file = file;
  use_huge_page_index();
  od::parser parser;
  try {
    od::document doc;
    check(parser.iterate(text).get(doc));
    od::object root;
    check(doc.get_object().get(root));
    bool events_seen = false, events_read = false, dist_seen = false, devs_seen = false;
    // Events are a few hundred bytes each; unused capacity is address space, not memory.
    t.events.reserve(text.size() / 128 + 16);
    advise_huge(t.events.data(), t.events.capacity() * sizeof(KinetoEvent));
    Interner intern(t);
    for (auto fr : root) {
      od::field field;
      check(std::move(fr).get(field));
      std::string_view k;
      check(field.unescaped_key().get(k));
      od::value& v = field.value();
      if (k == "traceEvents" && !events_seen) {
        events_seen = true;
        od::array events;
        if (v.get_array().get(events)) {
          validate(v);
          continue;
        }
        events_read = true;
        for (auto er : events) {
          od::value e;
          check(std::move(er).get(e));
          od::object o;
          if (!e.get_object().get(o))
            read_event(o, t, intern);
          else
            validate(e);
        }
      } else if (k == "distributedInfo" && !dist_seen) {
        dist_seen = true;
        od::object dist;
        if (!v.get_object().get(dist))
          read_distributed(dist, t);
        else
          validate(v);
      } else if (k == "deviceProperties" && !devs_seen) {
        devs_seen = true;
        od::array devs;
        if (!v.get_array().get(devs))
          read_devices(devs, t);
        else
          validate(v);
      } else {
        validate(v);
      }
    }
    if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) throw Malformed{simdjson::TAPE_ERROR};
    if (!events_read) throw Malformed{simdjson::NO_SUCH_FIELD};
  } catch (const Malformed& m) {
    report_malformed(text, file, m.error);
  }
  return t;
}

}  // namespace

KinetoTrace parse_kineto_trace(std::string_view text, const std::string& file) {
  const simdjson::padded_string padded(text);
  return parse_padded(padded, file);
}

KinetoTrace read_kineto_trace(const std::string& path) {
  if (const auto mapped = MappedFile::open(path)) return parse_padded(mapped->view(), path);
  // Gzip, or a file that cannot be mapped.
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path, 0, "", "cannot open the trace file");
  char magic[2] = {0, 0};
  f.read(magic, 2);
  const bool gz = f.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                  static_cast<unsigned char>(magic[1]) == 0x8b;
  if (!gz) {
    f.seekg(0, std::ios::end);
    const auto size = static_cast<std::size_t>(f.tellg());
    f.seekg(0);
    simdjson::padded_string padded(size);
    f.read(padded.data(), static_cast<std::streamsize>(size));
    if (!f) throw InputError(path, 0, "", "cannot read the trace file");
    if (padded.size() == 0) throw InputError(path, 0, "", "the trace file is empty");
    return parse_padded(padded, path);
  }
  f.close();
  std::string text = read_maybe_gzip(path);
  if (text.empty()) throw InputError(path, 0, "", "the trace file is empty");
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING)
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  return parse_padded(simdjson::padded_string_view(text.data(), text.size(), text.capacity()), path);
}

bool is_collective_kernel(std::string_view name) {
  const std::string_view head = name.substr(0, std::min<std::size_t>(name.size(), 64));
  return icontains(head, "nccl") || icontains(head, "rccl");
}

std::string collective_from_kernel_name(std::string_view name) {
  if (!is_collective_kernel(name)) return "";
  static const std::pair<std::string_view, std::string_view> kOps[] = {
      {"allreduce", "allreduce"},  {"all_reduce", "allreduce"},        {"allgather", "allgather"},
      {"all_gather", "allgather"}, {"reducescatter", "reducescatter"}, {"reduce_scatter", "reducescatter"},
      {"alltoall", "alltoall"},    {"sendrecv", "sendrecv"},           {"send", "sendrecv"},
      {"recv", "sendrecv"},        {"broadcast", "broadcast"},         {"reduce", "reduce"}};
  for (const auto& [k, v] : kOps)
    if (icontains(name, k)) return std::string(v);
  return "collective";
}

}  // namespace fleetsim
