// cuBLAS GEMM sweeps: plain GEMM as torch.nn.functional.linear does it (y[M,N] = x[M,K] W[N,K]^T, row
// major, i.e. cuBLAS "TN") and strided-batched GEMM as torch.bmm (c[B,M,N] = a[B,M,K] b[B,K,N], "NN").
// Output: linear_<device>.csv and bmm_<device>.csv in the NeuSight schema (Latency in ms per call).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#ifdef FLEETSIM_HAVE_CUPTI
#include <cupti.h>
#include <cxxabi.h>
#endif

#include "common.hpp"
#include "timing.hpp"

namespace mb {
namespace {

// ---- kernel names and launch geometry through CUPTI activity records (optional) -------------------
// cuBLAS chooses its kernels internally; one extra, untimed call per point is traced with CUPTI to
// record what ran (NeuSight's Kernel Name, Grid, Block and Kernels columns). Without CUPTI, or when
// tracing is unavailable at run time, those columns are n/a / empty.
struct KernelRecord {
  std::string name;
  unsigned grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  std::uint64_t ns = 0;
};

#ifdef FLEETSIM_HAVE_CUPTI
std::atomic<std::vector<KernelRecord>*> g_records{nullptr};  // records of the probe in progress
constexpr std::size_t kCuptiBuffer = std::size_t{1} << 20;

std::string demangle(const char* name) {
  if (!name) return "?";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && d ? std::string(d.get()) : std::string(name);
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  *buffer = static_cast<std::uint8_t*>(std::aligned_alloc(8, kCuptiBuffer));
  *size = *buffer ? kCuptiBuffer : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t,
                               std::size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (buffer && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && rec->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    std::vector<KernelRecord>* sink = g_records.load();
    if (!sink) continue;
    KernelRecord r;
    r.name = demangle(k->name);
    r.grid[0] = static_cast<unsigned>(k->gridX);
    r.grid[1] = static_cast<unsigned>(k->gridY);
    r.grid[2] = static_cast<unsigned>(k->gridZ);
    r.block[0] = static_cast<unsigned>(k->blockX);
    r.block[1] = static_cast<unsigned>(k->blockY);
    r.block[2] = static_cast<unsigned>(k->blockZ);
    r.ns = k->end > k->start ? k->end - k->start : 0;
    sink->push_back(std::move(r));
  }
  std::free(buffer);
}

class KernelProbe {
 public:
  KernelProbe() {
    if (std::getenv("FLEETSIM_MICROBENCH_NO_CUPTI")) return;
    ok_ = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
    if (!ok_) std::cerr << "  CUPTI unavailable: kernel names / grids of cuBLAS calls not recorded\n";
  }
  // Kernels launched by one call of fn (synchronised), or empty when tracing is unavailable.
  template <class F>
  std::vector<KernelRecord> probe(cudaStream_t s, F&& fn) {
    std::vector<KernelRecord> out;
    if (!ok_) return out;
    g_records = &out;
    if (cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
      ok_ = false;
      g_records = nullptr;
      std::cerr << "  CUPTI kernel tracing could not be enabled: kernel columns n/a\n";
      return out;
    }
    fn();
    MB_CUDA(cudaStreamSynchronize(s));
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(1);
    g_records = nullptr;
    return out;
  }

 private:
  bool ok_ = false;
};
#else
class KernelProbe {
 public:
  template <class F>
  std::vector<KernelRecord> probe(cudaStream_t, F&&) {
    return {};
  }
};
#endif

// NeuSight columns Kernel Name .. Block z, from the longest kernel of the call (blocks and warps of the
// whole grid divided by the SM count). The Kernels column lists every kernel, each after a ';'.
std::string kernel_columns(const std::vector<KernelRecord>& ks, int sms) {
  if (ks.empty()) return "n/a,,,,,,,,";
  const KernelRecord& m = *std::max_element(
      ks.begin(), ks.end(), [](const KernelRecord& a, const KernelRecord& b) { return a.ns < b.ns; });
  const double blocks = static_cast<double>(m.grid[0]) * m.grid[1] * m.grid[2];
  const double wpb = std::ceil(static_cast<double>(m.block[0]) * m.block[1] * m.block[2] / 32.0);
  const double bps = blocks / std::max(sms, 1);
  std::ostringstream o;
  o << csv_quote(m.name) << "," << bps * wpb << "," << bps << "," << m.grid[0] << "," << m.grid[1] << ","
    << m.grid[2] << "," << m.block[0] << "," << m.block[1] << "," << m.block[2];
  return o.str();
}

std::string kernels_list(const std::vector<KernelRecord>& ks) {
  if (ks.empty()) return "n/a";
  std::string r;
  for (const auto& k : ks) r += ";" + k.name;
  return csv_quote(r);
}

void check_cublas(cublasStatus_t s, const char* expr, const char* file, int line) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + cublasGetStatusName(s) +
                " (" + cublasGetStatusString(s) + ")");
  }
}
#define MB_CUBLAS(x) check_cublas((x), #x, __FILE__, __LINE__)

