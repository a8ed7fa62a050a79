// Attention and MSA block choice over a paged cache (AttentionArgs / BlockSelectArgs page_table):
// on random data with a shuffled page table, the reference and every CPU ISA level give exactly the
// bits of the same op over the contiguous cache, for page sizes that are multiples of the CPU's
// 16-slot tile and for ones that are not (tiles crossing pages), dense and block-sparse, decode and
// prefill.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "base/error.h"
#include "kernel_test_util.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

// A contiguous cache of `slots` rows of `width` floats copied into a pool of twice as many pages
// (the rest filled with noise), page i of the sequence at a shuffled physical page.
struct Paged {
  std::vector<int32_t> table;
  std::vector<float> storage;
};

Paged page_out(const std::vector<float>& contiguous, int64_t width, int64_t slots, int page_size,
               std::mt19937& rng) {
  const int64_t pages = (slots + page_size - 1) / page_size;
  std::vector<int32_t> physical(2 * pages);
  std::iota(physical.begin(), physical.end(), 0);
  std::shuffle(physical.begin(), physical.end(), rng);
  Paged p;
  p.table.assign(physical.begin(), physical.begin() + pages);
  p.storage = random_floats(2 * pages * page_size * width, rng, 1.5f);
  for (int64_t s = 0; s < slots; ++s) {
    const int64_t row = int64_t(p.table[s / page_size]) * page_size + s % page_size;
    std::copy_n(contiguous.data() + s * width, width, p.storage.data() + row * width);
  }
  return p;
}

struct PagedCase {
  std::string name;
  int heads, kv, d;
  std::vector<int32_t> positions;
  int block = 0, max_blocks = 0;  // block > 0: a random block choice per (token, KV group)
};

std::vector<PagedCase> cases() {
  return {
      {"decode", 8, 2, 16, {70}},
      {"prefill", 8, 2, 16, positions_from(0, 40)},
      {"sparse_prefill", 8, 2, 16, positions_from(50, 30), 16, 4},
      {"sparse_odd_blocks", 4, 2, 24, {130, 199}, 7, 5},
      {"m3_decode_sparse", 64, 4, 128, {700}, 128, 4},
  };
}

using AttentionOp = void (*)(const AttentionArgs&, ThreadPool*);

TEST(PagedAttention, BitIdenticalToContiguousForEveryPageSize) {
  ThreadPool pool(2);
  std::mt19937 rng(17);
  for (const PagedCase& c : cases()) {
    const int64_t T = static_cast<int64_t>(c.positions.size());
    const int64_t slots = *std::max_element(c.positions.begin(), c.positions.end()) + 1;
    const int64_t width = int64_t{c.kv} * c.d;
    const auto q = random_floats(T * c.heads * c.d, rng, 1.5f);
    const auto k = random_floats(slots * width, rng, 1.5f),
               v = random_floats(slots * width, rng, 1.5f);
    std::vector<int32_t> blocks;
    if (c.block > 0) {
      blocks.assign(T * c.kv * c.max_blocks, -1);
      for (int64_t t = 0; t < T; ++t)
        for (int g = 0; g < c.kv; ++g) {
          const int nblk = c.positions[t] / c.block + 1;
          std::vector<int32_t> chosen = {nblk - 1};
          for (int b = 0; b < nblk - 1 && static_cast<int>(chosen.size()) < c.max_blocks; ++b)
            if (rng() % 2 == 0) chosen.push_back(b);
          std::sort(chosen.begin(), chosen.end());
          std::copy(chosen.begin(), chosen.end(), blocks.begin() + (t * c.kv + g) * c.max_blocks);
        }
    }
    AttentionArgs a;
    a.q = q.data();
    a.T = T;
    a.num_heads = c.heads;
    a.num_kv_heads = c.kv;
    a.head_dim = c.d;
    a.k_cache = k.data();
    a.v_cache = v.data();
    a.cache_stride = width;
    a.positions = c.positions.data();
    a.scale = static_cast<float>(1 / std::sqrt(double(c.d)));
    if (c.block > 0) {
      a.block_ids = blocks.data();
      a.block_size = c.block;
      a.max_blocks = c.max_blocks;
    }
    std::vector<std::pair<std::string, AttentionOp>> ops = {{"reference", reference::attention}};
    for (CpuIsa isa : levels()) {
      switch (isa) {
        case CpuIsa::kAvx512:
          ops.push_back({"avx512", [](const AttentionArgs& x, ThreadPool* p) {
                           cpu_attention_at(x, p, CpuIsa::kAvx512);
                         }});
          break;
        case CpuIsa::kAvx2:
          ops.push_back({"avx2", [](const AttentionArgs& x, ThreadPool* p) {
                           cpu_attention_at(x, p, CpuIsa::kAvx2);
                         }});
          break;
        case CpuIsa::kScalar:
          ops.push_back({"scalar", [](const AttentionArgs& x, ThreadPool* p) {
                           cpu_attention_at(x, p, CpuIsa::kScalar);
                         }});
          break;
      }
    }
    for (const auto& [name, op] : ops) {
      std::vector<float> want(T * c.heads * c.d);
      a.out = want.data();
      a.page_table = nullptr;
      a.page_size = 0;
      op(a, &pool);
      for (int page_size : {16, 32, 5, 8, 24}) {
        std::mt19937 shuffle_rng(page_size);
        const Paged pk = page_out(k, width, slots, page_size, shuffle_rng);
        std::mt19937 same_rng(page_size);  // the same table for V
        const Paged pv = page_out(v, width, slots, page_size, same_rng);
        ASSERT_EQ(pk.table, pv.table);
        std::vector<float> got(want.size(), NAN);
        AttentionArgs paged = a;
        paged.k_cache = pk.storage.data();
        paged.v_cache = pv.storage.data();
        paged.page_table = pk.table.data();
        paged.page_size = page_size;
        paged.out = got.data();
        op(paged, &pool);
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0)
            << c.name << " " << name << " page size " << page_size;
      }
    }
  }
}

