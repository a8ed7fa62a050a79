// Stored tensors → WeightViews for every LinearLayout (BF16, block / channel / Quark FP8, MXFP4,
// MXFP8, NVFP4).
#include "model/weight_loader.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "base/error.h"
#include "checkpoint/weight_codec.h"
#include "formats/float_formats.h"
#include "formats/safetensors.h"
#include "kernels/reference/weight_rows.h"

namespace minimax {
namespace {

std::string dtype_list(std::initializer_list<DType> dtypes) {
  std::string out;
  for (DType d : dtypes) out += (out.empty() ? "" : " or ") + std::string(dtype_name(d));
  return out;
}

int64_t numel(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

uint8_t* WeightLoader::own(size_t bytes) {
  owned_->emplace_back(bytes);
  return owned_->back().data();
}

TensorRef WeightLoader::expect(const std::string& name, std::initializer_list<DType> dtypes,
                               const std::vector<int64_t>& shape) {
  TensorRef ref = store_.at(name);
  const TensorInfo& info = *ref.info;
  bool dtype_ok = false;
  for (DType d : dtypes) dtype_ok |= info.dtype == d;
  if (!dtype_ok)
    fail("{}: tensor '{}' is {}, expected {} for the {} layout", ref.file->path(), name,
         dtype_name(info.dtype), dtype_list(dtypes), quant_scheme_name(quant_.scheme));
  // A per-channel scale may be written [out, 1] or [out]; compare element counts then.
  const bool same = info.shape == shape || (shape.size() == 2 && shape[1] == 1 &&
                                            info.shape.size() == 1 && info.shape[0] == shape[0]);
  if (!same)
    fail("{}: tensor '{}' has shape {}, expected {}", ref.file->path(), name,
         shape_string(info.shape), shape_string(shape));
  return ref;
}

const float* WeightLoader::f32_values(const TensorRef& ref) {
  auto bytes = ref.data();
  if (ref.info->dtype == DType::kF32 && reinterpret_cast<uintptr_t>(bytes.data()) % 4 == 0) {
    return reinterpret_cast<const float*>(bytes.data());
  }
  std::vector<float> values = read_as_float(ref);
  uint8_t* out = own(values.size() * sizeof(float));
  std::memcpy(out, values.data(), values.size() * sizeof(float));
  return reinterpret_cast<const float*>(out);
}

WeightView WeightLoader::matrix(const TensorSpec& spec) {
  if (spec.shape.size() != 2) fail("tensor '{}': expected a 2-D table entry", spec.name);
  TensorRef ref = expect(spec.name, {DType::kBF16, DType::kF32, DType::kF16}, spec.shape);
  WeightView w;
  w.rows = spec.shape[0];
  w.cols = spec.shape[1];
  if (ref.info->dtype == DType::kBF16) {
    w.format = WeightFormat::kBF16;
    w.data = ref.data().data();
  } else {
    w.format = WeightFormat::kF32;
    w.data = reinterpret_cast<const uint8_t*>(f32_values(ref));
  }
  return w;
}

std::vector<float> WeightLoader::vector(const TensorSpec& spec) {
  TensorRef ref = expect(spec.name, {DType::kBF16, DType::kF32, DType::kF16}, spec.shape);
  return read_as_float(ref);
}

WeightView WeightLoader::linear(const TensorSpec& spec) {
  const std::vector<StoredTensor> stored = stored_tensors(spec, quant_);
  if (stored.size() == 1) return matrix(spec);  // unquantized under this scheme's ignore rules
  const LinearLayout layout = quant_.layout_of(spec.name);
  const int64_t out = spec.shape[0], in = spec.shape[1];
  WeightView w;
  w.rows = out;
  w.cols = in;
  TensorRef weight = expect(stored[0].name, {stored[0].dtype}, stored[0].shape);
  w.data = weight.data().data();
  const std::string& scale_name = stored[1].name;
  // A stored activation scale (static FP8 inputs) must be there; the forward pass computes in
  // f32 and does not read it.
  for (size_t i = 2; i < stored.size(); ++i)
    if (layout != LinearLayout::kNvfp4) expect(stored[i].name, {DType::kF32}, stored[i].shape);
  switch (layout) {
    case LinearLayout::kBf16:
      break;
    case LinearLayout::kFp8Block:
      w.format = WeightFormat::kFp8Block;
      w.block_rows = quant_.block_n;
      w.block_cols = quant_.block_k;
      w.scales = f32_values(expect(scale_name, {DType::kF32, DType::kBF16}, stored[1].shape));
      return w;
    case LinearLayout::kFp8Channel:
    case LinearLayout::kQuarkFp8Channel:
      w.format = WeightFormat::kFp8Channel;
      w.scales =
          f32_values(expect(scale_name, {DType::kF32, DType::kBF16, DType::kF16}, stored[1].shape));
      return w;
    case LinearLayout::kQuarkFp8Tensor: {
      // One scale for the whole matrix, written [] or [1]: repeated per row (out floats) so the
      // per-channel kernels take it.
      TensorRef scale = store_.at(scale_name);
      if (numel(scale.info->shape) != 1 || scale.info->shape.size() > 1)
        fail("{}: tensor '{}' has shape {}, expected [] (one per-tensor scale)", scale.file->path(),
             scale_name, shape_string(scale.info->shape));
      expect(scale_name, {DType::kF32, DType::kBF16, DType::kF16}, scale.info->shape);
      const float value = read_as_float(scale)[0];
      auto* rows = reinterpret_cast<float*>(own(static_cast<size_t>(out) * sizeof(float)));
      std::fill(rows, rows + out, value);
      w.format = WeightFormat::kFp8Channel;
      w.scales = rows;
      return w;
    }
    case LinearLayout::kMxfp4: {
      w.format = WeightFormat::kMxfp4;
      TensorRef scales = expect(scale_name, {DType::kU8}, stored[1].shape);
      w.scales = scales.data().data();
      return w;
    }
    case LinearLayout::kMxfp8: {
      // E8M0 codes, stored U8 by MiniMax (F8_E8M0 is the same bytes).
      w.format = WeightFormat::kMxfp8;
      TensorRef scales = expect(scale_name, {DType::kU8, DType::kF8_E8M0}, stored[1].shape);
      w.scales = scales.data().data();
      return w;
    }
    case LinearLayout::kNvfp4: {
      w.format = WeightFormat::kNvfp4;
      TensorRef scales = expect(scale_name, {DType::kF8_E4M3}, stored[1].shape);
      w.scales = scales.data().data();
      TensorRef global = store_.at(stored[2].name);
      if (numel(global.info->shape) != 1)
        fail("{}: tensor '{}' has shape {}, expected one value", global.file->path(),
             stored[2].name, shape_string(global.info->shape));
      const float g = read_as_float(global)[0];
      if (!(g > 0) || !std::isfinite(g))
        fail("{}: tensor '{}' is {}, expected a positive finite global scale", global.file->path(),
             stored[2].name, g);
      w.global_scale = g;
      return w;
    }
  }
  fail("tensor '{}': no loader for the {} layout", spec.name, linear_layout_name(layout));
}

WeightView WeightLoader::decoded_bf16(const WeightView& w) {
  uint8_t* out = own(static_cast<size_t>(w.rows * w.cols) * 2);
  std::vector<float> row(w.cols);
  for (int64_t r = 0; r < w.rows; ++r) {
    reference::decode_row(w, r, row.data());
    for (int64_t c = 0; c < w.cols; ++c) {
      const uint16_t b = f32_to_bf16(row[c]);
      std::memcpy(out + 2 * (r * w.cols + c), &b, 2);
    }
  }
  WeightView d;
  d.format = WeightFormat::kBF16;
  d.rows = w.rows;
  d.cols = w.cols;
  d.data = out;
  return d;
}

}  // namespace minimax
