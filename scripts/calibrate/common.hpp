// Shared declarations of the fleetsim CUDA microbenchmark suite (fleetsim-microbench).
// The sweep plan (shapes, sizes) is plain C++ so that `--list` works on a machine without a GPU.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace mb {

// ---- errors -------------------------------------------------------------------------------------
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* expr, const char* file, int line) {
  if (e != cudaSuccess) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + cudaGetErrorName(e) +
                " (" + cudaGetErrorString(e) + ")");
  }
}
#define MB_CUDA(x) ::mb::check_cuda((x), #x, __FILE__, __LINE__)

// ---- options ------------------------------------------------------------------------------------
struct Options {
  std::string out_dir = ".";
  bool quick = false;
  int device = 0;             // GPU used by the single-GPU benchmarks
  int sms = 0;                // SM count for the plan (0: from the device, or 132 for --list without GPU)
  int reps = 0;               // timed repetitions per point (0: 7, or 3 with --quick)
  std::size_t max_bytes = 0;  // largest tensor of the element-wise/copy sweeps (0: default)
  int max_gpus = 0;           // NCCL: largest communicator (0: all GPUs)
};

inline int reps_of(const Options& o) {
  return o.reps > 0 ? o.reps : (o.quick ? 3 : 7);
}

// ---- device -------------------------------------------------------------------------------------
struct DeviceInfo {
  int index = 0;
  std::string name;      // cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  std::string file_tag;  // name with spaces replaced by '_' (file names)
  int sms = 0;
  int cc_major = 0, cc_minor = 0;
  std::size_t mem_bytes = 0;
  int mem_clock_khz = 0, bus_width_bits = 0, clock_khz = 0;
  int l2_bytes = 0;
  int max_threads_per_sm = 0;
  int cores_per_sm = 0;  // FP32 lanes per SM (table by compute capability)
  std::string pci_bus;   // "0000:04:00"
  std::string cuda_tag;  // "cu130" (runtime version)
};

DeviceInfo query_device(int dev);  // main.cpp
int device_count_or_throw();       // main.cpp: throws a clear Error when no usable GPU exists

inline std::string file_tag_of(std::string name) {
  std::replace(name.begin(), name.end(), ' ', '_');
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

// ---- sweep plan (main.cpp) ----------------------------------------------------------------------
enum class Dtype { fp32, tf32, fp16, bf16 };
const char* dtype_name(Dtype d);
inline std::size_t dtype_bytes(Dtype d) {
  return (d == Dtype::fp16 || d == Dtype::bf16) ? 2 : 4;
}

struct GemmShape {
  long b, m, n, k;
};
std::vector<Dtype> gemm_dtypes();
std::vector<GemmShape> linear_shapes(int sms, bool quick);
std::vector<GemmShape> bmm_shapes(int sms, bool quick);

struct ElemPoint {
  std::string op;  // add, addu, copy, relu, ln, softmax
  long b, h;       // rows x columns
};
std::vector<Dtype> elem_dtypes(bool quick);
std::vector<ElemPoint> elem_points(bool quick, std::size_t max_bytes);
std::size_t default_max_bytes(bool quick);
std::vector<std::size_t> copy_sizes(bool quick);
std::vector<std::size_t> nccl_sizes(bool quick);
std::vector<std::string> nccl_ops();

// ---- timing helpers -----------------------------------------------------------------------------
// Median of the values (copy).
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// CSV field quoting (kernel names contain commas).
inline std::string csv_quote(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string r = "\"";
  for (char c : s) {
    if (c == '"') r += '"';
    r += c;
  }
  return r + "\"";
}

// Header of the NeuSight GEMM CSVs (linear_<dev>.csv, bmm_<dev>.csv).
inline const char* kGemmHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
    "y,Grid z,Block x,Block y,Block z,CUDA Version,Kernels,B,M,N,K,Dtype";
// Header of the NeuSight element-wise CSV (elem_<dev>.csv).
inline const char* kElemHeader =
    "OPName,Latency,Device,Torch Version,CUDNN Version,Kernel Name,Warps per SM,Blocks per SM,Grid x,Grid "
    "y,Grid z,Block x,Block y,Block z,CUDA Version,B,H,large,Dtype";

// ---- benchmarks ---------------------------------------------------------------------------------
// Each writes its files under opt.out_dir and returns the number of rows written.
std::size_t run_gemm(const Options& opt, const DeviceInfo& dev);    // gemm.cpp
std::size_t run_elem(const Options& opt, const DeviceInfo& dev);    // kernels.cu
std::size_t run_launch(const Options& opt, const DeviceInfo& dev);  // kernels.cu
std::size_t run_copy(const Options& opt, const DeviceInfo& dev);    // copy.cpp
std::size_t run_nccl(const Options& opt, const DeviceInfo& dev);    // nccl.cpp
bool have_nccl();                                                   // nccl.cpp
std::string nccl_version_string();                                  // nccl.cpp

// Fills n elements of dtype d at p with pseudo-random values in [-1, 1) (kernels.cu).
void fill_random(void* p, std::size_t n, Dtype d, std::uint32_t seed, cudaStream_t s);

}  // namespace mb
