// Kernel descriptions, dtypes and the NeuSight-schema microbenchmark CSV reader.
#include <array>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "models/kernel/kernel_model.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/base/text.hpp"

namespace fleetsim {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp32:
      return "fp32";
    case DType::tf32:
      return "tf32";
    case DType::fp16:
      return "fp16";
    case DType::bf16:
      return "bf16";
  }
  return "fp32";
}

DType parse_dtype(std::string_view text, const std::string& file, long line, const std::string& field) {
  const std::string s = lower(trim(text));
  if (s == "fp32" || s == "float32" || s == "float" || s.empty()) return DType::fp32;
  if (s == "tf32") return DType::tf32;
  if (s == "fp16" || s == "float16" || s == "half") return DType::fp16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  throw InputError(file, line, field,
                   "unknown dtype '" + std::string(text) + "'; valid: fp32, tf32, fp16, bf16");
}

int dtype_bytes(DType t) {
  return (t == DType::fp16 || t == DType::bf16) ? 2 : 4;
}

double peak_flops(const GpuSpec& gpu, DType t) {
  double tflops = gpu.fp32_tflops;
  if (t == DType::tf32 && gpu.tf32_tflops > 0) tflops = gpu.tf32_tflops;
  if (t == DType::fp16 && gpu.fp16_tflops > 0) tflops = gpu.fp16_tflops;
  if (t == DType::bf16 && gpu.bf16_tflops > 0) tflops = gpu.bf16_tflops;
  return tflops * 1e12;
}

std::string_view to_string(PredictionLabel l) {
  switch (l) {
    case PredictionLabel::measured:
      return "measured";
    case PredictionLabel::interpolated:
      return "interpolated";
    case PredictionLabel::extrapolated:
      return "extrapolated";
  }
  return "extrapolated";
}

namespace {

struct OpInfo {
  std::string_view name;
  int tensors;            ///< tensors moved through DRAM (inputs + output)
  double flops_per_elem;  ///< arithmetic per output element (nominal)
};
constexpr std::array<OpInfo, 14> kMemoryOps{{{"add", 3, 1},
                                             {"copy", 2, 0},
                                             {"addu", 2, 1},
                                             {"div", 3, 1},
                                             {"divu", 2, 1},
                                             {"gelu", 2, 8},
                                             {"mul", 3, 1},
                                             {"mulu", 2, 1},
                                             {"pow", 3, 4},
                                             {"powu", 2, 4},
                                             {"relu", 2, 1},
                                             {"tanh", 2, 4},
                                             {"ln", 2, 5},
                                             {"softmax", 2, 5}}};

const OpInfo* memory_op(std::string_view op) {
  for (const auto& o : kMemoryOps)
    if (o.name == op) return &o;
  return nullptr;
}

}  // namespace

bool known_kernel_op(std::string_view op) {
  return op == "linear" || op == "bmm" || memory_op(op) != nullptr;
}

double KernelDesc::flops() const {
  const double db = static_cast<double>(b);
  if (is_gemm()) return 2.0 * db * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const OpInfo* o = memory_op(op);
  return db * static_cast<double>(h) * (o != nullptr ? o->flops_per_elem : 1.0);
}

double KernelDesc::bytes() const {
  const double e = dtype_bytes(dtype);
  const double db = static_cast<double>(b), dm = static_cast<double>(m), dn = static_cast<double>(n),
               dk = static_cast<double>(k);
  if (op == "linear") return e * (db * dm * dk + dk * dn + db * dm * dn);
  if (op == "bmm") return e * db * (dm * dk + dk * dn + dm * dn);
  const OpInfo* o = memory_op(op);
  return e * db * static_cast<double>(h) * (o != nullptr ? o->tensors : 2);
}

std::string KernelDesc::shape() const {
  std::string s = "B=" + std::to_string(b);
  if (is_gemm())
    s += " M=" + std::to_string(m) + " N=" + std::to_string(n) + " K=" + std::to_string(k);
  else
    s += " H=" + std::to_string(h);
  if (dtype != DType::fp32) s += " " + std::string(to_string(dtype));
  return s;
}

double roofline_seconds(const KernelDesc& k, const GpuSpec& gpu) {
  const double peak = peak_flops(gpu, k.dtype);
  const double bw = gpu.memory_bw_gbs * 1e9;
  const double tc = peak > 0 ? k.flops() / peak : 0.0;
  const double tm = bw > 0 ? k.bytes() / bw : 0.0;
  return std::max(tc, tm);
}

// ---- CSV reader ---------------------------------------------------------------------------------

