// Prefill attention on AMX tiles (Intel Sapphire Rapids and later): flash attention for blocks of
// 16 query tokens of one KV group, 32 cache slots at a time.
//
// - S = q · kᵀ: A = the query rows split into bf16 hi + lo (within 2^-16 of q, as split
//   activations), B = the slots' K rows (exact: a bf16 cache, or an fp8 one decoded to bf16; an
//   f32 cache's rows split into hi + lo too, whose q lo × k lo products are left out),
//   transposed into dword pairs.
// - Online softmax in AVX-512 f32 per query row (scale, causal mask, running max and sum), then
//   p = exp(s − max) split into bf16 hi + lo as the A tiles of P · V; B = pairs of V rows
//   interleaved by element (an f32 cache's V split as its K: p lo × v lo left out). Each slot
//   tile's P · V leaves the tile registers into scratch and is added to the f32 output rows after
//   they are multiplied by the softmax correction.
// - Slot tiles run from 0 up to the block's last visible slot; each row masks the slots outside its
//   visible runs (causal limit, MSA's selected blocks) to −inf (p = 0), so a row sums exactly the
//   slots the reference sums, and selecting every visible block gives the dense call's bits.
//
// Taken for calls of 16+ tokens on a bf16, fp8 (decoded exactly to bf16) or f32 cache (split:
// three tile products per step instead of two) at head_dim a multiple of 32 when the engine's
// activations are a bf16 precision (split products: f32's tolerance is kept); everything else
// keeps the f32 kernels of attention_kernels-inl.h.
#define MINIMAX_AVX512_BASE_TARGET "avx512f,avx512bw,avx512vl,avx512dq,avx512bf16,fma"
#include "kernels/cpu/amx_target.h"
#define MINIMAX_SIMD_LEVEL 2
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/amx_tiles-inl.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"
#include "kernels/cpu/linear_bf16_split-inl.h"
#include "kernels/cpu/simd_vec-inl.h"
#include "kernels/kv_codec.h"

namespace minimax::cpu_ops_detail {
namespace {

using amx_detail::compiler_barrier;
using amx_detail::kTileDwords;
using amx_detail::kTileM;
using amx_detail::load_tile_config;
using amx_detail::transpose16;
using cpu_linear_detail::lo_bf16_32;
using cpu_linear_detail::round_bf16_32;

constexpr int kSlots = 32;        // cache slots per step: the K dimension of a P tile
constexpr int kTileHalves = 512;  // uint16 per tile (16 rows of 64 bytes)
constexpr int kMaxHeadDim = 256;

// Per-thread scratch of one block (grown on demand, reused across calls).
struct Scratch {
  std::vector<uint16_t> q;           // [head][step][plane] tiles: rows = tokens, 32 dims of a step
  std::vector<uint16_t> k;           // [half][step] tiles: the transposed K of 16 slots
  std::vector<uint16_t> v;           // [slice] tiles: row j = slots 2j, 2j + 1 interleaved, 16 dims
  std::vector<uint16_t> k_lo, v_lo;  // the same of an f32 cache's lo halves
  std::vector<uint16_t> k_rows, v_rows;  // an fp8 or f32 cache's rows of the tile's slots, bf16
  std::vector<uint16_t> k_rows_lo, v_rows_lo;  // an f32 cache's lo halves
  std::vector<float> out;                      // [head][token][dim] running outputs
  std::vector<float> max, sum;                 // [head][token]
  alignas(64) float s[kTileM * kSlots];
  alignas(64) float c[4 * kTileDwords];
  alignas(64) uint16_t p[2 * kTileHalves];  // P hi, P lo
  alignas(64) uint16_t zeros[kMaxHeadDim];
};

Scratch& scratch(int heads, int64_t d) {
  thread_local Scratch s;
  const int64_t steps = d / 32;
  s.q.resize(static_cast<size_t>(heads * steps * 2 * kTileHalves));
  s.k.resize(static_cast<size_t>(2 * steps * kTileHalves));
  s.v.resize(static_cast<size_t>(d / 16 * kTileHalves));
  s.k_lo.resize(s.k.size());
  s.v_lo.resize(s.v.size());
  s.out.resize(static_cast<size_t>(heads * kTileM * d));
  s.k_rows.resize(static_cast<size_t>(kSlots * d));
  s.v_rows.resize(static_cast<size_t>(kSlots * d));
  s.k_rows_lo.resize(static_cast<size_t>(kSlots * d));
  s.v_rows_lo.resize(static_cast<size_t>(kSlots * d));
  s.max.resize(static_cast<size_t>(heads * kTileM));
  s.sum.resize(static_cast<size_t>(heads * kTileM));
  std::memset(s.zeros, 0, sizeof s.zeros);
  return s;
}

// Row `slot` of a cache (through the page table when there is one).
int64_t cache_row(const AttentionArgs& a, int64_t slot) {
  if (a.page_table == nullptr) return slot;
  return int64_t{a.page_table[slot / a.page_size]} * a.page_size + slot % a.page_size;
}

// The bf16 bits of the fp8 cache's code magnitudes 0-127, in four 32-word tables. Exact: an e4m3
// value times kFp8KvScale (1) is a bf16.
static_assert(kFp8KvScale == 1.0f, "an fp8 cache's values must stay bf16 for the AMX kernel");
struct Fp8Bf16Tables {
  __m512i t[4];
  MINIMAX_AVX512 Fp8Bf16Tables() {
    alignas(64) uint16_t words[128];
    const float* values = fp8_kv_table();
    for (int c = 0; c < 128; ++c) {
      uint32_t bits;
      std::memcpy(&bits, &values[c], 4);
      words[c] = static_cast<uint16_t>(bits >> 16);  // exact: the low 16 bits are zero
    }
    for (int q = 0; q < 4; ++q) t[q] = _mm512_load_si512(words + 32 * q);
  }
  // n (a multiple of 32) codes -> bf16.
  MINIMAX_AVX512 void decode(const uint8_t* codes, int64_t n, uint16_t* out) const {
    for (int64_t i = 0; i < n; i += 32) {
      const __m512i c =
          _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(codes + i)));
      const __m512i low = _mm512_permutex2var_epi16(t[0], c, t[1]);  // index bits 0-5
      const __m512i high = _mm512_permutex2var_epi16(t[2], c, t[3]);
      const __mmask32 upper = _mm512_test_epi16_mask(c, _mm512_set1_epi16(0x40));
      const __m512i sign = _mm512_slli_epi16(_mm512_and_si512(c, _mm512_set1_epi16(0x80)), 8);
      _mm512_storeu_si512(out + i, _mm512_or_si512(_mm512_mask_mov_epi16(low, upper, high), sign));
    }
  }
};

