// Row kernel on AMX tiles for FP8 weights (per tile, per channel) with bf16 or split (hi + lo)
// activations, for calls of kAmxRowMinTokens to kAmxRowTokens tokens (an expert's share of a
// batch of streams; linear.cc takes_amx_rows). With f32 activations the FP8 row kernel multiplies
// each decoded weight once per token with FMAs, so a few tokens make it compute-bound on the
// vector ports. Here the vector units only decode the codes to bf16 pairs (two vpermt2b lookups
// and two unpacks per 64 codes, as the vdpbf16ps kernels do) and store them as weight tiles, and
// tdpbf16ps multiplies them with every token at once (docs/cpu_kernels.md "Small batches on AMX").
//
// - Weight tiles (A): 16 rows × 32 bf16, in the column order of pairs() (fp8_order_bf16x<64>):
//   64 codes of a row fill the same row of two tiles.
// - Activation tiles (B): 16 rows (column pairs) × n dwords, n = one column per token and half
//   (hi, lo): up to kGroupTokens tokens per pass (a job of more, which the dispatcher does not
//   send, takes several passes), each result element computed alone, so a token's result does not
//   depend on how many share the call.
// - FP8 tiles: each activation is multiplied by its tile's scale before the split (as the
//   vdpbf16ps GEMM does), so the results accumulate over the whole row in the tile registers; the
//   activation tiles are rebuilt for each row tile of scales (every 128 rows of the published
//   checkpoints). Per channel: the row scale multiplies the sum.
#define MINIMAX_AVX512_BASE_TARGET \
  "avx512f,avx512bw,avx512vl,avx512dq,avx512vbmi,avx512bf16,fma,f16c,bmi,bmi2"
#include "kernels/cpu/amx_target.h"
#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/cpu/amx_tiles-inl.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_avx512-inl.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/linear_fp8-inl.h"

namespace minimax::cpu_linear_detail {
namespace {

using amx_detail::compiler_barrier;
using amx_detail::kTileM;

// Tokens per pass over the weight: a result tile row has 16 dwords, one per token and half.
constexpr int kGroupTokens = static_cast<int>(kAmxRowTokens);
static_assert(kGroupTokens == 8);
constexpr int kPieceCols = 64;  // codes decoded per row and step: one row of two weight tiles

// tmm0, tmm1: results of row tiles 0 and 1 (16 rows × n dwords); tmm2-5: weight tiles (row tile
// 0 and 1 of the piece's first 32 columns, then of its second); tmm6, tmm7: the piece's two
// activation tiles (16 rows × n dwords).
MINIMAX_AVX512 void load_rows_tile_config(int n) {
  const auto d = static_cast<uint16_t>(4 * n);
  amx_detail::load_tile_config({d, d, 64, 64, 64, 64, d, d});
}

// The steps of one thread's rows for one token group: row tiles go in pairs (one where a pair
// would straddle a scale tile row, or at the end), each pair's pieces in order.
struct RowTiles {
  int64_t r = 0;          // first row
  int rows = 0;           // rows in all: 1-32
  int64_t scale_row = 0;  // scale tile row (0 per channel)
  bool two() const { return rows > kTileM; }
};

template <bool kBlock, bool kSplit>
struct AmxFp8Rows {
  static constexpr int kHalves = kSplit ? 2 : 1;
  static constexpr int kHalfElems = 4 * kTileM * 32;  // one piece of a row tile pair, decoded
  const WeightView& w;
  const uint8_t* data;
  int64_t row_bytes;
  Fp8Scales scales;
  E4m3Tables512 tables;
  const float* x;  // prepared activations: f32 in fp8_order_bf16x<64>, zero-padded
  int64_t x_stride, pieces;
  int64_t block_rows;
  // This token group.
  int64_t t0 = 0;
  int tokens = 0, n = 0;
  int64_t tile_bytes = 0;  // one activation tile: 16 rows of n dwords

  MINIMAX_AVX512 explicit AmxFp8Rows(const LinearJob& job)
      : w(*job.w),
        data(job.w->data),
        row_bytes(weight_data_stride(*job.w)),
        scales(*job.w),
        x(static_cast<const float*>(job.x)),
        x_stride(job.x_stride),
        pieces(job.x_stride / kPieceCols),
        block_rows(kBlock ? job.w->block_rows : job.w->rows) {}

  MINIMAX_AVX512 void set_group(int64_t first, int count) {
    t0 = first;
    tokens = count;
    n = kHalves * count;
    tile_bytes = kTileM * n * 4;
  }

  // The row tiles that start at r, up to row_end.
  RowTiles tiles_at(int64_t r, int64_t row_end) const {
    RowTiles t;
    t.r = r;
    t.scale_row = kBlock ? r / block_rows : 0;
    const int64_t end = kBlock ? std::min(row_end, (t.scale_row + 1) * block_rows) : row_end;
    const int64_t first = std::min<int64_t>(kTileM, end - r);
    t.rows = static_cast<int>(first < kTileM ? first : std::min<int64_t>(2 * kTileM, end - r));
    return t;
  }

