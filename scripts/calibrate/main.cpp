// fleetsim-microbench: measures one GPU node for fleetsim's calibration fitter.
// Usage: fleetsim-microbench [--out DIR] [--quick] [--list] [--device N] [--sms N] [--reps N]
//                            [--max-bytes B] [--max-gpus N] [BENCH...]
// BENCH: device gemm elem launch copy nccl (default: all). See scripts/calibrate/README.md.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common.hpp"

namespace mb {

// ================================ sweep plan =====================================================
const char* dtype_name(Dtype d) {
  switch (d) {
    case Dtype::fp32:
      return "fp32";
    case Dtype::tf32:
      return "tf32";
    case Dtype::fp16:
      return "fp16";
    case Dtype::bf16:
      return "bf16";
  }
  return "?";
}

std::vector<Dtype> gemm_dtypes() {
  return {Dtype::fp32, Dtype::tf32, Dtype::fp16, Dtype::bf16};
}

namespace {
void add_unique(std::vector<GemmShape>& v, std::set<std::array<long, 4>>& seen, GemmShape s) {
  if (s.b < 1 || s.m < 1 || s.n < 1 || s.k < 1) return;
  if (seen.insert({s.b, s.m, s.n, s.k}).second) v.push_back(s);
}
}  // namespace

// Plain GEMM (B = 1). Families:
//  1. cubes M=N=K over powers of two and 1.5x steps (peak throughput vs size);
//  2. wave sweep: N = 1024, M stepping by 64 across 1..3 waves of 128x128 tiles at the SM count;
//  3. tiling sweep: M = N stepping by 8 around 1024 (alignment / tile remainder effects);
//  4. K sweep: M = N in {1024, 4096}, K from 16 to 65536;
//  5. transformer-like: tokens M from 1 to 16384 against (N, K) of attention/MLP projections.
std::vector<GemmShape> linear_shapes(int sms, bool quick) {
  std::vector<GemmShape> v;
  std::set<std::array<long, 4>> seen;
  const long cube_max = quick ? 4096 : 8192;
  for (long p = 64; p <= cube_max; p *= 2) {
    add_unique(v, seen, {1, p, p, p});
    if (p * 3 / 2 <= cube_max) add_unique(v, seen, {1, p * 3 / 2, p * 3 / 2, p * 3 / 2});
  }
  // Wave sweep: tiles = ceil(M/128) * 8; one wave at M = 128 * sms / 8.
  const long wave_m = std::max<long>(128, 128L * sms / 8);
  const long step = quick ? 256 : 64;
  for (long m = 64; m <= 3 * wave_m + 128; m += step) add_unique(v, seen, {1, m, 1024, quick ? 1024 : 2048});
  if (!quick) {
    for (long m = 960; m <= 1088; m += 8) add_unique(v, seen, {1, m, m, 1024});
  }
  for (long mn : {1024L, 4096L}) {
    if (quick && mn == 4096) continue;
    for (long k = 16; k <= (quick ? 16384 : 65536); k *= (quick ? 4 : 2)) add_unique(v, seen, {1, mn, mn, k});
  }
  const std::vector<std::array<long, 2>> nk =
      quick ? std::vector<std::array<long, 2>>{{4096, 4096}, {11008, 4096}}
            : std::vector<std::array<long, 2>>{{4096, 4096},  {12288, 4096}, {11008, 4096},
                                               {4096, 11008}, {8192, 8192},  {28672, 8192}};
  for (const auto& [n, k] : nk) {
    for (long m = 1; m <= (quick ? 4096 : 16384); m *= (quick ? 4 : 2)) add_unique(v, seen, {1, m, n, k});
  }
  return v;
}

// Strided-batched GEMM (torch.bmm). Families:
//  1. attention-like (M, N, K) for batch sizes 1..256;
//  2. wave sweep: 256x256x64 problems (4 tiles of 128x128 each) with B stepping across 1..3 waves.
std::vector<GemmShape> bmm_shapes(int sms, bool quick) {
  std::vector<GemmShape> v;
  std::set<std::array<long, 4>> seen;
  const std::vector<std::array<long, 3>> mnk =
      quick ? std::vector<std::array<long, 3>>{{128, 128, 64}, {1024, 1024, 64}, {1024, 64, 1024}}
            : std::vector<std::array<long, 3>>{{64, 64, 64},    {128, 128, 64},    {256, 256, 64},
                                               {512, 512, 64},  {1024, 1024, 64},  {2048, 2048, 128},
                                               {512, 64, 512},  {1024, 128, 1024}, {2048, 128, 2048},
                                               {100, 100, 100}, {384, 384, 96},    {4096, 4096, 128}};
  for (const auto& [m, n, k] : mnk) {
    for (long b = 1; b <= 256; b *= (quick ? 8 : 2)) {
      if (b * m * n > (1L << 31)) continue;  // C alone above 8 GiB in fp32: skip
      add_unique(v, seen, {b, m, n, k});
    }
  }
  const long wave_b = std::max<long>(1, sms / 4);
  const long step = std::max<long>(1, sms / (quick ? 8 : 32));
  for (long b = 1; b <= 3 * wave_b + step; b += step) add_unique(v, seen, {b, 256, 256, 64});
  return v;
}

std::vector<Dtype> elem_dtypes(bool quick) {
  if (quick) return {Dtype::fp32, Dtype::fp16};
  return {Dtype::fp32, Dtype::fp16, Dtype::bf16};
}

std::size_t default_max_bytes(bool quick) {
  return quick ? (std::size_t{256} << 20) : (std::size_t{2} << 30);
}

// Element-wise ops: 4 KiB .. max_bytes per fp32 tensor, powers of two and 1.5x, H = 1024 columns
// (1.5 x 2^k sizes: H = 512; rows B = elements / H). ln / softmax: H in a list of hidden sizes and
// B rows in powers of four, same byte range.
std::vector<ElemPoint> elem_points(bool quick, std::size_t max_bytes) {
  std::vector<ElemPoint> v;
  const std::size_t max_elems = max_bytes / 4;
  std::vector<long> sizes;
  for (std::size_t n = 1024; n <= max_elems; n *= 2) {
    sizes.push_back(static_cast<long>(n));
    if (!quick && n * 3 / 2 <= max_elems) sizes.push_back(static_cast<long>(n * 3 / 2));
  }
  for (const char* op : {"add", "addu", "copy", "relu"}) {
    for (long n : sizes) {
      const long h = std::gcd(n, 1024L);  // 1024, or 512 for the 1.5 x 2^k sizes: B x H == n exactly
      v.push_back({op, n / h, h});
    }
  }
  const std::vector<long> hs =
      quick ? std::vector<long>{128, 1024, 4096}
            : std::vector<long>{64, 128, 256, 512, 768, 1024, 1600, 2048, 4096, 8192, 10240, 16384};
  for (const char* op : {"ln", "softmax"}) {
    for (long h : hs) {
      for (long b = 1; static_cast<std::size_t>(b * h) <= max_elems; b *= 4) {
        if (b * h * 4 < 4096) continue;
        v.push_back({op, b, h});
      }
    }
  }
  return v;
}

std::vector<std::size_t> copy_sizes(bool quick) {
  std::vector<std::size_t> v;
  for (std::size_t s = 4096; s <= (quick ? (std::size_t{64} << 20) : (std::size_t{1} << 30));
       s *= (quick ? 4 : 2))
    v.push_back(s);
  return v;
}

std::vector<std::size_t> nccl_sizes(bool quick) {
  std::vector<std::size_t> v;
  for (std::size_t s = 8; s <= (quick ? (std::size_t{64} << 20) : (std::size_t{1} << 30));
       s *= (quick ? 4 : 2))
    v.push_back(s);
  return v;
}

std::vector<std::string> nccl_ops() {
  return {"all_reduce", "all_gather", "reduce_scatter"};
}

// ================================ device ========================================================
namespace {
int attr(cudaDeviceAttr a, int dev) {
  int v = 0;
  MB_CUDA(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

// FP32 lanes per SM by compute capability (CUDA C Programming Guide, arithmetic instruction throughput).
int cores_per_sm(int major, int minor) {
  if (major <= 2) return 32;
  if (major == 3) return 192;
  if (major == 5) return 128;
  if (major == 6) return minor == 0 ? 64 : 128;
  if (major == 7) return 64;
  if (major == 8) return minor == 0 ? 64 : 128;
  return 128;  // 9.x (Hopper), 10.x / 12.x (Blackwell)
}
}  // namespace

int device_count_or_throw() {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    throw Error(std::string("no usable CUDA device: cudaGetDeviceCount failed with ") + cudaGetErrorName(e) +
                " (" + cudaGetErrorString(e) + "). Run on a GPU node with the NVIDIA driver loaded.");
  }
  if (n == 0) throw Error("no usable CUDA device: cudaGetDeviceCount returned 0");
  return n;
}

DeviceInfo query_device(int dev) {
  cudaDeviceProp p{};
  MB_CUDA(cudaGetDeviceProperties(&p, dev));
  DeviceInfo d;
  d.index = dev;
  d.name = p.name;
  d.file_tag = file_tag_of(d.name);
  d.sms = p.multiProcessorCount;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.mem_bytes = p.totalGlobalMem;
  // clockRate / memoryClockRate were removed from cudaDeviceProp in CUDA 13: use attributes.
  d.mem_clock_khz = attr(cudaDevAttrMemoryClockRate, dev);
  d.bus_width_bits = attr(cudaDevAttrGlobalMemoryBusWidth, dev);
  d.clock_khz = attr(cudaDevAttrClockRate, dev);
  d.l2_bytes = attr(cudaDevAttrL2CacheSize, dev);
  d.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor, dev);
  d.cores_per_sm = cores_per_sm(p.major, p.minor);
  char bus[64];
  std::snprintf(bus, sizeof bus, "%04x:%02x:%02x", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  d.pci_bus = bus;
  int rt = 0;
  MB_CUDA(cudaRuntimeGetVersion(&rt));
  d.cuda_tag = "cu" + std::to_string(rt / 1000) + std::to_string((rt % 1000) / 10);
  return d;
}

namespace {
std::string json_escape(const std::string& s) {
  std::string r;
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    r += c;
  }
  return r;
}

double mem_bw_gbs(const DeviceInfo& d) {
  // DDR: two transfers per clock; kHz * 1e3 * bytes per transfer / 1e9.
  return 2.0 * d.mem_clock_khz * 1e3 * (d.bus_width_bits / 8.0) / 1e9;
}

void write_device_json(const Options& opt, const DeviceInfo& d) {
  const std::string path = opt.out_dir + "/device.json";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  const double freq_mhz = d.clock_khz / 1000.0;
  const double flops = 2.0 * d.cores_per_sm * d.sms * freq_mhz / 1000.0;  // GFLOP/s FP32 (FMA = 2)
  f << "{\n"
    << "    \"Device\":\"" << json_escape(d.name) << "\",\n"
    << "    \"Dev_Mem\":" << std::llround(static_cast<double>(d.mem_bytes) / (1024.0 * 1024.0 * 1024.0))
    << ",\n"
    << "    \"Mem_Bw\":" << std::llround(mem_bw_gbs(d)) << ",\n"
    << "    \"Num_Sm\":" << d.sms << ",\n"
    << "    \"Core_Per_SM\":" << d.cores_per_sm << ",\n"
    << "    \"Freq\":" << std::llround(freq_mhz) << ",\n"
    << "    \"SingleFLOPs\":" << std::llround(flops) << ",\n"
    << "    \"L2Cache\":" << std::llround(d.l2_bytes / (1024.0 * 1024.0)) << "\n"
    << "}\n";
  std::cout << "wrote " << path << "\n";
}

std::string run_capture(const char* cmd) {
  std::string out;
  FILE* p = popen(cmd, "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

std::string cublas_version() {
  int ma = 0, mi = 0, pa = 0;
  if (cublasGetProperty(MAJOR_VERSION, &ma) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &mi) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &pa) != CUBLAS_STATUS_SUCCESS)
    return "unknown";
  return std::to_string(ma) + "." + std::to_string(mi) + "." + std::to_string(pa);
}

void write_environment(const Options& opt, int ngpu) {
  const std::string path = opt.out_dir + "/environment.txt";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  int drv = 0, rt = 0;
  MB_CUDA(cudaDriverGetVersion(&drv));
  MB_CUDA(cudaRuntimeGetVersion(&rt));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  f << "# fleetsim-microbench environment\n"
    << "hostname: " << host << "\n"
    << "cuda_driver_version: " << drv / 1000 << "." << (drv % 1000) / 10 << "\n"
    << "cuda_runtime_version: " << rt / 1000 << "." << (rt % 1000) / 10 << "\n"
    << "cublas_version: " << cublas_version() << "\n"
    << "nccl_version: " << nccl_version_string() << "\n"
    << "gpus: " << ngpu << "\n";
  for (int i = 0; i < ngpu; ++i) {
    const DeviceInfo d = query_device(i);
    f << "gpu " << i << ": " << d.name << " cc " << d.cc_major << "." << d.cc_minor << " sms " << d.sms
      << " mem_bytes " << d.mem_bytes << " clock_khz " << d.clock_khz << " mem_clock_khz " << d.mem_clock_khz
      << " bus_width_bits " << d.bus_width_bits << " l2_bytes " << d.l2_bytes << " pci " << d.pci_bus << "\n";
  }
  for (int i = 0; i < ngpu; ++i) {
    for (int j = 0; j < ngpu; ++j) {
      if (i == j) continue;
      int can = 0;
      MB_CUDA(cudaDeviceCanAccessPeer(&can, i, j));
      f << "peer_access " << i << "->" << j << ": " << can << "\n";
    }
  }
  const std::string smi = run_capture("nvidia-smi -q 2>/dev/null");
  f << "\n# nvidia-smi -q\n" << (smi.empty() ? std::string("(nvidia-smi not available)\n") : smi);
  const std::string topo = run_capture("nvidia-smi topo -m 2>/dev/null");
  if (!topo.empty()) f << "\n# nvidia-smi topo -m\n" << topo;
  std::cout << "wrote " << path << "\n";
}

// ================================ CLI ============================================================
const std::vector<std::string> kBenches = {"device", "gemm", "elem", "launch", "copy", "nccl"};

void usage(std::ostream& os) {
  os << "usage: fleetsim-microbench [options] [BENCH...]\n"
        "  BENCH: device gemm elem launch copy nccl | all (default: all)\n"
        "  --out DIR        output directory (default: .)\n"
        "  --quick          reduced sweep (smoke test, < 2 minutes on an H100)\n"
        "  --list           print the planned sweep and exit (needs no GPU)\n"
        "  --device N       GPU for the single-GPU benchmarks (default 0)\n"
        "  --sms N          SM count for planning wave sweeps (default: the device's; 132 with --list)\n"
        "  --reps N         timed repetitions per point, median reported (default 7, quick 3)\n"
        "  --max-bytes B    largest tensor of the element-wise sweep (default 2 GiB, quick 256 MiB)\n"
        "  --max-gpus N     largest NCCL communicator (default: all GPUs)\n"
        "  -h, --help       this help\n";
}

long parse_long(const std::string& flag, const char* v) {
  char* end = nullptr;
  const long x = std::strtol(v, &end, 10);
  if (end == v || *end != '\0' || x < 0) throw Error("bad value for " + flag + ": " + v);
  return x;
}

std::string shape_str(const GemmShape& s) {
  return std::to_string(s.b) + "x" + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
         std::to_string(s.k);
}

void print_plan(const Options& opt, const std::set<std::string>& benches) {
  const int sms = opt.sms > 0 ? opt.sms : 132;
  const std::size_t max_bytes = opt.max_bytes ? opt.max_bytes : default_max_bytes(opt.quick);
  std::cout << "# fleetsim-microbench plan (" << (opt.quick ? "quick" : "full") << ", sms=" << sms
            << ", reps=" << reps_of(opt) << ")\n";
  if (benches.count("device")) std::cout << "device: device.json environment.txt\n";
  if (benches.count("gemm")) {
    const auto lin = linear_shapes(sms, opt.quick);
    const auto bmm = bmm_shapes(sms, opt.quick);
    const auto dts = gemm_dtypes();
    std::cout << "gemm: linear_<device>.csv " << lin.size() << " shapes x " << dts.size()
              << " dtypes = " << lin.size() * dts.size() << " points; bmm_<device>.csv " << bmm.size()
              << " shapes x " << dts.size() << " dtypes = " << bmm.size() * dts.size() << " points\n";
    std::cout << "  dtypes:";
    for (Dtype d : dts) std::cout << " " << dtype_name(d);
    std::cout << "\n  linear BxMxNxK:";
    for (const auto& s : lin) std::cout << " " << shape_str(s);
    std::cout << "\n  bmm BxMxNxK:";
    for (const auto& s : bmm) std::cout << " " << shape_str(s);
    std::cout << "\n";
  }
  if (benches.count("elem")) {
    const auto pts = elem_points(opt.quick, max_bytes);
    const auto dts = elem_dtypes(opt.quick);
    std::cout << "elem: elem_<device>.csv " << pts.size() << " points x " << dts.size()
              << " dtypes = " << pts.size() * dts.size() << " rows (max " << max_bytes
              << " bytes per tensor)\n";
    std::string last;
    for (const auto& p : pts) {
      if (p.op != last) std::cout << (last.empty() ? "" : "\n") << "  " << p.op << " BxH:";
      last = p.op;
      std::cout << " " << p.b << "x" << p.h;
    }
    std::cout << "\n";
  }
  if (benches.count("launch"))
    std::cout
        << "launch: launch_<device>.csv ops host_enqueue back_to_back launch_sync gpu_gap graph_per_kernel\n";
  if (benches.count("copy")) {
    std::cout
        << "copy: copy_<device>.csv ops h2d_pinned d2h_pinned h2d_pageable d2h_pageable d2d p2p p2p_bidir, "
           "sizes:";
    for (auto s : copy_sizes(opt.quick)) std::cout << " " << s;
    std::cout << "\n";
  }
  if (benches.count("nccl")) {
    std::cout << "nccl: " << (have_nccl() ? "" : "(NOT BUILT: no NCCL) ")
              << "files nccl_<op>_<n>gpu.txt, n = 2..GPUs, ops";
    for (const auto& op : nccl_ops()) std::cout << " " << op;
    std::cout << ", sizes:";
    for (auto s : nccl_sizes(opt.quick)) std::cout << " " << s;
    std::cout << "\n";
  }
}

int real_main(int argc, char** argv) {
  Options opt;
  bool list = false;
  std::set<std::string> benches;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](const std::string& flag) -> const char* {
      if (i + 1 >= argc) throw Error("missing value for " + flag);
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      usage(std::cout);
      return 0;
    } else if (a == "--out") {
      opt.out_dir = value(a);
    } else if (a == "--quick") {
      opt.quick = true;
    } else if (a == "--list" || a == "--dry-run") {
      list = true;
    } else if (a == "--device") {
      opt.device = static_cast<int>(parse_long(a, value(a)));
    } else if (a == "--sms") {
      opt.sms = static_cast<int>(parse_long(a, value(a)));
    } else if (a == "--reps") {
      opt.reps = static_cast<int>(parse_long(a, value(a)));
    } else if (a == "--max-bytes") {
      opt.max_bytes = static_cast<std::size_t>(parse_long(a, value(a)));
    } else if (a == "--max-gpus") {
      opt.max_gpus = static_cast<int>(parse_long(a, value(a)));
    } else if (a == "all") {
      benches.insert(kBenches.begin(), kBenches.end());
    } else if (std::find(kBenches.begin(), kBenches.end(), a) != kBenches.end()) {
      benches.insert(a);
    } else {
      usage(std::cerr);
      throw Error("unknown argument: " + a);
    }
  }
  if (benches.empty()) benches.insert(kBenches.begin(), kBenches.end());
  if (list) {
    print_plan(opt, benches);
    return 0;
  }

