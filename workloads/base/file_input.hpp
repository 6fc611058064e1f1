#pragma once
// Whole-file input that is safe against a file changing under the reader: read(2) into our own
// buffer (never a memory map, where a file cut short while mapped raises SIGBUS), then checked. A file
// that ends before the size it had when opened, grows, or is rewritten while it is read is an
// InputError naming it ("changed while it was read"), never a crash or a silently shortened input.
#include <cstddef>
#include <memory>
#include <string>

namespace fleetsim {

/// A file's bytes followed by `padding` spare bytes (zeroed), e.g. simdjson's padding for a parse in
/// place.
struct PaddedBytes {
  std::unique_ptr<char[]> data;
  std::size_t size = 0;      ///< bytes of the file
  std::size_t capacity = 0;  ///< size + padding
};

/// Advise transparent huge pages for the whole 2 MiB pages inside [p, p + bytes) (a no-op where THP is
/// off): large buffers otherwise fault in 4 KiB pages one by one, which on virtual machines can cost
/// more than filling them.
void advise_huge(const void* p, std::size_t bytes);

/// The whole file as text. Throws InputError(path, 0, "", ...) when it cannot be opened or read, or
/// changed while it was read.
std::string read_input_file(const std::string& path);

/// The whole file with `padding` spare bytes after it; same checks as read_input_file.
PaddedBytes read_input_bytes(const std::string& path, std::size_t padding);

}  // namespace fleetsim