  // The activation tiles of this token group for the rows of scale tile row `scale_row`: tile k
  // (columns 32k.. of the prepared order) row j, dword kHalves·t + h = half h of the bf16 pair
  // of token t's columns 32k + 2j and 32k + 2j + 1. (A 16 × n transpose of dwords; rows past n
  // spill into the next row, written after them.)
  MINIMAX_AVX512 void build_activations(int64_t scale_row, uint32_t* b) const {
    for (int64_t q = 0; q < pieces; ++q) {
      const __m512 s =
          _mm512_set1_ps(kBlock ? scales.tile(scale_row * block_rows, q * kPieceCols) : 1.0f);
      for (int k = 0; k < 2; ++k) {
        uint32_t* tile = b + (2 * q + k) * kTileM * n;
        __m512 v[16];
        for (int t = 0; t < tokens; ++t) {
          const float* xt = x + (t0 + t) * x_stride + q * kPieceCols + 32 * k;
          const __m512 a0 = _mm512_mul_ps(_mm512_load_ps(xt), s);
          const __m512 a1 = _mm512_mul_ps(_mm512_load_ps(xt + 16), s);
          const __m512i hi = round_bf16_32(a0, a1);
          v[kHalves * t] = _mm512_castsi512_ps(hi);
          if constexpr (kSplit) v[2 * t + 1] = _mm512_castsi512_ps(lo_bf16_32(a0, a1, hi));
        }
        for (int i = n; i < 16; ++i) v[i] = _mm512_setzero_ps();
        amx_detail::transpose16(v);
        for (int j = 0; j < kTileM; ++j) _mm512_storeu_ps(tile + j * n, v[j]);
      }
    }
  }

  // Codes [64q, 64q + 64) of the row tiles -> bf16 pairs in `half` ([k][row][32]: rows 0-15 are
  // row tile 0, 16-31 row tile 1), and per row a prefetch of the next line at `next` (advanced):
  // a linear walk one row tile pair ahead. (Scalar work per row competes with the decode for the
  // vector ports: the loop keeps none.)
  template <int kRows>
  MINIMAX_AVX512 MINIMAX_ALWAYS_INLINE void decode_rows(const uint8_t* p, int rows, int64_t left,
                                                        uint16_t* half, const char*& next) const {
    const int count = kRows > 0 ? kRows : rows;
    if (left >= kPieceCols) {
      // Not unrolled: with the weights in memory the unrolled loop, a burst of 32 loads and 32
      // prefetches per step, ran 0.74x as fast (it is 1.1x faster in cache).
#pragma GCC unroll 1
      for (int i = 0; i < count; ++i) {
        __m512i v[2];
        tables.pairs(_mm512_loadu_si512(p + i * row_bytes), v);
        _mm512_store_si512(half + 32 * i, v[0]);
        _mm512_store_si512(half + 2 * kTileM * 32 + 32 * i, v[1]);
        _mm_prefetch(next + 64 * i, _MM_HINT_T1);
      }
    } else {
      for (int i = 0; i < count; ++i) {
        __m512i v[2];
        tables.pairs(load_codes(p + i * row_bytes, left), v);
        _mm512_store_si512(half + 32 * i, v[0]);
        _mm512_store_si512(half + 2 * kTileM * 32 + 32 * i, v[1]);
      }
    }
    next += 64 * count;
  }
  MINIMAX_AVX512 void decode(const RowTiles& t, int64_t q, uint16_t* half,
                             const char*& next) const {
    const uint8_t* p = data + t.r * row_bytes + q * kPieceCols;
    const int64_t left = w.cols - q * kPieceCols;
    if (t.rows == 2 * kTileM) return decode_rows<2 * kTileM>(p, t.rows, left, half, next);
    decode_rows<0>(p, t.rows, left, half, next);
    // Rows past the last of a short tile: their results are never stored, but zeros keep them
    // from reading what an earlier piece left.
    for (int i = t.rows; i < (t.rows <= kTileM ? kTileM : 2 * kTileM); ++i) {
      _mm512_store_si512(half + 32 * i, _mm512_setzero_si512());
      _mm512_store_si512(half + 2 * kTileM * 32 + 32 * i, _mm512_setzero_si512());
    }
  }

  // The decoded piece q in `half` times its two activation tiles in `b`, into the results.
  MINIMAX_AVX512 void multiply(bool two, const uint16_t* half, const uint32_t* b, int64_t q) const {
    compiler_barrier();
    const char* bq = reinterpret_cast<const char*>(b) + 2 * q * tile_bytes;
    _tile_loadd(6, bq, n * 4);
    _tile_loadd(7, bq + tile_bytes, n * 4);
    _tile_loadd(2, half, 64);
    _tile_loadd(4, half + 2 * kTileM * 32, 64);
    _tile_dpbf16ps(0, 2, 6);
    _tile_dpbf16ps(0, 4, 7);
    if (two) {
      _tile_loadd(3, half + kTileM * 32, 64);
      _tile_loadd(5, half + 3 * kTileM * 32, 64);
      _tile_dpbf16ps(1, 3, 6);
      _tile_dpbf16ps(1, 5, 7);
    }
  }

