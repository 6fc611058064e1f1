// The suite's own CUDA kernels: random fill, element-wise ops (add, addu, copy, relu), row-wise
// layer norm and softmax, and an empty kernel for launch latency.
// Output: elem_<device>.csv (NeuSight element-wise schema) and launch_<device>.csv.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common.hpp"
#include "timing.hpp"

namespace mb {
namespace {

template <class T>
__device__ __forceinline__ float to_f(T x) {
  return static_cast<float>(x);
}
template <class T>
__device__ __forceinline__ T from_f(float x) {
  return static_cast<T>(x);
}
template <>
__device__ __forceinline__ __half from_f<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// ---- random fill (hash of the index: deterministic, no cuRAND) ----------------------------------
__device__ __forceinline__ std::uint32_t hash32(std::uint64_t i, std::uint32_t seed) {
  std::uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 31;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  return static_cast<std::uint32_t>(x >> 32);
}

template <class T>
__global__ void fill_kernel(T* p, std::size_t n, std::uint32_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    p[i] = from_f<T>(static_cast<float>(hash32(i, seed)) * (2.0f / 4294967296.0f) - 1.0f);
  }
}

// ---- element-wise ---------------------------------------------------------------------------------
enum class EOp { add, addu, copy, relu };
constexpr int kVec = 4;          // elements per thread (one 16-byte fp32 / 8-byte half load)
constexpr int kElemBlock = 128;  // threads per block (as PyTorch's vectorized_elementwise_kernel)

template <class T>
struct alignas(sizeof(T) * kVec) VecT {
  T v[kVec];
};

template <EOp op>
__device__ __forceinline__ float apply(float a, float b) {
  if constexpr (op == EOp::add) return a + b;
  if constexpr (op == EOp::addu) return a + 1.0f;
  if constexpr (op == EOp::copy) return a;
  if constexpr (op == EOp::relu) return a > 0.0f ? a : 0.0f;
  return a;
}

template <class T, EOp op>
__global__ void __launch_bounds__(kElemBlock)
    elem_kernel(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, std::size_t n) {
  const std::size_t base = (blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x) * kVec;
  if (base + kVec <= n) {
    const VecT<T> va = *reinterpret_cast<const VecT<T>*>(a + base);
    VecT<T> vb{};
    if constexpr (op == EOp::add) vb = *reinterpret_cast<const VecT<T>*>(b + base);
    VecT<T> vc;
#pragma unroll
    for (int j = 0; j < kVec; ++j) vc.v[j] = from_f<T>(apply<op>(to_f(va.v[j]), to_f(vb.v[j])));
    *reinterpret_cast<VecT<T>*>(c + base) = vc;
  } else {
    for (std::size_t i = base; i < n; ++i) {
      const float bv = op == EOp::add ? to_f(b[i]) : 0.0f;
      c[i] = from_f<T>(apply<op>(to_f(a[i]), bv));
    }
  }
}

// ---- block reductions -----------------------------------------------------------------------------
template <bool is_max>
__device__ __forceinline__ float warp_reduce(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  return v;
}

// Reduces v over the block; every thread gets the result. `sh` holds 32 floats.
template <bool is_max>
__device__ float block_reduce(float v, float* sh) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = (blockDim.x + 31) >> 5;
  v = warp_reduce<is_max>(v);
  __syncthreads();  // sh may still be read by a previous reduction
  if (lane == 0) sh[warp] = v;
  __syncthreads();
  float r = lane < nwarps ? sh[lane] : (is_max ? -INFINITY : 0.0f);
  r = warp_reduce<is_max>(r);
  return r;
}

// ---- row-wise layer norm: one block per row, y = (x - mean) / sqrt(var + eps) * gamma + beta -----
template <class T>
__global__ void ln_kernel(const T* __restrict__ x, const T* __restrict__ gamma, const T* __restrict__ beta,
                          T* __restrict__ y, long h) {
  __shared__ float sh[32];
  const T* xr = x + blockIdx.x * h;
  T* yr = y + blockIdx.x * h;
  float s = 0.0f, ss = 0.0f;
  for (long i = threadIdx.x; i < h; i += blockDim.x) {
    const float v = to_f(xr[i]);
    s += v;
    ss += v * v;
  }
  s = block_reduce<false>(s, sh);
  ss = block_reduce<false>(ss, sh);
  const float mean = s / static_cast<float>(h);
  const float rstd = rsqrtf(fmaxf(ss / static_cast<float>(h) - mean * mean, 0.0f) + 1e-5f);
  for (long i = threadIdx.x; i < h; i += blockDim.x) {
    yr[i] = from_f<T>((to_f(xr[i]) - mean) * rstd * to_f(gamma[i]) + to_f(beta[i]));
  }
}

