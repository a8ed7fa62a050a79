// stream_shard: bounded, parallel, verified production of one output shard's bytes.
#include "checkpoint/convert_stream.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <map>
#include <set>

#include "base/error.h"

namespace minimax {
namespace {

// A page fault on a file mapping also maps neighbouring cached pages (fault-around, 64 KiB by
// default, or a whole large folio), including pages a piece has already released; a release
// therefore also covers this margin behind the piece (and ahead of a tensor's last piece).
// Releasing a page still needed later only costs a minor fault.
constexpr uint64_t kFaultAroundMargin = uint64_t{2} << 20;

uint64_t page_size() {
  static const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// The scale each row of an FP8 weight got, recorded while the rows are encoded, for its F32
// weight_scale tensor (which the file lays out before the weights, and which is written once the
// weight is done). Two bytes per row; the span only feeds the summary's histogram.
struct RowScales {
  std::vector<int8_t> exponent;  // S; -126..121 fits
  std::vector<int8_t> span;      // E_hi - E_lo, -1 for an all-zero row (for the histogram)
};

// A run of rows of one MXFP4 tensor and the buffer it is produced into.
struct Piece {
  const OutputTensor* tensor = nullptr;
  int64_t begin = 0, end = 0;  // rows
  std::vector<uint8_t>* buffer = nullptr;
  size_t bytes = 0;             // output bytes of the piece
  uint64_t offset = 0;          // of its first byte in the shard's data
  RowScales* scales = nullptr;  // where an FP8 weight records its rows' scales, or null
};

uint64_t output_row_bytes(const OutputTensor& t) {
  switch (t.kind) {
    case OutputKind::kFp8Weight:
      return static_cast<uint64_t>(t.mxfp4.cols);
    case OutputKind::kBf16Weight:
      return 2 * static_cast<uint64_t>(t.mxfp4.cols);
    case OutputKind::kFp8Scale:
      return 4;
    case OutputKind::kCopy:
      return 1;
  }
  return 1;
}

// Source bytes a row reads (packed elements), which bounds the pieces of the scale pass.
uint64_t source_row_bytes(const OutputTensor& t) { return static_cast<uint64_t>(t.mxfp4.cols / 2); }

// A row's exponent range, or an Error naming the scale tensor and block for a 0xFF scale.
Mxfp4RowRange scan_row_checked(const Mxfp4Source& src, int64_t row) {
  const int64_t cols = src.cols;
  const uint8_t* packed = src.weight.data().data() + row * (cols / 2);
  const uint8_t* scales = src.scales.data().data() + row * (cols / 32);
  Mxfp4RowRange range = scan_mxfp4_row(packed, scales, cols);
  if (range.nan_block >= 0) {
    fail(
        "{}: tensor '{}' row {} block {} (columns {}..{}): scale byte 0xFF is the e8m0 NaN; "
        "the block has no value to convert",
        src.scales.file->path(), src.scales.info->name, row, range.nan_block, range.nan_block * 32,
        range.nan_block * 32 + 31);
  }
  return range;
}

int row_scale_checked(const Mxfp4Source& src, int64_t row, const Mxfp4RowRange& range,
                      Fp8Target target) {
  std::optional<int> s = choose_row_scale(range, target);
  if (!s) {
    fail("{}: tensor '{}' row {} cannot be exact in FP8 with one power-of-two scale: {}",
         src.weight.file->path(), src.weight.info->name, row,
         describe_unrepresentable_row(range, target));
  }
  return *s;
}

int row_span(const Mxfp4RowRange& range) {
  return range.any_nonzero ? range.max_exponent - range.min_exponent : -1;
}

void produce_fp8_row(const Piece& piece, int64_t row, Fp8Target target, RowStats& stats) {
  const Mxfp4Source& src = piece.tensor->mxfp4;
  const int64_t cols = src.cols;
  const uint8_t* packed = src.weight.data().data() + row * (cols / 2);
  const uint8_t* scales = src.scales.data().data() + row * (cols / 32);
  const Mxfp4RowRange range = scan_row_checked(src, row);
  const int s = row_scale_checked(src, row, range, target);
  const int span = row_span(range);
  if (piece.scales != nullptr) {
    piece.scales->exponent[row] = static_cast<int8_t>(s);
    piece.scales->span[row] = static_cast<int8_t>(span);
  }
  uint8_t* out = piece.buffer->data() + (row - piece.begin) * cols;
  encode_row_fp8(packed, scales, cols, s, out);
  const int64_t col = first_fp8_mismatch(packed, scales, cols, s, out);
  if (col >= 0) {
    fail(
        "{}: verification failed: tensor '{}' row {} column {}: MXFP4 source {} but FP8 code "
        "0x{:02X} x 2^{} does not equal it",
        src.weight.file->path(), src.weight.info->name, row, col,
        mxfp4_element_f64(packed, scales, col), out[col], s);
  }
  stats.add_fp8_row(s, span, cols);
}

void produce_bf16_row(const Piece& piece, int64_t row, RowStats& stats) {
  const Mxfp4Source& src = piece.tensor->mxfp4;
  const int64_t cols = src.cols;
  const uint8_t* packed = src.weight.data().data() + row * (cols / 2);
  const uint8_t* scales = src.scales.data().data() + row * (cols / 32);
  const Mxfp4RowRange range = scan_row_checked(src, row);
  if (!row_fits_bf16(range)) {
    fail("{}: tensor '{}' row {}: element 2^{} (block {}) is beyond BF16's range",
         src.weight.file->path(), src.weight.info->name, row, range.max_exponent, range.max_block);
  }
  uint8_t* out = piece.buffer->data() + (row - piece.begin) * 2 * cols;
  encode_row_bf16(packed, scales, cols, out);
  const int64_t col = first_bf16_mismatch(packed, scales, cols, out);
  if (col >= 0) {
    fail(
        "{}: verification failed: tensor '{}' row {} column {}: MXFP4 source {} is not "
        "reproduced by its BF16 value",
        src.weight.file->path(), src.weight.info->name, row, col,
        mxfp4_element_f64(packed, scales, col));
  }
  stats.add_bf16_row(cols);
}

// The F32 bits of 2^s (s >= -126: a normal float), decoded again and checked.
uint32_t scale_bits(const OutputTensor& t, int64_t row, int s) {
  const uint32_t bits = static_cast<uint32_t>(s + 127) << 23;
  float written;
  std::memcpy(&written, &bits, 4);
  if (static_cast<double>(written) != std::ldexp(1.0, s))
    fail("convert: tensor '{}' row {}: the F32 scale 0x{:08X} is not 2^{}", t.decl.name, row, bits,
         s);
  return bits;
}

void produce_piece(const Piece& piece, Fp8Target target, RowStats& stats) {
  for (int64_t row = piece.begin; row < piece.end; ++row) {
    switch (piece.tensor->kind) {
      case OutputKind::kFp8Scale: {
        // Only for a scale tensor whose weight is in another shard.
        const Mxfp4RowRange range = scan_row_checked(piece.tensor->mxfp4, row);
        const uint32_t bits = scale_bits(
            *piece.tensor, row, row_scale_checked(piece.tensor->mxfp4, row, range, target));
        std::memcpy(piece.buffer->data() + 4 * (row - piece.begin), &bits, 4);
        break;
      }
      case OutputKind::kFp8Weight:
        produce_fp8_row(piece, row, target, stats);
        break;
      case OutputKind::kBf16Weight:
        produce_bf16_row(piece, row, stats);
        break;
      case OutputKind::kCopy:
        break;
    }
  }
}

// Pieces are produced a batch at a time on the pool; a finished batch is handed to the sink on a
// writer thread while the pool produces the next one (two batches of buffers in all).
class PieceBatch {
 public:
  PieceBatch(Fp8Target target, ThreadPool& pool, const StreamLimits& limits, ShardSink& sink,
             std::vector<RowStats>& thread_stats, Progress* progress)
      : target_(target),
        pool_(pool),
        limits_(limits),
        sink_(sink),
        thread_stats_(thread_stats),
        progress_(progress),
        capacity_(std::max<size_t>(1, pool.size() * limits.pieces_per_thread)) {
    for (Slot& slot : slots_) slot.buffers.resize(capacity_);
  }
  ~PieceBatch() {
    if (writing_.valid()) writing_.wait();
  }

  // Queues rows [0, rows) of an MXFP4 output tensor at `offset` in pieces of about piece_bytes;
  // the rows' scales are recorded in `scales` when not null.
  void add_tensor(const OutputTensor& t, uint64_t offset, RowScales* scales) {
    const uint64_t row_bytes = output_row_bytes(t);
    // A scale tensor's pieces are bounded by the source they scan, not the 4 bytes a row gives.
    const uint64_t budget_row_bytes =
        t.kind == OutputKind::kFp8Scale ? source_row_bytes(t) : row_bytes;
    const int64_t rows_per_piece =
        static_cast<int64_t>(std::max<uint64_t>(1, limits_.piece_bytes / budget_row_bytes));
    for (int64_t row = 0; row < t.mxfp4.rows; row += rows_per_piece) {
      if (slots_[current_].pieces.size() == capacity_) flush();
      Slot& slot = slots_[current_];
      Piece piece{&t, row, std::min(row + rows_per_piece, t.mxfp4.rows), nullptr, 0, 0, scales};
      piece.bytes = static_cast<size_t>((piece.end - piece.begin) * row_bytes);
      piece.offset = offset + static_cast<uint64_t>(row) * row_bytes;
      piece.buffer = &slot.buffers[slot.pieces.size()];
      if (piece.buffer->size() < piece.bytes) piece.buffer->resize(piece.bytes);
      slot.pieces.push_back(piece);
    }
  }

  // Produces the queued pieces on the pool, then starts handing them to the sink.
  void flush() {
    Slot& slot = slots_[current_];
    if (slot.pieces.empty()) return;
    pool_.parallel_for(slot.pieces.size(), [&](size_t begin, size_t end, size_t thread) {
      for (size_t i = begin; i < end; ++i)
        produce_piece(slot.pieces[i], target_, thread_stats_[thread]);
    });
    wait_for_writer();
    writing_ = std::async(std::launch::async, [this, &slot] { write(slot); });
    current_ = 1 - current_;
  }

  // Flushes and waits until the sink has every byte.
  void drain() {
    flush();
    wait_for_writer();
  }

  // Copies a tensor's bytes straight from the source mapping.
  void copy_tensor(const OutputTensor& t, uint64_t offset) {
    drain();
    const std::span<const uint8_t> bytes = t.copy_source.data();
    const uint64_t chunk = std::max<uint64_t>(limits_.piece_bytes, 1) * 4;
    for (uint64_t at = 0; at < bytes.size(); at += chunk) {
      const uint64_t n = std::min<uint64_t>(chunk, bytes.size() - at);
      sink_.put(t.decl, offset + at, bytes.subspan(at, n));
      if (progress_) progress_->add(n);
      release_tensor_bytes(t.copy_source, at, n);
    }
  }

 private:
  struct Slot {
    std::vector<Piece> pieces;
    std::vector<std::vector<uint8_t>> buffers;
  };

  void wait_for_writer() {
    if (writing_.valid()) writing_.get();  // rethrows the sink's error
  }

  void write(Slot& slot) {
    for (const Piece& piece : slot.pieces) {
      sink_.put(piece.tensor->decl, piece.offset, {piece.buffer->data(), piece.bytes});
      if (progress_) progress_->add(piece.bytes);
    }
    // Then the source rows the batch used, one call per run of a tensor's rows: each call costs
    // every other thread of the process a TLB flush.
    for (size_t first = 0; first < slot.pieces.size();) {
      const Piece& a = slot.pieces[first];
      size_t last = first;
      while (last + 1 < slot.pieces.size() && slot.pieces[last + 1].tensor == a.tensor &&
             slot.pieces[last + 1].begin == slot.pieces[last].end)
        ++last;
      const Mxfp4Source& src = a.tensor->mxfp4;
      const uint64_t packed_row = static_cast<uint64_t>(src.cols / 2), scale_row = packed_row / 16;
      const int64_t rows = slot.pieces[last].end - a.begin;
      release_tensor_bytes(src.weight, a.begin * packed_row, rows * packed_row);
      release_tensor_bytes(src.scales, a.begin * scale_row, rows * scale_row);
      first = last + 1;
    }
    slot.pieces.clear();
  }

  Fp8Target target_;
  ThreadPool& pool_;
  const StreamLimits& limits_;
  ShardSink& sink_;
  std::vector<RowStats>& thread_stats_;
  Progress* progress_;
  size_t capacity_;
  Slot slots_[2];
  int current_ = 0;
  std::future<void> writing_;
};

}  // namespace

void release_tensor_bytes(const TensorRef& ref, uint64_t offset, uint64_t length) {
  if (length == 0) return;
  const uint64_t page = page_size();
  const uint64_t data_offset = ref.file->data_offset();
  const uint64_t first = data_offset + ref.info->begin + offset;
  const uint64_t lower = first > kFaultAroundMargin ? first - kFaultAroundMargin : 0;
  // Inside a tensor the next piece's own release covers what this one mapped ahead; only the
  // last piece of a tensor widens forwards (the next tensor may be processed much later).
  const bool last = offset + length >= ref.info->nbytes();
  const uint64_t ahead = last ? kFaultAroundMargin : 0;
  const uint64_t aligned_begin = std::max(data_offset, lower / page * page);
  const uint64_t aligned_end =
      std::min(ref.file->file_size(), (first + length + ahead + page - 1) / page * page);
  if (aligned_end <= aligned_begin) return;
  // SafetensorsFile::release takes a tensor; a synthetic one covering the widened range.
  TensorInfo range = *ref.info;
  range.begin = aligned_begin - data_offset;
  range.end = aligned_end - data_offset;
  ref.file->release(range);
}

void release_file_bytes(const MappedFile& file, uint64_t offset, uint64_t length) {
  if (length == 0) return;
  const uint64_t page = page_size();
  const uint64_t lower = offset > kFaultAroundMargin ? offset - kFaultAroundMargin : 0;
  const uint64_t begin = lower / page * page;
  const uint64_t end = std::min<uint64_t>(
      file.size(), (offset + length + kFaultAroundMargin + page - 1) / page * page);
  if (end > begin) file.release(begin, end - begin);
}

void stream_shard(const OutputShard& shard, const std::vector<TensorDecl>& order, Fp8Target target,
                  ThreadPool& pool, const StreamLimits& limits, ShardSink& sink, RowStats& stats,
                  Progress* progress) {
  std::map<std::string, const OutputTensor*> by_name;
  for (const OutputTensor& t : shard.tensors) by_name[t.decl.name] = &t;
  // Where each tensor's bytes start in the data section: the order's running sum.
  std::map<std::string, uint64_t> offsets;
  uint64_t offset = 0;
  for (const TensorDecl& decl : order) {
    if (!by_name.count(decl.name))
      fail("convert: '{}' is not in shard {}", decl.name, shard.file_name);
    offsets[decl.name] = offset;
    offset += decl.nbytes();
  }
  // An FP8 weight records its rows' scales for its scale tensor when both are in this shard (the
  // usual case); a scale tensor whose weight is in another shard scans the source itself.
  std::map<const TensorInfo*, const OutputTensor*> scale_of_weight;
  std::set<const TensorInfo*> fp8_weights;
  for (const OutputTensor& t : shard.tensors) {
    if (t.kind == OutputKind::kFp8Scale) scale_of_weight[t.mxfp4.weight.info] = &t;
    if (t.kind == OutputKind::kFp8Weight) fp8_weights.insert(t.mxfp4.weight.info);
  }
  std::map<const TensorInfo*, RowScales> row_scales;

  std::vector<RowStats> thread_stats(pool.size());
  {
    PieceBatch batch(target, pool, limits, sink, thread_stats, progress);
    for (const TensorDecl& decl : order) {
      const OutputTensor& t = *by_name.at(decl.name);
      const uint64_t at = offsets.at(decl.name);
      switch (t.kind) {
        case OutputKind::kCopy:
          batch.copy_tensor(t, at);
          break;
        case OutputKind::kFp8Scale:
          if (!fp8_weights.count(t.mxfp4.weight.info) && t.mxfp4.rows > 0)
            batch.add_tensor(t, at, nullptr);
          break;
        case OutputKind::kFp8Weight: {
          RowScales* scales = nullptr;
          if (scale_of_weight.count(t.mxfp4.weight.info)) {
            scales = &row_scales[t.mxfp4.weight.info];
            scales->exponent.assign(t.mxfp4.rows, 0);
            scales->span.assign(t.mxfp4.rows, 0);
          }
          if (t.mxfp4.rows > 0) batch.add_tensor(t, at, scales);
          break;
        }
        case OutputKind::kBf16Weight:
          if (t.mxfp4.rows > 0) batch.add_tensor(t, at, nullptr);
          break;
      }
    }
    batch.drain();
  }
  // The scale tensors of the weights just written, from the scales their rows recorded.
  std::vector<uint8_t> bytes;
  for (const auto& [weight, scales] : row_scales) {
    const OutputTensor& t = *scale_of_weight.at(weight);
    bytes.resize(4 * static_cast<size_t>(t.mxfp4.rows));
    for (int64_t row = 0; row < t.mxfp4.rows; ++row) {
      const uint32_t bits = scale_bits(t, row, scales.exponent[row]);
      std::memcpy(bytes.data() + 4 * row, &bits, 4);
    }
    sink.put(t.decl, offsets.at(t.decl.name), bytes);
    if (progress) progress->add(bytes.size());
  }
  for (const RowStats& s : thread_stats) stats.merge(s);
}

}  // namespace minimax
