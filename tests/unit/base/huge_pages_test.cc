// move_to_huge_pages: the whole 2 MiB blocks of a file mapping that the ranges touch become
// anonymous memory at the same addresses with the same bytes; the rest, and ranges outside every
// region, stay as they were. Whether the kernel backs the copy with huge pages is its choice
// (printed, not asserted: compaction may fail on a fragmented machine).
#include "base/huge_pages.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/mapped_file.h"

namespace minimax {
namespace {

namespace fs = std::filesystem;

// Whether the page at `address` is mapped from a file (its /proc/self/maps line names a path).
bool file_backed(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream fields(line);
    std::string range, perms, offset, device, inode, path;
    fields >> range >> perms >> offset >> device >> inode >> path;
    const size_t dash = range.find('-');
    const uintptr_t begin = std::stoull(range.substr(0, dash), nullptr, 16);
    const uintptr_t end = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (a >= begin && a < end) return !path.empty() && path[0] == '/';
  }
  ADD_FAILURE() << "address not mapped";
  return false;
}

struct PatternFile {
  fs::path path;
  std::vector<uint8_t> bytes;
  explicit PatternFile(size_t size) {
    path = fs::temp_directory_path() / ("minimax_huge_pages_" + std::to_string(::getpid()));
    bytes.resize(size);
    for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(size));
  }
  ~PatternFile() { fs::remove(path); }
};

uintptr_t block_of(const uint8_t* p) {
  return reinterpret_cast<uintptr_t>(p) / kHugePageBytes * kHugePageBytes;
}

TEST(HugePages, EnabledOnlyForAlwaysOrMadvise) {
  EXPECT_TRUE(huge_pages_enabled_in("[always] madvise never"));
  EXPECT_TRUE(huge_pages_enabled_in("always [madvise] never"));
  EXPECT_FALSE(huge_pages_enabled_in("always madvise [never]"));
  EXPECT_FALSE(huge_pages_enabled_in(""));
}

TEST(HugePages, MovedBlocksKeepTheirBytesAndAddresses) {
  const PatternFile file(9 * kHugePageBytes + 12345);
  MappedFile mapped(file.path.string());
  const uint8_t* base = mapped.data();
  const std::span<const uint8_t> region = mapped.bytes();
  // A range inside the file from 1 MiB to 7.5 MiB, one of 100 bytes near its end, one in heap
  // memory (not in any region) and an empty one.
  std::vector<uint8_t> heap(4 * kHugePageBytes, 7);
  const std::vector<std::span<const uint8_t>> ranges = {
      {base + (1 << 20), (13 << 19) /* 6.5 MiB */},
      {base + region.size() - 200, 100},
      {heap.data(), heap.size()},
      {base + 3 * kHugePageBytes, 0}};
  const std::vector<std::span<const uint8_t>> regions = {region};
  uint64_t reported = 0;
  const uint64_t moved =
      move_to_huge_pages(ranges, regions, [&](uint64_t bytes) { reported += bytes; });
  EXPECT_EQ(reported, moved);
  // Expected: the whole blocks of the region that the first range touches (the second lies in
  // the region's last, partial block).
  const uintptr_t first_whole = block_of(base + kHugePageBytes - 1);
  const uintptr_t region_end = reinterpret_cast<uintptr_t>(base) + region.size();
  const uintptr_t last_whole = region_end / kHugePageBytes * kHugePageBytes;
  const uintptr_t from = std::max(first_whole, block_of(base + (1 << 20)));
  const uintptr_t to = std::min(last_whole, block_of(base + (1 << 20) + (13 << 19) - 1) +
                                                static_cast<uintptr_t>(kHugePageBytes));
  EXPECT_EQ(moved, to - from);
  ASSERT_GT(moved, 0u);
  // Same addresses, same bytes, everywhere in the file.
  ASSERT_EQ(mapped.data(), base);
  EXPECT_EQ(0, std::memcmp(base, file.bytes.data(), file.bytes.size()));
  EXPECT_TRUE(std::all_of(heap.begin(), heap.end(), [](uint8_t b) { return b == 7; }));
  // The moved blocks are anonymous now; the blocks after them (no range touches those up to the
  // last, partial one) and the region's partial end are still the file's, and so is its start
  // where the mapping does not begin on a block.
  EXPECT_FALSE(file_backed(reinterpret_cast<const void*>(from)));
  EXPECT_FALSE(file_backed(reinterpret_cast<const void*>(to - 1)));
  ASSERT_LT(to, region_end);
  EXPECT_TRUE(file_backed(reinterpret_cast<const void*>(to)));
  EXPECT_TRUE(file_backed(base + region.size() - 1));
  if (from > reinterpret_cast<uintptr_t>(base)) {
    EXPECT_TRUE(file_backed(base));
  }
  std::printf("[ measured ] moved %.1f MiB; AnonHugePages %.1f MiB (transparent huge pages %s)\n",
              moved / 1048576.0, anonymous_huge_page_bytes() / 1048576.0,
              transparent_huge_pages_available() ? "available" : "off");
}

TEST(HugePages, NothingMovedOutsideTheRegions) {
  const PatternFile file(3 * kHugePageBytes);
  MappedFile mapped(file.path.string());
  std::vector<uint8_t> heap(3 * kHugePageBytes, 1);
  const std::vector<std::span<const uint8_t>> ranges = {{heap.data(), heap.size()}};
  const std::vector<std::span<const uint8_t>> regions = {mapped.bytes()};
  EXPECT_EQ(move_to_huge_pages(ranges, regions), 0u);
  EXPECT_TRUE(file_backed(mapped.data() + kHugePageBytes));
}

TEST(HugePages, BufferIsZeroedAndAligned) {
  HugePageBuffer buffer(3 * kHugePageBytes + 5);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer.data()) % kHugePageBytes, 0u);
  EXPECT_EQ(buffer.size(), 3 * kHugePageBytes + 5);
  for (size_t i = 0; i < buffer.size(); i += 4096) ASSERT_EQ(buffer.data()[i], 0);
  buffer.data()[buffer.size() - 1] = 9;  // writable to its last byte
  EXPECT_EQ(buffer.data()[buffer.size() - 1], 9);
}

}  // namespace
}  // namespace minimax
