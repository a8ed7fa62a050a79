// Scalar reference codecs for MXFP4, MXFP8 and NVFP4 blocks and rows (see microscaling.h for the
// rules).
#include "formats/microscaling.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "formats/float_formats.h"

namespace minimax {
namespace {

uint8_t nibble_at(const uint8_t* packed, int index) {
  const uint8_t byte = packed[index / 2];
  return (index % 2 == 0) ? (byte & 0x0F) : (byte >> 4);
}

void pack_nibbles(const uint8_t* codes, int count, uint8_t* packed) {
  for (int i = 0; i < count; i += 2) {
    packed[i / 2] = static_cast<uint8_t>((codes[i] & 0x0F) | ((codes[i + 1] & 0x0F) << 4));
  }
}

// Largest |x| of a block, after checking that every element is finite.
float finite_block_amax(const float* in, int count, const char* function) {
  float amax = 0.0f;
  for (int i = 0; i < count; ++i) {
    if (!std::isfinite(in[i])) {
      fail("{}: element {} of the block is {}; only finite values can be encoded", function, i,
           in[i]);
    }
    amax = std::max(amax, std::fabs(in[i]));
  }
  return amax;
}

void check_row_length(int64_t n, int block_elems, const char* function) {
  if (n < 0 || n % block_elems != 0) {
    fail("{}: row length n = {} is not a non-negative multiple of the {}-element block", function,
         n, block_elems);
  }
}

}  // namespace

// ---- MXFP4 ----

void mxfp4_decode_block(const uint8_t* packed16, uint8_t scale_e8m0, float* out32) {
  if (e8m0_is_nan(scale_e8m0)) {
    std::fill(out32, out32 + kMxfp4BlockElems, std::numeric_limits<float>::quiet_NaN());
    return;
  }
  const int exponent = static_cast<int>(scale_e8m0) - 127;
  for (int i = 0; i < kMxfp4BlockElems; ++i) {
    // float ldexp: exact (2^-128 is a float subnormal) or +-inf past the float range.
    out32[i] = std::ldexp(static_cast<float>(e2m1_to_f64(nibble_at(packed16, i))), exponent);
  }
}

uint8_t mxfp4_encode_block(const float* in32, uint8_t* packed16) {
  const float amax = finite_block_amax(in32, kMxfp4BlockElems, "mxfp4_encode_block");
  int scale_code = 127;  // all-zero block: scale 1
  if (amax > 0) {
    int frexp_exponent = 0;
    std::frexp(amax, &frexp_exponent);  // amax = f * 2^frexp_exponent, f in [0.5, 1)
    const int floor_log2_amax = frexp_exponent - 1;
    constexpr int kE2M1MaxExponent = 2;  // 6 = 1.5 * 2^2
    scale_code = std::clamp(floor_log2_amax - kE2M1MaxExponent + 127, 0, 254);
  }
  const double inverse_scale = std::ldexp(1.0, 127 - scale_code);  // exact power of two
  uint8_t codes[kMxfp4BlockElems];
  for (int i = 0; i < kMxfp4BlockElems; ++i) {
    codes[i] = f64_to_e2m1(static_cast<double>(in32[i]) * inverse_scale);  // product is exact
  }
  pack_nibbles(codes, kMxfp4BlockElems, packed16);
  return static_cast<uint8_t>(scale_code);
}

void mxfp4_decode_row(const uint8_t* packed, const uint8_t* scales, int64_t n, float* out) {
  check_row_length(n, kMxfp4BlockElems, "mxfp4_decode_row");
  for (int64_t block = 0; block < n / kMxfp4BlockElems; ++block) {
    mxfp4_decode_block(packed + block * kMxfp4BlockBytes, scales[block],
                       out + block * kMxfp4BlockElems);
  }
}

void mxfp4_encode_row(const float* in, int64_t n, uint8_t* packed, uint8_t* scales) {
  check_row_length(n, kMxfp4BlockElems, "mxfp4_encode_row");
  for (int64_t block = 0; block < n / kMxfp4BlockElems; ++block) {
    scales[block] =
        mxfp4_encode_block(in + block * kMxfp4BlockElems, packed + block * kMxfp4BlockBytes);
  }
}

// ---- MXFP8 ----

void mxfp8_decode_row(const uint8_t* codes, const uint8_t* scales, int64_t n, float* out) {
  check_row_length(n, kMxfp8BlockElems, "mxfp8_decode_row");
  for (int64_t i = 0; i < n; ++i) {
    const uint8_t scale = scales[i / kMxfp8BlockElems];
    out[i] =
        e8m0_is_nan(scale)
            ? std::numeric_limits<float>::quiet_NaN()
            : static_cast<float>(fp8_to_f64(codes[i], Fp8Format::kE4M3FN) * e8m0_to_f64(scale));
  }
}

uint8_t mxfp8_encode_block(const float* in32, uint8_t* codes32) {
  constexpr double kE4m3Max = 448.0;
  const float amax = finite_block_amax(in32, kMxfp8BlockElems, "mxfp8_encode_block");
  int exponent = 0;  // all-zero block: scale 1
  if (amax > 0) {
    // The smallest e with amax <= 448 * 2^e, found exactly (powers of two scale exactly).
    exponent = std::ilogb(amax / kE4m3Max);
    while (kE4m3Max * std::ldexp(1.0, exponent) < amax) ++exponent;
    while (kE4m3Max * std::ldexp(1.0, exponent - 1) >= amax) --exponent;
  }
  const int scale_code = std::clamp(exponent + 127, 0, 254);
  const double inverse_scale = std::ldexp(1.0, 127 - scale_code);
  for (int i = 0; i < kMxfp8BlockElems; ++i)
    codes32[i] = f64_to_fp8(static_cast<double>(in32[i]) * inverse_scale, Fp8Format::kE4M3FN);
  return static_cast<uint8_t>(scale_code);
}

void mxfp8_encode_row(const float* in, int64_t n, uint8_t* codes, uint8_t* scales) {
  check_row_length(n, kMxfp8BlockElems, "mxfp8_encode_row");
  for (int64_t block = 0; block < n / kMxfp8BlockElems; ++block)
    scales[block] =
        mxfp8_encode_block(in + block * kMxfp8BlockElems, codes + block * kMxfp8BlockElems);
}

// ---- NVFP4 ----

void nvfp4_decode_block(const uint8_t* packed8, uint8_t scale_e4m3, float global_scale,
                        float* out16) {
  // e4m3 values are exact in float.
  const float block_scale = static_cast<float>(fp8_to_f64(scale_e4m3, Fp8Format::kE4M3FN));
  for (int i = 0; i < kNvfp4BlockElems; ++i) {
    const float element = static_cast<float>(e2m1_to_f64(nibble_at(packed8, i)));
    out16[i] = (element * block_scale) * global_scale;  // exact product, then one rounding
  }
}

uint8_t nvfp4_encode_block(const float* in16, float global_scale, uint8_t* packed8) {
  if (!std::isfinite(global_scale) || !(global_scale > 0)) {
    fail("nvfp4_encode_block: global_scale = {} must be finite and positive", global_scale);
  }
  const float amax = finite_block_amax(in16, kNvfp4BlockElems, "nvfp4_encode_block");
  const float wanted_scale = amax / 6.0f / global_scale;  // f32, as ModelOpt computes it
  const uint8_t scale_code = f64_to_fp8(wanted_scale, Fp8Format::kE4M3FN);  // saturates at 448
  const float divisor =
      static_cast<float>(fp8_to_f64(scale_code, Fp8Format::kE4M3FN)) * global_scale;
  uint8_t codes[kNvfp4BlockElems];
  for (int i = 0; i < kNvfp4BlockElems; ++i) {
    // A zero scale would turn x / 0 into inf or NaN: everything in the block encodes as zero.
    const float scaled = divisor > 0 ? in16[i] / divisor : std::copysign(0.0f, in16[i]);
    codes[i] = f64_to_e2m1(scaled);  // an inf quotient saturates to +-6
  }
  pack_nibbles(codes, kNvfp4BlockElems, packed8);
  return scale_code;
}

float nvfp4_global_scale(float tensor_amax) {
  if (!std::isfinite(tensor_amax) || tensor_amax < 0) {
    fail("nvfp4_global_scale: tensor_amax = {} must be finite and non-negative", tensor_amax);
  }
  if (tensor_amax == 0) return 1.0f;
  return tensor_amax / (6.0f * 448.0f);
}

void nvfp4_decode_row(const uint8_t* packed, const uint8_t* scales_e4m3, float global_scale,
                      int64_t n, float* out) {
  check_row_length(n, kNvfp4BlockElems, "nvfp4_decode_row");
  for (int64_t block = 0; block < n / kNvfp4BlockElems; ++block) {
    nvfp4_decode_block(packed + block * kNvfp4BlockBytes, scales_e4m3[block], global_scale,
                       out + block * kNvfp4BlockElems);
  }
}

void nvfp4_encode_row(const float* in, int64_t n, float global_scale, uint8_t* packed,
                      uint8_t* scales_e4m3) {
  check_row_length(n, kNvfp4BlockElems, "nvfp4_encode_row");
  for (int64_t block = 0; block < n / kNvfp4BlockElems; ++block) {
    scales_e4m3[block] = nvfp4_encode_block(in + block * kNvfp4BlockElems, global_scale,
                                            packed + block * kNvfp4BlockBytes);
  }
}

}  // namespace minimax
