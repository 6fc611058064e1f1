// Kineto trace reader (see kineto_trace.hpp): one simdjson On-Demand pass over the whole file (no
// DOM tape), zlib for .gz. Strings without escapes are viewed in place; only kept events' strings are
// interned. Any JSON error found on the way is reported by a full DOM parse, so messages for
// malformed input are those of the DOM reader.
#include "workloads/profiler/kineto_trace.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <unordered_map>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/json_input.hpp"
#include "workloads/base/text.hpp"
#include "workloads/profiler/kineto_names.hpp"

namespace fleetsim {
namespace {

namespace dom = simdjson::dom;
namespace od = simdjson::ondemand;
using json_input::check;
using json_input::int_of;
using json_input::key_of;
using json_input::Malformed;
using json_input::minified;
using json_input::num_of;
using json_input::str_of;
using json_input::validate;

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
  /// collective_from_kernel_name of an interned name, computed once per distinct name.
  const std::string& collective_of(std::string_view interned) {
    auto [it, added] = collectives_.try_emplace(interned.data());
    if (added) it->second = collective_from_kernel_name(interned);
    return it->second;
  }

 private:
  KinetoTrace& t_;
  std::unordered_map<std::string_view, std::string_view> index_;
  std::unordered_map<const char*, std::string> collectives_;
  char* next_ = nullptr;
  std::size_t left_ = 0;
};

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
      ev.dur = num_of(v, 0);
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
  if (!std::isfinite(ev.ts) || !std::isfinite(ev.dur) || ev.dur < 0) {  // e.g. "ts": "nan", "dur": -5
    ++t.unknown_categories["<X event with a non-finite ts or dur, or a negative dur>"];
    return drop();
  }
  ev.name = intern(name);
  if (ev.cat == KinetoCat::kernel) {
    if (!ev.collective.empty()) ev.bytes *= dtype_size(ev.input_types);
    if (ev.collective.empty()) ev.collective = intern.collective_of(ev.name);
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

namespace {

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
  json_input::use_huge_page_index();
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
  // Read, not mapped: a mapped file cut short while it is parsed would raise SIGBUS.
  PaddedBytes bytes = read_input_bytes(path, simdjson::SIMDJSON_PADDING);
  if (bytes.size == 0) throw InputError(path, 0, "", "the trace file is empty");
  const std::string_view raw(bytes.data.get(), bytes.size);
  if (!is_gzip(raw))
    return parse_padded(simdjson::padded_string_view(raw.data(), raw.size(), bytes.capacity), path);
  std::string text = inflate_gzip(raw, path);
  bytes = {};
  if (text.empty()) throw InputError(path, 0, "", "the trace file is empty");
  if (text.capacity() < text.size() + simdjson::SIMDJSON_PADDING)
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  return parse_padded(simdjson::padded_string_view(text.data(), text.size(), text.capacity()), path);
}

}  // namespace fleetsim
