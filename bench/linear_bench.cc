// Weight-streaming speed of cpu_linear (kernels/cpu/linear.h) per weight format and ISA path, next
// to the machine's own memory bandwidth measured in the same run: a memcpy of a 256 MiB buffer and
// a read-only sum over 256 MiB (one thread, and every thread of the pool). Each format's weight is
// ~64 MiB, in four copies used in turn so the 256 MiB working set streams from memory rather than
// a large last-level cache, as a model's weights do in decode. Reported per benchmark:
//   weight_GB  weight bytes read (data + scales) per second, in decimal GB (shown as N/s)
//   vs_read1   GB/s over the 1-thread read-only bandwidth      (1-thread runs)
//   vs_readN   GB/s over the all-threads read-only bandwidth   (all-thread runs)
//   vs_memcpy  GB/s over memcpy's bytes copied per second
// Arguments: format, isa (0 scalar, 1 avx2, 2 avx512), activations (ActivationPrecision: 0 f32,
// 1 bf16, 3 bf16x2), threads (0 = all), tokens, cached (1: ~512 KiB of the weight read again and
// again from L2, the kernel's compute ceiling). Paths this CPU lacks are skipped with a message.
// Not a test.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/thread_pool.h"
#include "kernels/cpu/cpu_features.h"
#include "kernels/cpu/linear.h"

namespace minimax {
namespace {

constexpr size_t kBufferBytes = size_t{256} << 20;
constexpr int kCopies = 4;

struct Bandwidth {
  double memcpy_bytes_per_s = 0, read1_bytes_per_s = 0, readn_bytes_per_s = 0;
};
Bandwidth g_bandwidth;

// Fast deterministic bytes (xorshift64*).
void fill_random(uint8_t* p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i += 8) {
    s ^= s >> 12;
    s ^= s << 25;
    s ^= s >> 27;
    const uint64_t v = s * 0x2545F4914F6CDD1Dull;
    std::memcpy(p + i, &v, std::min<size_t>(8, n - i));
  }
}

// The read-only loop reads its range as four quarters side by side, as the kernels read four
// weight rows side by side for one token (one stream alone measures 20-30% less here): AVX2 adds,
// 64 bytes per quarter and step, far above what memory delivers to one core; plain 64-bit adds
// where the CPU has no AVX2.
__attribute__((target("avx2"), always_inline)) inline __m256i pair(const uint8_t* at) {
  return _mm256_add_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(at)),
                          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(at + 32)));
}

__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint8_t* p, size_t n) {
  const size_t q = n / 4 / 64 * 64;
  const uint8_t* s[4] = {p, p + q, p + 2 * q, p + 3 * q};
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  for (size_t i = 0; i < q; i += 64) {
    a0 = _mm256_add_epi64(a0, pair(s[0] + i));
    a1 = _mm256_add_epi64(a1, pair(s[1] + i));
    a2 = _mm256_add_epi64(a2, pair(s[2] + i));
    a3 = _mm256_add_epi64(a3, pair(s[3] + i));
  }
  alignas(32) uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes),
                     _mm256_add_epi64(_mm256_add_epi64(a0, a1), _mm256_add_epi64(a2, a3)));
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

uint64_t sum_words(const uint8_t* p, size_t n) {
  if (cpu_features().avx2) return sum_words_avx2(p, n);
  const size_t q = n / 4 / 8 * 8;
  uint64_t a[4] = {};
  for (size_t i = 0; i < q; i += 8) {
    for (int j = 0; j < 4; ++j) {
      uint64_t w;
      std::memcpy(&w, p + j * q + i, 8);
      a[j] += w;
    }
  }
  return a[0] + a[1] + a[2] + a[3];
}

