// KV cache element types (kernels/kv_codec.h): the fp8 encoder against the exact reference codec,
// and, for bf16 and fp8_e4m3 caches, store_kv, attention and MSA block selection on every backend
// and ISA level. A bf16 or fp8 cache only changes what is stored: each op on it must give exactly
// the bits the same op gives on an f32 cache holding the decoded values (paged or not), so the
// only accuracy cost of a type is its rounding, measured at the model level
// (tests/unit/model/kv_dtype_model_test.cc).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "formats/float_formats.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

uint8_t reference_fp8(float x) {
  return f64_to_fp8(static_cast<double>(x) / kFp8KvScale, Fp8Format::kE4M3FN);
}

TEST(KvCodec, Fp8EncoderMatchesTheExactCodec) {
  // Every code's value, the midpoints between neighbours (ties to even) and one f32 step either
  // side of them, both signs: every rounding boundary of e4m3fn.
  std::vector<float> values = {
      0.0f,   -0.0f,   447.0f, 448.0f, 449.0f,
      464.0f, 479.0f,  480.0f, 1e6f,   std::numeric_limits<float>::infinity(),
      1e-30f, 0x1p-10f};
  for (int c = 0; c < 0x7E; ++c) {
    const float a = static_cast<float>(fp8_to_f64(c, Fp8Format::kE4M3FN));
    const float b = static_cast<float>(fp8_to_f64(c + 1, Fp8Format::kE4M3FN));
    const float mid = (a + b) / 2;  // exact: a and b differ in their last bits only
    for (float x : {a, mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)})
      values.push_back(x);
  }
  std::mt19937 rng(5);
  for (int i = 0; i < 100000; ++i)  // random bit patterns below 2^10
    values.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x44800000u)));
  for (float x : values) {
    for (float v : {x, -x}) {
      ASSERT_EQ(encode_fp8_kv(v), reference_fp8(v)) << v;
      if (std::isfinite(v)) {
        ASSERT_FALSE(std::isnan(fp8_kv_table()[encode_fp8_kv(v)])) << v;  // saturates, never NaN
      }
    }
  }
  EXPECT_EQ(encode_fp8_kv(std::numeric_limits<float>::quiet_NaN()), 0x7F);
  EXPECT_EQ(fp8_kv_table()[encode_fp8_kv(1e6f)], 448.0f);
  EXPECT_EQ(fp8_kv_table()[encode_fp8_kv(-1e6f)], -448.0f);
}

TEST(KvCodec, RowsRoundTrip) {
  const std::vector<float> x = {1.0f, -2.5f, 0.1f, 3.0e5f, -7.0f, 1e-3f};
  std::vector<float> back(x.size());
  for (KvDtype dtype : {KvDtype::kF32, KvDtype::kBF16, KvDtype::kFp8E4m3}) {
    std::vector<uint8_t> stored(x.size() * kv_dtype_bytes(dtype));
    encode_kv_row(x.data(), static_cast<int64_t>(x.size()), dtype, stored.data());
    decode_kv_row(stored.data(), static_cast<int64_t>(x.size()), dtype, back.data());
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = dtype == KvDtype::kF32    ? x[i]
                         : dtype == KvDtype::kBF16 ? bf16_to_f32(f32_to_bf16(x[i]))
                                                   : fp8_kv_table()[reference_fp8(x[i])];
      EXPECT_EQ(back[i], want) << kv_dtype_name(dtype) << " " << x[i];
    }
  }
}

// A cache of `slots` rows of `width` written through store_kv in `dtype`, and the same rows
// decoded into an f32 cache.
struct Caches {
  std::vector<uint8_t> stored;
  std::vector<float> decoded;
};
Caches make_cache(const std::vector<float>& rows, int64_t slots, int64_t width, KvDtype dtype) {
  Caches c;
  c.stored.assign(slots * width * kv_dtype_bytes(dtype), 0);
  std::vector<int32_t> positions(slots);
  for (int64_t s = 0; s < slots; ++s) positions[s] = static_cast<int32_t>(s);
  KvStoreArgs store;
  store.rows = rows.data();
  store.T = slots;
  store.width = width;
  store.positions = positions.data();
  store.storage = c.stored.data();
  store.dtype = dtype;
  reference::store_kv(store);
  c.decoded.resize(slots * width);
  decode_kv_row(c.stored.data(), slots * width, dtype, c.decoded.data());
  return c;
}

