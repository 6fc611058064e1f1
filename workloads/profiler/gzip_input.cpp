// The trace file's bytes, inflated when it is gzip (see kineto_trace.hpp): read whole and checked
// (workloads/base/file_input.hpp), then inflated in memory by zlib with the inflated size from the
// gzip trailer reserved up front, plus simdjson's padding.
#include <simdjson.h>
#include <zlib.h>

#include <string>

#include "workloads/base/file_input.hpp"
#include "workloads/base/input_error.hpp"
#include "workloads/profiler/kineto_trace.hpp"

namespace fleetsim {

bool is_gzip(std::string_view bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string inflate_gzip(std::string_view bytes, const std::string& path) {
  // The trailer's inflated size (mod 2^32) of the last member: a hint for the reservation.
  std::size_t hint = 0;
  if (bytes.size() >= 4) {
    const auto* t = reinterpret_cast<const unsigned char*>(bytes.data() + bytes.size() - 4);
    hint = std::size_t{t[0]} | std::size_t{t[1]} << 8 | std::size_t{t[2]} << 16 | std::size_t{t[3]} << 24;
  }
  // The trailer of a cut or corrupt file holds any number: deflate inflates at most 1032:1.
  hint = std::min(hint, bytes.size() * 1032);
  std::string out;
  out.reserve(hint + simdjson::SIMDJSON_PADDING);
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) throw InputError(path, 0, "", "cannot start zlib");
  std::string chunk(std::size_t{1} << 20, '\0');
  std::size_t at = 0;
  int rc = Z_OK;
  while (true) {
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + at));
    z.avail_in = static_cast<uInt>(std::min<std::size_t>(bytes.size() - at, 1u << 30));
    const std::size_t offered = z.avail_in;
    z.next_out = reinterpret_cast<Bytef*>(chunk.data());
    z.avail_out = static_cast<uInt>(chunk.size());
    rc = inflate(&z, Z_NO_FLUSH);
    at += offered - z.avail_in;
    out.append(chunk.data(), chunk.size() - z.avail_out);
    if (rc == Z_STREAM_END) {
      // Another gzip member may follow (concatenated files); anything else after one is ignored.
      if (!is_gzip(bytes.substr(at))) break;
      inflateReset(&z);
      continue;
    }
    if (rc == Z_OK) continue;
    if (rc == Z_BUF_ERROR && at == bytes.size()) {
      inflateEnd(&z);
      throw InputError(path, 0, "", "truncated gzip file (unexpected end of file)");
    }
    const std::string msg = z.msg != nullptr ? z.msg : "error " + std::to_string(rc);
    inflateEnd(&z);
    throw InputError(path, 0, "", "corrupt gzip data: " + msg);
  }
  inflateEnd(&z);
  return out;
}

std::string read_maybe_gzip(const std::string& path) {
  std::string bytes = read_input_file(path);
  if (!is_gzip(bytes)) return bytes;
  return inflate_gzip(bytes, path);
}

}  // namespace fleetsim