namespace {

/// Splits one RFC-4180 record (quoted fields may contain commas and doubled quotes). Embedded
/// newlines are not supported (NeuSight files have none). Returns false on an unterminated quote.
bool split_csv(const std::string& line, std::vector<std::string>& out) {
  out.clear();
  std::string cur;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < line.size() && line[i + 1] == '"') {
          cur += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        cur += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.push_back(std::move(cur));
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  out.push_back(std::move(cur));
  return !quoted;
}

long parse_dim(const std::string& text, const std::string& file, long line, const std::string& field) {
  const double v = parse_double(text, file, line, field);
  if (v < 1 || v != std::floor(v) || v > 9.0e15)
    throw InputError(file, line, field, "expected a positive integer, got '" + text + "'");
  return static_cast<long>(v);
}

}  // namespace

std::vector<KernelSample> read_kernel_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "", "cannot open kernel microbenchmark CSV");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path, 1, "", "empty file: not a kernel microbenchmark CSV");
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  std::vector<std::string> fields;
  if (!split_csv(line, fields)) throw InputError(path, 1, "", "unterminated quote in header");
  std::map<std::string, int> col;
  for (int i = 0; i < static_cast<int>(fields.size()); ++i) col[std::string(trim(fields[i]))] = i;
  auto index = [&](const char* name) {
    auto it = col.find(name);
    return it == col.end() ? -1 : it->second;
  };
  for (const char* required : {"OPName", "Latency", "Device", "B"})
    if (index(required) < 0)
      throw InputError(path, 1, required,
                       "missing column: not a kernel microbenchmark CSV (need OPName, Latency, Device, B "
                       "and M, N, K or H)");
  const int c_op = index("OPName"), c_lat = index("Latency"), c_dev = index("Device"), c_b = index("B");
  const int c_m = index("M"), c_n = index("N"), c_k = index("K"), c_h = index("H");
  const int c_name = index("Kernel Name"), c_dtype = index("Dtype");
  const bool has_gemm = c_m >= 0 && c_n >= 0 && c_k >= 0;
  if (!has_gemm && c_h < 0)
    throw InputError(path, 1, c_m < 0 ? "M" : (c_n < 0 ? "N" : "K"),
                     "missing column: not a kernel microbenchmark CSV (need M, N, K or H)");

  std::vector<KernelSample> out;
  long lineno = 1;
  while (std::getline(in, line)) {
    ++lineno;
    if (trim(line).empty()) continue;
    if (!split_csv(line, fields)) throw InputError(path, lineno, "", "unterminated quote");
    auto field = [&](int c, const char* name) -> const std::string& {
      if (c >= static_cast<int>(fields.size()))
        throw InputError(
            path, lineno, name,
            "row has " + std::to_string(fields.size()) + " fields, header has " + std::to_string(col.size()));
      return fields[static_cast<std::size_t>(c)];
    };
    KernelSample s;
    s.file = path;
    s.line = lineno;
    s.kernel.op = std::string(trim(field(c_op, "OPName")));
    if (!known_kernel_op(s.kernel.op))
      throw InputError(path, lineno, "OPName",
                       "unknown op '" + s.kernel.op +
                           "'; valid: linear, bmm, add, addu, div, divu, gelu, mul, mulu, pow, powu, relu, "
                           "tanh, ln, softmax, copy");
    const double ms = parse_double(field(c_lat, "Latency"), path, lineno, "Latency");
    if (!(ms > 0)) throw InputError(path, lineno, "Latency", "must be positive (milliseconds)");
    s.seconds = ms * 1e-3;
    s.device = std::string(trim(field(c_dev, "Device")));
    if (s.device.empty()) throw InputError(path, lineno, "Device", "empty device name");
    s.kernel.b = parse_dim(field(c_b, "B"), path, lineno, "B");
    if (s.kernel.is_gemm()) {
      if (!has_gemm)
        throw InputError(path, lineno, "M", "GEMM op '" + s.kernel.op + "' needs columns M, N, K");
      s.kernel.m = parse_dim(field(c_m, "M"), path, lineno, "M");
      s.kernel.n = parse_dim(field(c_n, "N"), path, lineno, "N");
      s.kernel.k = parse_dim(field(c_k, "K"), path, lineno, "K");
    } else {
      if (c_h < 0)
        throw InputError(path, lineno, "H", "memory-bound op '" + s.kernel.op + "' needs column H");
      s.kernel.h = parse_dim(field(c_h, "H"), path, lineno, "H");
    }
    if (c_dtype >= 0) s.kernel.dtype = parse_dtype(field(c_dtype, "Dtype"), path, lineno, "Dtype");
    if (c_name >= 0 && c_name < static_cast<int>(fields.size()))
      s.kernel_name = fields[static_cast<std::size_t>(c_name)];
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fleetsim
