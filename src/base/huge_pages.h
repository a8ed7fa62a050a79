// Weights in transparent huge pages. A checkpoint's mapping is backed by the page cache in 4 KiB
// pages, and a decode step reads its experts from all over it: with a TLB miss every 4 KiB, one
// core of the Intel Xeon with AMX streamed FP8 experts from a file mapping at 10.6-10.9 GB/s and
// from anonymous memory in 2 MiB pages at 12.8-13.9 (docs/runtime.md "Weight pages"). The ranges a
// model reads are moved, at load, into anonymous memory that the kernel backs with huge pages, at
// the same addresses, so every view into the mapping stays valid.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace minimax {

inline constexpr uint64_t kHugePageBytes = uint64_t{2} << 20;

// Whether this kernel gives a process transparent huge pages when it asks (madvise) for them:
// /sys/kernel/mm/transparent_hugepage/enabled says [always] or [madvise].
bool transparent_huge_pages_available();
// That file's text, parsed (for tests): the bracketed choice is "always" or "madvise".
bool huge_pages_enabled_in(const std::string& enabled_text);

// Bytes of this process's anonymous memory backed by huge pages (/proc/self/smaps_rollup
// AnonHugePages); 0 when unknown.
uint64_t anonymous_huge_page_bytes();

// Zero-filled anonymous memory that asks for huge pages (2 MiB-aligned, MADV_HUGEPAGE before the
// first touch; advice: the kernel may give small pages). The bandwidth test reads one, so that the
// limit it measures is memory's, not the TLB's, as the weights read in huge pages.
class HugePageBuffer {
 public:
  explicit HugePageBuffer(size_t bytes);  // Error when the memory cannot be mapped
  ~HugePageBuffer();
  HugePageBuffer(const HugePageBuffer&) = delete;
  HugePageBuffer& operator=(const HugePageBuffer&) = delete;
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  void* mapping_ = nullptr;
  size_t mapped_ = 0, size_ = 0;
  uint8_t* data_ = nullptr;
};

// Moves the parts of `ranges` that lie in `regions` (read-only private file mappings) into
// anonymous memory asking for huge pages, at the same addresses: every 2 MiB-aligned block of a
// region that a range touches and that the region holds whole, a run of such blocks at a time
// (at most 64 MiB in flight). The bytes stay the same and read-only; what a range has outside
// such blocks (a region's first and last partial blocks) stays mapped from the file. `progress`
// (optional) is told the bytes of each run as it is moved. Returns the bytes moved; stops at the
// first system call that fails (logging it), leaving what was not moved mapped as before.
// The moved memory is this process's own: MADV_DONTNEED on it would zero it, not re-read the file
// (MappedFile::release must not be used on a file with moved ranges).
uint64_t move_to_huge_pages(std::span<const std::span<const uint8_t>> ranges,
                            std::span<const std::span<const uint8_t>> regions,
                            const std::function<void(uint64_t)>& progress = {});

}  // namespace minimax