// n (a multiple of 32) f32 values -> bf16 hi and lo = bf16(x − hi).
MINIMAX_AVX512 void split_row(const float* x, int64_t n, uint16_t* hi, uint16_t* lo) {
  for (int64_t i = 0; i < n; i += 32) {
    const __m512 x0 = _mm512_loadu_ps(x + i), x1 = _mm512_loadu_ps(x + i + 16);
    const __m512i h16 = round_bf16_32(x0, x1);
    _mm512_storeu_si512(hi + i, h16);
    _mm512_storeu_si512(lo + i, lo_bf16_32(x0, x1, h16));
  }
}

// The A tiles of the block's queries: head h, step k (dims 32k..32k + 31), hi and lo planes.
MINIMAX_AVX512 void pack_queries(const AttentionArgs& a, int64_t t0, int rows, int g, Scratch& s) {
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim, steps = d / 32;
  for (int h = 0; h < group; ++h)
    for (int i = 0; i < kTileM; ++i) {
      const float* q = a.q + ((t0 + i) * a.num_heads + g * group + h) * d;
      for (int64_t k = 0; k < steps; ++k) {
        uint16_t* hi = s.q.data() + ((h * steps + k) * 2) * kTileHalves + 32 * i;
        uint16_t* lo = hi + kTileHalves;
        if (i >= rows) {
          std::memset(hi, 0, 64);
          std::memset(lo, 0, 64);
          continue;
        }
        split_row(q + 32 * k, 32, hi, lo);
      }
    }
}