// ---- row-wise softmax: one block per row, max / sum of exp / normalise --------------------------------
template <class T>
__global__ void softmax_kernel(const T* __restrict__ x, T* __restrict__ y, long h) {
  __shared__ float sh[32];
  const T* xr = x + blockIdx.x * h;
  T* yr = y + blockIdx.x * h;
  float m = -INFINITY;
  for (long i = threadIdx.x; i < h; i += blockDim.x) m = fmaxf(m, to_f(xr[i]));
  m = block_reduce<true>(m, sh);
  float s = 0.0f;
  for (long i = threadIdx.x; i < h; i += blockDim.x) s += __expf(to_f(xr[i]) - m);
  s = block_reduce<false>(s, sh);
  const float inv = 1.0f / s;
  for (long i = threadIdx.x; i < h; i += blockDim.x) yr[i] = from_f<T>(__expf(to_f(xr[i]) - m) * inv);
}

__global__ void empty_kernel() {}

// Threads per block of the row kernels: about 4 elements per thread, 32..512 threads.
int row_threads(long h) {
  int t = 32;
  while (t < 512 && t * 4L < h) t *= 2;
  return t;
}

struct Launch {
  std::string kernel;
  dim3 grid, block;
};

template <class T>
const char* tname() {
  if constexpr (std::is_same_v<T, float>) return "float";
  if constexpr (std::is_same_v<T, __half>) return "__half";
  return "__nv_bfloat16";
}

// Runs one element-wise / row point with type T; returns (launch geometry, median ms).
template <class T>
std::pair<Launch, double> elem_point(const ElemPoint& p, void* a, void* b, void* c, void* g, void* be,
                                     cudaStream_t s, int reps) {
  const std::size_t n = static_cast<std::size_t>(p.b) * static_cast<std::size_t>(p.h);
  const T* A = static_cast<const T*>(a);
  const T* B = static_cast<const T*>(b);
  T* C = static_cast<T*>(c);
  Launch l;
  std::function<void()> fn;
  const std::string tn = tname<T>();
  if (p.op == "ln" || p.op == "softmax") {
    l.grid = dim3(static_cast<unsigned>(p.b));
    l.block = dim3(static_cast<unsigned>(row_threads(p.h)));
    if (p.op == "ln") {
      l.kernel = "fleetsim::ln_kernel<" + tn + ">";
      fn = [=] {
        ln_kernel<T>
            <<<l.grid, l.block, 0, s>>>(A, static_cast<const T*>(g), static_cast<const T*>(be), C, p.h);
      };
    } else {
      l.kernel = "fleetsim::softmax_kernel<" + tn + ">";
      fn = [=] { softmax_kernel<T><<<l.grid, l.block, 0, s>>>(A, C, p.h); };
    }
  } else {
    l.grid = dim3(static_cast<unsigned>((n + kElemBlock * kVec - 1) / (kElemBlock * kVec)));
    l.block = dim3(kElemBlock);
    l.kernel = "fleetsim::elem_kernel<" + tn + "," + p.op + ">";
    if (p.op == "add") fn = [=] { elem_kernel<T, EOp::add><<<l.grid, l.block, 0, s>>>(A, B, C, n); };
    if (p.op == "addu") fn = [=] { elem_kernel<T, EOp::addu><<<l.grid, l.block, 0, s>>>(A, B, C, n); };
    if (p.op == "copy") fn = [=] { elem_kernel<T, EOp::copy><<<l.grid, l.block, 0, s>>>(A, B, C, n); };
    if (p.op == "relu") fn = [=] { elem_kernel<T, EOp::relu><<<l.grid, l.block, 0, s>>>(A, B, C, n); };
  }
  if (!fn) throw Error("unknown element-wise op " + p.op);
  auto checked = [&] {
    fn();
    MB_CUDA(cudaGetLastError());
  };
  const double ms = measure_ms(s, reps, checked);
  return {l, ms};
}

