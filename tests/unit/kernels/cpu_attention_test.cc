// CPU attention and MSA block choice (kernels/cpu/cpu_ops.h) against the reference ops, at every
// ISA level this CPU runs: attention within a stated f32 bound (GQA, decode and prefill, dense and
// block-sparse, odd head sizes, tiny and real M2/M3 shapes), bit-identical to dense when every
// visible block is selected and across thread counts; block choice identical to the reference on
// ties and across thread counts (the op table, tests/backend_ops/, compares the block ids at its
// shapes).
//
// Attention bound, per output element c of query head h over its n visible slots: with E the
// largest error of a softmax argument, (d + 8)·u·scale·Σ_c|q_c·k_c| for the f32 dot product plus
// (3 + |s − max|)·u for the shifted vectorised exp, perturbing every weight by a factor within
// e^{±E} moves the output by at most 2(e^{2E} − 1)·max|v_c|; the f32 sums of p·v and p over n slots
// and the rescaling once per tile of 16 add (2n + 2n/16 + 8)·u·max|v_c|. The test uses
// (4.4·E + (2n + n/8 + 8)·u)·max_s|v_sc|.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

// ---- Attention ----------------------------------------------------------------------------------

struct AttnProblem {
  int heads = 0, kv = 0, d = 0;
  std::vector<int32_t> positions;
  int block = 0, max_blocks = 0;  // block > 0: a random block choice per (token, KV group)
  std::vector<float> q, k, v;
  std::vector<int32_t> blocks;

