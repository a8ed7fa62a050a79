// Random stored tensors generated in place: one table of 256 element values per tensor, indexed
// by a counter-based random byte stream.
#include "checkpoint/random_weights.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

// Spread of the codes on each format's grid: FP8 codes of N(0, 64) stay well inside e4m3's ±448
// (the table's extreme quantile is 2.9 sigma); e2m1 codes of N(0, 1.5) use most of its 8
// magnitudes up to 4. The scales divide these spreads back out.
constexpr double kFp8CodeSigma = 64.0;
constexpr double kFp4CodeSigma = 1.5;
// Scale variation from tile to tile (block, channel, MX / NV block), so that a reader applying a
// neighbour's scale decodes different values.
constexpr double kScaleFactors[4] = {0.75, 1.0, 1.0, 1.25};
constexpr int kE8m0Steps[4] = {-1, 0, 0, 1};

// Standard normal quantile by bisection on erfc: tables are built once per tensor.
double normal_quantile(double p) {
  double lo = -10, hi = 10;
  for (int i = 0; i < 80; ++i) {
    const double mid = (lo + hi) / 2;
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The n quantiles (i + 1/2) / n of N(0, 1), rescaled to a mean square of exactly 1 (the middle
// quantiles alone fall short of it), so a table of them has the spread it is given.
std::vector<double> unit_quantiles(int n) {
  std::vector<double> z(n);
  double squares = 0;
  for (int i = 0; i < n; ++i) {
    z[i] = normal_quantile((i + 0.5) / n);
    squares += z[i] * z[i];
  }
  for (double& v : z) v /= std::sqrt(squares / n);
  return z;
}

// Root mean square of the tile scale variation, divided out so that it does not widen the spread.
double factor_rms() {
  double squares = 0;
  for (double f : kScaleFactors) squares += f * f;
  return std::sqrt(squares / 4);
}
double e8m0_step_rms() {
  double squares = 0;
  for (int d : kE8m0Steps) squares += std::ldexp(1.0, 2 * d);
  return std::sqrt(squares / 4);
}

uint64_t mix(uint64_t z) {  // splitmix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

std::pair<double, double> initial_distribution(const TensorSpec& spec, const ModelConfig& config) {
  switch (spec.role) {
    case TensorRole::kEmbedding:
      return {0.0, 1.0};
    case TensorRole::kNorm:
    case TensorRole::kFinalNorm:
    case TensorRole::kQkNorm:
      return {config.use_gemma_norm ? 0.0 : 1.0, 0.1};
    case TensorRole::kRouterBias:
      return {0.0, 0.1};
    default:
      break;
  }
  const double in = spec.shape.size() == 2 ? static_cast<double>(spec.shape[1]) : 1.0;
  return {0.0, 1.0 / std::sqrt(in)};
}

RandomTensorSource::RandomTensorSource(const TensorSpec& spec, const StoredTensor& stored,
                                       QuantScheme scheme, const ModelConfig& config,
                                       uint64_t seed) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a of the stored name, mixed with the seed
  for (unsigned char c : stored.name) h = (h ^ c) * 1099511628211ull;
  key_ = mix(h ^ (seed * 0x9E3779B97F4A7C15ull));

  const auto [mean, stddev] = initial_distribution(spec, config);
  const bool quantized =
      stored.name != spec.name || (stored.dtype != DType::kBF16 && stored.dtype != DType::kF32);
  // Float values by random byte, stored as the tensor's dtype below.
  // MXFP4 scales are powers of two: the exponent nearest the spread, and the codes take up the
  // remaining factor (between 1/sqrt(2) and sqrt(2) of their nominal spread).
  const int mx_exponent =
      static_cast<int>(std::lround(std::log2(stddev / (kFp4CodeSigma * e8m0_step_rms()))));
  const double mx_code_sigma = stddev / (std::ldexp(1.0, mx_exponent) * e8m0_step_rms());
  // MXFP8 the same way around its FP8 codes.
  const int mx8_exponent =
      static_cast<int>(std::lround(std::log2(stddev / (kFp8CodeSigma * e8m0_step_rms()))));
  const double mx8_code_sigma = stddev / (std::ldexp(1.0, mx8_exponent) * e8m0_step_rms());
  double values[256];
  if (!quantized) {
    const std::vector<double> z = unit_quantiles(256);
    for (int i = 0; i < 256; ++i) values[i] = mean + stddev * z[i];
  } else if (stored.name == spec.name) {  // the codes of a quantized weight
    kind_ = Kind::kByteTable;
    element_bytes_ = 1;
    const std::vector<double> z256 = unit_quantiles(256), z16 = unit_quantiles(16);
    const double fp4_sigma = scheme == QuantScheme::kMxfp4 ? mx_code_sigma : kFp4CodeSigma;
    const double fp8_sigma = scheme == QuantScheme::kMxfp8 ? mx8_code_sigma : kFp8CodeSigma;
    const bool fp4 = scheme == QuantScheme::kMxfp4 || scheme == QuantScheme::kNvfp4;
    for (int i = 0; i < 256; ++i) {
      // FP4: two elements per byte, low nibble first, each its own quantile of 16.
      bytes_[i] = fp4 ? static_cast<uint8_t>(f64_to_e2m1(fp4_sigma * z16[i & 15]) |
                                             f64_to_e2m1(fp4_sigma * z16[i >> 4]) << 4)
                      : f64_to_fp8(fp8_sigma * z256[i], Fp8Format::kE4M3FN);
    }
    return;
  } else if ((stored.name.ends_with(".weight_scale") && scheme == QuantScheme::kMxfp4) ||
             (stored.name.ends_with(".weight_scale_inv") && scheme == QuantScheme::kMxfp8)) {
    // E8M0 block scales (MXFP4's weight_scale, MXFP8's weight_scale_inv).
    const int exponent = scheme == QuantScheme::kMxfp8 ? mx8_exponent : mx_exponent;
    kind_ = Kind::kByteTable;
    element_bytes_ = 1;
    for (int i = 0; i < 256; ++i)
      bytes_[i] = static_cast<uint8_t>(std::clamp(127 + exponent + kE8m0Steps[i & 3], 0, 254));
    return;
  } else if (stored.name.ends_with(".weight_scale") && scheme == QuantScheme::kNvfp4) {
    kind_ = Kind::kByteTable;  // e4m3 block scales around 1; weight_scale_2 carries the spread
    element_bytes_ = 1;
    for (int i = 0; i < 256; ++i) bytes_[i] = f64_to_fp8(kScaleFactors[i & 3], Fp8Format::kE4M3FN);
    return;
  } else if (stored.name.ends_with(".weight_scale_inv") ||
             (stored.name.ends_with(".weight_scale") && scheme == QuantScheme::kFp8Channel)) {
    for (int i = 0; i < 256; ++i)
      values[i] = stddev / (kFp8CodeSigma * factor_rms()) * kScaleFactors[i & 3];
  } else if (stored.name.ends_with(".weight_scale_2")) {
    for (double& v : values) v = stddev / (kFp4CodeSigma * factor_rms());
  } else if (stored.name.ends_with(".input_scale")) {
    for (double& v : values) v = 1.0;  // no calibration set: as the quantizer writes it
  } else {
    fail("random checkpoint: no generator for stored tensor '{}' ({} under {})", stored.name,
         dtype_name(stored.dtype), quant_scheme_name(scheme));
  }
  if (stored.dtype == DType::kBF16) {
    kind_ = Kind::kBF16;
    element_bytes_ = 2;
    for (int i = 0; i < 256; ++i) bf16_[i] = f32_to_bf16(static_cast<float>(values[i]));
  } else if (stored.dtype == DType::kF32) {
    kind_ = Kind::kF32;
    element_bytes_ = 4;
    for (int i = 0; i < 256; ++i) f32_[i] = static_cast<float>(values[i]);
  } else {
    fail("random checkpoint: stored tensor '{}' as {} is not supported", stored.name,
         dtype_name(stored.dtype));
  }
}

uint64_t RandomTensorSource::word(uint64_t w) const {
  return mix(key_ + (w + 1) * 0x9E3779B97F4A7C15ull);
}

void RandomTensorSource::fill(uint64_t offset, std::span<uint8_t> out) const {
  const uint64_t e = static_cast<uint64_t>(element_bytes_);
  if (offset % e != 0 || out.size() % e != 0)
    fail("random checkpoint: fill at byte {} of {} bytes is not whole {}-byte elements", offset,
         out.size(), e);
  const uint64_t first = offset / e, count = out.size() / e;
  uint8_t* dst = out.data();
  // Element i takes byte i % 8 of word i / 8.
  uint64_t w = first / 8, bits = word(w) >> (8 * (first % 8));
  for (uint64_t i = first; i < first + count; ++i) {
    if (i % 8 == 0 && i != first) bits = word(++w);
    const uint8_t r = static_cast<uint8_t>(bits);
    bits >>= 8;
    switch (kind_) {
      case Kind::kByteTable:
        *dst = bytes_[r];
        break;
      case Kind::kBF16:
        std::memcpy(dst, &bf16_[r], 2);
        break;
      case Kind::kF32:
        std::memcpy(dst, &f32_[r], 4);
        break;
    }
    dst += e;
  }
}

}  // namespace minimax