class KvDtypeOps : public ::testing::TestWithParam<KvDtype> {};

// Attention (dense and block-sparse, contiguous and paged) on a bf16 / fp8 cache equals the same
// op on an f32 cache of the decoded values, bit for bit, on the reference and every CPU level.
TEST_P(KvDtypeOps, AttentionEqualsTheF32CacheOfTheDecodedValues) {
  const KvDtype dtype = GetParam();
  // 80 storage rows: 5 pages of 16 (positions reach slot 69). head_dim 128 (M2's and M3's) takes
  // the AVX-512 kernel's in-register tile path, 80 the gathered one.
  for (const int d : {80, 128}) {
    constexpr int heads = 8, kv = 2, slots = 80, block = 16, max_blocks = 3;
    std::mt19937 rng(11);
    const std::vector<float> q = random_floats(3 * heads * d, rng, 1.0f);
    const std::vector<float> k = random_floats(slots * kv * d, rng, 2.0f);
    const std::vector<float> v = random_floats(slots * kv * d, rng, 1.5f);
    const std::vector<int32_t> positions = {5, 40, 69};
    // Blocks per (token, group): token 0 sees block 0; the others a sparse choice.
    const std::vector<int32_t> blocks = {0, -1, -1, 0, -1, -1, 0, 2, -1,
                                         1, 2,  -1, 0, 2,  4,  1, 3, 4};
    const std::vector<int32_t> table = {3, 0, 4, 1, 2};  // 5 pages of 16 slots, shuffled
    ThreadPool pool(2);
    for (const bool paged : {false, true}) {
      for (const bool sparse : {false, true}) {
        // Rows stored at row = slot; a paged read of slot s takes row table[s/16]·16 + s%16 of
        // both caches alike.
        const Caches kc = make_cache(k, slots, kv * d, dtype);
        const Caches vc = make_cache(v, slots, kv * d, dtype);
        AttentionArgs a;
        a.q = q.data();
        a.T = 3;
        a.num_heads = heads;
        a.num_kv_heads = kv;
        a.head_dim = d;
        a.cache_stride = kv * d;
        a.positions = positions.data();
        a.scale = 0.11f;
        if (sparse) {
          a.block_ids = blocks.data();
          a.block_size = block;
          a.max_blocks = max_blocks;
        }
        if (paged) {
          a.page_table = table.data();
          a.page_size = 16;
        }
        std::vector<float> want(3 * heads * d), got(3 * heads * d);
        const auto run = [&](auto&& op, const void* kp, const void* vp, KvDtype t, float* out) {
          AttentionArgs b = a;
          b.k_cache = kp;
          b.v_cache = vp;
          b.kv_dtype = t;
          b.out = out;
          op(b);
        };
        run([&](const AttentionArgs& b) { reference::attention(b, &pool); }, kc.decoded.data(),
            vc.decoded.data(), KvDtype::kF32, want.data());
        run([&](const AttentionArgs& b) { reference::attention(b, &pool); }, kc.stored.data(),
            vc.stored.data(), dtype, got.data());
        EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0) << "reference";
        for (CpuIsa isa : levels()) {
          run([&](const AttentionArgs& b) { cpu_attention_at(b, &pool, isa); }, kc.decoded.data(),
              vc.decoded.data(), KvDtype::kF32, want.data());
          run([&](const AttentionArgs& b) { cpu_attention_at(b, &pool, isa); }, kc.stored.data(),
              vc.stored.data(), dtype, got.data());
          EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * 4), 0)
              << cpu_isa_name(isa) << " paged " << paged << " sparse " << sparse << " d " << d;
        }
      }
    }
  }
}

