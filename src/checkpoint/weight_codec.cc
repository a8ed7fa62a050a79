// Reference encoders/decoders between float matrices and the stored quantized layouts.
#include "checkpoint/weight_codec.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "formats/float_formats.h"
#include "formats/microscaling.h"

namespace minimax {
namespace {

constexpr double kFp8Max = 448.0;

std::vector<uint8_t> f32_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size() * 4);
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A scale tensor in the dtype the layout stores it in (F32 or BF16).
std::vector<uint8_t> scale_bytes(const std::vector<float>& scales, DType dtype,
                                 const std::string& name) {
  if (dtype == DType::kF32) return f32_bytes(scales);
  if (dtype == DType::kBF16) {
    std::vector<uint8_t> out(scales.size() * 2);
    for (size_t i = 0; i < scales.size(); ++i) {
      uint16_t b = f32_to_bf16(scales[i]);
      std::memcpy(out.data() + 2 * i, &b, 2);
    }
    return out;
  }
  fail("quantize: scale tensor '{}' has unsupported dtype {}", name, dtype_name(dtype));
}

// Block FP8 (DeepSeek/MiniMax convention): one F32 multiplier per 128×128 tile.
void encode_fp8_block(std::span<const float> w, int64_t rows, int64_t cols, int bn, int bk,
                      std::vector<uint8_t>& q, std::vector<float>& scales) {
  const int64_t br = (rows + bn - 1) / bn, bc = (cols + bk - 1) / bk;
  q.assign(rows * cols, 0);
  scales.assign(br * bc, 1.0f);
  for (int64_t i = 0; i < br; ++i) {
    for (int64_t j = 0; j < bc; ++j) {
      double amax = 0;
      for (int64_t r = i * bn; r < std::min(rows, (i + 1) * bn); ++r)
        for (int64_t c = j * bk; c < std::min(cols, (j + 1) * bk); ++c)
          amax = std::max(amax, std::fabs(static_cast<double>(w[r * cols + c])));
      const float scale = amax > 0 ? static_cast<float>(amax / kFp8Max) : 1.0f;
      scales[i * bc + j] = scale;
      for (int64_t r = i * bn; r < std::min(rows, (i + 1) * bn); ++r)
        for (int64_t c = j * bk; c < std::min(cols, (j + 1) * bk); ++c)
          q[r * cols + c] =
              f64_to_fp8(w[r * cols + c] / static_cast<double>(scale), Fp8Format::kE4M3FN);
    }
  }
}

// FP8 with one scale per group of `group_rows` output rows: per channel (1, compressed-tensors
// "channel", Quark per_channel) or per tensor (rows, Quark per_tensor).
void encode_fp8_rows(std::span<const float> w, int64_t rows, int64_t cols, int64_t group_rows,
                     std::vector<uint8_t>& q, std::vector<float>& scales) {
  q.assign(rows * cols, 0);
  scales.assign(rows / group_rows, 1.0f);
  for (int64_t g = 0; g < rows / group_rows; ++g) {
    const int64_t begin = g * group_rows * cols, end = begin + group_rows * cols;
    double amax = 0;
    for (int64_t i = begin; i < end; ++i)
      amax = std::max(amax, std::fabs(static_cast<double>(w[i])));
    const float scale = amax > 0 ? static_cast<float>(amax / kFp8Max) : 1.0f;
    scales[g] = scale;
    for (int64_t i = begin; i < end; ++i)
      q[i] = f64_to_fp8(w[i] / static_cast<double>(scale), Fp8Format::kE4M3FN);
  }
}

}  // namespace

std::vector<float> read_as_float(const TensorRef& ref) {
  const TensorInfo& info = *ref.info;
  auto bytes = ref.data();
  std::vector<float> out(info.numel());
  for (size_t i = 0; i < out.size(); ++i) {
    switch (info.dtype) {
      case DType::kBF16: {
        uint16_t b;
        std::memcpy(&b, bytes.data() + 2 * i, 2);
        out[i] = bf16_to_f32(b);
        break;
      }
      case DType::kF16: {
        uint16_t b;
        std::memcpy(&b, bytes.data() + 2 * i, 2);
        out[i] = f16_to_f32(b);
        break;
      }
      case DType::kF32:
        std::memcpy(&out[i], bytes.data() + 4 * i, 4);
        break;
      case DType::kF64: {
        double d;
        std::memcpy(&d, bytes.data() + 8 * i, 8);
        out[i] = static_cast<float>(d);
        break;
      }
      default:
        fail("{}: tensor '{}' has dtype {}, expected a float type", ref.file->path(), info.name,
             dtype_name(info.dtype));
    }
  }
  return out;
}

