// A directory under the system's temp directory for one test's files: its name carries the
// process id and an instance number, because ctest runs the tests of one binary as parallel
// processes and one test may want several. Removed with its contents when the object goes.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>

namespace minimax {

class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name = "minimax_test")
      : path_(std::filesystem::temp_directory_path() /
              (name + "_" + std::to_string(::getpid()) + "_" + std::to_string(next_++))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;  // a destructor must not throw; a leftover is only litter
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  static inline std::atomic<int> next_{0};
};

}  // namespace minimax