// Best of five of each, over buffers touched beforehand (no page faults in the timing).
Bandwidth measure_bandwidth(ThreadPool& pool) {
  std::unique_ptr<uint8_t[]> src(new uint8_t[kBufferBytes]), dst(new uint8_t[kBufferBytes]);
  fill_random(src.get(), kBufferBytes, 1);
  std::memset(dst.get(), 0, kBufferBytes);
  Bandwidth b;
  volatile uint64_t sink = 0;
  for (int round = 0; round < 5; ++round) {
    auto t0 = std::chrono::steady_clock::now();
    std::memcpy(dst.get(), src.get(), kBufferBytes);
    b.memcpy_bytes_per_s = std::max(b.memcpy_bytes_per_s, kBufferBytes / seconds_since(t0));
    t0 = std::chrono::steady_clock::now();
    sink = sink + sum_words(src.get(), kBufferBytes);
    b.read1_bytes_per_s = std::max(b.read1_bytes_per_s, kBufferBytes / seconds_since(t0));
    const uint8_t* base = src.get();
    const size_t threads = pool.size();
    std::vector<uint64_t> partial(threads);
    t0 = std::chrono::steady_clock::now();
    pool.parallel_for(threads, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i) {
        const size_t lo = kBufferBytes * i / threads / 64 * 64;
        const size_t hi = kBufferBytes * (i + 1) / threads / 64 * 64;
        partial[i] = sum_words(base + lo, hi - lo);
      }
    });
    b.readn_bytes_per_s = std::max(b.readn_bytes_per_s, kBufferBytes / seconds_since(t0));
    for (uint64_t p : partial) sink = sink + p;
  }
  return b;
}

ThreadPool& pool_of(int64_t threads) {
  static ThreadPool one(1), all(0);
  return threads == 1 ? one : all;
}

// ~64 MiB of data per copy.
WeightView shape_of(WeightFormat f) {
  WeightView w;
  w.format = f;
  w.cols = 8192;
  switch (f) {
    case WeightFormat::kF32:
      w.rows = 2048;
      break;
    case WeightFormat::kBF16:
      w.rows = 4096;
      break;
    case WeightFormat::kFp8Block:
    case WeightFormat::kFp8Channel:
    case WeightFormat::kMxfp8:
      w.rows = 8192;
      break;
    case WeightFormat::kMxfp4:
    case WeightFormat::kNvfp4:
      w.rows = 16384;
      break;
  }
  return w;
}

struct Weights {
  WeightFormat format;
  std::vector<std::vector<uint8_t>> data, scales;
  std::vector<WeightView> views;
  int64_t bytes = 0;  // data + scales of one copy
};

// Finite values only (NaN or subnormal f32 inputs could take slow paths that real weights do not).
void make_finite(WeightFormat f, std::vector<uint8_t>& data) {
  if (f == WeightFormat::kF32 || f == WeightFormat::kBF16) {
    const size_t step = f == WeightFormat::kF32 ? 4 : 2;
    for (size_t i = step - 1; i < data.size(); i += step) data[i] = (data[i] & 0x80) | 0x3C;
  } else if (f == WeightFormat::kFp8Block || f == WeightFormat::kFp8Channel ||
             f == WeightFormat::kMxfp8) {
    for (auto& b : data) b &= 0xF7;  // clears a bit of the exponent: never S.1111.111
  }
}

