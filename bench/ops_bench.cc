// Decode-step speed of the CPU backend's MoE, attention and MSA block choice
// (kernels/cpu/cpu_ops.h) next to what they stand in for: the grouped MoE of the benchmark shape
// (M2 architecture, hidden 1536, 64 experts of width 768, top-8, FP8 per channel or per 128x128
// tile as published, activations bf16x2 as `--activations auto` picks) against one
// cpu_linear over the same number of weight bytes; attention and block choice against the
// reference ops. The experts are 64 distinct weights (226 MB), routed at random each step, so they
// stream from memory as a model's do. Reported:
//   weight_GB  expert weight bytes read per second (decimal GB, shown as N/s)
//   tokens     decode steps per second (attention, block choice)
// Arguments: MoE (tokens, threads, 0 per channel / 1 tiles), linear (threads), attention (context,
// threads, 0 reference / 1 cpu, 0 f32 / 1 bf16 cache), block choice (context, 0 reference / 1 cpu,
// 0 f32 / 1 bf16 cache). Not a test.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "base/thread_pool.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/linear.h"
#include "kernels/kv_codec.h"
#include "kernels/reference/reference_ops.h"

namespace minimax {
namespace {

constexpr int64_t kHidden = 1536, kInter = 768;
constexpr int kExperts = 64, kTopK = 8;

// Fast deterministic e4m3fn codes without the NaN codes (xorshift64*).
void fill_fp8(uint8_t* p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; ++i) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    // Exponent field at most 0b1010: values below 2^4, no NaN.
    const auto v = static_cast<uint8_t>((s * 0x2545F4914F6CDD1Dull) >> 56);
    p[i] = static_cast<uint8_t>((v & 0x80) | (v & 0x7F) % 0x58);
  }
}

// FP8 per channel, or (tiles) per 128 x 128 tile as the published checkpoints.
struct Fp8Matrix {
  std::vector<uint8_t> data;
  std::vector<float> scales;
  WeightView view;
  Fp8Matrix(int64_t rows, int64_t cols, uint64_t seed, bool tiles = false)
      : data(rows * cols),
        scales(tiles ? (rows + 127) / 128 * ((cols + 127) / 128) : rows, 1.0f / 256) {
    fill_fp8(data.data(), data.size(), seed);
    view.format = tiles ? WeightFormat::kFp8Block : WeightFormat::kFp8Channel;
    view.rows = rows;
    view.cols = cols;
    view.data = data.data();
    view.scales = scales.data();
  }
};

struct MoeFixture {
  std::vector<Fp8Matrix> matrices;
  std::vector<ExpertWeights> experts;
  explicit MoeFixture(bool tiles) {
    matrices.reserve(3 * kExperts);
    for (int e = 0; e < kExperts; ++e) {
      matrices.emplace_back(kInter, kHidden, 3 * e + 1, tiles);
      matrices.emplace_back(kInter, kHidden, 3 * e + 2, tiles);
      matrices.emplace_back(kHidden, kInter, 3 * e + 3, tiles);
      experts.push_back({matrices[3 * e].view, matrices[3 * e + 1].view, matrices[3 * e + 2].view});
    }
  }
};

MoeFixture& moe_fixture(bool tiles) {
  static MoeFixture channel(false), tile(true);
  return tiles ? tile : channel;
}

