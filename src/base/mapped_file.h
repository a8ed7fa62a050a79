// Read-only memory map of a whole file. Tensor views point into it; nothing is copied.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace minimax {

class MappedFile {
 public:
  // Maps `path` read-only. Throws Error naming the path if it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  std::span<const uint8_t> bytes() const { return {data_, size_}; }

  // Tells the kernel the range will not be read again soon (bounded page cache use when streaming).
  void release(size_t offset, size_t length) const;

 private:
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

// Asks the kernel to read [data, data + bytes) ahead, then reads one byte of each of its pages, so
// that later reads do not fault: the pages of a mapped file come in as one sequential read instead
// of one fault at a time in the order a first forward pass happens to use them.
void touch_pages(const uint8_t* data, size_t bytes);

}  // namespace minimax