const Weights& weights_of(WeightFormat f) {
  static std::unique_ptr<Weights> cached;
  if (cached && cached->format == f) return *cached;
  cached.reset();  // one format's copies at a time
  auto w = std::make_unique<Weights>();
  w->format = f;
  const WeightView shape = shape_of(f);
  int64_t data_bytes = 0, scale_bytes = 0;
  switch (f) {
    case WeightFormat::kF32:
      data_bytes = shape.rows * shape.cols * 4;
      break;
    case WeightFormat::kBF16:
      data_bytes = shape.rows * shape.cols * 2;
      break;
    case WeightFormat::kFp8Block:
      data_bytes = shape.rows * shape.cols;
      scale_bytes = (shape.rows / 128) * (shape.cols / 128) * 4;
      break;
    case WeightFormat::kFp8Channel:
      data_bytes = shape.rows * shape.cols;
      scale_bytes = shape.rows * 4;
      break;
    case WeightFormat::kMxfp4:
      data_bytes = shape.rows * shape.cols / 2;
      scale_bytes = shape.rows * shape.cols / 32;
      break;
    case WeightFormat::kMxfp8:
      data_bytes = shape.rows * shape.cols;
      scale_bytes = shape.rows * shape.cols / 32;
      break;
    case WeightFormat::kNvfp4:
      data_bytes = shape.rows * shape.cols / 2;
      scale_bytes = shape.rows * shape.cols / 16;
      break;
  }
  w->bytes = data_bytes + scale_bytes;
  for (int copy = 0; copy < kCopies; ++copy) {
    std::vector<uint8_t> data(data_bytes), scales(scale_bytes);
    fill_random(data.data(), data.size(), 10 + copy);
    make_finite(f, data);
    if (f == WeightFormat::kFp8Block || f == WeightFormat::kFp8Channel) {
      for (size_t i = 0; i < scales.size(); i += 4) {
        const float s = 0.001f;
        std::memcpy(&scales[i], &s, 4);
      }
    } else if (f == WeightFormat::kMxfp4 || f == WeightFormat::kMxfp8) {
      std::fill(scales.begin(), scales.end(), uint8_t{120});
    } else if (f == WeightFormat::kNvfp4) {
      std::fill(scales.begin(), scales.end(), uint8_t{0x38});  // 1.0
    }
    WeightView v = shape;
    v.data = data.data();
    v.scales = scales.empty() ? nullptr : scales.data();
    v.global_scale = 0.01f;
    w->data.push_back(std::move(data));
    w->scales.push_back(std::move(scales));
    w->views.push_back(v);
  }
  cached = std::move(w);
  return *cached;
}

void run_linear(benchmark::State& state, WeightFormat format, const CpuLinearOptions& options,
                int64_t threads, int64_t tokens, bool cached, int64_t cols = 0,
                int64_t reshape_cols = 0) {
  if (!cpu_supports(options.isa)) {
    state.SkipWithError("this CPU lacks the ISA level");
    return;
  }
  if (options.activations != ActivationPrecision::kF32 && !cpu_features().avx512_bf16) {
    state.SkipWithError("this CPU lacks AVX512_BF16");
    return;
  }
  ThreadPool& pool = pool_of(threads);
  const Weights& w = weights_of(format);
  // cached: the first rows of one copy, ~512 KiB, read again each call from L2: what the kernel's
  // instructions allow without the memory limit.
  // cols > 0: the first `cols` columns of every row (a layer's width; the rows keep their stride).
  // reshape_cols > 0: the same bytes as a dense matrix of rows that wide (short rows: an expert's
  // down projection split over tensor-parallel ranks).
  const auto view_of = [&](const WeightView& v) {
    if (reshape_cols > 0) {
      WeightView r = v;
      r.rows = v.rows * v.cols / reshape_cols;
      r.cols = reshape_cols;
      return r;
    }
    return cols > 0 ? slice_cols(v, 0, cols) : v;
  };
  WeightView small = view_of(w.views[0]);
  small.rows = std::max<int64_t>(16, (int64_t{512} << 10) / (w.bytes / w.views[0].rows));
  const int64_t used_bytes =
      reshape_cols > 0 ? w.bytes : w.bytes / w.views[0].cols * view_of(w.views[0]).cols;
  const int64_t call_bytes = cached ? used_bytes / w.views[0].rows * small.rows : used_bytes;
  std::vector<float> x(tokens * small.cols), y(tokens * view_of(w.views[0]).rows);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal;
  for (auto& v : x) v = normal(rng);
  int copy = 0;
  for (auto _ : state) {
    cpu_linear(cached ? small : view_of(w.views[copy]), x.data(), tokens, y.data(), pool, options);
    benchmark::DoNotOptimize(y.data());
    copy = (copy + 1) % kCopies;
  }
  const double bytes = static_cast<double>(call_bytes) * static_cast<double>(state.iterations());
  state.counters["weight_GB"] = benchmark::Counter(bytes / 1e9, benchmark::Counter::kIsRate);
  const double read =
      pool.size() == 1 ? g_bandwidth.read1_bytes_per_s : g_bandwidth.readn_bytes_per_s;
  state.counters[pool.size() == 1 ? "vs_read1" : "vs_readN"] =
      benchmark::Counter(bytes / read, benchmark::Counter::kIsRate);
  state.counters["vs_memcpy"] =
      benchmark::Counter(bytes / g_bandwidth.memcpy_bytes_per_s, benchmark::Counter::kIsRate);
  const WeightView v = cached ? small : view_of(w.views[0]);
  state.counters["GFLOPs"] =
      benchmark::Counter(2e-9 * static_cast<double>(v.rows * v.cols * tokens) *
                             static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate);
  state.SetLabel(std::string(cpu_isa_name(options.isa)) +
                 (options.activations == ActivationPrecision::kF32
                      ? std::string()
                      : std::string("+") + activation_precision_name(options.activations)) +
                 " " + std::to_string(pool.size()) + "T " + std::to_string(tokens) + "tok" +
                 (cached ? " L2" : "") + (options.batch_invariant ? " invariant" : ""));
}

