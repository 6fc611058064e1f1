// Copy bandwidth vs size: host<->device (pinned and pageable), device-to-device, and peer-to-peer
// between every ordered pair of GPUs.
// Output copy_<device>.csv: op,bytes,seconds,gbps,src,dst,Device
//   seconds: median time of one copy; gbps = bytes / seconds / 1e9.
//   src / dst: device index, or -1 for host memory.
#include <cuda_runtime.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "common.hpp"
#include "timing.hpp"

namespace mb {
namespace {

struct Dev {
  void* p = nullptr;
  int dev = 0;
  Dev(int d, std::size_t b) : dev(d) {
    MB_CUDA(cudaSetDevice(d));
    MB_CUDA(cudaMalloc(&p, b));
    MB_CUDA(cudaMemset(p, 1, b));
  }
  Dev(const Dev&) = delete;
  Dev& operator=(const Dev&) = delete;
  ~Dev() {
    cudaSetDevice(dev);
    cudaFree(p);
  }
};

struct Pinned {
  void* p = nullptr;
  explicit Pinned(std::size_t b) {
    MB_CUDA(cudaMallocHost(&p, b));
    std::memset(p, 1, b);
  }
  Pinned(const Pinned&) = delete;
  Pinned& operator=(const Pinned&) = delete;
  ~Pinned() { cudaFreeHost(p); }
};

// Median seconds of one synchronous copy (cudaMemcpy from pageable memory: staged by the driver),
// timed on the host clock so that staging is included.
template <class F>
double host_timed(int reps, F&& fn) {
  fn();
  std::vector<double> v;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    v.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return median(v);
}

}  // namespace

std::size_t run_copy(const Options& opt, const DeviceInfo& dev) {
  const std::string path = opt.out_dir + "/copy_" + dev.file_tag + ".csv";
  std::ofstream f(path);
  if (!f) throw Error("cannot write " + path);
  f << "op,bytes,seconds,gbps,src,dst,Device\n";
  const auto sizes = copy_sizes(opt.quick);
  const std::size_t max_b = sizes.back();
  const int reps = reps_of(opt);
  const int d0 = opt.device;
  std::size_t rows = 0;
  auto emit = [&](const char* op, std::size_t bytes, double sec, int src, int dst) {
    f << op << "," << bytes << "," << sec << "," << (sec > 0 ? static_cast<double>(bytes) / sec / 1e9 : 0.0)
      << "," << src << "," << dst << "," << csv_quote(dev.name) << "\n";
    ++rows;
  };

  {
    Dev a(d0, max_b), b(d0, max_b);
    Pinned hp(max_b);
    std::unique_ptr<char[]> pageable(new char[max_b]);
    std::memset(pageable.get(), 1, max_b);
    cudaStream_t s{};
    MB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (std::size_t n : sizes) {
      auto ev = [&](void* dst, const void* src, cudaMemcpyKind k) {
        return measure_ms(s, reps, [&] { MB_CUDA(cudaMemcpyAsync(dst, src, n, k, s)); }) * 1e-3;
      };
      emit("h2d_pinned", n, ev(a.p, hp.p, cudaMemcpyHostToDevice), -1, d0);
      emit("d2h_pinned", n, ev(hp.p, a.p, cudaMemcpyDeviceToHost), d0, -1);
      emit("d2d", n, ev(b.p, a.p, cudaMemcpyDeviceToDevice), d0, d0);
      emit("h2d_pageable", n,
           host_timed(reps, [&] { MB_CUDA(cudaMemcpy(a.p, pageable.get(), n, cudaMemcpyHostToDevice)); }), -1,
           d0);
      emit("d2h_pageable", n,
           host_timed(reps, [&] { MB_CUDA(cudaMemcpy(pageable.get(), a.p, n, cudaMemcpyDeviceToHost)); }), d0,
           -1);
    }
    f.flush();
    MB_CUDA(cudaStreamDestroy(s));
  }

  int ngpu = 0;
  MB_CUDA(cudaGetDeviceCount(&ngpu));
  // Peer-to-peer: every ordered pair (quick: device 0 -> 1 only). "p2p" uses peer access when the
  // pair supports it (otherwise the driver stages through host memory: op "p2p_staged").
  for (int i = 0; i < ngpu; ++i) {
    for (int j = 0; j < ngpu; ++j) {
      if (i == j || (opt.quick && !(i == 0 && j == 1))) continue;
      int can = 0;
      MB_CUDA(cudaDeviceCanAccessPeer(&can, i, j));
      if (can) {
        MB_CUDA(cudaSetDevice(i));
        const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
        if (e != cudaSuccess && e != cudaErrorPeerAccessAlreadyEnabled) MB_CUDA(e);
        cudaGetLastError();
        MB_CUDA(cudaSetDevice(j));
        const cudaError_t e2 = cudaDeviceEnablePeerAccess(i, 0);
        if (e2 != cudaSuccess && e2 != cudaErrorPeerAccessAlreadyEnabled) MB_CUDA(e2);
        cudaGetLastError();
      }
      Dev si(i, max_b), dj(j, max_b), sj(j, max_b), di(i, max_b);
      MB_CUDA(cudaSetDevice(i));
      cudaStream_t s{}, s2{};
      MB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      MB_CUDA(cudaSetDevice(j));
      MB_CUDA(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
      MB_CUDA(cudaSetDevice(i));
      cudaEvent_t join_i{}, join_j{};  // an event is recorded on a stream of its own device
      MB_CUDA(cudaEventCreateWithFlags(&join_i, cudaEventDisableTiming));
      MB_CUDA(cudaSetDevice(j));
      MB_CUDA(cudaEventCreateWithFlags(&join_j, cudaEventDisableTiming));
      MB_CUDA(cudaSetDevice(i));
      for (std::size_t n : sizes) {
        const double one =
            measure_ms(s, reps, [&] { MB_CUDA(cudaMemcpyPeerAsync(dj.p, j, si.p, i, n, s)); }) * 1e-3;
        emit(can ? "p2p" : "p2p_staged", n, one, i, j);
        // Bidirectional: i->j on s and j->i on s2 at once; bytes counts both directions.
        const double both = measure_ms(s, reps,
                                       [&] {
                                         MB_CUDA(cudaEventRecord(join_i, s));
                                         MB_CUDA(cudaStreamWaitEvent(s2, join_i, 0));
                                         MB_CUDA(cudaMemcpyPeerAsync(dj.p, j, si.p, i, n, s));
                                         MB_CUDA(cudaMemcpyPeerAsync(di.p, i, sj.p, j, n, s2));
                                         MB_CUDA(cudaEventRecord(join_j, s2));
                                         MB_CUDA(cudaStreamWaitEvent(s, join_j, 0));
                                       }) *
                            1e-3;
        emit(can ? "p2p_bidir" : "p2p_bidir_staged", 2 * n, both, i, j);
      }
      f.flush();
      MB_CUDA(cudaEventDestroy(join_i));
      MB_CUDA(cudaStreamDestroy(s));
      MB_CUDA(cudaSetDevice(j));
      MB_CUDA(cudaEventDestroy(join_j));
      MB_CUDA(cudaStreamDestroy(s2));
    }
  }
  MB_CUDA(cudaSetDevice(d0));
  std::cout << "wrote " << path << " (" << rows << " rows)\n";
  return rows;
}

}  // namespace mb
