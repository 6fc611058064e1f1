// Whole-file input checked against a file changing while it is read (see file_input.hpp).
#include "workloads/base/file_input.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "workloads/base/input_error.hpp"

namespace fleetsim {
namespace {

constexpr const char* kChanged =
    "the file changed while it was read (is another program writing it?); read it again once it is "
    "complete";

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

// read(2) until `n` bytes or the end of the file; returns the bytes read.
std::size_t read_some(int fd, char* dst, std::size_t n, const std::string& path) {
  std::size_t got = 0;
  while (got < n) {
    const ssize_t r = ::read(fd, dst + got, std::min<std::size_t>(n - got, std::size_t{1} << 30));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) throw InputError(path, 0, "", std::string("cannot read the file: ") + std::strerror(errno));
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  return got;
}

bool same_version(const struct stat& a, const struct stat& b) {
  return a.st_size == b.st_size && a.st_mtim.tv_sec == b.st_mtim.tv_sec &&
         a.st_mtim.tv_nsec == b.st_mtim.tv_nsec && a.st_ino == b.st_ino;
}

// Opens `path`, asks `buffer_for(size)` where to put the bytes, reads them and checks that the file
// neither ended early, grew, nor changed meanwhile. Files of unknown size (pipes) are read to their end
// through `grow`.
void read_checked(const std::string& path, const std::function<char*(std::size_t)>& buffer_for) {
  const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0)
    throw InputError(path, 0, "", std::string("cannot open the file: ") + std::strerror(errno));
  struct stat before {};
  if (::fstat(fd.get(), &before) != 0)
    throw InputError(path, 0, "", std::string("cannot read the file: ") + std::strerror(errno));
  if (S_ISDIR(before.st_mode)) throw InputError(path, 0, "", "is a folder, expected a file");
  if (!S_ISREG(before.st_mode)) {  // a pipe or device: no size to check against
    std::vector<char> all;
    std::vector<char> chunk(std::size_t{1} << 16);
    for (std::size_t n; (n = read_some(fd.get(), chunk.data(), chunk.size(), path)) > 0;)
      all.insert(all.end(), chunk.begin(), chunk.begin() + static_cast<long>(n));
    char* dst = buffer_for(all.size());
    if (!all.empty()) std::memcpy(dst, all.data(), all.size());
    return;
  }
  const auto size = static_cast<std::size_t>(before.st_size);
  char* dst = buffer_for(size);
  const std::size_t got = read_some(fd.get(), dst, size, path);
  if (got < size)
    throw InputError(path, 0, "",
                     "the file ended after " + std::to_string(got) + " of its " + std::to_string(size) +
                         " bytes: " + kChanged);
  char extra = 0;
  struct stat after {};
  if (read_some(fd.get(), &extra, 1, path) != 0 || ::fstat(fd.get(), &after) != 0 ||
      !same_version(before, after))
    throw InputError(path, 0, "", kChanged);
}

}  // namespace

void advise_huge(const void* p, std::size_t bytes) {
  constexpr std::uintptr_t kHuge = 2u << 20;
  if (p == nullptr || bytes < 2 * kHuge) return;
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t lo = (a + kHuge - 1) & ~(kHuge - 1), hi = (a + bytes) & ~(kHuge - 1);
  if (hi > lo) madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_HUGEPAGE);
}

std::string read_input_file(const std::string& path) {
  std::string text;
  read_checked(path, [&](std::size_t n) {
    text.resize(n);
    return text.data();
  });
  return text;
}

PaddedBytes read_input_bytes(const std::string& path, std::size_t padding) {
  PaddedBytes out;
  read_checked(path, [&](std::size_t n) {
    out.size = n;
    out.capacity = n + padding;
    out.data = std::make_unique_for_overwrite<char[]>(out.capacity);
    advise_huge(out.data.get(), out.capacity);
    std::memset(out.data.get() + n, 0, padding);
    return out.data.get();
  });
  return out;
}

}  // namespace fleetsim
