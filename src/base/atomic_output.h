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
  // Writes `bytes` at `offset`, for files filled out of order (the sequential write() position
  // does not move).
  void write_at(uint64_t offset, std::span<const uint8_t> bytes);
  // Asks the kernel to start writing what write_at has written so far to disk, without waiting
  // for it, so that commit()'s fsync overlaps the work still to come instead of following it. It
  // may block while the file system submits the writes; it may run on another thread than
  // write_at.
  void start_writeback();
  uint64_t bytes_written() const { return written_; }  // the file's size so far
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

// fsync(2) of a file or directory by path; Error naming the path on failure.
void fsync_path(const std::string& path);

// Reads a whole file into a string; Error naming the path on failure.
std::string read_file(const std::string& path);

}  // namespace minimax

namespace minimax {

// A directory built under `final_path + ".partial"` and renamed into place by commit(). An existing
// final directory is refused unless `force` (then it is replaced at commit). Destroyed without
// commit(), the partial directory is removed, unless keep_partial() was called (resumable jobs);
// a process killed outright leaves the ".partial" directory, never the final name.
class AtomicDirectory {
 public:
  enum class Start { kFresh, kResume };
  AtomicDirectory(std::string final_path, bool force, Start start = Start::kFresh);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  const std::string& path() const { return partial_path_; }
  const std::string& final_path() const { return final_path_; }
  // True when a previous run's partial directory was found and kept (Start::kResume).
  bool resumed() const { return resumed_; }
  std::string file(const std::string& name) const { return partial_path_ + "/" + name; }
  void keep_partial() { keep_ = true; }
  // Renames the partial directory to the final name.
  void commit();
  // commit(), durable against a power loss: first fsyncs every regular file in the partial
  // directory (cheap for files already fsynced) and the directory, so that the files' data and
  // names are on disk before it gets its final name, then the parent after the rename.
  void commit_durably();

 private:
  std::string final_path_, partial_path_;
  bool force_, resumed_ = false, keep_ = false, committed_ = false;
};

}  // namespace minimax
