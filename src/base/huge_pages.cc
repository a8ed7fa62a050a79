// move_to_huge_pages: a run of whole 2 MiB blocks of a file mapping is copied into anonymous
// memory that asked for huge pages (madvise before the first touch), made read-only, and put in
// place of the blocks with mremap: one call replaces the file's pages by the copy, so a reader of
// the range sees the same bytes before and after.
#include "base/huge_pages.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "base/log.h"

namespace minimax {
namespace {

constexpr uint64_t kMaxRunBytes = uint64_t{64} << 20;  // anonymous memory in flight per move

uintptr_t align_down(uintptr_t a) { return a / kHugePageBytes * kHugePageBytes; }
uintptr_t align_up(uintptr_t a) { return align_down(a + kHugePageBytes - 1); }

struct Interval {
  uintptr_t begin, end;
};

// The blocks of `region` (whole ones only) that some range touches, merged into runs.
std::vector<Interval> blocks_to_move(std::span<const std::span<const uint8_t>> ranges,
                                     std::span<const uint8_t> region) {
  const auto rb = reinterpret_cast<uintptr_t>(region.data());
  const uintptr_t first = align_up(rb), last = align_down(rb + region.size());
  std::vector<Interval> out;
  if (first >= last) return out;
  for (const auto& r : ranges) {
    const auto sb = reinterpret_cast<uintptr_t>(r.data());
    const uintptr_t se = sb + r.size();
    if (r.empty() || se <= first || sb >= last) continue;
    out.push_back({std::max(align_down(sb), first), std::min(align_up(se), last)});
  }
  std::sort(out.begin(), out.end(), [](Interval a, Interval b) { return a.begin < b.begin; });
  std::vector<Interval> merged;
  for (const Interval& i : out) {
    if (!merged.empty() && i.begin <= merged.back().end)
      merged.back().end = std::max(merged.back().end, i.end);
    else
      merged.push_back(i);
  }
  return merged;
}

// Fresh anonymous memory for `bytes` at a 2 MiB-aligned address (huge pages need one), asked for
// huge pages before its first touch: `raw` is the whole mapping (bytes + one block), null if the
// mapping failed (errno says why).
struct AlignedAnonymous {
  void* raw = nullptr;
  uintptr_t data = 0;
};
AlignedAnonymous map_aligned_anonymous(uint64_t bytes) {
  void* raw = ::mmap(nullptr, bytes + kHugePageBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return {};
  const uintptr_t data = align_up(reinterpret_cast<uintptr_t>(raw));
  // Advice: without it the memory is in small pages, still right.
  ::madvise(reinterpret_cast<void*>(data), bytes, MADV_HUGEPAGE);
  return {raw, data};
}

// [target, target + bytes) (whole blocks) into fresh anonymous memory at the same address.
bool move_run(uintptr_t target, uint64_t bytes) {
  const AlignedAnonymous mem = map_aligned_anonymous(bytes);
  if (mem.raw == nullptr) {
    log_warn("weights in huge pages: cannot map {} bytes: {}", bytes, std::strerror(errno));
    return false;
  }
  void* raw = mem.raw;
  const auto r = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t copy = mem.data;
  auto* p = reinterpret_cast<void*>(copy);
  // The file's pages in one sequential read rather than a fault at a time (advice).
  ::madvise(reinterpret_cast<void*>(target), bytes, MADV_WILLNEED);
  std::memcpy(p, reinterpret_cast<const void*>(target), bytes);
  if (::mprotect(p, bytes, PROT_READ) != 0 ||
      ::mremap(p, bytes, bytes, MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(target)) ==
          MAP_FAILED) {
    log_warn("weights in huge pages: cannot move {} bytes into place: {}", bytes,
             std::strerror(errno));
    ::munmap(raw, bytes + kHugePageBytes);
    return false;
  }
  // What is left of the reservation: before the aligned copy and after it.
  if (copy > r) ::munmap(raw, copy - r);
  const uintptr_t tail = r + bytes + kHugePageBytes - (copy + bytes);
  if (tail > 0) ::munmap(reinterpret_cast<void*>(copy + bytes), tail);
  return true;
}

}  // namespace

HugePageBuffer::HugePageBuffer(size_t bytes) : mapped_(bytes + kHugePageBytes), size_(bytes) {
  const AlignedAnonymous mem = map_aligned_anonymous(bytes);
  if (mem.raw == nullptr) fail("cannot map {} bytes: {}", mapped_, std::strerror(errno));
  mapping_ = mem.raw;
  data_ = reinterpret_cast<uint8_t*>(mem.data);
}

HugePageBuffer::~HugePageBuffer() { ::munmap(mapping_, mapped_); }

bool huge_pages_enabled_in(const std::string& enabled_text) {
  return enabled_text.find("[always]") != std::string::npos ||
         enabled_text.find("[madvise]") != std::string::npos;
}

bool transparent_huge_pages_available() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(in, text);
  return huge_pages_enabled_in(text);
}

uint64_t anonymous_huge_page_bytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("AnonHugePages:", 0) != 0) continue;
    std::istringstream fields(line.substr(14));
    uint64_t kib = 0;
    fields >> kib;
    return kib * 1024;
  }
  return 0;
}

uint64_t move_to_huge_pages(std::span<const std::span<const uint8_t>> ranges,
                            std::span<const std::span<const uint8_t>> regions,
                            const std::function<void(uint64_t)>& progress) {
  uint64_t moved = 0;
  for (const auto& region : regions)
    for (const Interval& run : blocks_to_move(ranges, region))
      for (uintptr_t at = run.begin; at < run.end; at += kMaxRunBytes) {
        const uint64_t bytes = std::min<uint64_t>(kMaxRunBytes, run.end - at);
        if (!move_run(at, bytes)) return moved;
        moved += bytes;
        if (progress) progress(bytes);
      }
  return moved;
}

}  // namespace minimax
