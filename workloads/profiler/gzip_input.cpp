// The trace file's bytes, inflated when it is gzip (see kineto_trace.hpp): zlib, with the inflated
// size from the gzip trailer reserved up front, plus simdjson's padding.
#include <simdjson.h>
#include <zlib.h>

#include <fstream>
#include <string>
#include <vector>

#include "workloads/base/input_error.hpp"
#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim {

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
  // The gzip trailer holds the inflated size (mod 2^32): reserve it, plus simdjson's padding.
  f.seekg(-4, std::ios::end);
  unsigned char isize[4] = {0, 0, 0, 0};
  f.read(reinterpret_cast<char*>(isize), 4);
  const std::size_t hint = f ? std::size_t{isize[0]} | std::size_t{isize[1]} << 8 |
                                   std::size_t{isize[2]} << 16 | std::size_t{isize[3]} << 24
                             : 0;
  f.close();
  gzFile g = gzopen(path.c_str(), "rb");
  if (g == nullptr) throw InputError(path, 0, "", "cannot open the gzip trace file");
  gzbuffer(g, 1 << 20);
  std::string out;
  out.reserve(hint + simdjson::SIMDJSON_PADDING);
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

}  // namespace fleetsim