// Block choice over a bf16 / fp8 index-key cache: the reference's and every CPU level's equal the
// choice over the decoded f32 keys (exact double scores of the same floats).
TEST_P(KvDtypeOps, BlockChoiceEqualsTheF32CacheOfTheDecodedValues) {
  const KvDtype dtype = GetParam();
  constexpr int heads = 4, dim = 32, slots = 300, block = 16, topk = 4;
  std::mt19937 rng(12);
  const std::vector<float> q = random_floats(2 * heads * dim, rng, 1.0f);
  const std::vector<float> keys = random_floats(slots * dim, rng, 1.0f);
  const std::vector<int32_t> positions = {150, 299};
  for (const bool paged : {false, true}) {
    std::vector<int32_t> table(19);
    for (int i = 0; i < 19; ++i) table[i] = (i * 7) % 19;  // a permutation of 19 pages
    const int64_t rows = paged ? 19 * 16 : slots;
    std::vector<float> padded_keys = keys;
    padded_keys.resize(rows * dim, 0.0f);
    const Caches c = make_cache(padded_keys, rows, dim, dtype);
    BlockSelectArgs a;
    a.index_q = q.data();
    a.T = 2;
    a.num_index_heads = heads;
    a.index_dim = dim;
    a.index_k_stride = dim;
    a.positions = positions.data();
    a.block_size = block;
    a.topk_blocks = topk;
    if (paged) {
      a.page_table = table.data();
      a.page_size = 16;
    }
    std::vector<int32_t> want(2 * heads * topk), got(want.size());
    const auto choose = [&](auto&& op, const void* keys_p, KvDtype t, int32_t* out) {
      BlockSelectArgs b = a;
      b.index_k_cache = keys_p;
      b.kv_dtype = t;
      b.block_ids = out;
      op(b);
    };
    choose([&](const BlockSelectArgs& b) { reference::select_blocks(b, nullptr); },
           c.decoded.data(), KvDtype::kF32, want.data());
    choose([&](const BlockSelectArgs& b) { reference::select_blocks(b, nullptr); }, c.stored.data(),
           dtype, got.data());
    EXPECT_EQ(got, want) << "reference";
    for (CpuIsa isa : levels()) {
      ThreadPool pool(2);
      choose([&](const BlockSelectArgs& b) { cpu_select_blocks_at(b, &pool, isa); },
             c.stored.data(), dtype, got.data());
      EXPECT_EQ(got, want) << cpu_isa_name(isa) << " paged " << paged;
    }
  }
}

// One visible slot: attention returns that slot's V row exactly (weight 1), so every fp8 code
// (and a spread of bf16 patterns) goes through each level's vector decoder and must come out as
// kv_codec.h's value.
TEST(KvDtypeDecode, AttentionReadsEveryCodeAsTheCodecDefinesIt) {
  constexpr int d = 256;
  std::vector<uint8_t> fp8_v(d);
  for (int c = 0; c < d; ++c) fp8_v[c] = (c & 0x7F) == 0x7F ? 0 : static_cast<uint8_t>(c);
  std::vector<uint16_t> bf16_v(d);
  for (int i = 0; i < d; ++i)  // scattered patterns, both signs, exponent never all-ones
    bf16_v[i] = static_cast<uint16_t>(((uint32_t(i) * 2654435761u) >> 16 & 0x7F7F) | (i & 1) << 15);
  const std::vector<uint8_t> zeros(d * 2, 0);  // K: any finite row
  const std::vector<float> q(d, 0.5f);
  const int32_t position = 0;
  for (KvDtype dtype : {KvDtype::kBF16, KvDtype::kFp8E4m3}) {
    const void* v = dtype == KvDtype::kBF16 ? static_cast<const void*>(bf16_v.data())
                                            : static_cast<const void*>(fp8_v.data());
    std::vector<float> want(d);
    decode_kv_row(v, d, dtype, want.data());
    AttentionArgs a;
    a.q = q.data();
    a.T = 1;
    a.num_heads = a.num_kv_heads = 1;
    a.head_dim = d;
    a.k_cache = zeros.data();
    a.v_cache = v;
    a.cache_stride = d;
    a.kv_dtype = dtype;
    a.positions = &position;
    a.scale = 1.0f;
    for (CpuIsa isa : levels()) {
      std::vector<float> got(d, -1.0f);
      a.out = got.data();
      cpu_attention_at(a, nullptr, isa);
      for (int i = 0; i < d; ++i)
        ASSERT_EQ(got[i], want[i])  // value equality: 1·(−0) + 0 is +0
            << kv_dtype_name(dtype) << " " << cpu_isa_name(isa) << " element " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, KvDtypeOps, ::testing::Values(KvDtype::kBF16, KvDtype::kFp8E4m3),
                         [](const auto& info) { return std::string(kv_dtype_name(info.param)); });

}  // namespace
}  // namespace minimax