// The B tiles of 32 slots' K (transposed dword pairs) into k_tiles and V (pairs of rows
// interleaved) into v_tiles.
MINIMAX_AVX512 void pack_slots(const uint16_t* const (&k_rows)[kSlots],
                               const uint16_t* const (&v_rows)[kSlots], int64_t d,
                               uint16_t* k_tiles, uint16_t* v_tiles) {
  const int64_t steps = d / 32;
  for (int half = 0; half < 2; ++half)
    for (int64_t k = 0; k < steps; ++k) {
      __m512 r[16];
#pragma GCC unroll 16
      for (int i = 0; i < 16; ++i)
        r[i] = _mm512_loadu_ps(reinterpret_cast<const float*>(k_rows[16 * half + i] + 32 * k));
      transpose16(r);
      uint16_t* dst = k_tiles + (half * steps + k) * kTileHalves;
#pragma GCC unroll 16
      for (int j = 0; j < 16; ++j) _mm512_storeu_ps(reinterpret_cast<float*>(dst + 32 * j), r[j]);
    }
  // Word 2i of the low output is element i of the even row, word 2i + 1 element i of the odd one.
  alignas(64) static constexpr uint16_t kLow[32] = {0,  32, 1,  33, 2,  34, 3,  35, 4,  36, 5,
                                                    37, 6,  38, 7,  39, 8,  40, 9,  41, 10, 42,
                                                    11, 43, 12, 44, 13, 45, 14, 46, 15, 47};
  const __m512i low = _mm512_load_si512(kLow);
  const __m512i high = _mm512_add_epi16(low, _mm512_set1_epi16(16));
  for (int j = 0; j < kSlots / 2; ++j)
    for (int64_t c = 0; c < d; c += 32) {
      const __m512i even = _mm512_loadu_si512(v_rows[2 * j] + c);
      const __m512i odd = _mm512_loadu_si512(v_rows[2 * j + 1] + c);
      uint16_t* dst = v_tiles + (c / 16) * kTileHalves + 32 * j;
      _mm512_storeu_si512(dst, _mm512_permutex2var_epi16(even, low, odd));
      _mm512_storeu_si512(dst + kTileHalves, _mm512_permutex2var_epi16(even, high, odd));
    }
}