struct DevMem {
  void* p = nullptr;
  explicit DevMem(std::size_t b) { MB_CUDA(cudaMalloc(&p, std::max<std::size_t>(b, 256))); }
  DevMem(const DevMem&) = delete;
  DevMem& operator=(const DevMem&) = delete;
  ~DevMem() { cudaFree(p); }
};

}  // namespace

void fill_random(void* p, std::size_t n, Dtype d, std::uint32_t seed, cudaStream_t s) {
  const unsigned grid = 1024, block = 256;
  if (d == Dtype::fp16) {
    fill_kernel<__half><<<grid, block, 0, s>>>(static_cast<__half*>(p), n, seed);
  } else if (d == Dtype::bf16) {
    fill_kernel<__nv_bfloat16><<<grid, block, 0, s>>>(static_cast<__nv_bfloat16*>(p), n, seed);
  } else {
    fill_kernel<float><<<grid, block, 0, s>>>(static_cast<float*>(p), n, seed);
  }
  MB_CUDA(cudaGetLastError());
  MB_CUDA(cudaStreamSynchronize(s));
}

std::size_t run_elem(const Options& opt, const DeviceInfo& dev) {
  const std::size_t max_bytes = opt.max_bytes ? opt.max_bytes : default_max_bytes(opt.quick);
  const auto points = elem_points(opt.quick, max_bytes);
  const std::string path = opt.out_dir + "/elem_" + dev.file_tag + ".csv";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << kElemHeader << "\n";
  cudaStream_t s{};
  MB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  // One allocation per tensor at the largest size (fp32 bytes), reused by every point and dtype.
  std::size_t max_elems = 0, max_h = 0;
  for (const auto& p : points) {
    max_elems = std::max(max_elems, static_cast<std::size_t>(p.b * p.h));
    max_h = std::max(max_h, static_cast<std::size_t>(p.h));
  }
  std::size_t free_b = 0, total_b = 0;
  MB_CUDA(cudaMemGetInfo(&free_b, &total_b));
  while (max_elems > 1024 && 3.0 * static_cast<double>(max_elems) * 4 > 0.6 * static_cast<double>(free_b))
    max_elems /= 2;
  DevMem a(max_elems * 4), b(max_elems * 4), c(max_elems * 4), g(max_h * 4), be(max_h * 4);
  std::size_t rows = 0;
  for (Dtype d : elem_dtypes(opt.quick)) {
    fill_random(a.p, max_elems, d, 11, s);
    fill_random(b.p, max_elems, d, 12, s);
    fill_random(g.p, max_h, d, 13, s);
    fill_random(be.p, max_h, d, 14, s);
    for (const auto& p : points) {
      const std::size_t n = static_cast<std::size_t>(p.b * p.h);
      if (n > max_elems) continue;
      std::pair<Launch, double> r;
      if (d == Dtype::fp16) {
        r = elem_point<__half>(p, a.p, b.p, c.p, g.p, be.p, s, reps_of(opt));
      } else if (d == Dtype::bf16) {
        r = elem_point<__nv_bfloat16>(p, a.p, b.p, c.p, g.p, be.p, s, reps_of(opt));
      } else {
        r = elem_point<float>(p, a.p, b.p, c.p, g.p, be.p, s, reps_of(opt));
      }
      const Launch& l = r.first;
      // NeuSight convention: blocks and warps of the whole grid divided by the SM count.
      const double blocks = static_cast<double>(l.grid.x) * l.grid.y * l.grid.z;
      const double warps_per_block = std::ceil(l.block.x * l.block.y * l.block.z / 32.0);
      const double bps = blocks / dev.sms;
      const bool large = n * dtype_bytes(d) > static_cast<std::size_t>(dev.l2_bytes);
      f << p.op << "," << r.second << "," << csv_quote(dev.name) << ",none,none," << csv_quote(l.kernel)
        << "," << bps * warps_per_block << "," << bps << "," << l.grid.x << "," << l.grid.y << "," << l.grid.z
        << "," << l.block.x << "," << l.block.y << "," << l.block.z << "," << dev.cuda_tag << "," << p.b
        << "," << p.h << "," << (large ? "True" : "False") << "," << dtype_name(d) << "\n";
      ++rows;
    }
    f.flush();
    std::cout << "  elem " << dtype_name(d) << " done\n" << std::flush;
  }
  MB_CUDA(cudaStreamDestroy(s));
  std::cout << "wrote " << path << " (" << rows << " rows)\n";
  return rows;
}

