#include "op_inputs.h"

#include <algorithm>
#include <numeric>

#include "base/error.h"
#include "kernels/kv_codec.h"

namespace minimax {

namespace {

// FNV-1a: the same seed for a case in every run and on every machine.
uint32_t seed_of(const std::string& name) {
  uint32_t h = 2166136261u;
  for (char ch : name) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  return h;
}

}  // namespace

std::unique_ptr<OpInputs> make_op_inputs(const OpCase& c) {
  std::mt19937 rng(seed_of(case_name(c)));
  if (auto in = make_elementwise_inputs(c, rng)) return in;
  if (auto in = make_matrix_inputs(c, rng)) return in;
  if (auto in = make_attention_inputs(c, rng)) return in;
  throw Error("the op table has no inputs for op " + std::string(op_name(c.op)));
}

void* OnBackend::allocate(size_t bytes) {
  held_.push_back(backend_.allocate(std::max<size_t>(bytes, 1), "op table input"));
  return held_.back().data();
}

WeightView OnBackend::put(const StoredWeight& w) {
  WeightView v = w.view;
  v.data = put(w.data);
  v.scales = w.scales.empty() ? nullptr : put(w.scales);
  return v;
}

std::vector<float> normal_floats(int64_t n, std::mt19937& rng, float sd) {
  std::normal_distribution<float> dist(0.0f, sd);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

int64_t cache_rows(int64_t slots, int page_size) {
  if (page_size == 0) return slots;
  return ((slots + page_size - 1) / page_size + 1) * page_size;
}

std::vector<int32_t> shuffled_page_table(int64_t slots, int page_size, std::mt19937& rng) {
  if (page_size == 0) return {};
  std::vector<int32_t> pages(cache_rows(slots, page_size) / page_size);
  std::iota(pages.begin(), pages.end(), 0);
  std::shuffle(pages.begin(), pages.end(), rng);
  pages.pop_back();  // the spare page stays unused
  return pages;
}

std::vector<uint8_t> random_cache(int64_t slots, int64_t width, KvDtype dtype,
                                  const std::vector<int32_t>& page_table, int page_size,
                                  std::mt19937& rng, float sd) {
  const int64_t row_bytes = width * kv_dtype_bytes(dtype);
  std::vector<uint8_t> storage(cache_rows(slots, page_size) * row_bytes, 0);
  for (int64_t s = 0; s < slots; ++s) {
    const int64_t row =
        page_size == 0 ? s : int64_t(page_table[s / page_size]) * page_size + s % page_size;
    const std::vector<float> values = normal_floats(width, rng, sd);
    encode_kv_row(values.data(), width, dtype, storage.data() + row * row_bytes);
  }
  return storage;
}

}  // namespace minimax
