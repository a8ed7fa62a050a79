// AtomicDirectory: the final name appears only at commit (plain or durable), an uncommitted one
// leaves nothing, and fsync_path names the path it cannot sync.
#include "base/atomic_output.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "base/error.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("minimax_atomic_output_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(AtomicDirectory, CommitDurablyMovesTheFilesIntoPlace) {
  const fs::path dir = scratch("durable");
  const std::string final_path = (dir / "out").string();
  {
    AtomicDirectory out(final_path, /*force=*/false);
    write_file_atomic(out.file("a.json"), "{}\n");
    fs::create_directory(out.file("sub"));  // not a regular file: skipped by the fsync loop
    EXPECT_FALSE(fs::exists(final_path));
    out.commit_durably();
  }
  EXPECT_EQ(read_file(final_path + "/a.json"), "{}\n");
  EXPECT_TRUE(fs::is_directory(final_path + "/sub"));
  EXPECT_FALSE(fs::exists(final_path + ".partial"));
  fs::remove_all(dir);
}

TEST(AtomicDirectory, UncommittedLeavesNothing) {
  const fs::path dir = scratch("uncommitted");
  const std::string final_path = (dir / "out").string();
  {
    AtomicDirectory out(final_path, /*force=*/false);
    write_file_atomic(out.file("a.json"), "{}\n");
  }
  EXPECT_FALSE(fs::exists(final_path));
  EXPECT_FALSE(fs::exists(final_path + ".partial"));
  fs::remove_all(dir);
}

TEST(FsyncPath, NamesAMissingPath) {
  const std::string missing = (scratch("missing") / "nothing_here").string();
  try {
    fsync_path(missing);
    FAIL() << "no error for a missing path";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  fs::remove_all(fs::path(missing).parent_path());
}

}  // namespace
}  // namespace minimax