// launch_<device>.csv: op,grid,block,seconds,iterations,Device — seconds per launch (median of reps).
//  host_enqueue     CPU time of one cudaLaunchKernel call (batches of 256, synchronised between batches)
//  back_to_back     wall time of 1000 launches + one synchronise, per launch (launch throughput)
//  launch_sync      wall time of launch + cudaStreamSynchronize (round trip), median of single launches
//  gpu_gap          CUDA-event time of 1000 back-to-back kernels, per kernel (GPU-side launch spacing)
//  graph_per_kernel CUDA-event time of a graph of 100 kernels, per kernel
std::size_t run_launch(const Options& opt, const DeviceInfo& dev) {
  using clk = std::chrono::steady_clock;
  const std::string path = opt.out_dir + "/launch_" + dev.file_tag + ".csv";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << "op,grid,block,seconds,iterations,Device\n";
  cudaStream_t s{};
  MB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int reps = reps_of(opt);
  const int iters = opt.quick ? 200 : 1000;
  std::size_t rows = 0;
  auto emit = [&](const char* op, unsigned grid, unsigned block, std::vector<double> v, int it) {
    f << op << "," << grid << "," << block << "," << median(std::move(v)) << "," << it << ","
      << csv_quote(dev.name) << "\n";
    ++rows;
  };
  for (unsigned grid : {1u, static_cast<unsigned>(dev.sms)}) {
    const unsigned block = 128;
    auto launch = [&] { empty_kernel<<<grid, block, 0, s>>>(); };
    for (int i = 0; i < 100; ++i) launch();  // warm-up (module load, first-launch costs)
    MB_CUDA(cudaGetLastError());
    MB_CUDA(cudaStreamSynchronize(s));
    std::vector<double> enq, b2b, rt, gap, graph;
    for (int r = 0; r < reps; ++r) {
      double t = 0;
      for (int done = 0; done < iters; done += 256) {
        const auto t0 = clk::now();
        for (int i = 0; i < 256; ++i) launch();
        t += std::chrono::duration<double>(clk::now() - t0).count();
        MB_CUDA(cudaStreamSynchronize(s));
      }
      enq.push_back(t / (((iters + 255) / 256) * 256));
      const auto t1 = clk::now();
      for (int i = 0; i < iters; ++i) launch();
      MB_CUDA(cudaStreamSynchronize(s));
      b2b.push_back(std::chrono::duration<double>(clk::now() - t1).count() / iters);
      std::vector<double> one;
      for (int i = 0; i < 200; ++i) {
        const auto t2 = clk::now();
        launch();
        MB_CUDA(cudaStreamSynchronize(s));
        one.push_back(std::chrono::duration<double>(clk::now() - t2).count());
      }
      rt.push_back(median(one));
      EventPair ev;
      gap.push_back(ev.time_ms(s, iters, launch) * 1e-3);
    }
    emit("host_enqueue", grid, block, enq, iters);
    emit("back_to_back", grid, block, b2b, iters);
    emit("launch_sync", grid, block, rt, 200);
    emit("gpu_gap", grid, block, gap, iters);
    // CUDA graph of 100 kernels (captured once), per-kernel time.
    cudaGraph_t g{};
    cudaGraphExec_t ge{};
    MB_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    for (int i = 0; i < 100; ++i) launch();
    MB_CUDA(cudaStreamEndCapture(s, &g));
    MB_CUDA(cudaGraphInstantiate(&ge, g, 0));
    for (int r = 0; r < reps; ++r) {
      EventPair ev;
      MB_CUDA(cudaGraphLaunch(ge, s));  // warm
      graph.push_back(ev.time_ms(s, 1, [&] { MB_CUDA(cudaGraphLaunch(ge, s)); }) * 1e-3 / 100);
    }
    MB_CUDA(cudaGraphExecDestroy(ge));
    MB_CUDA(cudaGraphDestroy(g));
    emit("graph_per_kernel", grid, block, graph, 100);
  }
  MB_CUDA(cudaStreamDestroy(s));
  std::cout << "wrote " << path << " (" << rows << " rows)\n";
  return rows;
}

}  // namespace mb
