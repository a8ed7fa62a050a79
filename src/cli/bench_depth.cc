#include "cli/bench_depth.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <vector>

#include "base/clock.h"
#include "base/error.h"
#include "runtime/bandwidth.h"
#include "runtime/sampler.h"

namespace minimax::cli {
namespace {

constexpr int64_t kTileSource = 512;  // tokens really prefilled before tiling
constexpr int64_t kDepthFillChunk = 2048;

// Runs tokens [begin, end) of `ids` at their positions; the last position's logits.
std::vector<float> prefill_range(Model& model, KvCache& cache, const std::vector<int32_t>& ids,
                                 int64_t begin, int64_t end, Progress* progress) {
  std::vector<float> logits;
  for (int64_t start = begin; start < end; start += kDepthFillChunk) {
    const int64_t stop = std::min(end, start + kDepthFillChunk);
    std::vector<int32_t> positions(stop - start);
    for (int64_t i = 0; i < stop - start; ++i) positions[i] = static_cast<int32_t>(start + i);
    logits = model.forward(std::span(ids.data() + start, stop - start), positions, cache,
                           LogitsFor::kLastToken);
    if (progress != nullptr) progress->add(static_cast<uint64_t>(stop - start));
  }
  return logits;
}

// Copies rows [0, source) of every layer's storage over rows [source, depth), cyclically. The
// cache owns one block of its capacity, so slot s is storage row s.
void tile_rows(KvCache& cache, int64_t source, int64_t depth) {
  const int64_t element = kv_dtype_bytes(cache.dtype());
  const auto tile = [&](void* base, int64_t width) {
    if (base == nullptr) return;
    auto* bytes = static_cast<char*>(base);
    const int64_t row_bytes = width * element;
    for (int64_t s = source; s < depth; s += source) {
      const int64_t rows = std::min(source, depth - s);
      std::memcpy(bytes + s * row_bytes, bytes, static_cast<size_t>(rows * row_bytes));
    }
  };
  for (int layer = 0; layer < cache.pool().num_layers(); ++layer) {
    tile(cache.k(layer), cache.kv_width());
    tile(cache.v(layer), cache.kv_width());
    tile(cache.index_k(layer), cache.index_width());
  }
}

}  // namespace

DepthFill parse_depth_fill(const std::string& value) {
  if (value == "tile") return DepthFill::kTile;
  if (value == "prefill") return DepthFill::kPrefill;
  fail("--depth-fill: unknown value '{}' (expected tile or prefill)", value);
}

int64_t depth_fill_tokens(int64_t depth, DepthFill fill) {
  return fill == DepthFill::kTile ? std::min(depth, kTileSource) : depth;
}

DepthTiming time_decode_at_depth(Model& model, int64_t depth, int64_t gen_tokens, int repeat,
                                 KvDtype dtype, DepthFill fill, size_t threads,
                                 Progress* progress) {
  if (depth <= 0) fail("--depth: must be > 0, got {}", depth);
  if (fill == DepthFill::kTile && model.plan().ranks > 1)
    fail("--depth-fill tile: copies rank 0's cache only; use --depth-fill prefill under mpirun");
  std::vector<int32_t> ids(depth);
  SampleRng rng(4321);
  for (int32_t& id : ids) id = static_cast<int32_t>(rng.next_unit() * model.config().vocab_size);
  KvCache cache = model.new_cache(depth + gen_tokens, dtype);
  DepthTiming t;
  t.depth = depth;
  auto start = std::chrono::steady_clock::now();
  std::vector<float> logits;
  if (fill == DepthFill::kTile && depth > kTileSource) {
    logits = prefill_range(model, cache, ids, 0, kTileSource, progress);
    tile_rows(cache, kTileSource, depth);
    cache.set_length(depth);
  } else {
    logits = prefill_range(model, cache, ids, 0, depth, progress);
  }
  t.fill_seconds = seconds_since(start);
  const int32_t first = argmax(logits);
  for (int r = 0; r < repeat; ++r) {
    cache.set_length(depth);  // every repeat decodes from the same depth
    int32_t token = first;
    start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    for (int64_t i = 0; i < gen_tokens; ++i) {
      const int32_t position = static_cast<int32_t>(depth + i);
      token = argmax(model.forward(std::span(&token, 1), std::span(&position, 1), cache,
                                   LogitsFor::kLastToken));
    }
    const double wall = seconds_since(start);
    if (progress != nullptr) progress->add(static_cast<uint64_t>(gen_tokens));
    if (wall < t.decode_seconds) {
      t.decode_seconds = wall;
      t.decode_cpu_share = (process_cpu_seconds() - cpu_start) / (wall * threads);
    }
  }
  return t;
}

}  // namespace minimax::cli
