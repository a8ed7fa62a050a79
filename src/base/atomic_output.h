// Outputs that appear under their final name only when complete: everything is written to a
// temporary sibling and renamed at commit(). An object destroyed without commit() removes its
// temporary, so an interrupted run never leaves a file or directory that looks finished.
#pragma once

#include <cstdio>
#include <span>
#include <string>

namespace minimax {

// A file written sequentially under `final_path + ".tmp"`.
class AtomicFile {
 public:
  explicit AtomicFile(std::string final_path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const uint8_t> bytes);
  void write(const std::string& text);
  uint64_t bytes_written() const { return written_; }
  const std::string& temp_path() const { return temp_path_; }
  const std::string& final_path() const { return final_path_; }
  // Flushes, fsyncs and renames to the final name.
  void commit();

 private:
  std::string final_path_;
  std::string temp_path_;
  std::FILE* file_ = nullptr;
  uint64_t written_ = 0;
  bool committed_ = false;
};

// Writes `text` to `path` atomically.
void write_file_atomic(const std::string& path, const std::string& text);

// Reads a whole file into a string; Error naming the path on failure.
std::string read_file(const std::string& path);

}  // namespace minimax
