// NCCL collective sweeps over the GPUs of this node, written in the nccl-tests stdout format so that
// the collective fitter reads them as it reads real nccl-tests output.
// One process, one thread: ncclCommInitAll over devices 0..n-1 for n = 2..GPUs, then each collective
// launched on every rank inside ncclGroupStart/ncclGroupEnd.
// Output nccl_<op>_<n>gpu.txt, op in all_reduce, all_gather, reduce_scatter.
// Semantics follow nccl-tests: `size` is the all_reduce buffer, the all_gather output buffer and the
// reduce_scatter input buffer in bytes (float elements); time is the host-timed mean over `iters`
// iterations in microseconds; algbw = size / time; busbw = algbw * 2(n-1)/n for all_reduce and
// algbw * (n-1)/n for all_gather and reduce_scatter. No data validation: #wrong is N/A (as -c 0).
#include <cuda_runtime.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "common.hpp"

#ifdef FLEETSIM_HAVE_NCCL
#include <nccl.h>
#endif

namespace mb {

#ifndef FLEETSIM_HAVE_NCCL
bool have_nccl() {
  return false;
}
std::string nccl_version_string() {
  return "not built (NCCL not found at build time)";
}
std::size_t run_nccl(const Options&, const DeviceInfo&) {
  std::cout << "nccl: skipped, fleetsim-microbench was built without NCCL\n";
  return 0;
}
#else
bool have_nccl() {
  return true;
}

std::string nccl_version_string() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

namespace {

void check_nccl(ncclResult_t r, const char* expr, const char* file, int line) {
  if (r != ncclSuccess) {
    throw Error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " + ncclGetErrorString(r));
  }
}
#define MB_NCCL(x) check_nccl((x), #x, __FILE__, __LINE__)

struct Rank {
  int dev = 0;
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  float* send = nullptr;
  float* recv = nullptr;
};

// Element counts of one point, as nccl-tests computes them from the requested byte size.
struct Counts {
  std::size_t send, recv, printed;  // printed: the `count` column
};

Counts counts_of(const std::string& op, std::size_t bytes, int n) {
  const std::size_t c = bytes / sizeof(float);
  if (op == "all_reduce") return {c, c, c};
  if (op == "all_gather") {
    const std::size_t per = c / static_cast<std::size_t>(n);
    return {per, per * static_cast<std::size_t>(n), per * static_cast<std::size_t>(n)};
  }
  const std::size_t per = c / static_cast<std::size_t>(n);  // reduce_scatter
  return {per * static_cast<std::size_t>(n), per, per * static_cast<std::size_t>(n)};
}

void launch(const std::string& op, std::vector<Rank>& ranks, const Counts& c, bool in_place) {
  MB_NCCL(ncclGroupStart());
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    Rank& k = ranks[r];
    if (op == "all_reduce") {
      float* dst = in_place ? k.send : k.recv;
      MB_NCCL(ncclAllReduce(k.send, dst, c.send, ncclFloat, ncclSum, k.comm, k.stream));
    } else if (op == "all_gather") {
      const float* src = in_place ? k.recv + r * c.send : k.send;
      MB_NCCL(ncclAllGather(src, k.recv, c.send, ncclFloat, k.comm, k.stream));
    } else {
      float* dst = in_place ? k.send + r * c.recv : k.recv;
      MB_NCCL(ncclReduceScatter(k.send, dst, c.recv, ncclFloat, ncclSum, k.comm, k.stream));
    }
  }
  MB_NCCL(ncclGroupEnd());
}

void sync_all(std::vector<Rank>& ranks) {
  for (Rank& k : ranks) {
    MB_CUDA(cudaSetDevice(k.dev));
    MB_CUDA(cudaStreamSynchronize(k.stream));
  }
}

// Mean microseconds per iteration, host-timed like nccl-tests.
double time_us(const std::string& op, std::vector<Rank>& ranks, const Counts& c, bool in_place, int warmup,
               int iters) {
  for (int i = 0; i < warmup; ++i) launch(op, ranks, c, in_place);
  sync_all(ranks);
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) launch(op, ranks, c, in_place);
  sync_all(ranks);
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / iters;
}

std::string time_str(double us) {
  char b[32];
  if (us >= 10000.0) {
    std::snprintf(b, sizeof b, "%7.0f", us);
  } else if (us >= 100.0) {
    std::snprintf(b, sizeof b, "%7.1f", us);
  } else {
    std::snprintf(b, sizeof b, "%7.2f", us);
  }
  return b;
}

}  // namespace