std::vector<std::vector<uint8_t>> encode_weight(std::span<const float> w, int64_t rows,
                                                int64_t cols, LinearLayout layout,
                                                const std::vector<StoredTensor>& stored) {
  std::vector<uint8_t> q;
  std::vector<float> scales;         // float scales (FP8 layouts)
  std::vector<uint8_t> scale_codes;  // coded scales (block-scaled layouts)
  float global_scale = 1.0f;
  auto require_multiple = [&](int64_t block) {
    if (cols % block != 0)
      fail("quantize: {} needs in-dim % {} == 0, got {}", linear_layout_name(layout), block, cols);
  };
  switch (layout) {
    case LinearLayout::kFp8Block:
      encode_fp8_block(w, rows, cols, 128, 128, q, scales);
      break;
    case LinearLayout::kFp8Channel:
    case LinearLayout::kQuarkFp8Channel:
      encode_fp8_rows(w, rows, cols, 1, q, scales);
      break;
    case LinearLayout::kQuarkFp8Tensor:
      encode_fp8_rows(w, rows, cols, rows, q, scales);
      break;
    case LinearLayout::kMxfp4:
      require_multiple(kMxfp4BlockElems);
      q.resize(rows * cols / 2);
      scale_codes.resize(rows * cols / kMxfp4BlockElems);
      for (int64_t r = 0; r < rows; ++r) {
        mxfp4_encode_row(w.data() + r * cols, cols, q.data() + r * cols / 2,
                         scale_codes.data() + r * cols / kMxfp4BlockElems);
      }
      break;
    case LinearLayout::kMxfp8:
      require_multiple(kMxfp8BlockElems);
      q.resize(rows * cols);
      scale_codes.resize(rows * cols / kMxfp8BlockElems);
      for (int64_t r = 0; r < rows; ++r)
        mxfp8_encode_row(w.data() + r * cols, cols, q.data() + r * cols,
                         scale_codes.data() + r * cols / kMxfp8BlockElems);
      break;
    case LinearLayout::kNvfp4: {
      require_multiple(kNvfp4BlockElems);
      float amax = 0;
      for (float v : w) amax = std::max(amax, std::fabs(v));
      global_scale = nvfp4_global_scale(amax);
      q.resize(rows * cols / 2);
      scale_codes.resize(rows * cols / kNvfp4BlockElems);
      for (int64_t r = 0; r < rows; ++r) {
        nvfp4_encode_row(w.data() + r * cols, cols, global_scale, q.data() + r * cols / 2,
                         scale_codes.data() + r * cols / kNvfp4BlockElems);
      }
      break;
    }
    case LinearLayout::kBf16:
      fail("quantize: encode_weight called for an unquantized weight");
  }

  std::vector<std::vector<uint8_t>> out;
  for (const StoredTensor& s : stored) {
    const bool scale = s.name.ends_with(".weight_scale_inv") || s.name.ends_with(".weight_scale");
    if (s.name.ends_with(".weight")) {
      out.push_back(q);
    } else if (scale && !scales.empty()) {
      out.push_back(scale_bytes(scales, s.dtype, s.name));
    } else if (scale) {
      out.push_back(scale_codes);
    } else if (s.name.ends_with(".weight_scale_2")) {
      out.push_back(f32_bytes({global_scale}));
    } else if (s.name.ends_with(".input_scale")) {
      // Activation scale: ModelOpt and Quark calibrate it on data; a test checkpoint has no
      // calibration set and stores 1.0 (documented in docs/checkpoint.md).
      out.push_back(f32_bytes({1.0f}));
    } else {
      fail("quantize: no encoder for stored tensor '{}'", s.name);
    }
  }
  return out;
}

std::vector<float> decode_weight(const TensorStore& store, const std::string& weight_name,
                                 LinearLayout layout, int64_t rows, int64_t cols) {
  const std::string module =
      weight_name.substr(0, weight_name.size() - std::string(".weight").size());
  TensorRef wq = store.at(weight_name);
  std::vector<float> out(rows * cols);
  auto q = wq.data();
  // FP8 codes times one float scale per (row, column) as `scale_of` picks it.
  auto fp8 = [&](const std::vector<float>& s, auto&& scale_of) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        out[r * cols + c] =
            static_cast<float>(fp8_to_f64(q[r * cols + c], Fp8Format::kE4M3FN) * s[scale_of(r, c)]);
    return out;
  };
  switch (layout) {
    case LinearLayout::kBf16:
      return read_as_float(wq);
    case LinearLayout::kFp8Block: {
      const int64_t bc = (cols + 127) / 128;
      return fp8(read_as_float(store.at(module + ".weight_scale_inv")),
                 [&](int64_t r, int64_t c) { return (r / 128) * bc + c / 128; });
    }
    case LinearLayout::kFp8Channel:
    case LinearLayout::kQuarkFp8Channel:
      return fp8(read_as_float(store.at(module + ".weight_scale")),
                 [](int64_t r, int64_t) { return r; });
    case LinearLayout::kQuarkFp8Tensor:
      return fp8(read_as_float(store.at(module + ".weight_scale")),
                 [](int64_t, int64_t) { return int64_t{0}; });
    case LinearLayout::kMxfp4: {
      auto s = store.at(module + ".weight_scale").data();
      for (int64_t r = 0; r < rows; ++r)
        mxfp4_decode_row(q.data() + r * cols / 2, s.data() + r * cols / 32, cols,
                         out.data() + r * cols);
      return out;
    }
    case LinearLayout::kMxfp8: {
      auto s = store.at(module + ".weight_scale_inv").data();
      for (int64_t r = 0; r < rows; ++r)
        mxfp8_decode_row(q.data() + r * cols, s.data() + r * cols / 32, cols,
                         out.data() + r * cols);
      return out;
    }
    case LinearLayout::kNvfp4: {
      auto s = store.at(module + ".weight_scale").data();
      float global = read_as_float(store.at(module + ".weight_scale_2"))[0];
      for (int64_t r = 0; r < rows; ++r)
        nvfp4_decode_row(q.data() + r * cols / 2, s.data() + r * cols / 16, global, cols,
                         out.data() + r * cols);
      return out;
    }
  }
  fail("decode_weight: unknown layout");
}

}  // namespace minimax
