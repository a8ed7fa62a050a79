// MappedFile: mmap of a whole file, read-only.
#include "base/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

#include "base/error.h"

namespace minimax {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open: {}", path, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    fail("{}: cannot stat: {}", path, std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("{}: not a regular file", path);
  }
  size_ = static_cast<size_t>(st.st_size);
  if (size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      int err = errno;
      ::close(fd);
      fail("{}: cannot mmap {} bytes: {}", path, size_, std::strerror(err));
    }
    data_ = static_cast<const uint8_t*>(p);
  }
  ::close(fd);
}

MappedFile::~MappedFile() {
  if (data_ != nullptr) ::munmap(const_cast<uint8_t*>(data_), size_);
}

void touch_pages(const uint8_t* data, size_t bytes) {
  if (data == nullptr || bytes == 0) return;
  const auto page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data) / page * page;
  // Advice only: memory that is not a file mapping (converted weights) just ignores it.
  ::madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(data) + bytes - begin,
            MADV_WILLNEED);
  uint8_t sum = 0;
  for (size_t i = 0; i < bytes; i += page) sum += *static_cast<const volatile uint8_t*>(data + i);
  sum += *static_cast<const volatile uint8_t*>(data + bytes - 1);
  static std::atomic<uint8_t> sink;  // a use of the reads' result
  sink.store(sum, std::memory_order_relaxed);
}

void MappedFile::release(size_t offset, size_t length) const {
  if (data_ == nullptr || length == 0) return;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  size_t begin = (offset + page - 1) / page * page;  // only whole pages inside the range
  size_t end = (offset + length) / page * page;
  if (end > size_) end = size_ / page * page;
  if (end > begin) {
    ::madvise(const_cast<uint8_t*>(data_) + begin, end - begin, MADV_DONTNEED);
  }
}

}  // namespace minimax