struct DevBuf {
  void* p = nullptr;
  std::size_t bytes = 0;
  DevBuf() = default;
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
  ~DevBuf() {
    if (p) cudaFree(p);
  }
  void reserve(std::size_t b, Dtype d, std::uint32_t seed, cudaStream_t s) {
    if (b <= bytes) return;
    if (p) MB_CUDA(cudaFree(p));
    p = nullptr;
    bytes = 0;
    MB_CUDA(cudaMalloc(&p, b));
    bytes = b;
    fill_random(p, b / dtype_bytes(d), d, seed, s);
  }
};

struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
};

GemmTypes types_of(Dtype d) {
  switch (d) {
    case Dtype::fp32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    case Dtype::tf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    case Dtype::fp16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F};
    case Dtype::bf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
  }
  throw Error("bad dtype");
}

std::size_t write_sweep(const Options& opt, const DeviceInfo& dev, cublasHandle_t h, cudaStream_t s,
                        KernelProbe& probe, bool batched) {
  const std::string op = batched ? "bmm" : "linear";
  const std::string path = opt.out_dir + "/" + op + "_" + dev.file_tag + ".csv";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << kGemmHeader << "\n";
  const auto shapes = batched ? bmm_shapes(opt.sms, opt.quick) : linear_shapes(opt.sms, opt.quick);
  std::size_t free_b = 0, total_b = 0;
  MB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  const double budget = 0.6 * static_cast<double>(free_b);
  std::size_t rows = 0, skipped = 0;
  for (Dtype d : gemm_dtypes()) {
    const GemmTypes t = types_of(d);
    const std::size_t es = dtype_bytes(d);
    DevBuf A, B, C;
    for (const GemmShape& g : shapes) {
      const std::size_t a_b = static_cast<std::size_t>(g.b * g.m * g.k) * es;
      const std::size_t b_b = static_cast<std::size_t>(g.b * g.k * g.n) * es;
      const std::size_t c_b = static_cast<std::size_t>(g.b * g.m * g.n) * es;
      if (static_cast<double>(std::max(a_b, A.bytes) + std::max(b_b, B.bytes) + std::max(c_b, C.bytes)) >
          budget) {
        ++skipped;
        continue;
      }
      A.reserve(a_b, d, 1, s);
      B.reserve(b_b, d, 2, s);
      C.reserve(c_b, d, 3, s);
      const float alpha = 1.0f, beta = 0.0f;
      const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), k = static_cast<int>(g.k);
      std::function<void()> call;
      if (!batched) {
        // Row-major y[M,N] = x[M,K] W[N,K]^T  ==  column-major y^T(N x M) = W^T (N x K) * x^T (K x M).
        call = [&, m, n, k] {
          MB_CUBLAS(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, B.p, t.data, k, A.p, t.data, k,
                                 &beta, C.p, t.data, n, t.compute, CUBLAS_GEMM_DEFAULT));
        };
      } else {
        // Row-major c[M,N] = a[M,K] b[K,N]  ==  column-major c^T(N x M) = b^T (N x K) * a^T (K x M).
        call = [&, m, n, k] {
          MB_CUBLAS(cublasGemmStridedBatchedEx(
              h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &alpha, B.p, t.data, n, static_cast<long long>(k) * n,
              A.p, t.data, k, static_cast<long long>(m) * k, &beta, C.p, t.data, n,
              static_cast<long long>(m) * n, static_cast<int>(g.b), t.compute, CUBLAS_GEMM_DEFAULT));
        };
      }
      const double ms = measure_ms(s, reps_of(opt), call);
      const auto kernels = probe.probe(s, call);
      f << op << "," << ms << "," << csv_quote(dev.name) << ",none,none," << kernel_columns(kernels, dev.sms)
        << "," << dev.cuda_tag << "," << kernels_list(kernels) << "," << g.b << "," << g.m << "," << g.n
        << "," << g.k << "," << dtype_name(d) << "\n";
      ++rows;
    }
    f.flush();
    std::cout << "  " << op << " " << dtype_name(d) << " done\n" << std::flush;
  }
  std::cout << "wrote " << path << " (" << rows << " rows";
  if (skipped) std::cout << ", " << skipped << " shapes skipped: not enough GPU memory";
  std::cout << ")\n";
  return rows;
}
}  // namespace

std::size_t run_gemm(const Options& opt, const DeviceInfo& dev) {
  cudaStream_t s{};
  MB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasHandle_t h{};
  MB_CUBLAS(cublasCreate(&h));
  std::unique_ptr<cublasContext, void (*)(cublasHandle_t)> guard(h,
                                                                 [](cublasHandle_t x) { cublasDestroy(x); });
  MB_CUBLAS(cublasSetStream(h, s));
  KernelProbe probe;
  std::size_t rows = write_sweep(opt, dev, h, s, probe, false);
  rows += write_sweep(opt, dev, h, s, probe, true);
  MB_CUDA(cudaStreamDestroy(s));
  return rows;
}

}  // namespace mb
