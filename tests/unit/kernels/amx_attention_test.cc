// The AMX prefill attention (kernels/cpu/attention_amx.cc) against the reference, on the CPU's AMX
// tiles and on the tile emulator (every CPU with AVX512_BF16): prefill on a bf16, fp8 or f32 cache
// under split bf16 activations, M2 and M3 head layouts, chunks after earlier context, MSA-selected
// blocks, token counts that are not a multiple of 16, scattered positions; paged equal to
// contiguous, every thread count equal, and every visible block selected equal to dense, bit for
// bit.
//
// Bound per output element, as cpu_attention_test.cc's with the split operands added: each score
// is within E = (2d + 8)·u·m + 2^-16·m + (3 + |s − max|)·u of the exact one (m = scale·Σ|q_c·k_c|:
// the f32 sums of the hi and lo products, the lo half of q within 2^-16, the exp), and p's split
// into hi + lo moves the output by at most 2^-16·max|v|. The test uses
// (4.4·E + (2n + n/8 + 8)·u + 2^-16)·max_s|v_sc|. An f32 cache's K and V are split as well and
// the lo × lo products left out (each |lo| ≤ 2^-8 of its value): 2·2^-16·m more in E and 2·2^-16
// more beside the 2^-16 of p's split.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "amx_modes.h"
#include "kernel_test_util.h"
#include "kernels/cpu/attention_kernels.h"
#include "kernels/cpu/cpu_config.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

struct Problem {
  int heads, kv, d;
  std::vector<int32_t> positions;
  KvDtype dtype = KvDtype::kBF16;
  std::vector<float> q, k, v;     // k, v: the cache's values
  std::vector<uint8_t> kc, vc;    // the cache
  int block = 0, max_blocks = 0;  // block > 0: MSA block ids per (token, KV group)
  std::vector<int32_t> blocks;
  int64_t T() const { return static_cast<int64_t>(positions.size()); }
  AttentionArgs args(float* out) const {
    AttentionArgs a;
    a.q = q.data();
    a.T = T();
    a.num_heads = heads;
    a.num_kv_heads = kv;
    a.head_dim = d;
    a.k_cache = kc.data();
    a.v_cache = vc.data();
    a.cache_stride = int64_t{kv} * d;
    a.kv_dtype = dtype;
    a.positions = positions.data();
    a.scale = static_cast<float>(1 / std::sqrt(double(d)));
    if (block > 0) {
      a.block_ids = blocks.data();
      a.block_size = block;
      a.max_blocks = max_blocks;
    }
    a.out = out;
    return a;
  }
};

Problem make_amx_problem(int heads, int kv, int d, std::vector<int32_t> positions, uint32_t seed,
                         KvDtype dtype = KvDtype::kBF16) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.5f);
  Problem p;
  p.heads = heads;
  p.kv = kv;
  p.d = d;
  p.positions = std::move(positions);
  p.dtype = dtype;
  const int64_t slots = *std::max_element(p.positions.begin(), p.positions.end()) + 1;
  const int64_t row = int64_t{kv} * d;
  p.q.resize(p.T() * heads * d);
  for (float& x : p.q) x = normal(rng);
  for (auto* cache : {&p.kc, &p.vc}) {
    std::vector<float> x(slots * row);
    for (float& f : x) f = normal(rng);
    cache->resize(x.size() * kv_dtype_bytes(dtype));
    encode_kv_row(x.data(), slots * row, dtype, cache->data());
  }
  p.k.resize(slots * row);
  p.v.resize(slots * row);
  decode_kv_row(p.kc.data(), slots * row, dtype, p.k.data());
  decode_kv_row(p.vc.data(), slots * row, dtype, p.v.data());
  return p;
}

// MSA block ids for every (token, group): the last visible block plus each earlier one with
// probability `keep` (1: every visible block), ascending, −1 padded.
void choose_blocks(Problem& p, int block, double keep, uint32_t seed) {
  std::mt19937 rng(seed);
  const int32_t most = *std::max_element(p.positions.begin(), p.positions.end());
  p.block = block;
  p.max_blocks = most / block + 1;
  p.blocks.assign(p.T() * p.kv * p.max_blocks, -1);
  for (int64_t t = 0; t < p.T(); ++t)
    for (int g = 0; g < p.kv; ++g) {
      int32_t* ids = p.blocks.data() + (t * p.kv + g) * p.max_blocks;
      const int last = p.positions[t] / block;
      int n = 0;
      for (int b = 0; b < last; ++b)
        if (std::uniform_real_distribution<double>(0, 1)(rng) < keep) ids[n++] = b;
      ids[n] = last;
    }
}