// Whether BM_Linear's batches may take the AMX kernels: MINIMAX_CPU_AMX=0 turns them off, to time
// the vdpbf16ps GEMM on a CPU with AMX (main sets it).
bool g_amx = true;

void BM_Linear(benchmark::State& state) {
  CpuLinearOptions options;
  options.amx = g_amx;
  options.isa = static_cast<CpuIsa>(state.range(1));
  options.activations = static_cast<ActivationPrecision>(state.range(2));
  run_linear(state, static_cast<WeightFormat>(state.range(0)), options, state.range(3),
             state.range(4), state.range(5) != 0);
}

// Batch invariance (CpuLinearOptions::batch_invariant: the row kernels at every call size),
// AVX-512, one thread, weights from memory: what a batch of `tokens` costs against one token, at
// the full width and at 1536 columns (the benchmark shape's hidden size; the bench/real widths of
// M2 and M3 are 768-3072).
void BM_LinearInvariant(benchmark::State& state) {
  CpuLinearOptions options;
  options.isa = CpuIsa::kAvx512;
  options.activations = static_cast<ActivationPrecision>(state.range(1));
  options.batch_invariant = true;
  run_linear(state, static_cast<WeightFormat>(state.range(0)), options, 1, state.range(2),
             state.range(4) != 0, state.range(3));
}

// Batches with f32 activations, one thread, weights from memory: the f32 GEMM
// (linear_gemm_f32-inl.h) against the row kernels, which batch invariance keeps (rows: 1), at the
// AVX2 and AVX-512 levels.
void BM_LinearF32Batch(benchmark::State& state) {
  CpuLinearOptions options;
  options.isa = static_cast<CpuIsa>(state.range(1));
  options.activations = ActivationPrecision::kF32;
  options.batch_invariant = state.range(3) != 0;
  run_linear(state, static_cast<WeightFormat>(state.range(0)), options, 1, state.range(2), false);
}

// Rows of `cols` columns (same bytes, 1 token, one thread, weights from memory): the row kernels'
// prefetch distance and per-row work on the short rows of tensor-parallel expert slices.
void BM_LinearShortRows(benchmark::State& state) {
  CpuLinearOptions options;
  options.isa = CpuIsa::kAvx512;
  options.activations = static_cast<ActivationPrecision>(state.range(1));
  run_linear(state, static_cast<WeightFormat>(state.range(0)), options, 1, 1, false, 0,
             state.range(2));
}