std::size_t run_nccl(const Options& opt, const DeviceInfo&) {
  int ngpu = 0;
  MB_CUDA(cudaGetDeviceCount(&ngpu));
  if (opt.max_gpus > 0) ngpu = std::min(ngpu, opt.max_gpus);
  if (ngpu < 2) {
    std::cout << "nccl: skipped, needs at least 2 GPUs (found " << ngpu << ")\n";
    return 0;
  }
  const auto sizes = nccl_sizes(opt.quick);
  const std::size_t max_bytes = sizes.back();
  const int warmup = opt.quick ? 2 : 5, iters = opt.quick ? 5 : 20;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::size_t files = 0;
  for (int n = 2; n <= ngpu; ++n) {
    if (opt.quick && n != 2 && n != ngpu) continue;  // quick: 2 GPUs and all of them
    std::vector<Rank> ranks(static_cast<std::size_t>(n));
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
    std::vector<int> devs(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) devs[static_cast<std::size_t>(r)] = r;
    MB_NCCL(ncclCommInitAll(comms.data(), n, devs.data()));
    for (int r = 0; r < n; ++r) {
      Rank& k = ranks[static_cast<std::size_t>(r)];
      k.dev = r;
      k.comm = comms[static_cast<std::size_t>(r)];
      MB_CUDA(cudaSetDevice(r));
      MB_CUDA(cudaStreamCreateWithFlags(&k.stream, cudaStreamNonBlocking));
      MB_CUDA(cudaMalloc(&k.send, max_bytes));
      MB_CUDA(cudaMalloc(&k.recv, max_bytes));
      fill_random(k.send, max_bytes / sizeof(float), Dtype::fp32, 100u + static_cast<unsigned>(r), k.stream);
      MB_CUDA(cudaMemset(k.recv, 0, max_bytes));
    }
    for (const std::string& op : nccl_ops()) {
      const std::string path = opt.out_dir + "/nccl_" + op + "_" + std::to_string(n) + "gpu.txt";
      std::ofstream f(path);
      if (!f) throw Error("cannot write " + path);
      char line[512];
      f << "# nccl-tests-compatible: " << op
        << "_perf (fleetsim-microbench: one process, ncclCommInitAll, NCCL " << nccl_version_string()
        << ")\n";
      std::snprintf(
          line, sizeof line,
          "# nThread 1 nGpus %d minBytes %zu maxBytes %zu step: %d(factor) warmup iters: %d iters: %d "
          "agg iters: 1 validation: 0 graph: 0\n",
          n, sizes.front(), max_bytes, opt.quick ? 4 : 2, warmup, iters);
      f << line << "#\n# Using devices\n";
      for (int r = 0; r < n; ++r) {
        cudaDeviceProp p{};
        MB_CUDA(cudaGetDeviceProperties(&p, r));
        std::snprintf(line, sizeof line, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s\n", r,
                      static_cast<int>(getpid()), host, r, p.pciBusID, p.name);
        f << line;
      }
      f << "#\n"
        << "#                                                              out-of-place                      "
           " "
           "in-place          \n"
        << "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   "
           "algbw "
           "  busbw #wrong\n"
        << "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  "
           "(GB/s) "
           " (GB/s)       \n";
      const double factor = op == "all_reduce" ? 2.0 * (n - 1) / n : static_cast<double>(n - 1) / n;
      double bus_sum = 0;
      int points = 0;
      for (std::size_t bytes : sizes) {
        const Counts c = counts_of(op, bytes, n);
        if (c.printed == 0) continue;  // smaller than one element per rank
        const std::size_t size = c.printed * sizeof(float);
        std::snprintf(line, sizeof line, "%12zu  %12zu  %8s  %6s  %6i", size, c.printed, "float",
                      op == "all_gather" ? "none" : "sum", -1);
        f << line;
        for (bool in_place : {false, true}) {
          const double us = time_us(op, ranks, c, in_place, warmup, iters);
          const double algbw = static_cast<double>(size) / (us * 1e-6) / 1e9;
          std::snprintf(line, sizeof line, "  %7s  %6.2f  %6.2f  %5s", time_str(us).c_str(), algbw,
                        algbw * factor, "N/A");
          f << line;
          if (in_place) {
            bus_sum += algbw * factor;
            ++points;
          }
        }
        f << "\n" << std::flush;
      }
      f << "# Out of bounds values : 0 OK\n";
      std::snprintf(line, sizeof line, "# Avg bus bandwidth    : %g \n", points ? bus_sum / points : 0.0);
      f << line << "#\n";
      ++files;
      std::cout << "wrote " << path << "\n" << std::flush;
    }
    for (Rank& k : ranks) {
      MB_CUDA(cudaSetDevice(k.dev));
      MB_CUDA(cudaFree(k.send));
      MB_CUDA(cudaFree(k.recv));
      MB_CUDA(cudaStreamDestroy(k.stream));
      ncclCommDestroy(k.comm);
    }
  }
  MB_CUDA(cudaSetDevice(opt.device));
  return files;
}
#endif

}  // namespace mb