  const int ngpu = device_count_or_throw();
  if (opt.device >= ngpu)
    throw Error("--device " + std::to_string(opt.device) + " but only " + std::to_string(ngpu) + " GPU(s)");
  MB_CUDA(cudaSetDevice(opt.device));
  const DeviceInfo dev = query_device(opt.device);
  if (opt.sms <= 0) opt.sms = dev.sms;
  std::filesystem::create_directories(opt.out_dir);
  std::cout << "fleetsim-microbench: " << dev.name << " (" << dev.sms << " SMs, cc " << dev.cc_major << "."
            << dev.cc_minor << ", " << dev.cuda_tag << "), " << ngpu << " GPU(s), out " << opt.out_dir
            << (opt.quick ? ", quick" : "") << "\n";

  int failures = 0;
  auto step = [&](const std::string& name, auto&& fn) {
    if (!benches.count(name)) return;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      fn();
    } catch (const std::exception& e) {
      ++failures;
      std::cerr << "fleetsim-microbench: " << name << " failed: " << e.what() << "\n";
      cudaGetLastError();  // clear a sticky launch error where possible
    }
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "[" << name << "] " << s << " s\n" << std::flush;
  };
  step("device", [&] {
    write_device_json(opt, dev);
    write_environment(opt, ngpu);
  });
  step("launch", [&] { run_launch(opt, dev); });
  step("copy", [&] { run_copy(opt, dev); });
  step("elem", [&] { run_elem(opt, dev); });
  step("gemm", [&] { run_gemm(opt, dev); });
  step("nccl", [&] { run_nccl(opt, dev); });
  return failures ? 1 : 0;
}
}  // namespace
}  // namespace mb

int main(int argc, char** argv) {
  try {
    return mb::real_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "fleetsim-microbench: error: " << e.what() << "\n";
    return 2;
  }
}
