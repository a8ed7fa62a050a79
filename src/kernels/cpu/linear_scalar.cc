// The portable kernel: every format, any shape, on any CPU. Each row is dequantized once into a
// per-thread f32 buffer (value = code · scales, rounded once to f32) and dotted with every token,
// eight partial sums per dot so the compiler keeps independent chains.
#include <cstring>
#include <vector>

#include "kernels/cpu/linear_internal.h"

namespace minimax::cpu_linear_detail {
namespace {

float load_f32(const void* base, int64_t index) {
  float v;
  std::memcpy(&v, static_cast<const uint8_t*>(base) + 4 * index, 4);
  return v;
}

void dequantize_row(const WeightView& w, int64_t row, float* out) {
  const DecodeTables& tab = decode_tables();
  const int64_t n = w.cols;
  const uint8_t* const row_data = w.data + row * weight_data_stride(w);
  const int64_t scale_stride = weight_scale_stride(w);
  switch (w.format) {
    case WeightFormat::kF32:
      std::memcpy(out, row_data, static_cast<size_t>(n) * 4);
      return;
    case WeightFormat::kBF16: {
      const uint8_t* p = row_data;
      for (int64_t c = 0; c < n; ++c) {
        uint16_t bits;
        std::memcpy(&bits, p + 2 * c, 2);
        const uint32_t f = static_cast<uint32_t>(bits) << 16;
        std::memcpy(out + c, &f, 4);
      }
      return;
    }
    case WeightFormat::kFp8Channel: {
      const uint8_t* p = row_data;
      const float scale = load_f32(w.scales, row);
      for (int64_t c = 0; c < n; ++c) out[c] = tab.e4m3[p[c]] * scale;
      return;
    }
    case WeightFormat::kFp8Block: {
      const uint8_t* p = row_data;
      const int64_t scale_cols = scale_stride / 4;
      const int64_t scale_row = row / w.block_rows;
      for (int64_t c0 = 0; c0 < n; c0 += w.block_cols) {
        const float scale = load_f32(w.scales, scale_row * scale_cols + c0 / w.block_cols);
        const int64_t c1 = std::min<int64_t>(n, c0 + w.block_cols);
        for (int64_t c = c0; c < c1; ++c) out[c] = tab.e4m3[p[c]] * scale;
      }
      return;
    }
    case WeightFormat::kMxfp8: {
      const uint8_t* p = row_data;
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; ++c) out[c] = tab.e4m3[p[c]] * tab.e8m0[scales[c / 32]];
      return;
    }
    case WeightFormat::kMxfp4: {
      const uint8_t* p = row_data;
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; c += 2) {
        const float scale = tab.e8m0[scales[c / 32]];
        out[c] = tab.e2m1[p[c / 2] & 0x0F] * scale;
        out[c + 1] = tab.e2m1[p[c / 2] >> 4] * scale;
      }
      return;
    }
    case WeightFormat::kNvfp4: {
      const uint8_t* p = row_data;
      const uint8_t* scales = static_cast<const uint8_t*>(w.scales) + row * scale_stride;
      for (int64_t c = 0; c < n; c += 2) {
        // e2m1 · e4m3 is exact in f32; one rounding for the global scale, as formats/ decodes.
        const float scale = tab.e4m3[scales[c / 16]];
        out[c] = (tab.e2m1[p[c / 2] & 0x0F] * scale) * w.global_scale;
        out[c + 1] = (tab.e2m1[p[c / 2] >> 4] * scale) * w.global_scale;
      }
      return;
    }
  }
}

float dot(const float* a, const float* b, int64_t n) {
  float s[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int j = 0; j < 8; ++j) s[j] += a[i + j] * b[i + j];
  for (; i < n; ++i) s[i % 8] += a[i] * b[i];
  return ((s[0] + s[4]) + (s[1] + s[5])) + ((s[2] + s[6]) + (s[3] + s[7]));
}

void scalar_rows(const LinearJob& job, int64_t row_begin, int64_t row_end) {
  const WeightView& w = *job.w;
  thread_local std::vector<float> row;
  row.resize(static_cast<size_t>(w.cols));
  const auto* x = static_cast<const float*>(job.x);
  for (int64_t r = row_begin; r < row_end; ++r) {
    dequantize_row(w, r, row.data());
    for (int64_t t = 0; t < job.tokens; ++t)
      job.y[t * w.rows + r] = dot(row.data(), x + t * job.x_stride, w.cols);
  }
}

}  // namespace

RowKernel scalar_kernel() {
  RowKernel k;
  k.run = scalar_rows;
  return k;
}

}  // namespace minimax::cpu_linear_detail
