// Streams the bytes of one output shard of the converter in bounded pieces: routed experts and
// other MXFP4 weights are re-encoded row chunk by row chunk on the thread pool, every chunk is
// checked against its source (float64 values, see mxfp4_to_fp8_exact.h), and the pieces go to a
// sink (the output file, or a byte comparison with a shard kept from an interrupted run) at their
// offsets in the file. An FP8 expert is read once: its rows' scales are found while they are
// encoded, and its F32 scale tensor (which the file lays out before the weights) is written when
// the weight is done. Source pages are dropped from the process once used, so memory stays
// bounded by 2 x threads x pieces_per_thread x piece_bytes of buffers (one batch produced while
// the previous one is written) plus 2 bytes per routed-expert row of the shard, whatever the
// checkpoint size.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "base/mapped_file.h"
#include "base/progress.h"
#include "base/thread_pool.h"
#include "checkpoint/convert_plan.h"
#include "checkpoint/convert_summary.h"

namespace minimax {

class ShardSink {
 public:
  virtual ~ShardSink() = default;
  // Bytes of `tensor` at `offset` of the shard's data (after the header). One call at a time
  // (from a writer thread, or the caller's); every byte of the shard's data exactly once, FP8 and
  // BF16 weights and copies in file order, the F32 scale tensors of FP8 weights after them.
  virtual void put(const TensorDecl& tensor, uint64_t offset, std::span<const uint8_t> bytes) = 0;
};

struct StreamLimits {
  size_t piece_bytes = size_t{1} << 20;  // output bytes per work piece (at least one row)
  size_t pieces_per_thread = 4;          // pieces in flight per thread
};

// Streams every tensor of `shard` in `order` (safetensors_write_order of its decls) into `sink`,
// adding per-row counters to `stats` and output bytes to `progress` (may be null). Errors name the
// source file, tensor, row (and column): a 0xFF scale, a row that cannot be exact, a verification
// difference.
void stream_shard(const OutputShard& shard, const std::vector<TensorDecl>& order, Fp8Target target,
                  ThreadPool& pool, const StreamLimits& limits, ShardSink& sink, RowStats& stats,
                  Progress* progress);

// Drops [offset, offset + length) of a tensor's bytes from this process, widened by a margin
// behind (and, for the tensor's last bytes, ahead) that catches pages mapped by fault-around
// (pages still needed later are simply faulted in again from the page cache).
void release_tensor_bytes(const TensorRef& ref, uint64_t offset, uint64_t length);
// Same for a range of a mapped file.
void release_file_bytes(const MappedFile& file, uint64_t offset, uint64_t length);

}  // namespace minimax