// S (16 tokens × 32 slots) of head h into s.s, rows 32 floats apart (kv_lo: plus q hi × k lo).
MINIMAX_AVX512 void scores(const Scratch& s, int h, int64_t steps, bool kv_lo) {
  _tile_zero(0);
  _tile_zero(1);
  for (int64_t k = 0; k < steps; ++k) {
    const uint16_t* q = s.q.data() + ((h * steps + k) * 2) * kTileHalves;
    _tile_loadd(4, q, 64);
    _tile_loadd(5, q + kTileHalves, 64);
    _tile_loadd(6, s.k.data() + k * kTileHalves, 64);
    _tile_loadd(7, s.k.data() + (steps + k) * kTileHalves, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(0, 5, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(1, 5, 7);
    if (kv_lo) {
      _tile_loadd(6, s.k_lo.data() + k * kTileHalves, 64);
      _tile_loadd(7, s.k_lo.data() + (steps + k) * kTileHalves, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
    }
  }
  _tile_stored(0, s.s, 4 * kSlots);
  _tile_stored(1, s.s + 16, 4 * kSlots);
  compiler_barrier();
}

// One online-softmax step of head h's rows over the tile's scores: P (hi, lo) into s.p, and each
// row's correction of its output so far into corr.
MINIMAX_AVX512 void softmax_step(Scratch& s, int h, const uint32_t (&visible)[kTileM], float scale,
                                 float (&corr)[kTileM]) {
  using F = VecF;
  constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
  for (int i = 0; i < kTileM; ++i) {
    uint16_t* hi = s.p + 32 * i;
    uint16_t* lo = hi + kTileHalves;
    corr[i] = 1.0f;
    if (visible[i] == 0) {  // nothing visible in this tile: p = 0, the row's state unchanged
      std::memset(hi, 0, 64);
      std::memset(lo, 0, 64);
      continue;
    }
    const auto m0 = static_cast<__mmask16>(visible[i]);
    const auto m1 = static_cast<__mmask16>(visible[i] >> 16);
    const __m512 minus_inf = _mm512_set1_ps(kMinusInf);
    const __m512 x0 =
        _mm512_mask_mul_ps(minus_inf, m0, _mm512_load_ps(s.s + 32 * i), _mm512_set1_ps(scale));
    const __m512 x1 =
        _mm512_mask_mul_ps(minus_inf, m1, _mm512_load_ps(s.s + 32 * i + 16), _mm512_set1_ps(scale));
    float& running_max = s.max[h * kTileM + i];
    const float tile_max = _mm512_reduce_max_ps(_mm512_max_ps(x0, x1));
    const float new_max = std::max(running_max, tile_max);
    corr[i] = std::exp(running_max - new_max);  // 0 on the row's first visible tile
    const __m512 shift = _mm512_set1_ps(-new_max);
    const __m512 p0 = _mm512_maskz_mov_ps(m0, F::exp(_mm512_add_ps(x0, shift)));
    const __m512 p1 = _mm512_maskz_mov_ps(m1, F::exp(_mm512_add_ps(x1, shift)));
    float& sum = s.sum[h * kTileM + i];
    sum = sum * corr[i] + _mm512_reduce_add_ps(_mm512_add_ps(p0, p1));
    running_max = new_max;
    const __m512i h16 = round_bf16_32(p0, p1);
    _mm512_store_si512(hi, h16);
    _mm512_store_si512(lo, lo_bf16_32(p0, p1, h16));
  }
  compiler_barrier();
}

// out_h ← out_h · corr + P · V, 64 dims (four result tiles) at a time, a last 32 in two (kv_lo:
// plus P hi × V lo).
MINIMAX_AVX512 void accumulate(Scratch& s, int h, int64_t d, const float (&corr)[kTileM],
                               bool kv_lo) {
  _tile_loadd(4, s.p, 64);
  _tile_loadd(5, s.p + kTileHalves, 64);
  float* out = s.out.data() + h * kTileM * d;
  for (int64_t c0 = 0; c0 < d; c0 += 64) {
    const uint16_t* v = s.v.data() + (c0 / 16) * kTileHalves;
    const uint16_t* v_lo = s.v_lo.data() + (c0 / 16) * kTileHalves;
    const int tiles = d - c0 >= 64 ? 4 : 2;  // a last 32 dims: two tiles
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(6, v, 64);
    _tile_loadd(7, v + kTileHalves, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(0, 5, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(1, 5, 7);
    if (kv_lo) {
      _tile_loadd(6, v_lo, 64);
      _tile_loadd(7, v_lo + kTileHalves, 64);
      _tile_dpbf16ps(0, 4, 6);
      _tile_dpbf16ps(1, 4, 7);
    }
    _tile_stored(0, s.c, 64);
    _tile_stored(1, s.c + kTileDwords, 64);
    if (tiles == 4) {
      _tile_zero(2);
      _tile_zero(3);
      _tile_loadd(6, v + 2 * kTileHalves, 64);
      _tile_loadd(7, v + 3 * kTileHalves, 64);
      _tile_dpbf16ps(2, 4, 6);
      _tile_dpbf16ps(2, 5, 6);
      _tile_dpbf16ps(3, 4, 7);
      _tile_dpbf16ps(3, 5, 7);
      if (kv_lo) {
        _tile_loadd(6, v_lo + 2 * kTileHalves, 64);
        _tile_loadd(7, v_lo + 3 * kTileHalves, 64);
        _tile_dpbf16ps(2, 4, 6);
        _tile_dpbf16ps(3, 4, 7);
      }
      _tile_stored(2, s.c + 2 * kTileDwords, 64);
      _tile_stored(3, s.c + 3 * kTileDwords, 64);
    }
    compiler_barrier();
    for (int i = 0; i < kTileM; ++i) {
      const __m512 f = _mm512_set1_ps(corr[i]);
      float* o = out + i * d + c0;
      for (int j = 0; j < tiles; ++j)
        _mm512_storeu_ps(o + 16 * j,
                         _mm512_fmadd_ps(_mm512_loadu_ps(o + 16 * j), f,
                                         _mm512_load_ps(s.c + j * kTileDwords + 16 * i)));
    }
  }
}

}  // namespace

namespace MINIMAX_AMX_TILES {

bool amx_attention_applies(const AttentionArgs& a, CpuIsa isa) {
  return isa == CpuIsa::kAvx512 && a.T >= kTileM &&
         (a.kv_dtype == KvDtype::kBF16 || a.kv_dtype == KvDtype::kFp8E4m3 ||
          a.kv_dtype == KvDtype::kF32) &&
         a.head_dim % 32 == 0 && a.head_dim <= kMaxHeadDim && amx_usable();
}

MINIMAX_AVX512 void amx_attend_block(const AttentionArgs& a, int64_t block, int g) {
  const int group = a.num_heads / a.num_kv_heads;
  const int64_t d = a.head_dim, steps = d / 32;
  const int64_t t0 = block * kTileM;
  const int rows = static_cast<int>(std::min<int64_t>(kTileM, a.T - t0));
  // Each row's visible slots as runs (dense: [0, pos]), walked tile by tile with a cursor.
  thread_local std::vector<SlotRange> runs[kTileM];
  size_t cursor[kTileM] = {};
  int64_t last = -1;
  for (int i = 0; i < kTileM; ++i) {
    runs[i].clear();
    if (i < rows) visible_runs(a, t0 + i, g, runs[i]);
    if (!runs[i].empty()) last = std::max(last, runs[i].back().end - 1);
  }
  Scratch& s = scratch(group, d);
  pack_queries(a, t0, rows, g, s);
  std::fill(s.out.begin(), s.out.end(), 0.0f);
  std::fill(s.max.begin(), s.max.end(), -std::numeric_limits<float>::infinity());
  std::fill(s.sum.begin(), s.sum.end(), 0.0f);
  const bool fp8 = a.kv_dtype == KvDtype::kFp8E4m3, f32 = a.kv_dtype == KvDtype::kF32;
  const auto* k_base = static_cast<const char*>(kv_element(a.k_cache, a.kv_dtype, g * d));
  const auto* v_base = static_cast<const char*>(kv_element(a.v_cache, a.kv_dtype, g * d));
  const int64_t row_bytes = a.cache_stride * kv_dtype_bytes(a.kv_dtype);
  static const Fp8Bf16Tables fp8_tables;
  load_tile_config();
  for (int64_t s0 = 0; s0 <= last; s0 += kSlots) {
    // Bit j of visible[i]: row i sees slot s0 + j. A tile no row sees changes nothing: skipped.
    uint32_t visible[kTileM], any = 0;
    for (int i = 0; i < kTileM; ++i) {
      visible[i] = 0;
      for (size_t& r = cursor[i]; r < runs[i].size(); ++r) {
        const int64_t b = std::max(runs[i][r].begin, s0) - s0;
        const int64_t e = std::min(runs[i][r].end, s0 + kSlots) - s0;
        if (b < e) visible[i] |= static_cast<uint32_t>((uint64_t{1} << e) - (uint64_t{1} << b));
        if (runs[i][r].end > s0 + kSlots) break;  // the run goes on into the next tile
      }
      any |= visible[i];
    }
    if (any == 0) continue;
    const uint16_t* k_rows[kSlots];
    const uint16_t* v_rows[kSlots];
    const uint16_t* k_rows_lo[kSlots];
    const uint16_t* v_rows_lo[kSlots];
    for (int j = 0; j < kSlots; ++j) {
      if (s0 + j > last) {
        k_rows[j] = v_rows[j] = k_rows_lo[j] = v_rows_lo[j] = s.zeros;
        continue;
      }
      const int64_t at = cache_row(a, s0 + j) * row_bytes;
      if (f32) {  // split into scratch: hi and lo planes
        split_row(reinterpret_cast<const float*>(k_base + at), d, &s.k_rows[j * d],
                  &s.k_rows_lo[j * d]);
        split_row(reinterpret_cast<const float*>(v_base + at), d, &s.v_rows[j * d],
                  &s.v_rows_lo[j * d]);
        k_rows[j] = &s.k_rows[j * d];
        v_rows[j] = &s.v_rows[j * d];
        k_rows_lo[j] = &s.k_rows_lo[j * d];
        v_rows_lo[j] = &s.v_rows_lo[j * d];
      } else if (fp8) {  // decoded into scratch: the tiles take bf16
        fp8_tables.decode(reinterpret_cast<const uint8_t*>(k_base + at), d, &s.k_rows[j * d]);
        fp8_tables.decode(reinterpret_cast<const uint8_t*>(v_base + at), d, &s.v_rows[j * d]);
        k_rows[j] = &s.k_rows[j * d];
        v_rows[j] = &s.v_rows[j * d];
      } else {
        k_rows[j] = reinterpret_cast<const uint16_t*>(k_base + at);
        v_rows[j] = reinterpret_cast<const uint16_t*>(v_base + at);
      }
    }
    pack_slots(k_rows, v_rows, d, s.k.data(), s.v.data());
    if (f32) pack_slots(k_rows_lo, v_rows_lo, d, s.k_lo.data(), s.v_lo.data());
    compiler_barrier();
    for (int h = 0; h < group; ++h) {
      float corr[kTileM];
      scores(s, h, steps, f32);
      softmax_step(s, h, visible, a.scale, corr);
      accumulate(s, h, d, corr, f32);
    }
  }
  _tile_release();
  for (int h = 0; h < group; ++h)
    for (int i = 0; i < rows; ++i) {
      float* out = a.out + ((t0 + i) * a.num_heads + g * group + h) * d;
      const float sum = s.sum[h * kTileM + i];
      const float* o = s.out.data() + (h * kTileM + i) * d;
      // No visible slot (cannot happen causally): zeros, as the reference defines it.
      for (int64_t c = 0; c < d; ++c) out[c] = sum > 0 ? o[c] / sum : 0.0f;
    }
}

}  // namespace MINIMAX_AMX_TILES
}  // namespace minimax::cpu_ops_detail