void BM_MoeDecode(benchmark::State& state) {
  const int64_t T = state.range(0);
  ThreadPool pool(static_cast<size_t>(state.range(1)));
  MoeFixture& f = moe_fixture(state.range(2) != 0);
  std::mt19937 rng(1);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(T * kHidden), y(T * kHidden), weights(T * kTopK, 0.125f);
  for (float& v : x) v = dist(rng);
  // 64 random routings used in turn: distinct experts per token.
  const int kRoutings = 64;
  std::vector<int32_t> ids(kRoutings * T * kTopK);
  std::vector<int32_t> order(kExperts);
  std::vector<int64_t> distinct(kRoutings);
  for (int r = 0; r < kRoutings; ++r) {
    std::vector<bool> used(kExperts);
    for (int64_t t = 0; t < T; ++t) {
      for (int e = 0; e < kExperts; ++e) order[e] = e;
      std::shuffle(order.begin(), order.end(), rng);
      for (int j = 0; j < kTopK; ++j) {
        ids[(r * T + t) * kTopK + j] = order[j];
        used[order[j]] = true;
      }
    }
    distinct[r] = std::count(used.begin(), used.end(), true);
  }
  MoeArgs a;
  a.experts = f.experts.data();
  a.num_experts = kExperts;
  a.hidden = kHidden;
  a.inter = kInter;
  a.x = x.data();
  a.T = T;
  a.expert_weights = weights.data();
  a.top_k = kTopK;
  a.y = y.data();
  CpuLinearOptions linear;
  linear.activations = ActivationPrecision::kBF16x2;  // the default (`--activations auto`)
  int r = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    a.expert_ids = ids.data() + r * T * kTopK;
    cpu_moe(a, &pool, linear);
    benchmark::DoNotOptimize(y.data());
    bytes += distinct[r] * 3 * kInter * (kHidden + 4);
    r = (r + 1) % kRoutings;
  }
  state.counters["weight_GB"] =
      benchmark::Counter(static_cast<double>(bytes) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MoeDecode)
    ->ArgNames({"tokens", "threads", "tiles"})
    ->ArgsProduct({{1, 2, 8}, {1, 2}, {0, 1}})
    ->Args({4, 2, 1})
    ->Args({32, 2, 1})
    ->UseRealTime();

