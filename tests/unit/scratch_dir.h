// A directory under the system's temp directory for one test's files: its name carries the
// process id and an instance number, because ctest runs the tests of one binary as parallel
// processes and one test may want several. Removed with its contents when the object goes.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <mutex>
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

// One directory for a whole test program, for fixtures built once per process and shared by its
// tests (tiny checkpoints): gtest's temp directory / `prefix`_pid, removed when the program ends.
// The first call's prefix names it.
inline const std::string& process_scratch_root(const std::string& prefix) {
  struct Cleanup : ::testing::Environment {
    explicit Cleanup(std::string root) : root(std::move(root)) {}
    void TearDown() override {
      std::error_code ignored;
      std::filesystem::remove_all(root, ignored);
    }
    std::string root;
  };
  static const std::string root = [&] {
    std::string r = ::testing::TempDir() + prefix + "_" + std::to_string(::getpid());
    std::filesystem::remove_all(r);
    std::filesystem::create_directories(r);
    ::testing::AddGlobalTestEnvironment(new Cleanup(r));
    return r;
  }();
  return root;
}

// A fresh path (not created) under process_scratch_root(prefix), unique within the process.
inline std::string process_scratch_path(const std::string& prefix, const std::string& name) {
  static std::mutex mutex;
  static int counter = 0;
  std::lock_guard<std::mutex> lock(mutex);
  return process_scratch_root(prefix) + "/" + name + "_" + std::to_string(counter++);
}

}  // namespace minimax