// Whether query t of KV group g sees slot s.
bool sees(const Problem& p, int64_t t, int g, int64_t s) {
  if (s > p.positions[t]) return false;
  if (p.block == 0) return true;
  for (int i = 0; i < p.max_blocks; ++i)
    if (p.blocks[(t * p.kv + g) * p.max_blocks + i] == s / p.block) return true;
  return false;
}

// The bound of the file comment for every element of query t's head h.
std::vector<double> bounds(const Problem& p, int64_t t, int h) {
  const int g = h / (p.heads / p.kv);
  const int64_t d = p.d, stride = int64_t{p.kv} * d;
  const double scale = 1 / std::sqrt(double(d));
  const int64_t n = p.positions[t] + 1;
  std::vector<double> score(n, -INFINITY), magnitude(n, 0.0), vmax(d, 0.0);
  double max_score = -INFINITY, seen = 0;
  for (int64_t s = 0; s < n; ++s) {
    if (!sees(p, t, g, s)) continue;
    ++seen;
    double dot = 0, abs_dot = 0;
    for (int64_t i = 0; i < d; ++i) {
      const double x = double(p.q[(t * p.heads + h) * d + i]) * p.k[s * stride + g * d + i];
      dot += x;
      abs_dot += std::fabs(x);
      vmax[i] = std::max(vmax[i], std::fabs(double(p.v[s * stride + g * d + i])));
    }
    score[s] = dot * scale;
    magnitude[s] = abs_dot * scale;
    max_score = std::max(max_score, score[s]);
  }
  const double splits = p.dtype == KvDtype::kF32 ? 3 : 1;  // of q (and of k, and lo × lo)
  double e = 0;
  for (int64_t s = 0; s < n; ++s)
    if (sees(p, t, g, s))
      e = std::max(e, (2.0 * d + 8) * kU * magnitude[s] + splits * 0x1p-16 * magnitude[s] +
                          (3 + std::fabs(score[s] - max_score)) * kU);
  const double factor = 4.4 * e + (2.0 * seen + seen / 8.0 + 8) * kU + splits * 0x1p-16;
  for (double& v : vmax) v = factor * v + 1e-30;
  return vmax;
}

// Each test on the CPU's AMX tiles and on the tile emulator (amx_modes.h).
class AmxAttention : public AmxModeTest {};