// One token through one FP8 matrix of 24·768 rows (the bytes of 8 experts' gate, up and down),
// eight copies in turn (the experts' 226 MB working set): what streaming the same bytes costs
// without the MoE around it.
void BM_LinearSameBytes(benchmark::State& state) {
  ThreadPool pool(static_cast<size_t>(state.range(0)));
  static std::vector<Fp8Matrix> copies = [] {
    std::vector<Fp8Matrix> c;
    for (int i = 0; i < 8; ++i) c.emplace_back(3 * kTopK * kInter, kHidden, 100 + i);
    return c;
  }();
  std::vector<float> x(kHidden, 0.5f), y(3 * kTopK * kInter);
  int i = 0;
  int64_t bytes = 0;
  for (auto _ : state) {
    cpu_linear(copies[i].view, x.data(), 1, y.data(), pool);
    benchmark::DoNotOptimize(y.data());
    bytes += copies[i].view.rows * (kHidden + 4);
    i = (i + 1) % 8;
  }
  state.counters["weight_GB"] =
      benchmark::Counter(static_cast<double>(bytes) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LinearSameBytes)->ArgNames({"threads"})->Arg(1)->Arg(2)->UseRealTime();

// Attention of `tokens` query tokens at the end of `context` slots (1: a decode token; more: a
// verify step or a prompt chunk, causal): f32 cache at 24 heads (M2's benchmark shape), or (bf16
// 1) a bf16 cache at M3's 16 heads, both with 4 KV heads of 128 in one contiguous cache whose rows
// hold every KV head, as the model's do. kv_GB counts the cache once per call.
void BM_Attention(benchmark::State& state) {
  const int64_t context = state.range(0), tokens = state.range(1);
  ThreadPool pool(static_cast<size_t>(state.range(2)));
  const bool cpu = state.range(3) != 0;
  const KvDtype dtype = state.range(4) != 0 ? KvDtype::kBF16 : KvDtype::kF32;
  const int heads = dtype == KvDtype::kF32 ? 24 : 16, kv = 4, d = 128;
  std::mt19937 rng(2);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(tokens * heads * d), k(context * kv * d), v(context * kv * d),
      out(tokens * heads * d);
  for (auto* vec : {&q, &k, &v})
    for (float& x : *vec) x = dist(rng);
  const int64_t bytes = kv_dtype_bytes(dtype);
  std::vector<char> k_cache(k.size() * bytes), v_cache(v.size() * bytes);
  encode_kv_row(k.data(), int64_t(k.size()), dtype, k_cache.data());
  encode_kv_row(v.data(), int64_t(v.size()), dtype, v_cache.data());
  std::vector<int32_t> positions(tokens);
  for (int64_t t = 0; t < tokens; ++t) positions[t] = static_cast<int32_t>(context - tokens + t);
  AttentionArgs a;
  a.q = q.data();
  a.T = tokens;
  a.num_heads = heads;
  a.num_kv_heads = kv;
  a.head_dim = d;
  a.k_cache = k_cache.data();
  a.v_cache = v_cache.data();
  a.kv_dtype = dtype;
  a.cache_stride = kv * d;
  a.positions = positions.data();
  a.scale = 1.0f / std::sqrt(float(d));
  a.out = out.data();
  for (auto _ : state) {
    if (cpu) {
      cpu_attention(a, &pool);
    } else {
      reference::attention(a, &pool);
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["tokens"] = benchmark::Counter(static_cast<double>(state.iterations() * tokens),
                                                benchmark::Counter::kIsRate);
  state.counters["kv_GB"] = benchmark::Counter(
      static_cast<double>(state.iterations()) * double(k_cache.size() + v_cache.size()),
      benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Attention)
    ->ArgNames({"context", "tokens", "threads", "cpu", "bf16"})
    ->Args({512, 1, 1, 0, 0})
    ->Args({512, 1, 1, 1, 0})
    ->Args({4096, 1, 1, 0, 0})
    ->Args({4096, 1, 1, 1, 0})
    ->Args({4096, 1, 2, 1, 0})
    ->Args({32768, 1, 2, 1, 0})
    ->Args({32768, 1, 1, 1, 1})
    ->Args({32768, 1, 2, 1, 1})
    ->Args({1552, 25, 1, 1, 0})  // a verify step of 24 drafts after a code-edit prompt
    ->Args({1552, 25, 2, 1, 0})
    ->Args({2048, 512, 2, 1, 0})  // the last 512 tokens of a 2048-token prefill
    ->UseRealTime();

// One decode token's MSA block choice at M3's sizes (4 index heads of 128, blocks of 128, top 16).
void BM_SelectBlocksDecode(benchmark::State& state) {
  const int64_t context = state.range(0);
  const bool cpu = state.range(1) != 0;
  const KvDtype dtype = state.range(2) != 0 ? KvDtype::kBF16 : KvDtype::kF32;
  ThreadPool pool(2);
  const int heads = 4, d = 128;
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> q(heads * d), k(context * d);
  for (auto* vec : {&q, &k})
    for (float& x : *vec) x = dist(rng);
  std::vector<char> k_cache(k.size() * kv_dtype_bytes(dtype));
  encode_kv_row(k.data(), int64_t(k.size()), dtype, k_cache.data());
  std::vector<int32_t> blocks(heads * 16);
  const int32_t position = static_cast<int32_t>(context - 1);
  BlockSelectArgs a;
  a.index_q = q.data();
  a.T = 1;
  a.num_index_heads = heads;
  a.index_dim = d;
  a.index_k_cache = k_cache.data();
  a.kv_dtype = dtype;
  a.index_k_stride = d;
  a.positions = &position;
  a.block_size = 128;
  a.topk_blocks = 16;
  a.block_ids = blocks.data();
  for (auto _ : state) {
    if (cpu) {
      cpu_select_blocks(a, &pool);
    } else {
      reference::select_blocks(a, &pool);
    }
    benchmark::DoNotOptimize(blocks.data());
  }
  state.counters["tokens"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SelectBlocksDecode)
    ->ArgNames({"context", "cpu", "bf16"})
    ->Args({8192, 0, 0})
    ->Args({8192, 1, 0})
    ->Args({65536, 1, 0})
    ->Args({32768, 1, 1})
    ->UseRealTime();

}  // namespace
}  // namespace minimax

BENCHMARK_MAIN();
