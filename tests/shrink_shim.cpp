// LD_PRELOAD shim for tests/integration/test_truncated_input.cpp: a file that shrinks while the program
// reads it. With FLEETSIM_SHRINK_FILE=<path> (and FLEETSIM_SHRINK_TO=<bytes>, default 0), the first time
// the program reads that file with read(2), it gets at most the first FLEETSIM_SHRINK_TO bytes and the
// file is cut to that size right after; the first time it maps that file, the file is cut right after
// the mapping (pages of a mapping past the file's new end raise SIGBUS when touched). Not built with the
// sanitizers: it only forwards to the real calls.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<bool> g_done{false};

// Whether `fd` is the file named by FLEETSIM_SHRINK_FILE (compared as resolved paths).
bool is_target(int fd) {
  const char* want = std::getenv("FLEETSIM_SHRINK_FILE");
  if (want == nullptr || fd < 0 || g_done.load()) return false;
  char link[64];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char have[PATH_MAX];
  const ssize_t n = ::readlink(link, have, sizeof have - 1);
  if (n <= 0) return false;
  have[n] = '\0';
  char resolved[PATH_MAX];
  if (::realpath(want, resolved) == nullptr) return false;
  return std::strcmp(have, resolved) == 0;
}

off_t keep_bytes() {
  const char* v = std::getenv("FLEETSIM_SHRINK_TO");
  return v == nullptr ? 0 : static_cast<off_t>(std::atoll(v));
}

void shrink() {
  g_done.store(true);
  if (::truncate(std::getenv("FLEETSIM_SHRINK_FILE"), keep_bytes()) != 0) std::abort();
}

template <typename F>
F real(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" ssize_t read(int fd, void* buf, size_t count) {
  using Read = ssize_t (*)(int, void*, size_t);
  static const Read next = real<Read>("read");
  if (!is_target(fd)) return next(fd, buf, count);
  const auto keep = static_cast<size_t>(keep_bytes());
  const ssize_t got = next(fd, buf, count < keep ? count : keep);
  shrink();
  return got;
}

extern "C" void* mmap(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  using Mmap = void* (*)(void*, size_t, int, int, int, off_t);
  static const Mmap next = real<Mmap>("mmap");
  void* p = next(addr, length, prot, flags, fd, offset);
  if (p != MAP_FAILED && is_target(fd)) shrink();
  return p;
}

extern "C" void* mmap64(void* addr, size_t length, int prot, int flags, int fd, off_t offset) {
  return mmap(addr, length, prot, flags, fd, offset);
}