TEST_P(AmxAttention, WithinBoundOfTheReference) {
  struct Case {
    std::string name;
    int heads, kv, d;
    std::vector<int32_t> positions;
    KvDtype dtype = KvDtype::kBF16;
  };
  std::mt19937 rng(5);
  std::vector<int32_t> scattered(21);
  for (int32_t& x : scattered) x = static_cast<int32_t>(rng() % 300);
  const Case cases[] = {
      {"m2_prefill_from_start", 48, 8, 128, positions_from(0, 80)},
      {"m3_chunk_after_context", 64, 4, 128, positions_from(290, 37)},  // with MSA blocks (below)
      {"head_dim_64", 8, 2, 64, positions_from(0, 16)},
      {"head_dim_96", 4, 2, 96,
       positions_from(7, 19)},  // 64 dims in four tiles, the last 32 in two
      {"head_dim_32", 4, 2, 32, positions_from(0, 33)},  // the bundled tiny M3
      {"fp8_cache", 48, 8, 128, positions_from(60, 24), KvDtype::kFp8E4m3},
      {"f32_cache", 48, 8, 128, positions_from(60, 24), KvDtype::kF32},
      {"f32_cache_head_dim_96", 4, 2, 96, positions_from(7, 19), KvDtype::kF32},
      {"f32_cache_msa", 64, 4, 128, positions_from(290, 37), KvDtype::kF32},  // MSA (below)
      {"scattered_positions", 8, 2, 128, scattered},
  };
  ThreadPool pool(2);
  uint32_t seed = 1;
  for (const Case& c : cases) {
    Problem p = make_amx_problem(c.heads, c.kv, c.d, c.positions, seed++, c.dtype);
    if (c.name == "m3_chunk_after_context" || c.name == "f32_cache_msa")
      choose_blocks(p, 64, 0.5, seed++);  // MSA, 64-slot blocks
    std::vector<float> got(p.T() * c.heads * c.d), want(got.size());
    ASSERT_TRUE(cpu_ops_detail::amx_attention_applies(p.args(got.data()), CpuIsa::kAvx512))
        << c.name;
    cpu_attention_at(p.args(got.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
    reference::attention(p.args(want.data()), nullptr);
    double worst = 0;
    for (int64_t t = 0; t < p.T(); ++t)
      for (int h = 0; h < c.heads; ++h) {
        const std::vector<double> bound = bounds(p, t, h);
        for (int64_t i = 0; i < c.d; ++i) {
          const size_t at = (t * c.heads + h) * c.d + i;
          const double err = std::fabs(double(got[at]) - want[at]);
          worst = std::max(worst, err / bound[i]);
          ASSERT_LE(err, bound[i]) << c.name << " token " << t << " head " << h << " element " << i
                                   << ": " << got[at] << " vs " << want[at];
        }
      }
    std::printf("[ measured ] %s: worst error / bound %.3g\n", c.name.c_str(), worst);
  }
}

// Scores exact in f32 (q and k bf16 with one nonzero element, scale 1/8) leave the softmax
// weights' split as the error that counts: hi + lo keeps 16 bits of each weight, so the outputs
// stay within 2^-14·max|v| (a P tile without its lo half would be 2^-9 off).
TEST_P(AmxAttention, SoftmaxWeightsKeepSixteenBits) {
  Problem p = make_amx_problem(1, 1, 64, positions_from(0, 16), 11);
  std::fill(p.q.begin(), p.q.end(), 0.0f);
  for (int64_t t = 0; t < 16; ++t) p.q[t * 64] = 1.0f;
  std::vector<float> k(16 * 64, 0.0f);
  for (int s = 0; s < 16; ++s) k[s * 64] = -1.5f * static_cast<float>(s);
  encode_kv_row(k.data(), 16 * 64, KvDtype::kBF16, p.kc.data());
  std::vector<float> got(16 * 64), want(got.size());
  ThreadPool pool(1);
  cpu_attention_at(p.args(got.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
  reference::attention(p.args(want.data()), nullptr);
  double vmax = 0;
  for (float x : p.v) vmax = std::max(vmax, std::fabs(double(x)));
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_LE(std::fabs(double(got[i]) - want[i]), 0x1p-14 * vmax)
        << "token " << i / 64 << " element " << i % 64 << ": " << got[i] << " vs " << want[i];
}

// An f32 cache keeps 16 bits of K and V: scores that need K's lo half (k of slot s about −1.7·s,
// not a bf16; q one-hot and scale 1/8, so q·k is exact in f32) and V values that are not bf16
// stay within 3·2^-16·max|v| of the reference (the splits of p and v, and p lo × v lo left out).
// Without K's lo half the scores move by up to 2^-9 of their size (up to 3.2), without V's lo
// the outputs by up to 2^-9 of |v|.
TEST_P(AmxAttention, F32CacheKeepsSixteenBitsOfKAndV) {
  Problem p = make_amx_problem(1, 1, 64, positions_from(0, 16), 13, KvDtype::kF32);
  std::fill(p.q.begin(), p.q.end(), 0.0f);
  for (int64_t t = 0; t < 16; ++t) p.q[t * 64] = 1.0f;
  std::fill(p.k.begin(), p.k.end(), 0.0f);
  for (int s = 0; s < 16; ++s)
    p.k[s * 64] = -1.7f * static_cast<float>(s) * (1.0f + 0.001f * static_cast<float>(s));
  encode_kv_row(p.k.data(), 16 * 64, KvDtype::kF32, p.kc.data());
  std::vector<float> got(16 * 64), want(got.size());
  ThreadPool pool(1);
  cpu_attention_at(p.args(got.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
  reference::attention(p.args(want.data()), nullptr);
  double vmax = 0, worst = 0;
  for (float x : p.v) vmax = std::max(vmax, std::fabs(double(x)));
  for (size_t i = 0; i < got.size(); ++i) {
    const double err = std::fabs(double(got[i]) - want[i]);
    worst = std::max(worst, err / vmax);
    ASSERT_LE(err, 3 * 0x1p-16 * vmax)
        << "token " << i / 64 << " element " << i % 64 << ": " << got[i] << " vs " << want[i];
  }
  std::printf("[ measured ] worst error / max|v|: %.3g (bound %.3g)\n", worst, 3 * 0x1p-16);
}

TEST_P(AmxAttention, PagedAndThreadCountsGiveTheSameBits) {
  const Problem p = make_amx_problem(24, 4, 128, positions_from(40, 50), 9);
  std::vector<float> one(p.T() * 24 * 128), three(one.size()), paged(one.size());
  ThreadPool single(1), several(3);
  cpu_attention_at(p.args(one.data()), &single, CpuIsa::kAvx512, /*amx_tiles=*/true);
  cpu_attention_at(p.args(three.data()), &several, CpuIsa::kAvx512, /*amx_tiles=*/true);
  EXPECT_EQ(one, three);
  // The same cache in pages of 8 slots, stored in reverse page order.
  constexpr int kPage = 8;
  const int64_t slots = 90, pages = (slots + kPage - 1) / kPage, row = 4 * 128;
  Problem q = p;
  std::vector<int32_t> table(pages);
  q.kc.assign(pages * kPage * row * 2, 0);
  q.vc.assign(pages * kPage * row * 2, 0);
  for (int64_t page = 0; page < pages; ++page) {
    table[page] = static_cast<int32_t>(pages - 1 - page);
    for (int64_t s = page * kPage; s < std::min<int64_t>(slots, (page + 1) * kPage); ++s) {
      const int64_t dst = (table[page] * kPage + s % kPage) * row * 2;  // bf16: 2 bytes
      std::copy_n(p.kc.begin() + s * row * 2, row * 2, q.kc.begin() + dst);
      std::copy_n(p.vc.begin() + s * row * 2, row * 2, q.vc.begin() + dst);
    }
  }
  AttentionArgs a = q.args(paged.data());
  a.page_table = table.data();
  a.page_size = kPage;
  cpu_attention_at(a, &several, CpuIsa::kAvx512, /*amx_tiles=*/true);
  EXPECT_EQ(one, paged);
}

TEST_P(AmxAttention, EveryVisibleBlockSelectedIsBitIdenticalToDense) {
  Problem p = make_amx_problem(16, 4, 128, positions_from(100, 40), 21);
  std::vector<float> dense(p.T() * 16 * 128), sparse(dense.size());
  ThreadPool pool(2);
  cpu_attention_at(p.args(dense.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
  for (int block : {16, 48}) {  // blocks inside and across the kernel's 32-slot tiles
    choose_blocks(p, block, 1.0, 22);
    cpu_attention_at(p.args(sparse.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
    EXPECT_EQ(dense, sparse) << "block " << block;
  }
}

TEST_P(AmxAttention, TakenForEveryCacheTypeUnderBf16Activations) {
  const Problem p = make_amx_problem(8, 2, 128, positions_from(0, 16), 3);
  std::vector<float> out(p.T() * 8 * 128);
  AttentionArgs a = p.args(out.data());
  EXPECT_TRUE(cpu_ops_detail::amx_attention_applies(a, CpuIsa::kAvx512));
  EXPECT_FALSE(cpu_ops_detail::amx_attention_applies(a, CpuIsa::kAvx2));
  AttentionArgs short_call = a;
  short_call.T = 15;
  EXPECT_FALSE(cpu_ops_detail::amx_attention_applies(short_call, CpuIsa::kAvx512));
  AttentionArgs fp8 = a, f32 = a;
  fp8.kv_dtype = KvDtype::kFp8E4m3;
  EXPECT_TRUE(cpu_ops_detail::amx_attention_applies(fp8, CpuIsa::kAvx512));
  f32.kv_dtype = KvDtype::kF32;  // split into hi + lo
  EXPECT_TRUE(cpu_ops_detail::amx_attention_applies(f32, CpuIsa::kAvx512));
  AttentionArgs odd_dim = a;
  odd_dim.head_dim = 48;  // not whole 32-dim steps: the f32 kernels
  EXPECT_FALSE(cpu_ops_detail::amx_attention_applies(odd_dim, CpuIsa::kAvx512));
  // The f32 configuration does not ask for the tiles (CpuKernelConfig::amx_attention).
  CpuKernelConfig f32_config;
  f32_config.activations = ActivationPrecision::kF32;
  EXPECT_FALSE(f32_config.amx_attention());
}

// The tile emulator (amx_emulation-inl.h) runs this kernel to the same bits as the tiles: bf16,
// fp8 and f32 caches, MSA blocks, 2 threads.
TEST(AmxAttentionEmulation, EqualsTheTilesBitForBit) {
  if (!cpu_features().amx_bf16) GTEST_SKIP() << "no AMX here to compare the emulator with";
  ThreadPool pool(2);
  uint32_t seed = 40;
  for (const KvDtype dtype : {KvDtype::kBF16, KvDtype::kFp8E4m3, KvDtype::kF32})
    for (const bool msa : {false, true}) {
      Problem p = make_amx_problem(16, 4, 128, positions_from(30, 37), seed++, dtype);
      if (msa) choose_blocks(p, 16, 0.5, seed++);
      std::vector<float> tiles(p.T() * 16 * 128), emulated(tiles.size());
      {
        const ScopedAmxMode mode(AmxMode::kCpu);
        cpu_attention_at(p.args(tiles.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
      }
      {
        const ScopedAmxMode mode(AmxMode::kEmulated);
        cpu_attention_at(p.args(emulated.data()), &pool, CpuIsa::kAvx512, /*amx_tiles=*/true);
      }
      for (size_t i = 0; i < tiles.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(tiles[i]), std::bit_cast<uint32_t>(emulated[i]))
            << "cache " << static_cast<int>(dtype) << (msa ? " MSA" : " dense") << " element " << i
            << ": " << tiles[i] << " on the tiles, " << emulated[i] << " emulated";
    }
}

INSTANTIATE_TEST_SUITE_P(Modes, AmxAttention, ::testing::Values(AmxMode::kCpu, AmxMode::kEmulated),
                         amx_mode_name);

}  // namespace
}  // namespace minimax
