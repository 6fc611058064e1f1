// Kineto trace reader (see kineto_trace.hpp): simdjson DOM over the whole file, zlib for .gz.
#include "workloads/kineto_trace.hpp"

#include <simdjson.h>
#include <sys/mman.h>
#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <unordered_map>

#include "workloads/input_error.hpp"

namespace fleetsim {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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
  const std::string l = lower(cat);
  for (const auto& [k, v] : kMap)
    if (l == k) {
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
  const std::string l = lower(cat);
  return std::find(std::begin(kIgnored), std::end(kIgnored), l) != std::end(kIgnored);
}

namespace dom = simdjson::dom;

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

std::int64_t int_of(dom::element e, std::int64_t fallback = -1) {
  std::int64_t i = 0;
  if (!e.get_int64().get(i)) return i;
  double d = 0;
  if (!e.get_double().get(d)) return static_cast<std::int64_t>(d);
  return fallback;
}

double num_of(dom::element e, double fallback = 0) {
  double d = 0;
  if (!e.get_double().get(d)) return d;
  std::string_view s;
  if (!e.get_string().get(s)) {
    try {
      return std::stod(std::string(s));
    } catch (...) {
      return fallback;
    }
  }
  return fallback;
}

std::string_view str_of(dom::element e) {
  std::string_view s;
  if (e.get_string().get(s)) return {};
  return s;
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

void read_args(dom::object args, KinetoEvent& ev, Interner& intern) {
  for (auto field : args) {
    const std::string_view k = field.key;
    const dom::element v = field.value;
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
      ev.input_dims = intern(simdjson::minify(v));
    } else if (k == "Input type") {
      ev.input_types = intern(simdjson::minify(v));
    }
  }
}

void read_distributed(dom::object d, KinetoTrace& t) {
  t.has_distributed_info = true;
  for (auto field : d) {
    const std::string_view k = field.key;
    if (k == "rank") {
      t.rank = static_cast<int>(std::max<std::int64_t>(0, int_of(field.value, 0)));
    } else if (k == "world_size") {
      t.world_size = std::max<int>(1, static_cast<int>(int_of(field.value, 1)));
    } else if (k == "backend") {
      t.backend = std::string(str_of(field.value));
    } else if (k == "pg_config") {
      dom::array arr;
      if (field.value.get_array().get(arr)) continue;
      for (dom::element pe : arr) {
        dom::object po;
        if (pe.get_object().get(po)) continue;
        KinetoProcessGroup pg;
        dom::element v;
        if (!po["pg_name"].get(v)) pg.name = std::string(str_of(v));
        if (!po["pg_desc"].get(v)) pg.desc = std::string(str_of(v));
        if (!po["pg_size"].get(v)) pg.size = static_cast<int>(int_of(v, 0));
        dom::array ranks;
        if (!po["ranks"].get_array().get(ranks))
          for (dom::element r : ranks) pg.ranks.push_back(static_cast<int>(int_of(r, 0)));
        t.process_groups.push_back(std::move(pg));
      }
    }
  }
}

void read_devices(dom::array arr, KinetoTrace& t) {
  for (dom::element de : arr) {
    dom::object o;
    if (de.get_object().get(o)) continue;
    KinetoDevice d;
    dom::element v;
    if (!o["id"].get(v)) d.id = static_cast<int>(int_of(v, 0));
    if (!o["name"].get(v)) d.name = std::string(str_of(v));
    if (!o["totalGlobalMem"].get(v)) d.memory_bytes = num_of(v);
    if (!o["numSms"].get(v)) d.sms = static_cast<int>(int_of(v, 0));
    t.devices.push_back(std::move(d));
  }
}

void read_event(dom::object o, KinetoTrace& t, Interner& intern) {
  std::string_view ph, cat;
  bool has_ts = false, has_dur = false;
  KinetoEvent ev;
  for (auto field : o) {
    const std::string_view k = field.key;
    const dom::element v = field.value;
    if (k == "ph") {
      ph = str_of(v);
      if (ph != "X") return;
    } else if (k == "cat") {
      cat = str_of(v);
    } else if (k == "name") {
      ev.name = intern(str_of(v));
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
      dom::object args;
      if (!v.get_object().get(args)) read_args(args, ev, intern);
    }
  }
  if (ph != "X") return;
  if (!category_of(cat, ev.cat)) {
    if (!ignored_category(cat)) ++t.unknown_categories[std::string(cat)];
    return;
  }
  if (!has_ts || !has_dur) {
    ++t.unknown_categories["<X event without ts/dur>"];
    return;
  }
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
  t.events.push_back(std::move(ev));
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
  f.close();
  gzFile g = gzopen(path.c_str(), "rb");
  if (g == nullptr) throw InputError(path, 0, "", "cannot open the gzip trace file");
  gzbuffer(g, 1 << 20);
  std::string out;
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

// Large buffers (file text, simdjson's tape and string buffer) fault in 4 KiB pages one by one;
// on virtual machines that dominates parsing. Ask for transparent huge pages (no-op where THP is off).
void advise_huge(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = 2u << 20;
  if (p == nullptr || bytes < 2 * kHuge) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (a + kHuge - 1) & ~(kHuge - 1), hi = (a + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

KinetoTrace parse_padded(const simdjson::padded_string& padded, const std::string& file) {
  KinetoTrace t;
  t.file = file;
  dom::parser parser;
  if (padded.size() > (8u << 20) && !parser.allocate(padded.size())) {
    advise_huge(parser.doc.tape.get(), 8 * padded.size());
    advise_huge(parser.doc.string_buf.get(), padded.size());
    if (parser.implementation)
      advise_huge(parser.implementation->structural_indexes.get(), 4 * padded.size());
  }
  dom::element doc;
  if (const auto err = parser.parse(padded).get(doc))
    throw InputError(
        file, 0, "",
        std::string("not a Kineto trace: invalid or truncated JSON (") + simdjson::error_message(err) + ")");
  dom::object root;
  if (doc.get_object().get(root))
    throw InputError(file, 0, "", "not a Kineto trace: the top level is not a JSON object");
  dom::array events;
  if (root["traceEvents"].get_array().get(events))
    throw InputError(file, 0, "traceEvents",
                     "not a Kineto trace: no 'traceEvents' array (expected a PyTorch profiler "
                     "Chrome-trace JSON)");
  dom::object dist;
  if (!root["distributedInfo"].get_object().get(dist)) read_distributed(dist, t);
  dom::array devs;
  if (!root["deviceProperties"].get_array().get(devs)) read_devices(devs, t);
  t.events.reserve(events.size());
  advise_huge(t.events.data(), events.size() * sizeof(KinetoEvent));
  Interner intern(t);
  for (dom::element e : events) {
    dom::object o;
    if (!e.get_object().get(o)) read_event(o, t, intern);
  }
  return t;
}

}  // namespace

KinetoTrace parse_kineto_trace(std::string_view text, const std::string& file) {
  return parse_padded(simdjson::padded_string(text), file);
}

KinetoTrace read_kineto_trace(const std::string& path) {
  simdjson::padded_string padded;
  {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InputError(path, 0, "", "cannot open the trace file");
    char magic[2] = {0, 0};
    f.read(magic, 2);
    const bool gz = f.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                    static_cast<unsigned char>(magic[1]) == 0x8b;
    if (gz) {
      f.close();
      padded = simdjson::padded_string(read_maybe_gzip(path));
    } else {
      f.seekg(0, std::ios::end);
      const auto size = static_cast<std::size_t>(f.tellg());
      f.seekg(0);
      padded = simdjson::padded_string(size);
      advise_huge(padded.data(), size);
      f.read(padded.data(), static_cast<std::streamsize>(size));
      if (!f) throw InputError(path, 0, "", "cannot read the trace file");
    }
  }
  if (padded.size() == 0) throw InputError(path, 0, "", "the trace file is empty");
  return parse_padded(padded, path);
}

bool is_collective_kernel(std::string_view name) {
  const std::string l = lower(name.substr(0, std::min<std::size_t>(name.size(), 64)));
  return l.find("nccl") != std::string::npos || l.find("rccl") != std::string::npos;
}

std::string collective_from_kernel_name(std::string_view name) {
  if (!is_collective_kernel(name)) return "";
  const std::string l = lower(name);
  static const std::pair<std::string_view, std::string_view> kOps[] = {
      {"allreduce", "allreduce"},  {"all_reduce", "allreduce"},        {"allgather", "allgather"},
      {"all_gather", "allgather"}, {"reducescatter", "reducescatter"}, {"reduce_scatter", "reducescatter"},
      {"alltoall", "alltoall"},    {"sendrecv", "sendrecv"},           {"send", "sendrecv"},
      {"recv", "sendrecv"},        {"broadcast", "broadcast"},         {"reduce", "reduce"}};
  for (const auto& [k, v] : kOps)
    if (l.find(k) != std::string::npos) return std::string(v);
  return "collective";
}

}  // namespace fleetsim