// The bandwidth baselines again as benchmarks, before and after the kernels, to show how much the
// machine's bandwidth drifted during the run (shared machines).
void BM_Memcpy(benchmark::State& state) {
  static std::unique_ptr<uint8_t[]> src(new uint8_t[kBufferBytes]), dst(new uint8_t[kBufferBytes]);
  std::memset(src.get(), 1, kBufferBytes);
  std::memset(dst.get(), 0, kBufferBytes);
  for (auto _ : state) {
    std::memcpy(dst.get(), src.get(), kBufferBytes);
    benchmark::ClobberMemory();
  }
  state.counters["copied_GB"] = benchmark::Counter(
      static_cast<double>(kBufferBytes) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void BM_ReadSum(benchmark::State& state) {
  static std::unique_ptr<uint8_t[]> src(new uint8_t[kBufferBytes]);
  std::memset(src.get(), 1, kBufferBytes);
  ThreadPool& pool = pool_of(state.range(0));
  const size_t threads = pool.size();
  std::vector<uint64_t> partial(threads);
  for (auto _ : state) {
    pool.parallel_for(threads, [&](size_t begin, size_t end, size_t) {
      for (size_t i = begin; i < end; ++i) {
        const size_t lo = kBufferBytes * i / threads / 64 * 64;
        const size_t hi = kBufferBytes * (i + 1) / threads / 64 * 64;
        partial[i] = sum_words(src.get() + lo, hi - lo);
      }
    });
    benchmark::DoNotOptimize(partial.data());
  }
  state.counters["read_GB"] = benchmark::Counter(
      static_cast<double>(kBufferBytes) * state.iterations() / 1e9, benchmark::Counter::kIsRate);
}

void register_baselines() {
  benchmark::RegisterBenchmark("baseline/memcpy_256MiB", BM_Memcpy)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("baseline/read_sum_256MiB", BM_ReadSum)
      ->ArgNames({"threads"})
      ->Arg(1)
      ->Arg(0)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void register_benchmarks() {
  const WeightFormat formats[] = {WeightFormat::kF32,        WeightFormat::kBF16,
                                  WeightFormat::kFp8Channel, WeightFormat::kFp8Block,
                                  WeightFormat::kMxfp4,      WeightFormat::kNvfp4,
                                  WeightFormat::kMxfp8};
  const char* names[] = {"f32", "bf16", "fp8_channel", "fp8_block", "mxfp4", "nvfp4", "mxfp8"};
  for (int i = 0; i < 7; ++i) {
    auto* b = benchmark::RegisterBenchmark((std::string("linear/") + names[i]).c_str(), BM_Linear);
    b->ArgNames({"format", "isa", "act", "threads", "tokens", "cached"});
    b->UseRealTime()->Unit(benchmark::kMillisecond);
    for (int threads : {1, 0}) {
      b->Args({static_cast<int>(formats[i]), 1, 0, threads, 1, 0});
      b->Args({static_cast<int>(formats[i]), 2, 0, threads, 1, 0});
      if (formats[i] != WeightFormat::kF32)
        for (auto act : {ActivationPrecision::kBF16, ActivationPrecision::kBF16x2})
          b->Args({static_cast<int>(formats[i]), 2, static_cast<int>(act), threads, 1, 0});
    }
    b->Args({static_cast<int>(formats[i]), 0, 0, 1, 1, 0});  // scalar, for scale
    b->Args({static_cast<int>(formats[i]), 2, 0, 0, 4, 0});  // small batches share one pass
    b->Args({static_cast<int>(formats[i]), 2, 0, 0, 16, 0});
    // Prefill-sized batches: the batch GEMM (vdpbf16ps, or AMX where the CPU has it and
    // MINIMAX_CPU_AMX is not 0), one thread.
    if (formats[i] != WeightFormat::kF32)
      for (auto act : {ActivationPrecision::kBF16, ActivationPrecision::kBF16x2})
        b->Args({static_cast<int>(formats[i]), 2, static_cast<int>(act), 1, 128, 0});
    for (auto act : {ActivationPrecision::kF32, ActivationPrecision::kBF16,
                     ActivationPrecision::kBF16x2})  // the compute ceiling, weights in L2
      if (formats[i] != WeightFormat::kF32 || act == ActivationPrecision::kF32)
        b->Args({static_cast<int>(formats[i]), 2, static_cast<int>(act), 1, 1, 1});
    // Where the batch GEMM starts to beat the row kernels (linear_invariant runs the same calls
    // on the rows).
    if (formats[i] != WeightFormat::kF32)
      for (int tokens : {2, 4, 8, 16, 32, 64})
        b->Args({static_cast<int>(formats[i]), 2, static_cast<int>(ActivationPrecision::kBF16x2), 1,
                 tokens, 0});
    // The batch GEMM's ceiling at its fewest tokens (fewer take the rows: linear_invariant's
    // cached cases).
    b->Args({static_cast<int>(formats[i]), 2, static_cast<int>(ActivationPrecision::kBF16x2), 1,
             kBatchTokens, 1});
    auto* f32 = benchmark::RegisterBenchmark((std::string("linear_f32_batch/") + names[i]).c_str(),
                                             BM_LinearF32Batch);
    f32->ArgNames({"format", "isa", "tokens", "rows"});
    f32->UseRealTime()->Unit(benchmark::kMillisecond);
    for (int isa : {1, 2})
      for (int tokens : {16, 32, 64})
        for (int rows : {1, 0}) f32->Args({static_cast<int>(formats[i]), isa, tokens, rows});
    auto* inv = benchmark::RegisterBenchmark((std::string("linear_invariant/") + names[i]).c_str(),
                                             BM_LinearInvariant);
    inv->ArgNames({"format", "act", "tokens", "cols", "cached"});
    inv->UseRealTime()->Unit(benchmark::kMillisecond);
    for (auto act :
         {ActivationPrecision::kF32, ActivationPrecision::kBF16x2, ActivationPrecision::kBF16})
      if (formats[i] != WeightFormat::kF32 || act == ActivationPrecision::kF32)
        for (int cols : {1536, 0})
          for (int tokens : {1, 4, 8, 12, 16, 24, 32, 64})
            inv->Args({static_cast<int>(formats[i]), static_cast<int>(act), tokens, cols, 0});
    // The rows' compute ceiling with a few tokens (a decode batch's experts see one to four of
    // its streams), the weights in L2: does the width (the activations in L1 or not) matter?
    if (formats[i] != WeightFormat::kF32)
      for (int cols : {1536, 0})
        for (int tokens : {1, 2, 3, 4, 8, 16})
          inv->Args({static_cast<int>(formats[i]), static_cast<int>(ActivationPrecision::kBF16x2),
                     tokens, cols, 1});
    auto* rows = benchmark::RegisterBenchmark(
        (std::string("linear_short_rows/") + names[i]).c_str(), BM_LinearShortRows);
    rows->ArgNames({"format", "act", "cols"});
    rows->UseRealTime()->Unit(benchmark::kMillisecond);
    for (int cols : {384, 768, 1536})
      rows->Args(
          {static_cast<int>(formats[i]), static_cast<int>(ActivationPrecision::kBF16x2), cols});
  }
}

}  // namespace
}  // namespace minimax

int main(int argc, char** argv) {
  using namespace minimax;
  benchmark::Initialize(&argc, argv);
  const char* amx = std::getenv("MINIMAX_CPU_AMX");
  g_amx = amx_usable() && !(amx != nullptr && std::string(amx) == "0");
  g_bandwidth = measure_bandwidth(pool_of(0));
  std::printf(
      "memory bandwidth (best of 5 over %zu MiB): memcpy %.2f GB/s copied, read-only sum %.2f GB/s "
      "(1 thread), %.2f GB/s (%zu threads)\n",
      kBufferBytes >> 20, g_bandwidth.memcpy_bytes_per_s / 1e9, g_bandwidth.read1_bytes_per_s / 1e9,
      g_bandwidth.readn_bytes_per_s / 1e9, pool_of(0).size());
  std::printf("CPU: avx2 %d, avx512 %d, avx512_bf16 %d, amx %d%s; default kernels: %s\n",
              cpu_features().avx2, cpu_features().avx512, cpu_features().avx512_bf16,
              cpu_features().amx_bf16, g_amx ? "" : " (off: MINIMAX_CPU_AMX=0)",
              std::string(cpu_isa_name(default_cpu_isa())).c_str());
  register_baselines();
  register_benchmarks();
  register_baselines();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
