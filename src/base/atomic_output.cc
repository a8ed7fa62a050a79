// AtomicFile: write to a temporary name, rename when complete.
#include "base/atomic_output.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"

namespace minimax {

AtomicFile::AtomicFile(std::string final_path)
    : final_path_(std::move(final_path)), temp_path_(final_path_ + ".tmp") {
  file_ = std::fopen(temp_path_.c_str(), "wb");
  if (file_ == nullptr) fail("{}: cannot create: {}", temp_path_, std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (file_ != nullptr) std::fclose(file_);
  if (!committed_) std::remove(temp_path_.c_str());
}

void AtomicFile::write(std::span<const uint8_t> bytes) {
  if (bytes.empty()) return;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_) != bytes.size()) {
    fail("{}: write failed after {} bytes: {}", temp_path_, written_, std::strerror(errno));
  }
  written_ += bytes.size();
}

void AtomicFile::write_at(uint64_t offset, std::span<const uint8_t> bytes) {
  if (std::fflush(file_) != 0) fail("{}: flush failed: {}", temp_path_, std::strerror(errno));
  const int fd = ::fileno(file_);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n =
        ::pwrite(fd, bytes.data() + done, bytes.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0)
      fail("{}: write of {} bytes at offset {} failed: {}", temp_path_, bytes.size(), offset,
           n < 0 ? std::strerror(errno) : "nothing written");
    done += static_cast<size_t>(n);
  }
  written_ = std::max<uint64_t>(written_, offset + bytes.size());
}

void AtomicFile::start_writeback() {
  // No fflush: write_at has flushed, and this may run on another thread than the writes.
  // Only a hint: file systems without it (tmpfs) need none.
  (void)::sync_file_range(::fileno(file_), 0, 0, SYNC_FILE_RANGE_WRITE);
}

void AtomicFile::write(const std::string& text) {
  write(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

void AtomicFile::commit() {
  if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) {
    fail("{}: flush failed: {}", temp_path_, std::strerror(errno));
  }
  std::fclose(file_);
  file_ = nullptr;
  if (std::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    fail("{}: cannot rename to {}: {}", temp_path_, final_path_, std::strerror(errno));
  }
  committed_ = true;
}

void write_file_atomic(const std::string& path, const std::string& text) {
  AtomicFile f(path);
  f.write(text);
  f.commit();
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("{}: cannot open to fsync: {}", path, std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) fail("{}: fsync failed: {}", path, std::strerror(err));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open: {}", path, std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) fail("{}: read failed", path);
  return ss.str();
}

}  // namespace minimax

namespace minimax {

namespace fs = std::filesystem;

AtomicDirectory::AtomicDirectory(std::string final_path, bool force, Start start)
    : final_path_(std::move(final_path)), force_(force) {
  while (final_path_.size() > 1 && final_path_.back() == '/') final_path_.pop_back();
  partial_path_ = final_path_ + ".partial";
  if (fs::exists(final_path_) && !force_) {
    fail("{}: output already exists (use --force to replace it)", final_path_);
  }
  if (start == Start::kResume && fs::is_directory(partial_path_)) {
    resumed_ = true;
  } else {
    fs::remove_all(partial_path_);
    std::error_code ec;
    fs::create_directories(partial_path_, ec);
    if (ec) fail("{}: cannot create: {}", partial_path_, ec.message());
  }
}

AtomicDirectory::~AtomicDirectory() {
  if (!committed_ && !keep_) {
    std::error_code ec;
    fs::remove_all(partial_path_, ec);
  }
}

void AtomicDirectory::commit() {
  std::error_code ec;
  if (fs::exists(final_path_)) {
    if (!force_) fail("{}: output appeared while writing; not replacing it", final_path_);
    fs::remove_all(final_path_, ec);
    if (ec) fail("{}: cannot remove the old output: {}", final_path_, ec.message());
  }
  fs::rename(partial_path_, final_path_, ec);
  if (ec) fail("{}: cannot rename to {}: {}", partial_path_, final_path_, ec.message());
  committed_ = true;
}

void AtomicDirectory::commit_durably() {
  for (const auto& entry : fs::directory_iterator(partial_path_))
    if (entry.is_regular_file()) fsync_path(entry.path().string());
  fsync_path(partial_path_);
  commit();
  fsync_path(fs::absolute(final_path_).parent_path().string());
}

}  // namespace minimax