  // The results of row tiles t -> y (hi + lo, times the row scale), and zero for the next ones.
  MINIMAX_AVX512 void store(const RowTiles& t, float* c, float* y) const {
    _tile_stored(0, c, n * 4);
    if (t.two()) _tile_stored(1, c + kTileM * n, n * 4);
    _tile_zero(0);
    _tile_zero(1);
    compiler_barrier();
    for (int i = 0; i < t.rows; ++i) {
      const float scale = kBlock ? 1.0f : scales.channel(t.r + i);
      for (int k = 0; k < tokens; ++k) {
        const float* e = c + i * n + kHalves * k;
        const float sum = kSplit ? e[0] + e[1] : e[0];
        y[(t0 + k) * w.rows + t.r + i] = sum * scale;
      }
    }
  }
};

// One thread's rows for every token group: a stream of (row tiles, piece) steps, each step
// decoding its piece and multiplying the one before it (whose stores are then long done), so that
// the tile loads never wait for the decode just before them; a row tile pair's results leave the
// tile registers one decode later than its last multiply, so that waiting on that multiply overlaps
// the decode. The activation tiles are built per scale tile row, alternating between two buffers.
template <bool kBlock, bool kSplit>
MINIMAX_AVX512 void amx_fp8_rows(const LinearJob& job, int64_t row_begin, int64_t row_end) {
  using K = AmxFp8Rows<kBlock, kSplit>;
  K k(job);
  const int64_t b_elems = 2 * k.pieces * kTileM * kGroupTokens * K::kHalves + 16;
  thread_local AlignedScratch b_scratch, a_scratch;
  auto* b_base = static_cast<uint32_t*>(b_scratch.get(static_cast<size_t>(2 * b_elems * 4)));
  constexpr size_t kABytes = 2 * K::kHalfElems * 2;
  auto* a = static_cast<uint16_t*>(a_scratch.get(kABytes));
  alignas(64) float c[2 * kTileM * 16];
  for (int64_t t0 = 0; t0 < job.tokens; t0 += kGroupTokens) {
    k.set_group(t0, static_cast<int>(std::min<int64_t>(kGroupTokens, job.tokens - t0)));
    load_rows_tile_config(k.n);
    _tile_zero(0);
    _tile_zero(1);
    // The step whose multiply is due (one step behind the decode), and the row tiles whose
    // results are due (after the decode that follows their last multiply).
    struct Step {
      RowTiles tiles;
      int64_t q = -1;
      const uint32_t* b = nullptr;
      const uint16_t* half = nullptr;
    } due;
    RowTiles pending;
    bool store_due = false;
    int64_t built = -1;
    int buffer = 1;
    RowTiles cur = k.tiles_at(row_begin, row_end);
    const char* next = reinterpret_cast<const char*>(k.data) + (cur.r + cur.rows) * k.row_bytes;
    for (int64_t step = 0; cur.rows > 0; cur = k.tiles_at(cur.r + cur.rows, row_end)) {
      if (cur.scale_row != built) {
        buffer ^= 1;
        k.build_activations(cur.scale_row, b_base + buffer * b_elems);
        built = cur.scale_row;
      }
      for (int64_t q = 0; q < k.pieces; ++q, ++step) {
        uint16_t* half = a + (step & 1) * K::kHalfElems;
        k.decode(cur, q, half, next);
        if (store_due) {
          k.store(pending, c, job.y);
          store_due = false;
        }
        if (due.q >= 0) {
          k.multiply(due.tiles.two(), due.half, due.b, due.q);
          if (due.q == k.pieces - 1) {
            pending = due.tiles;
            store_due = true;
          }
        }
        due = Step{cur, q, b_base + buffer * b_elems, half};
      }
    }
    if (store_due) k.store(pending, c, job.y);
    if (due.q >= 0) {
      k.multiply(due.tiles.two(), due.half, due.b, due.q);
      k.store(due.tiles, c, job.y);
    }
  }
  _tile_release();
}

template <bool kBlock>
RowKernel amx_fp8(bool split) {
  RowKernel k;
  k.run = split ? amx_fp8_rows<kBlock, true> : amx_fp8_rows<kBlock, false>;
  k.chunk_cols = kPieceCols;
  k.order = fp8_order_bf16x<kPieceCols>();
  return k;
}

}  // namespace

namespace MINIMAX_AMX_TILES {

RowKernel amx_row_kernel(const WeightView& w, bool split) {
  switch (w.format) {
    case WeightFormat::kFp8Block:
      // A piece of 64 columns must lie in one scale tile.
      if (w.block_cols % kPieceCols != 0) return {};
      return amx_fp8<true>(split);
    case WeightFormat::kFp8Channel:
      return amx_fp8<false>(split);
    default:
      return {};
  }
}

}  // namespace MINIMAX_AMX_TILES
}  // namespace minimax::cpu_linear_detail