TEST(PagedAttention, PageTableNeedsAPositivePageSize) {
  const std::vector<float> q(16), k(16), v(16);
  const std::vector<int32_t> positions = {0}, table = {0};
  std::vector<float> out(16);
  AttentionArgs a;
  a.q = q.data();
  a.T = 1;
  a.num_heads = a.num_kv_heads = 1;
  a.head_dim = 16;
  a.k_cache = k.data();
  a.v_cache = v.data();
  a.cache_stride = 16;
  a.positions = positions.data();
  a.scale = 0.25f;
  a.page_table = table.data();
  a.out = out.data();
  EXPECT_THROW(reference::attention(a, nullptr), Error);
  EXPECT_THROW(cpu_attention(a, nullptr), Error);
}

TEST(PagedSelectBlocks, SameBlocksAsContiguous) {
  ThreadPool pool(2);
  std::mt19937 rng(5);
  struct SelectCase {
    int heads, dim;
    std::vector<int32_t> positions;
    int block, topk, init, local;
  };
  const std::vector<SelectCase> select_cases = {
      {2, 16, positions_from(0, 100), 16, 4, 0, 1},
      {4, 32, {900, 1500}, 128, 4, 0, 1},
      {3, 13, {0, 6, 50, 77, 199, 200}, 7, 5, 1, 2},
  };
  for (const SelectCase& c : select_cases) {
    const int64_t T = static_cast<int64_t>(c.positions.size());
    const int64_t slots = *std::max_element(c.positions.begin(), c.positions.end()) + 1;
    const auto q = random_floats(T * c.heads * c.dim, rng, 1.5f);
    const auto k = random_floats(slots * c.dim, rng, 1.5f);
    BlockSelectArgs a;
    a.index_q = q.data();
    a.T = T;
    a.num_index_heads = c.heads;
    a.index_dim = c.dim;
    a.index_k_cache = k.data();
    a.index_k_stride = c.dim;
    a.positions = c.positions.data();
    a.block_size = c.block;
    a.topk_blocks = c.topk;
    a.init_blocks = c.init;
    a.local_blocks = c.local;
    std::vector<int32_t> want(T * c.heads * c.topk);
    a.block_ids = want.data();
    reference::select_blocks(a, nullptr);
    for (int page_size : {16, 5, 64}) {
      const Paged pk = page_out(k, c.dim, slots, page_size, rng);
      BlockSelectArgs paged = a;
      paged.index_k_cache = pk.storage.data();
      paged.page_table = pk.table.data();
      paged.page_size = page_size;
      std::vector<int32_t> got(want.size(), -7);
      paged.block_ids = got.data();
      reference::select_blocks(paged, nullptr);
      EXPECT_EQ(got, want) << "reference, page size " << page_size;
      for (CpuIsa isa : levels()) {
        std::fill(got.begin(), got.end(), -7);
        cpu_select_blocks_at(paged, &pool, isa);
        EXPECT_EQ(got, want) << cpu_isa_name(isa) << ", page size " << page_size;
      }
    }
  }
}

}  // namespace
}  // namespace minimax