  int64_t T() const { return static_cast<int64_t>(positions.size()); }
  AttentionArgs args(float* out) const {
    AttentionArgs a;
    a.q = q.data();
    a.T = T();
    a.num_heads = heads;
    a.num_kv_heads = kv;
    a.head_dim = d;
    a.k_cache = k.data();
    a.v_cache = v.data();
    a.cache_stride = int64_t{kv} * d;
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

AttnProblem make_attention(int heads, int kv, int d, std::vector<int32_t> positions, int block,
                           int max_blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  AttnProblem p;
  p.heads = heads;
  p.kv = kv;
  p.d = d;
  p.positions = std::move(positions);
  p.block = block;
  p.max_blocks = max_blocks;
  const int64_t slots = *std::max_element(p.positions.begin(), p.positions.end()) + 1;
  p.q = random_floats(p.T() * heads * d, rng, 1.5f);
  p.k = random_floats(slots * kv * d, rng, 1.5f);
  p.v = random_floats(slots * kv * d, rng);
  if (block > 0) {
    // Per (token, group): the last visible block plus a random choice of the others, ascending.
    p.blocks.assign(p.T() * kv * max_blocks, -1);
    for (int64_t t = 0; t < p.T(); ++t) {
      const int nblk = p.positions[t] / block + 1;
      for (int g = 0; g < kv; ++g) {
        std::vector<int32_t> chosen = {nblk - 1};
        for (int b = 0; b < nblk - 1 && static_cast<int>(chosen.size()) < max_blocks; ++b)
          if (rng() % 2 == 0) chosen.push_back(b);
        std::sort(chosen.begin(), chosen.end());
        std::copy(chosen.begin(), chosen.end(), p.blocks.begin() + (t * kv + g) * max_blocks);
      }
    }
  }
  return p;
}

// The bound of the file comment for every output element.
std::vector<double> attention_bound(const AttnProblem& p) {
  const int group = p.heads / p.kv;
  const int64_t d = p.d, stride = int64_t{p.kv} * d;
  const double scale = 1 / std::sqrt(double(d));
  std::vector<double> bound(p.T() * p.heads * d);
  for (int64_t t = 0; t < p.T(); ++t) {
    for (int h = 0; h < p.heads; ++h) {
      const int g = h / group;
      std::vector<int64_t> slots;
      for (int64_t s = 0; s <= p.positions[t]; ++s) {
        bool visible = p.block == 0;
        for (int i = 0; !visible && i < p.max_blocks; ++i)
          visible = p.blocks[(t * p.kv + g) * p.max_blocks + i] == s / p.block;
        if (visible) slots.push_back(s);
      }
      const float* q = p.q.data() + (t * p.heads + h) * d;
      std::vector<double> score(slots.size()), magnitude(slots.size());
      double max_score = -INFINITY;
      for (size_t i = 0; i < slots.size(); ++i) {
        const float* k = p.k.data() + slots[i] * stride + g * d;
        double dot = 0, abs_dot = 0;
        for (int64_t c = 0; c < d; ++c) {
          dot += double(q[c]) * k[c];
          abs_dot += std::fabs(double(q[c]) * k[c]);
        }
        score[i] = dot * scale;
        magnitude[i] = abs_dot * scale;
        max_score = std::max(max_score, score[i]);
      }
      double E = 0;
      for (size_t i = 0; i < slots.size(); ++i)
        E = std::max(E, (d + 8) * kU * magnitude[i] + (3 + std::fabs(score[i] - max_score)) * kU);
      const double n = static_cast<double>(slots.size());
      const double factor = 4.4 * E + (2 * n + n / 8 + 8) * kU;
      for (int64_t c = 0; c < d; ++c) {
        double vmax = 0;
        for (int64_t s : slots)
          vmax = std::max(vmax, std::fabs(double(p.v[s * stride + g * d + c])));
        bound[(t * p.heads + h) * d + c] = factor * vmax + 1e-30;
      }
    }
  }
  return bound;
}

struct AttnCase {
  std::string name;
  int heads, kv, d;
  std::vector<int32_t> positions;
  int block = 0, max_blocks = 0;
};

std::vector<AttnCase> attention_cases() {
  return {
      {"tiny_decode_first", 8, 2, 16, {0}},
      {"tiny_decode", 8, 2, 16, {37}},
      {"tiny_prefill", 8, 2, 16, positions_from(0, 20)},
      {"tiny_m3_sparse_prefill", 8, 2, 16, positions_from(50, 40), 16, 4},
      {"odd_head_dim", 6, 3, 13, {3, 9, 17, 40, 41}},
      {"head_dim_40", 4, 1, 40, positions_from(90, 7)},
      {"head_dim_100_sparse", 4, 2, 100, {130, 200}, 7, 5},
      {"m2_decode", 48, 8, 128, {700}},
      {"m3_decode_sparse", 64, 4, 128, {2900}, 128, 16},
      {"m3_prefill_chunk", 64, 4, 128, positions_from(120, 12)},
  };
}

TEST(CpuAttention, WithinBoundOfTheReferenceAtEveryLevel) {
  ThreadPool pool(2);
  uint32_t seed = 100;
  for (const AttnCase& c : attention_cases()) {
    const AttnProblem p =
        make_attention(c.heads, c.kv, c.d, c.positions, c.block, c.max_blocks, seed++);
    std::vector<float> ref(p.q.size());
    reference::attention(p.args(ref.data()), nullptr);
    const std::vector<double> bound = attention_bound(p);
    for (CpuIsa isa : levels()) {
      std::vector<float> got(p.q.size(), NAN);
      cpu_attention_at(p.args(got.data()), &pool, isa);
      double worst = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(std::fabs(got[i] - ref[i]), bound[i])
            << c.name << " on " << cpu_isa_name(isa) << " at " << i;
        worst = std::max(worst, std::fabs(double(got[i]) - ref[i]));
      }
      // The bound is a worst case; the differences measured are at most 3e-6 (|v| ~ 1).
      EXPECT_LT(worst, 1e-5) << c.name << " on " << cpu_isa_name(isa);
    }
  }
}

TEST(CpuAttention, SoftmaxWeightsAreAccurateOverTheWholeExpRange) {
  // Two slots with scores Δ and 0 (exact: scale 1/4, q = (4Δ, 0, ...), k0 = e0, k1 = 0) and
  // v0 = e0, v1 = e1: the outputs are σ(Δ) and σ(−Δ), which checks the vectorised exp directly.
  const int d = 16;
  std::vector<float> deltas;
  for (float x = -90.0f; x <= 90.0f; x += 0.37f) deltas.push_back(x);
  const int64_t T = static_cast<int64_t>(deltas.size());
  std::vector<float> q(T * d, 0.0f), k(2 * d, 0.0f), v(2 * d, 0.0f), out(T * d);
  for (int64_t t = 0; t < T; ++t) q[t * d] = 4 * deltas[t];
  k[0] = 1.0f;
  v[0] = 1.0f;
  v[d + 1] = 1.0f;
  const std::vector<int32_t> positions(T, 1);
  AttentionArgs a;
  a.q = q.data();
  a.T = T;
  a.num_heads = 1;
  a.num_kv_heads = 1;
  a.head_dim = d;
  a.k_cache = k.data();
  a.v_cache = v.data();
  a.cache_stride = d;
  a.positions = positions.data();
  a.scale = 0.25f;
  a.out = out.data();
  for (CpuIsa isa : levels()) {
    cpu_attention_at(a, nullptr, isa);
    for (int64_t t = 0; t < T; ++t) {
      for (int i = 0; i < 2; ++i) {
        const double x = i == 0 ? deltas[t] : -deltas[t];
        const double expected = 1 / (1 + std::exp(-x));
        // exp within 2 ulp, then a sum and a division; weights below the smallest normal f32
        // (2^-126) are flushed to 0.
        EXPECT_LE(std::fabs(out[t * d + i] - expected), 5 * kU * expected + 0x1p-126)
            << "Δ = " << deltas[t] << " on " << cpu_isa_name(isa);
      }
    }
  }
}

TEST(CpuAttention, EveryVisibleBlockSelectedIsBitIdenticalToDense) {
  ThreadPool pool(2);
  struct Case {
    int heads, kv, d, block, max_blocks;
    std::vector<int32_t> positions;
  };
  // Runs that cross tile (16) and block boundaries; nblk <= max_blocks everywhere.
  const Case cases[] = {{8, 2, 16, 16, 4, positions_from(0, 64)},
                        {64, 4, 128, 64, 8, {300, 301, 511}},
                        {6, 3, 13, 5, 30, positions_from(100, 30)}};
  uint32_t seed = 200;
  for (const Case& c : cases) {
    AttnProblem p = make_attention(c.heads, c.kv, c.d, c.positions, 0, 0, seed++);
    std::vector<float> dense(p.q.size()), sparse(p.q.size());
    p.block = c.block;
    p.max_blocks = c.max_blocks;
    p.blocks.assign(p.T() * c.kv * c.max_blocks, -1);
    for (int64_t t = 0; t < p.T(); ++t)
      for (int g = 0; g < c.kv; ++g)
        for (int b = 0; b <= p.positions[t] / c.block; ++b)
          p.blocks[(t * c.kv + g) * c.max_blocks + b] = b;
    for (CpuIsa isa : levels()) {
      AttentionArgs dense_args = p.args(dense.data());
      dense_args.block_ids = nullptr;
      cpu_attention_at(dense_args, &pool, isa);
      cpu_attention_at(p.args(sparse.data()), &pool, isa);
      EXPECT_EQ(std::memcmp(dense.data(), sparse.data(), dense.size() * sizeof(float)), 0)
          << c.heads << "x" << c.d << " on " << cpu_isa_name(isa);
      // Dropping block 0 of every list changes the result (the check above can fail).
      AttnProblem dropped = p;
      for (int64_t i = 0; i < p.T() * c.kv; ++i) {
        int32_t* list = dropped.blocks.data() + i * c.max_blocks;
        if (list[1] >= 0)
          std::rotate(list, list + 1, list + c.max_blocks), list[c.max_blocks - 1] = -1;
      }
      std::vector<float> other(p.q.size());
      cpu_attention_at(dropped.args(other.data()), &pool, isa);
      EXPECT_NE(std::memcmp(dense.data(), other.data(), dense.size() * sizeof(float)), 0);
    }
  }
}

TEST(CpuAttention, ThreadCountDoesNotChangeTheResult) {
  // One decode token with 2 KV groups: 5 threads split each group's heads into 3 parts.
  for (const AttnCase& c : attention_cases()) {
    const AttnProblem p = make_attention(c.heads, c.kv, c.d, c.positions, c.block, c.max_blocks, 7);
    std::vector<float> one(p.q.size()), many(p.q.size());
    cpu_attention(p.args(one.data()), nullptr);
    ThreadPool pool(5);
    cpu_attention(p.args(many.data()), &pool);
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << c.name;
  }
}

// A call of T tokens reads each cache tile once for a block of tokens (attend_token_blocks); each
// token's output must still be the bits of the call with that token alone (a decode step), for
// dense and MSA layers, every cache type, page tables with tiles across page ends, full and
// partial tiles, and thread counts that split the tokens into blocks differently.
TEST(CpuAttention, EachTokenOfACallGivesItsOwnCallsBits) {
  struct Case {
    std::string name;
    int heads, kv, d;
    std::vector<int32_t> positions;
    int block = 0, max_blocks = 0;
  };
  const Case cases[] = {
      {"m2_verify", 24, 4, 128, positions_from(1500, 25)},
      {"m3_sparse_verify", 16, 4, 128, positions_from(600, 21), 64, 4},
      {"odd_shape_prefill", 6, 3, 13, positions_from(0, 40)},
      {"long_block", 8, 2, 16, positions_from(20, 37)},  // three blocks of 16 or fewer tokens
  };
  uint32_t seed = 900;
  for (const Case& c : cases) {
    const AttnProblem p =
        make_attention(c.heads, c.kv, c.d, c.positions, c.block, c.max_blocks, seed++);
    const int64_t slots = static_cast<int64_t>(p.k.size()) / (int64_t{c.kv} * c.d);
    // Pages of 24 slots in reverse order: 16-slot tiles straddle page ends.
    const int page = 24;
    const int64_t pages = (slots + page - 1) / page;
    std::vector<int32_t> table(pages);
    for (int64_t i = 0; i < pages; ++i) table[i] = static_cast<int32_t>(pages - 1 - i);
    for (KvDtype dtype : {KvDtype::kF32, KvDtype::kBF16, KvDtype::kFp8E4m3}) {
      for (bool paged : {false, true}) {
        const int64_t row = int64_t{c.kv} * c.d, bytes = kv_dtype_bytes(dtype);
        std::vector<char> k(pages * page * row * bytes), v(k.size());
        for (int64_t s = 0; s < slots; ++s) {
          const int64_t at = paged ? int64_t{table[s / page]} * page + s % page : s;
          encode_kv_row(p.k.data() + s * row, row, dtype, k.data() + at * row * bytes);
          encode_kv_row(p.v.data() + s * row, row, dtype, v.data() + at * row * bytes);
        }
        for (CpuIsa isa : levels()) {
          for (size_t threads : {size_t{1}, size_t{3}}) {
            ThreadPool pool(threads);
            std::vector<float> all(p.q.size()), one(int64_t{c.heads} * c.d);
            AttentionArgs a = p.args(all.data());
            a.k_cache = k.data();
            a.v_cache = v.data();
            a.kv_dtype = dtype;
            if (paged) {
              a.page_table = table.data();
              a.page_size = page;
            }
            cpu_attention_at(a, &pool, isa);
            for (int64_t t = 0; t < p.T(); ++t) {
              AttentionArgs single = a;
              single.T = 1;
              single.q = p.q.data() + t * c.heads * c.d;
              single.positions = p.positions.data() + t;
              if (c.block > 0) single.block_ids = p.blocks.data() + t * c.kv * c.max_blocks;
              single.out = one.data();
              cpu_attention_at(single, &pool, isa);
              ASSERT_EQ(std::memcmp(one.data(), all.data() + t * c.heads * c.d,
                                    one.size() * sizeof(float)),
                        0)
                  << c.name << " token " << t << " cache " << kv_dtype_name(dtype)
                  << (paged ? " paged" : "") << " on " << cpu_isa_name(isa) << ", " << threads
                  << " threads";
            }
          }
        }
      }
    }
  }
}

TEST(CpuAttention, RejectsBadHeadCounts) {
  AttnProblem p = make_attention(6, 4, 16, {0}, 0, 0, 1);
  std::vector<float> out(p.q.size());
  EXPECT_THROW(cpu_attention(p.args(out.data()), nullptr), Error);
  p.kv = 3;
  AttentionArgs a = p.args(out.data());
  a.block_ids = p.positions.data();
  a.block_size = 0;
  EXPECT_THROW(cpu_attention(a, nullptr), Error);
}

// ---- MSA block choice ---------------------------------------------------------------------------

struct SelectProblem {
  int heads = 0, dim = 0;
  int64_t stride = 0;
  std::vector<int32_t> positions;
  std::vector<float> q, k;
  BlockSelectArgs args(int block, int topk, int init, int local, int32_t* out) const {
    BlockSelectArgs a;
    a.index_q = q.data();
    a.T = static_cast<int64_t>(positions.size());
    a.num_index_heads = heads;
    a.index_dim = dim;
    a.index_k_cache = k.data();
    a.index_k_stride = stride;
    a.positions = positions.data();
    a.block_size = block;
    a.topk_blocks = topk;
    a.init_blocks = init;
    a.local_blocks = local;
    a.block_ids = out;
    return a;
  }
};

SelectProblem make_select(int heads, int dim, std::vector<int32_t> positions, uint32_t seed) {
  std::mt19937 rng(seed);
  SelectProblem p;
  p.heads = heads;
  p.dim = dim;
  p.stride = dim + 3;
  p.positions = std::move(positions);
  const int64_t slots = *std::max_element(p.positions.begin(), p.positions.end()) + 1;
  p.q = random_floats(p.positions.size() * heads * dim, rng);
  p.k = random_floats(slots * p.stride, rng);
  return p;
}

struct SelectCase {
  std::string name;
  int heads, dim;
  std::vector<int32_t> positions;
  int block, topk, init, local;
};

std::vector<SelectCase> select_cases() {
  return {
      {"tiny_m3_prefill", 2, 16, positions_from(0, 100), 16, 4, 0, 1},
      {"m3_decode", 4, 128, {4000, 8191}, 128, 16, 0, 1},
      {"odd", 3, 13, {0, 6, 50, 77, 199, 200}, 7, 5, 1, 2},
      {"five_heads", 5, 20, positions_from(60, 25), 4, 6, 2, 1},
      {"no_forced", 1, 9, {90}, 3, 4, 0, 0},
  };
}

TEST(CpuSelectBlocks, TiesGoToTheLowerBlockAsInTheReference) {
  ThreadPool pool(3);
  // Every block's keys copy block 0, 1 or 2: each score appears many times.
  SelectProblem p = make_select(3, 16, positions_from(150, 30), 9);
  const int block = 8;
  for (int64_t s = block * 3; s < static_cast<int64_t>(p.k.size()) / p.stride; ++s)
    std::copy_n(p.k.data() + (s % (3 * block)) * p.stride, p.dim, p.k.data() + s * p.stride);
  const size_t n = p.positions.size() * p.heads * 6;
  std::vector<int32_t> ref(n), got(n);
  reference::select_blocks(p.args(block, 6, 1, 1, ref.data()), nullptr);
  for (CpuIsa isa : levels()) {
    cpu_select_blocks_at(p.args(block, 6, 1, 1, got.data()), &pool, isa);
    EXPECT_EQ(got, ref) << cpu_isa_name(isa);
  }
  // All keys zero: every score is 0, so the lowest competitors win: blocks 0 (forced), 1..4, last.
  std::fill(p.k.begin(), p.k.end(), 0.0f);
  cpu_select_blocks(p.args(block, 6, 1, 1, got.data()), &pool);
  const int last = p.positions[0] / block;
  EXPECT_EQ(std::vector<int32_t>(got.begin(), got.begin() + 6),
            (std::vector<int32_t>{0, 1, 2, 3, 4, last}));
}

TEST(CpuSelectBlocks, ThreadCountDoesNotChangeTheResult) {
  for (const SelectCase& c : select_cases()) {
    const SelectProblem p = make_select(c.heads, c.dim, c.positions, 77);
    const size_t n = p.positions.size() * c.heads * c.topk;
    std::vector<int32_t> one(n), many(n);
    cpu_select_blocks(p.args(c.block, c.topk, c.init, c.local, one.data()), nullptr);
    ThreadPool pool(4);
    cpu_select_blocks(p.args(c.block, c.topk, c.init, c.local, many.data()), &pool);
    EXPECT_EQ(one, many) << c.name;
  }
}

TEST(CpuSelectBlocks, RejectsBadArguments) {
  const SelectProblem p = make_select(1, 4, {10}, 1);
  std::vector<int32_t> out(4);
  EXPECT_THROW(cpu_select_blocks(p.args(0, 4, 0, 1, out.data()), nullptr), Error);
  EXPECT_THROW(cpu_select_blocks(p.args(4, 2, 2, 1, out.data()), nullptr), Error);
}

}  // namespace
}  // namespace minimax
