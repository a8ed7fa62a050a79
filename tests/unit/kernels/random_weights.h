// Random weights in every stored format, with values near N(0, sd²) whatever the format: what the
// kernel tests and the backend op table (tests/backend_ops/) feed the linear and MoE ops. Any valid
// codes make a valid weight (the reference decodes what is stored); these keep the products O(1).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "formats/float_formats.h"
#include "kernels/weight_view.h"

namespace minimax {

struct StoredWeight {
  std::vector<uint8_t> data, scales;
  WeightView view;
};

inline void put_f32(std::vector<uint8_t>& bytes, int64_t index, float v) {
  std::memcpy(bytes.data() + 4 * index, &v, 4);
}

// `n` e4m3 codes of N(0, 64) values, drawn from a pool of 4096: quantizing every element of the
// real shapes would dominate the test.
inline std::vector<uint8_t> fp8_codes(int64_t n, std::mt19937& rng) {
  std::vector<uint8_t> pool(4096);
  std::normal_distribution<double> code_dist(0.0, 64.0);
  for (auto& code : pool) code = f64_to_fp8(code_dist(rng), Fp8Format::kE4M3FN);
  std::vector<uint8_t> codes(n);
  for (auto& code : codes) code = pool[rng() % pool.size()];
  return codes;
}

// Values ~ N(0, sd), stored in `format` with fixed, slightly varying scales (any valid codes make
// a valid weight: the reference decodes what is stored).
inline StoredWeight random_weight(WeightFormat format, int64_t rows, int64_t cols, double sd,
                                  std::mt19937& rng) {
  std::normal_distribution<double> dist(0.0, sd);
  std::uniform_real_distribution<double> jitter(0.75, 1.25);
  StoredWeight w;
  WeightView& v = w.view;
  v.format = format;
  v.rows = rows;
  v.cols = cols;
  switch (format) {
    case WeightFormat::kF32:
      w.data.resize(rows * cols * 4);
      for (int64_t i = 0; i < rows * cols; ++i) put_f32(w.data, i, static_cast<float>(dist(rng)));
      break;
    case WeightFormat::kBF16:
      w.data.resize(rows * cols * 2);
      for (int64_t i = 0; i < rows * cols; ++i) {
        const uint16_t b = f32_to_bf16(static_cast<float>(dist(rng)));
        std::memcpy(w.data.data() + 2 * i, &b, 2);
      }
      break;
    case WeightFormat::kFp8Channel:
    case WeightFormat::kFp8Block: {
      const bool block = format == WeightFormat::kFp8Block;
      const int64_t n_scales = block ? ((rows + 127) / 128) * ((cols + 127) / 128) : rows;
      w.scales.resize(n_scales * 4);
      for (int64_t i = 0; i < n_scales; ++i)
        put_f32(w.scales, i, static_cast<float>(sd / 64 * jitter(rng)));
      // Codes of N(0, 64) values: the weights are then ~N(0, sd) with the scales above.
      w.data = fp8_codes(rows * cols, rng);
      break;
    }
    case WeightFormat::kMxfp8: {
      // e8m0 scales near sd / 64 and codes of N(0, 64) values, as for the FP8 layouts above.
      w.scales.resize(rows * cols / 32);
      for (auto& s : w.scales)
        s = static_cast<uint8_t>(127 + std::lround(std::log2(sd / 64)) +
                                 static_cast<int>(rng() % 2));
      w.data = fp8_codes(rows * cols, rng);
      break;
    }
    case WeightFormat::kMxfp4:
    case WeightFormat::kNvfp4: {
      const bool mx = format == WeightFormat::kMxfp4;
      const int64_t block = mx ? 32 : 16;
      v.global_scale = mx ? 1.0f : 1.0f / 64;
      w.scales.resize(rows * cols / block);
      for (auto& scale : w.scales) {
        if (mx) {  // 2^e near sd/2
          scale = static_cast<uint8_t>(127 + std::lround(std::log2(sd / 2)) +
                                       static_cast<int>(rng() % 2));
        } else {
          scale = f64_to_fp8(sd / 2 / v.global_scale * jitter(rng), Fp8Format::kE4M3FN);
        }
      }
      // Pairs of e2m1 codes of N(0, 2²) values (the scales are near sd/2), drawn from a pool of
      // 4096 bytes: converting every element of the real widths would dominate the tests.
      std::vector<uint8_t> pairs(4096);
      std::normal_distribution<double> code_dist(0.0, 2.0);
      for (auto& pair : pairs)
        pair = static_cast<uint8_t>(f64_to_e2m1(code_dist(rng)) | f64_to_e2m1(code_dist(rng)) << 4);
      w.data.resize(rows * cols / 2);
      for (auto& byte : w.data) byte = pairs[rng() % pairs.size()];
      break;
    }
  }
  v.data = w.data.data();
  v.scales = w.scales.empty() ? nullptr : w.scales.data();
  return w;
}

}  // namespace minimax
